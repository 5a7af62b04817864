//! Properties of the re-derived Novelty N (docs/RNS.md "Novelty"): bounds, the closed-world
//! slice property, independence from entities outside A, invariance to a common factor on
//! the marginals and to return-to-self mass, and that N discriminates on a small hand-made
//! graph where the paper's clipped form is constant.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use proptest::prelude::*;
use serenqa_model::embeddings::FastRp;
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::{Model, ModelConfig};
use serenqa_shared::rns::{Scorer, Weights};

fn cfg() -> ModelConfig {
    ModelConfig {
        embedding: FastRp {
            dim: 8,
            ..FastRp::default()
        },
        ..ModelConfig::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// **Bounds and closed world.** On any graph, for any Ae, As: 0 ≤ N ≤ 1 and N equals
    /// min(1, −log₂((1 − ε)O + ε π(As) + δ)/40) with O computed from the dense P3 of the whole
    /// graph; changing
    /// the embeddings and marginals of every entity outside A, or adding a component
    /// unreachable from A (which rescales the marginals of A by one factor, up to the
    /// marginal iteration's tolerance), leaves N unchanged (exactly, resp. to 1e-9).
    #[test]
    fn novelty_bounds_and_independence(n in 4usize..10, edges in prop::collection::vec((0u32..10, 0u32..10), 3..30),
                                       extra in prop::collection::vec((0u32..5, 0u32..5), 1..10), seed in any::<u64>(), k in 1usize..3) {
        let edges: Vec<(u32, u32)> = edges.into_iter().map(|(s, d)| (s % n as u32, d % n as u32)).collect();
        let g = graph(n, &edges);
        let model = Model::compute(&g, &cfg(), false);
        let a: Vec<u32> = (0..3).collect();
        let (ae, as_): (Vec<usize>, Vec<usize>) = ((0..k).collect(), (k..3).collect());
        let w = Weights::default();
        let n_of = |g: &serenqa_graph::Graph, m: &Model| {
            let s = build_slice(g, m, &BlockCache::default(), &a).unwrap();
            Scorer::new(&s).unwrap().score(&ae, &as_, &w).unwrap().n
        };
        let n0 = n_of(&g, &model);
        prop_assert!((0.0..=1.0).contains(&n0));
        // Against the definition on the dense whole-graph P3.
        let p3 = dense_p3(&dense_p1(n, &edges, false));
        let z: f64 = a.iter().map(|&x| model.marginals[x as usize]).sum();
        let ze: f64 = ae.iter().map(|&i| model.marginals[i] / z).sum();
        let mut o = 0.0;
        for &i in &ae {
            let leave = if 1.0 - p3[i][i] > 1e-15 { 1.0 / (1.0 - p3[i][i]) } else { 0.0 };
            for &j in &as_ {
                o += model.marginals[i] / z / ze * p3[i][j] * leave;
            }
        }
        let prior: f64 = as_.iter().map(|&j| model.marginals[j] / z).sum();
        let eps = serenqa_shared::rns::PRIOR_MIX;
        let want = (-((1.0 - eps) * o + eps * prior + 1e-12f64).log2() / 40.0).clamp(0.0, 1.0);
        prop_assert!((n0 - want).abs() < 1e-9, "N {} vs definition {}", n0, want);
        // Outside entities' embeddings and marginals.
        let mut other = model.clone();
        let mut x = seed | 1;
        for v in 3..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            other.marginals[v] = (x >> 11) as f64 / (1u64 << 53) as f64 + 1e-9;
            for d in 0..8 { other.embeddings.data[v * 8 + d] = ((x >> (d * 4)) & 0xf) as f32 - 7.5; }
        }
        prop_assert_eq!(n_of(&g, &other), n0);
        // An unreachable component.
        let mut more = edges.clone();
        more.extend(extra.iter().map(|&(s, d)| (s + n as u32, d + n as u32)));
        let bigger = graph(n + 5, &more);
        let nb = n_of(&bigger, &Model::compute(&bigger, &cfg(), false));
        prop_assert!((nb - n0).abs() < 1e-9, "{} vs {}", nb, n0);
    }

    /// **Return-to-self mass does not count.** Scaling the off-diagonal entries of the rows
    /// of Ae by any factor c ∈ (0, 1] while giving the difference to the diagonal (so where
    /// the leaving walks go is unchanged) leaves N unchanged; scaling the marginals of A by a
    /// common factor leaves it unchanged too.
    #[test]
    fn novelty_ignores_self_mass_and_marginal_scale(n in 4usize..9, edges in prop::collection::vec((0u32..9, 0u32..9), 4..30),
                                                    c in 0.05f64..1.0, f in 0.001f64..1000.0) {
        let edges: Vec<(u32, u32)> = edges.into_iter().map(|(s, d)| (s % n as u32, d % n as u32)).collect();
        let g = graph(n, &edges);
        let model = Model::compute(&g, &cfg(), false);
        let a: Vec<u32> = (0..n as u32).collect();
        let s = build_slice(&g, &model, &BlockCache::default(), &a).unwrap();
        let ae = [0usize, 1];
        let cands: Vec<usize> = (2..n).collect();
        let w = Weights::default();
        let base = Scorer::new(&s).unwrap().score_candidates(&ae, &cands, &w).unwrap();
        let mut moved = s.clone();
        for &r in &ae {
            let diag = moved.block[r * n + r];
            prop_assume!(diag < 1.0 - 1e-9);
            for x in 0..n {
                if x != r { moved.block[r * n + x] *= c; }
            }
            moved.block[r * n + r] = 1.0 - c * (1.0 - diag);
        }
        let after = Scorer::new(&moved).unwrap().score_candidates(&ae, &cands, &w).unwrap();
        for (x, y) in base.iter().zip(&after) {
            prop_assert!((x.n - y.n).abs() < 1e-9, "{} vs {}", x.n, y.n);
        }
        let mut scaled = s.clone();
        scaled.marginals.iter_mut().for_each(|p| *p *= f);
        let sc = Scorer::new(&scaled).unwrap().score_candidates(&ae, &cands, &w).unwrap();
        for (x, y) in base.iter().zip(&sc) {
            prop_assert!((x.n - y.n).abs() < 1e-12);
        }
    }
}

