//! Properties of RNS on slices built from real (random) graphs.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use proptest::prelude::*;
use serenqa_model::embeddings::FastRp;
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::{Model, ModelConfig};
use serenqa_shared::rns::{budget, Scorer, Slice, Weights};

fn cfg(directed: bool) -> ModelConfig {
    ModelConfig {
        directed,
        embedding: FastRp {
            dim: 8,
            ..FastRp::default()
        },
        ..ModelConfig::default()
    }
}

fn graph_strategy() -> impl Strategy<Value = (usize, Vec<(u32, u32)>)> {
    (3usize..12).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec((0..n as u32, 0..n as u32), 0..40),
        )
    })
}

/// Splits a shuffled list of distinct nodes into (Ae, As), both non-empty.
fn split(n: usize, order: &[prop::sample::Index], k: usize) -> (Vec<usize>, Vec<usize>) {
    let mut nodes: Vec<usize> = Vec::new();
    for o in order {
        let x = o.index(n);
        if !nodes.contains(&x) {
            nodes.push(x);
        }
    }
    if nodes.len() < 2 {
        return (nodes, Vec::new());
    }
    let cut = 1 + k % (nodes.len() - 1);
    let (a, b) = nodes.split_at(cut);
    (a.to_vec(), b.to_vec())
}

