//! The fit of α, β, γ with its leave-one-batch-out (LOBO) cross-validation, on a small
//! seeded graph: every fold is a real refit without its batch, and the fold picks are reported
//! (they are what shows the selection noise of LOBO comparisons, docs/RNS.md).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_benchmark::agreement::{candidate_terms, fit_with_cv, rns_partition, LinkedQuestion};
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

/// Ae = the other candidates + the entities the question names: the named entities sit after
/// the candidates in the slice, are in Ae for every candidate's terms, and never in the
/// RNS-guided As; with no named entity everything is as before.
#[test]
fn named_entities_stay_in_ae() {
    let (g, model, qs) = questions();
    let cache = BlockCache::new(1);
    let w = serenqa_shared::rns::Weights::new(-0.3, 0.7, 0.0).unwrap();
    let mut changed = 0;
    for q in qs.iter().filter(|q| q.nodes.len() >= 5) {
        let anchors: Vec<u32> = (0..60u32)
            .filter(|x| !q.nodes.contains(x))
            .take(2)
            .collect();
        let all: Vec<u32> = q.nodes.iter().chain(&anchors).copied().collect();
        let slice = build_slice(&g, &model, &cache, &all).unwrap();
        let n = q.nodes.len();
        let terms = candidate_terms(&slice, n).unwrap();
        assert_eq!(terms.len(), n);
        let sc = serenqa_shared::rns::Scorer::new(&slice).unwrap();
        for (c, t) in terms.iter().enumerate() {
            let ae: Vec<usize> = (0..n + anchors.len()).filter(|&x| x != c).collect();
            let direct = sc
                .score(&ae, &[c], &serenqa_shared::rns::Weights::default())
                .unwrap();
            assert_eq!(*t, direct);
        }
        changed += usize::from(terms != q.terms);
        let anchored = LinkedQuestion {
            anchors: anchors.clone(),
            terms,
            slice,
            ..q.clone()
        };
        let chosen = rns_partition(&anchored, &w).unwrap();
        assert_eq!(chosen.len(), serenqa_shared::rns::budget(n));
        assert!(
            chosen.iter().all(|&p| p < n),
            "{chosen:?}: an anchor was chosen"
        );
        // No anchors: the plain partition of the candidates.
        let plain = rns_partition(q, &w).unwrap();
        let sc0 = serenqa_shared::rns::Scorer::new(&q.slice).unwrap();
        let ac: Vec<usize> = (0..n).collect();
        assert_eq!(plain, sc0.greedy_swap(&ac, None, &w).unwrap().serendipity);
    }
    assert!(
        changed > 0,
        "the named entities never changed a candidate's terms"
    );
}