/// **N discriminates where it must.** Two known drugs D1, D2 share a target gene G; drug C1
/// binds G too (one step from the known drugs' neighbourhood), C2 binds another gene two steps
/// further out, C3 is in a separate component. For Ae = {D1, D2} the candidates' N is
/// strictly ordered C1 < C2 < C3 (C3, unreachable, at the background draw's level:
/// −log₂(ε π(C3)) / 40, not tied at a cap), while the paper's clipped form (1 − clip₀₁(mi_paper /
/// log₂|A|)) is the same for all three candidates.
#[test]
fn novelty_varies_on_a_hand_made_graph() {
    // 0 = D1, 1 = D2, 2 = G, 3 = C1, 4 = H, 5 = C2, 6 = C3, 7 = K (C3's only neighbour).
    let edges = [(0, 2), (1, 2), (3, 2), (2, 4), (4, 5), (6, 7)];
    let g = graph(8, &edges);
    let model = Model::compute(&g, &cfg(), false);
    let all: Vec<u32> = vec![0, 1, 3, 5, 6];
    let s = build_slice(&g, &model, &BlockCache::default(), &all).unwrap();
    let sc = Scorer::new(&s).unwrap();
    let w = Weights::default();
    let t = sc.score_candidates(&[0, 1], &[2, 3, 4], &w).unwrap();
    let (n1, n2, n3) = (t[0].n, t[1].n, t[2].n);
    eprintln!("N(C1) = {n1:.4}, N(C2) = {n2:.4}, N(C3) = {n3:.4}");
    assert!(n1 < n2 && n2 < n3, "{n1} {n2} {n3}");
    let pi3 = model.marginals[6]
        / [0usize, 1, 6]
            .iter()
            .map(|&x| model.marginals[x])
            .sum::<f64>();
    assert!(
        (n3 - serenqa_shared::rns::novelty(0.0, pi3)).abs() < 1e-9,
        "{n3}"
    );
    assert!(n3 < 1.0);
    let paper: Vec<f64> = [2usize, 3, 4]
        .iter()
        .map(|&c| {
            let d = sc.details(&[0, 1], &[c], &w).unwrap();
            1.0 - (d.mi_paper / 3f64.log2()).clamp(0.0, 1.0)
        })
        .collect();
    eprintln!("paper's N: {paper:?}");
    assert!(
        paper.windows(2).all(|p| (p[0] - p[1]).abs() < 1e-12),
        "the paper's clipped N is constant here: {paper:?}"
    );
}