/// A random slice straight from numbers (for greedy-swap properties on larger sets).
fn random_slice(n: usize, seed: u64) -> Slice {
    let mut s = seed | 1;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let dim = 6;
    let mut block: Vec<f64> = (0..n * n)
        .map(|_| if next() < 0.5 { 0.0 } else { next() * next() })
        .collect();
    for r in 0..n {
        let tot: f64 = block[r * n..(r + 1) * n].iter().sum::<f64>() + next();
        block[r * n..(r + 1) * n]
            .iter_mut()
            .for_each(|v| *v /= tot.max(1e-9));
    }
    Slice {
        ids: (0..n as u32).rev().collect(),
        keys: vec![],
        dim,
        embeddings: (0..n * dim).map(|_| (next() - 0.5) as f32).collect(),
        marginals: (0..n).map(|_| 1e-6 + next()).collect(),
        block,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// RNS computed from the slice of A equals RNS computed from definitions against the
    /// full graph (dense P3 of the whole graph, full marginal vector, all embeddings).
    #[test]
    fn slice_rns_equals_full_graph_rns((n, edges) in graph_strategy(), directed in any::<bool>(),
                                       order in prop::collection::vec(any::<prop::sample::Index>(), 2..8), k in any::<usize>()) {
        let g = graph(n, &edges);
        let model = Model::compute(&g, &cfg(directed), false);
        let (ae, as_) = split(n, &order, k);
        prop_assume!(!as_.is_empty());
        let a: Vec<u32> = ae.iter().chain(&as_).map(|&x| x as u32).collect();
        let slice = build_slice(&g, &model, &BlockCache::default(), &a).unwrap();
        let w = Weights::new(0.2, 0.5, 0.3).unwrap();
        let pe: Vec<usize> = (0..ae.len()).collect();
        let ps: Vec<usize> = (ae.len()..a.len()).collect();
        let got = Scorer::new(&slice).unwrap().score(&pe, &ps, &w).unwrap();
        let p3 = dense_p3(&dense_p1(n, &edges, directed));
        let (marg, _) = dense_marginals(&p3, 0.85, 1e-10);
        let emb = |x: usize| model.embeddings.row(x as u32).iter().map(|&v| v as f64).collect::<Vec<f64>>();
        let (r, nv, s) = full_rns(&p3, &marg, &emb, &ae, &as_);
        prop_assert!((got.r - r).abs() < 1e-9, "R {} vs {}", got.r, r);
        prop_assert!((got.n - nv).abs() < 1e-9, "N {} vs {}", got.n, nv);
        prop_assert!((got.s - s).abs() < 1e-9, "S {} vs {}", got.s, s);
        prop_assert!((got.rns - (0.2 * r + 0.5 * nv + 0.3 * s)).abs() < 1e-9);
        prop_assert!((0.0..=1.0).contains(&got.r) && (0.0..=1.0).contains(&got.n) && (0.0..=1.0).contains(&got.s));
    }

    /// The greedy swap terminates, never lowers RNS, keeps |As| = b and Ae ∪ As = Ac, and
    /// stops at a partition no single swap improves (beyond rounding), from any start.
    #[test]
    fn greedy_swap_never_lowers_rns(m in 2usize..40, seed in any::<u64>(), start in any::<u64>(),
                                    a in -1.0f64..1.0, b in -1.0f64..1.0, c in -1.0f64..1.0) {
        let slice = random_slice(m + 3, seed);
        let sc = Scorer::new(&slice).unwrap();
        let w = Weights::new(a, b, c).unwrap();
        let ac: Vec<usize> = (1..m + 1).collect();
        let bsz = budget(m);
        // Arbitrary starting serendipity set of size b.
        let mut init: Vec<usize> = Vec::new();
        let mut s = start;
        while init.len() < bsz {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            let x = ac[(s >> 33) as usize % m];
            if !init.contains(&x) { init.push(x); }
        }
        let res = sc.greedy_swap(&ac, Some(&init), &w).unwrap();
        let ae0: Vec<usize> = ac.iter().copied().filter(|x| !init.contains(x)).collect();
        let before = sc.score(&ae0, &init, &w).unwrap();
        prop_assert!((res.initial.rns - before.rns).abs() < 1e-12);
        prop_assert!(res.terms.rns >= res.initial.rns);
        prop_assert_eq!(res.serendipity.len(), bsz);
        let mut all: Vec<usize> = res.existing.iter().chain(&res.serendipity).copied().collect();
        all.sort_unstable();
        prop_assert_eq!(&all, &ac);
        let now = sc.score(&res.existing, &res.serendipity, &w).unwrap();
        prop_assert!((now.rns - res.terms.rns).abs() < 1e-12);
        let tol = 1e-9;
        for &i in &res.serendipity {
            for &j in &res.existing {
                let s2: Vec<usize> = res.serendipity.iter().map(|&x| if x == i { j } else { x }).collect();
                let e2: Vec<usize> = res.existing.iter().map(|&x| if x == j { i } else { x }).collect();
                prop_assert!(sc.score(&e2, &s2, &w).unwrap().rns <= now.rns + tol);
            }
        }
    }

    /// The fast per-candidate path equals the general path with A = Ae ∪ {c}.
    #[test]
    fn candidate_scores_equal_general_scores(m in 3usize..30, seed in any::<u64>(), ne in 1usize..10) {
        let slice = random_slice(m, seed);
        let sc = Scorer::new(&slice).unwrap();
        let ne = ne.min(m - 1);
        let ae: Vec<usize> = (0..ne).collect();
        let cands: Vec<usize> = (ne..m).collect();
        let w = Weights::default();
        let fast = sc.score_candidates(&ae, &cands, &w).unwrap();
        for (t, &c) in fast.iter().zip(&cands) {
            let g = sc.score(&ae, &[c], &w).unwrap();
            prop_assert!((t.rns - g.rns).abs() < 1e-12 && (t.r - g.r).abs() < 1e-12 && (t.n - g.n).abs() < 1e-12 && (t.s - g.s).abs() < 1e-12);
        }
    }
}

/// A model survives a snapshot round trip next to its graph, and a model is rejected for a
/// different graph.
#[test]
fn model_snapshot_round_trip() {
    let g = graph(6, &[(0, 1), (1, 2), (2, 3), (4, 5), (5, 0)]);
    let model = Model::compute(&g, &cfg(false), false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.snap");
    model.save_with_graph(&g, &path).unwrap();
    let (g2, m2) = Model::load_with_graph(&path).unwrap();
    assert_eq!(g2.node_count(), 6);
    assert_eq!(m2.as_ref(), Some(&model));
    // Graph-only snapshot: no model.
    let p2 = dir.path().join("plain.snap");
    g.save(&p2).unwrap();
    assert!(Model::load_with_graph(&p2).unwrap().1.is_none());
    // A model computed for another graph does not load.
    let other = graph(7, &[(0, 1)]);
    let wrong = Model::compute(&other, &cfg(false), false);
    let p3 = dir.path().join("wrong.snap");
    wrong.save_with_graph(&g, &p3).unwrap();
    let err = Model::load_with_graph(&p3).unwrap_err().to_string();
    assert!(err.contains("does not fit the graph"), "{err}");
}

/// The model's marginals and embeddings read through the snapshot's memory map equal a copied
/// read, and graph + model saved again from the mapped read give the same file.
#[test]
fn mapped_model_reads_identically_to_an_owned_read() {
    use serenqa_graph::snapshot::SnapshotReader;
    let g = graph(
        9,
        &[
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 0),
            (6, 7),
            (7, 8),
        ],
    );
    let model = Model::compute(&g, &cfg(false), false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.snap");
    model.save_with_graph(&g, &path).unwrap();
    let original = std::fs::read(&path).unwrap();

    let mut r = SnapshotReader::open(&path).unwrap();
    let gm = serenqa_graph::Graph::read_sections(&mut r).unwrap();
    let mm = Model::read_sections(&mut r, &gm).unwrap();
    assert!(mm.marginals.is_mapped() && mm.embeddings.data.is_mapped());
    let mut r = SnapshotReader::open_unmapped(&path).unwrap();
    let go = serenqa_graph::Graph::read_sections(&mut r).unwrap();
    let mo = Model::read_sections(&mut r, &go).unwrap();
    assert!(!mo.marginals.is_mapped() && !mo.embeddings.data.is_mapped());
    assert_eq!(mm, mo);
    assert_eq!(mm, model);
    let again = dir.path().join("again.snap");
    mm.save_with_graph(&gm, &again).unwrap();
    assert!(std::fs::read(&again).unwrap() == original);
    // Writing into a mapped model copies it first; the file is untouched.
    let mut changed = mm.clone();
    changed.marginals[0] = 0.5;
    assert!(!changed.marginals.is_mapped());
    assert_eq!(mm, mo);
    assert!(std::fs::read(&path).unwrap() == original);
}
