//! The fit of α, β, γ with its leave-one-batch-out (LOBO) cross-validation, on a small
//! seeded graph: every fold is a real refit without its batch, and the fold picks are reported
//! (they are what shows the selection noise of LOBO comparisons, docs/RNS.md).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_benchmark::agreement::{candidate_terms, fit_with_cv, LinkedQuestion};
use serenqa_graph::{Graph, GraphBuilder, GraphMeta, RelationType};
use serenqa_model::embeddings::FastRp;
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::{Model, ModelConfig};
use serenqa_shared::rng::SplitMix64;

fn graph(n: u32, edges: &[(u32, u32)]) -> Graph {
    let mut b = GraphBuilder::new(GraphMeta {
        name: "agreement-test".into(),
        ..Default::default()
    });
    let t = b.node_type("Thing", "Thing");
    let rel = b
        .relation(RelationType {
            name: "rel".into(),
            verb: "rel".into(),
            abbrev: "r".into(),
            source_type: Some(t),
            target_type: Some(t),
            directed: false,
        })
        .unwrap();
    for i in 0..n {
        b.add_node(t, &format!("N{i}"), &format!("thing {i}"));
    }
    for &(s, d) in edges {
        b.add_edge(s, rel, d, None);
    }
    b.build()
}

/// 60 nodes, 240 seeded random edges; 3 batches of 6 questions of 3–7 distinct candidates.
fn questions() -> (Graph, Model, Vec<LinkedQuestion>) {
    let mut rng = SplitMix64::new(7);
    let n = 60u32;
    let edges: Vec<(u32, u32)> = (0..240)
        .map(|_| ((rng.next_u64() % 60) as u32, (rng.next_u64() % 60) as u32))
        .filter(|(a, b)| a != b)
        .collect();
    let g = graph(n, &edges);
    let cfg = ModelConfig {
        embedding: FastRp {
            dim: 8,
            ..FastRp::default()
        },
        ..ModelConfig::default()
    };
    let model = Model::compute(&g, &cfg, false);
    let cache = BlockCache::new(1);
    let mut out = Vec::new();
    for batch in 1..=3u32 {
        for qid in 0..6u32 {
            let size = 3 + (rng.next_u64() % 5) as usize;
            let mut nodes = Vec::new();
            while nodes.len() < size {
                let x = (rng.next_u64() % u64::from(n)) as u32;
                if !nodes.contains(&x) {
                    nodes.push(x);
                }
            }
            let slice = build_slice(&g, &model, &cache, &nodes).unwrap();
            let terms = candidate_terms(&slice, nodes.len()).unwrap();
            out.push(LinkedQuestion {
                batch,
                qid,
                nodes,
                anchors: Vec::new(),
                terms,
                slice,
            });
        }
    }
    (g, model, out)
}

#[test]
fn each_fold_is_the_fit_without_its_batch_and_is_reported() {
    let (g, model, qs) = questions();
    let all: Vec<&LinkedQuestion> = qs.iter().collect();
    let step = 0.25;
    let f = fit_with_cv(&g, &model, &all, step);
    // One fold per batch, in batch order, and one LOBO score per question.
    assert_eq!(
        f.folds.iter().map(|(b, _)| *b).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert_eq!(f.cv.len(), qs.len());
    for (b, w) in &f.folds {
        // The fold's weights are exactly what a fit on the other batches alone picks.
        let rest: Vec<&LinkedQuestion> = qs.iter().filter(|q| q.batch != *b).collect();
        let alone = fit_with_cv(&g, &model, &rest, step);
        assert_eq!(*w, alone.weights, "fold leaving out batch {b}");
        assert!((w.alpha.abs() + w.beta.abs() + w.gamma.abs() - 1.0).abs() < 1e-12);
    }
    // A single batch has no fold.
    let one: Vec<&LinkedQuestion> = qs.iter().filter(|q| q.batch == 1).collect();
    let f1 = fit_with_cv(&g, &model, &one, step);
    assert!(f1.folds.is_empty() && f1.cv.is_empty());
}
