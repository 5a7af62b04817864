//! The top-k model (`serenqa_predict::topk`): its sparse walks agree with the dense products,
//! a held-out disease's masked edges are invisible to it, a pair's own edge is never a walk
//! of it, its lists are the exact top of every pair, it is deterministic across thread
//! counts, and it runs on a graph whose schema is not Hetionet's.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_graph::filter::without_edges;
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_graph::{Direction, Graph};
use serenqa_predict::dwpc::{dwpc_all, step_matrices, EdgeMask, LocalIndex};
use serenqa_predict::metagraph::Metagraph;
use serenqa_predict::task::Task;
use serenqa_predict::topk::walk::{Scratch, Sparse, Walker};
use serenqa_predict::topk::{top_k, TopK, TopkParams};

fn steps_of(paths: &[Vec<usize>]) -> Vec<usize> {
    let mut s: Vec<usize> = paths.iter().flatten().copied().collect();
    s.sort_unstable();
    s.dedup();
    s
}

#[test]
fn sparse_walks_equal_the_dense_products() {
    let g = common::graph(60, 12, 40, 3);
    let task = Task::detect(&g).unwrap();
    let mg = Metagraph::of(&g, &task.treatment);
    let li = LocalIndex::of(&g);
    let paths = mg.metapaths(task.disease_type, task.compound_type, 2, 3);
    assert!(paths.len() > 3, "the fixture has metapaths");
    let none = EdgeMask::empty(g.edge_count());
    let mats = step_matrices(&g, &mg, &li, &none, 0.4);
    let dense = dwpc_all(&mats, &mg, &paths, task.diseases.len());
    let w = Walker::new(&g, &mg, &li, &none, 0.4, &steps_of(&paths));
    let nc = task.compounds.len();
    let known: Vec<Vec<bool>> = (0..task.diseases.len())
        .map(|d| {
            let mut k = vec![false; nc];
            for e in g.edges(task.diseases[d], Direction::Both) {
                let o = if e.source == task.diseases[d] {
                    e.target
                } else {
                    e.source
                };
                if task.treatment.contains(&e.rel) {
                    k[li.local[o as usize] as usize] = true;
                }
            }
            k
        })
        .collect();
    let mut sc = Scratch::default();
    let mut compared = 0;
    for d in 0..task.diseases.len() {
        let (vecs, _) = w.from_disease(&paths, d as u32, &mut sc);
        for (j, v) in vecs.iter().enumerate() {
            for c in 0..nc {
                // The dense table subtracts a known pair's own walks; compare the rest.
                if known[d][c] {
                    continue;
                }
                let a = v.get(c as u32);
                let b = f64::from(dense[j][d * nc + c]);
                assert!(
                    (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1e-12),
                    "metapath {j}, disease {d}, compound {c}: sparse {a} vs dense {b}"
                );
                compared += usize::from(a > 0.0);
            }
        }
    }
    assert!(compared > 100, "only {compared} nonzero values compared");
}

#[test]
fn masked_edges_are_invisible_to_the_walks() {
    let g = common::graph(60, 12, 40, 5);
    let task = Task::detect(&g).unwrap();
    let li = LocalIndex::of(&g);
    // Hold out every treatment edge of diseases 0..3.
    let mut held = Vec::new();
    for &dn in &task.diseases[..3] {
        for e in g.edges(dn, Direction::Both) {
            if task.treatment.contains(&e.rel) {
                held.push(e.id);
            }
        }
    }
    assert!(!held.is_empty());
    let mut mask = EdgeMask::empty(g.edge_count());
    for &e in &held {
        mask.insert(e);
    }
    let g2 = without_edges(&g, &|e| held.contains(&e));
    let task2 = Task::detect(&g2).unwrap();
    let mg = Metagraph::of(&g, &task.treatment);
    let mg2 = Metagraph::of(&g2, &task2.treatment);
    let paths = mg.metapaths(task.disease_type, task.compound_type, 2, 3);
    assert_eq!(
        paths,
        mg2.metapaths(task2.disease_type, task2.compound_type, 2, 3)
    );
    let none = EdgeMask::empty(g2.edge_count());
    let w = Walker::new(&g, &mg, &li, &mask, 0.4, &steps_of(&paths));
    let li2 = LocalIndex::of(&g2);
    let w2 = Walker::new(&g2, &mg2, &li2, &none, 0.4, &steps_of(&paths));
    let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
    for d in 0..task.diseases.len() as u32 {
        assert_eq!(
            w.from_disease(&paths, d, &mut s1),
            w2.from_disease(&paths, d, &mut s2),
            "disease {d}: the masked graph's walks differ from the graph without the edges"
        );
    }
    for s in steps_of(&paths) {
        assert_eq!(w.deg[s], w2.deg[s], "step {s}: degrees differ");
    }
}

#[test]
fn a_pairs_own_edge_is_never_a_walk_of_it() {
    // Without damping every walk weighs 1, so a known pair's walks minus its own-edge walks
    // must equal its walks on the graph without that edge.
    let g = common::graph(40, 10, 30, 11);
    let task = Task::detect(&g).unwrap();
    let li = LocalIndex::of(&g);
    let mg = Metagraph::of(&g, &task.treatment);
    let paths = mg.metapaths(task.disease_type, task.compound_type, 2, 3);
    let none = EdgeMask::empty(g.edge_count());
    let w = Walker::new(&g, &mg, &li, &none, 0.0, &steps_of(&paths));
    let mut sc = Scratch::default();
    let mut checked = 0;
    for (d, &dn) in task.diseases.iter().enumerate() {
        for e in g.edges(dn, Direction::Both) {
            if e.rel != task.label {
                continue;
            }
            let cn = if e.source == dn { e.target } else { e.source };
            let c = li.local[cn as usize];
            let g2 = without_edges(&g, &|x| x == e.id);
            let task2 = Task::detect(&g2).unwrap();
            let mg2 = Metagraph::of(&g2, &task2.treatment);
            let li2 = LocalIndex::of(&g2);
            let none2 = EdgeMask::empty(g2.edge_count());
            let w2 = Walker::new(&g2, &mg2, &li2, &none2, 0.0, &steps_of(&paths));
            let (vecs, prefix) = w.from_disease(&paths, d as u32, &mut sc);
            let (vecs2, _) = w2.from_disease(&paths, d as u32, &mut sc);
            for (j, p) in paths.iter().enumerate() {
                let own = w.own_walks(p, prefix[j], d as u32, c, &mut sc);
                let corrected = vecs[j].get(c) - own;
                assert!(
                    (corrected - vecs2[j].get(c)).abs() < 1e-9,
                    "metapath {j} of ({c}, {d}): {corrected} vs {} without the edge",
                    vecs2[j].get(c)
                );
                checked += usize::from(own > 0.0);
            }
            if checked > 20 {
                return;
            }
        }
    }
    assert!(checked > 0, "no own-edge walk was exercised");
}

fn synthetic() -> Graph {
    generate(&SynthSpec {
        nodes: 30_000,
        edges: 300_000,
        seed: 7,
        progress: false,
    })
}

fn params(k: usize) -> TopkParams {
    TopkParams {
        k,
        train_diseases: 200,
        cost_sample: 32,
        ..TopkParams::default()
    }
}

/// Every (node, score) of `top`'s list for entity `i` of one side.
fn list(top: &TopK, compound: bool, i: usize) -> Vec<(u32, f32)> {
    if compound {
        top.by_compound.of(i).collect()
    } else {
        top.by_disease.of(i).collect()
    }
}

#[test]
fn runs_on_a_non_hetionet_schema_and_its_lists_are_the_exact_top() {
    let g = synthetic();
    let task = Task::detect_any(&g).unwrap();
    assert_eq!(g.type_label(task.compound_type), "Drug");
    assert_eq!(g.relation(task.label).name, "IS_INDICATED_FOR");
    let (nc, nd) = (task.compounds.len(), task.diseases.len());
    let small = top_k(&g, &params(10)).unwrap();
    // Every unknown pair is in a list of length max(nc, nd): the short lists must be its top.
    let all = top_k(&g, &params(nc.max(nd))).unwrap();
    assert_eq!(small.info.metapaths, all.info.metapaths, "same model");
    let li = LocalIndex::of(&g);
    for d in 0..nd {
        let mut known: Vec<u32> = g
            .edges(task.diseases[d], Direction::Both)
            .filter(|e| task.treatment.contains(&e.rel))
            .map(|e| {
                let o = if e.source == task.diseases[d] {
                    e.target
                } else {
                    e.source
                };
                li.local[o as usize]
            })
            .collect();
        known.sort_unstable();
        known.dedup();
        let full = list(&all, false, d);
        assert_eq!(
            full.len(),
            nc - known.len(),
            "disease {d}: every unknown pair"
        );
        assert!(full.iter().all(|(c, _)| known.binary_search(c).is_err()));
        assert!(full.windows(2).all(|w| w[0].1 >= w[1].1), "sorted");
        assert_eq!(list(&small, false, d), full[..10.min(full.len())].to_vec());
    }
    for c in 0..nc {
        let full = list(&all, true, c);
        let short = list(&small, true, c);
        assert_eq!(short, full[..10.min(full.len())].to_vec(), "compound {c}");
    }
    assert_eq!(all.info.exact_compound_lists, nc);
    // Named in the graph's own words: `Drug` and `Disease` share initials, and CKG relation
    // names are not Hetionet abbreviations.
    for (name, _) in &small.info.metapaths {
        assert!(
            name.starts_with("Drug") && name.ends_with("Disease") && !name.contains("_>"),
            "{name}"
        );
    }
    let h = small.info.holdout.as_ref().expect("the smoke test ran");
    assert!(h.positives > 0 && h.auroc.is_finite());
    assert!(small.info.converged);
}

#[test]
fn deterministic_across_thread_counts_and_stored_faithfully() {
    let g = synthetic();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| top_k(&g, &params(20)).unwrap())
    };
    let mut one = run(1);
    let mut three = run(3);
    one.info.timings.clear();
    three.info.timings.clear();
    assert_eq!(one, three, "1 and 3 threads give different lists");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("topk.snap");
    one.save(&path).unwrap();
    assert_eq!(TopK::load(&path, &g).unwrap(), one);
    // Another graph's file is refused with the reason.
    let other = generate(&SynthSpec {
        nodes: 30_000,
        edges: 300_000,
        seed: 8,
        progress: false,
    });
    let err = TopK::load(&path, &other).unwrap_err().to_string();
    assert!(err.contains("another graph"), "{err}");
    // Discover's proposal leaves the known answers out.
    let d0 = one.diseases[0];
    let (is_c, local) = one.locate(d0).unwrap();
    assert!(!is_c);
    let first: Vec<u32> = one
        .propose((is_c, local), &[], 5)
        .iter()
        .map(|x| x.0)
        .collect();
    let mut known = vec![first[0]];
    known.sort_unstable();
    let next = one.propose((is_c, local), &known, 5);
    assert_eq!(next[0].0, first[1]);
    let _ = Sparse::default();
}
