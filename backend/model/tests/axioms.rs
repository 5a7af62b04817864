//! The paper's four axioms (§3.2) in the precise forms of docs/RNS.md. Each test's doc
//! comment is the exact statement it checks. Where the paper's loose wording cannot hold for
//! these definitions, a counterexample test exhibits why (see the crate docs).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use proptest::prelude::*;
use serenqa_graph::Graph;
use serenqa_model::embeddings::FastRp;
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::{Model, ModelConfig};
use serenqa_shared::rns::{budget, Scorer, Slice, Terms, Weights};

fn cfg() -> ModelConfig {
    ModelConfig {
        embedding: FastRp {
            dim: 8,
            ..FastRp::default()
        },
        ..ModelConfig::default()
    }
}

fn random_slice(n: usize, seed: u64) -> Slice {
    let mut s = seed | 1;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let dim = 5;
    let mut block: Vec<f64> = (0..n * n)
        .map(|_| if next() < 0.4 { 0.0 } else { next() })
        .collect();
    for r in 0..n {
        let tot: f64 = block[r * n..(r + 1) * n].iter().sum::<f64>() + next();
        block[r * n..(r + 1) * n]
            .iter_mut()
            .for_each(|v| *v /= tot.max(1e-9));
    }
    Slice {
        ids: (0..n as u32).map(|i| 100 - i).collect(),
        keys: vec![],
        dim,
        embeddings: (0..n * dim).map(|_| (next() - 0.5) as f32).collect(),
        marginals: (0..n).map(|_| 1e-6 + next()).collect(),
        block,
    }
}

/// All subsets of `0..m` of size `k` (lexicographic).
fn combinations(m: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn rec(start: usize, m: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for x in start..m {
            cur.push(x);
            rec(x + 1, m, k, cur, out);
            cur.pop();
        }
    }
    rec(0, m, k, &mut cur, &mut out);
    out
}

/// argmax over |As| = b of RNS(Ac∖As, As), first maximum in enumeration order.
fn brute_force(sc: &Scorer, m: usize, w: &Weights) -> Vec<usize> {
    let mut best: Option<(f64, Vec<usize>)> = None;
    for s in combinations(m, budget(m)) {
        let e: Vec<usize> = (0..m).filter(|x| !s.contains(x)).collect();
        let v = sc.score(&e, &s, w).unwrap().rns;
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, s));
        }
    }
    best.map(|b| b.1).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// **Scale invariance.** For any slice, candidate set Ac (2 ≤ |Ac| ≤ 12), weights
    /// (α, β, γ) and c > 0, the optimal As = argmax_{|As| = b} RNS(Ac∖As, As) under
    /// (cα, cβ, cγ) is optimal under (α, β, γ). Checked exactly for c = 2ᵏ (floating-point
    /// scaling is then exact): the brute-force optimum and the greedy swap's partition are
    /// identical. For other c ∈ [0.01, 100] rounding can break exact ties differently (e.g.
    /// |Ac| = 2 with α = 0, where JSD's symmetry makes both partitions score the same), so
    /// the check is that the scaled optimum scores within 1e-12·(|α|+|β|+|γ|) of the optimum.
    #[test]
    fn scale_invariance(m in 2usize..13, seed in any::<u64>(), a in -1.0f64..1.0, b in -1.0f64..1.0, g in -1.0f64..1.0,
                        k in -6i32..7, c in 0.01f64..100.0) {
        let slice = random_slice(m, seed);
        let sc = Scorer::new(&slice).unwrap();
        let ac: Vec<usize> = (0..m).collect();
        let w = Weights::new(a, b, g).unwrap();
        let base_bf = brute_force(&sc, m, &w);
        let base_gs = sc.greedy_swap(&ac, None, &w).unwrap();
        let exact = 2f64.powi(k);
        let ws = Weights::new(a * exact, b * exact, g * exact).unwrap();
        prop_assert_eq!(&brute_force(&sc, m, &ws), &base_bf);
        let gs = sc.greedy_swap(&ac, None, &ws).unwrap();
        prop_assert_eq!(&gs.serendipity, &base_gs.serendipity);
        prop_assert_eq!(gs.swaps, base_gs.swaps);
        let ws = Weights::new(a * c, b * c, g * c).unwrap();
        let other = brute_force(&sc, m, &ws);
        let score = |s: &[usize]| {
            let e: Vec<usize> = (0..m).filter(|x| !s.contains(x)).collect();
            sc.score(&e, s, &w).unwrap().rns
        };
        prop_assert!(score(&other) >= score(&base_bf) - 1e-12 * (a.abs() + b.abs() + g.abs()));
    }

    /// **Consistency (terms fixed ⇒ order fixed).** For a fixed Ae, every candidate's R, N and
    /// S for RNS(Ae, {c}) — and hence the order of candidates — is unchanged (to 1e-7; order
    /// compared for pairs more than 1e-6 apart) when (a) the graph's nodes are renumbered
    /// (same keys and edges, different indices) or (b) a component unreachable from A is
    /// added to the graph.
    #[test]
    fn consistency_under_relabelling_and_unreachable_parts(n in 4usize..10, edges in prop::collection::vec((0u32..10, 0u32..10), 3..30),
                                                           perm_seed in any::<u64>(), extra in prop::collection::vec((0u32..6, 0u32..6), 0..12)) {
        let edges: Vec<(u32, u32)> = edges.into_iter().map(|(s, d)| (s % n as u32, d % n as u32)).collect();
        let ne = 2.min(n - 2);
        let ae: Vec<u32> = (0..ne as u32).collect();
        let cands: Vec<u32> = (ne as u32..n as u32).collect();
        let g = graph(n, &edges);
        let base = candidate_terms(&g, &ae, &cands);
        // (a) renumbering: new index j holds original node perm[j].
        let mut perm: Vec<usize> = (0..n).collect();
        let mut s = perm_seed;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let mut inv = vec![0u32; n];
        for (j, &o) in perm.iter().enumerate() { inv[o] = j as u32; }
        let pedges: Vec<(u32, u32)> = edges.iter().map(|&(s, d)| (inv[s as usize], inv[d as usize])).collect();
        let pg = graph_named(n, &pedges, |j| format!("N{}", perm[j]));
        let relabelled = candidate_terms(&pg, &ae.iter().map(|&x| inv[x as usize]).collect::<Vec<_>>(),
                                         &cands.iter().map(|&x| inv[x as usize]).collect::<Vec<_>>());
        same_terms_and_order(&base, &relabelled)?;
        // (b) an unreachable component on 6 new nodes.
        let mut more = edges.clone();
        more.extend(extra.iter().map(|&(s, d)| (s + n as u32, d + n as u32)));
        let bigger = graph(n + 6, &more);
        same_terms_and_order(&base, &candidate_terms(&bigger, &ae, &cands))?;
    }

    /// **Consistency (one term moves ⇒ order moves as expected).** For Ae = {e} and α > 0:
    /// replacing one candidate c's embedding by e's raises R(Ae, {c}) to its maximum 1, leaves
    /// N and S of every candidate and R of every other candidate unchanged, never lowers c's
    /// rank, and keeps the relative order of the other candidates.
    #[test]
    fn consistency_when_one_term_increases(m in 4usize..20, seed in any::<u64>(), pick in any::<prop::sample::Index>(),
                                           a in 0.01f64..1.0, b in -1.0f64..1.0, g in -1.0f64..1.0) {
        let slice = random_slice(m, seed);
        let ae: Vec<usize> = vec![0];
        let cands: Vec<usize> = (1..m).collect();
        let c = cands[pick.index(cands.len())];
        let w = Weights::new(a, b, g).unwrap();
        let before = Scorer::new(&slice).unwrap().score_candidates(&ae, &cands, &w).unwrap();
        let mut moved = slice.clone();
        let d = moved.dim;
        for k in 0..d { moved.embeddings[c * d + k] = slice.embeddings[k]; }
        let after = Scorer::new(&moved).unwrap().score_candidates(&ae, &cands, &w).unwrap();
        let ci = cands.iter().position(|&x| x == c).unwrap();
        prop_assert!(after[ci].r == 1.0 && before[ci].r <= 1.0);
        for k in 0..cands.len() {
            prop_assert_eq!(after[k].n, before[k].n);
            prop_assert_eq!(after[k].s, before[k].s);
            if k != ci { prop_assert_eq!(after[k].r, before[k].r); }
        }
        let rank = |t: &[Terms], k: usize| t.iter().filter(|o| o.rns > t[k].rns).count();
        prop_assert!(rank(&after, ci) <= rank(&before, ci));
        for x in 0..cands.len() {
            for y in 0..cands.len() {
                if x != ci && y != ci && before[x].rns > before[y].rns {
                    prop_assert!(after[x].rns > after[y].rns);
                }
            }
        }
    }

    /// **Independence.** RNS(Ae, As) depends only on the slice of A = Ae ∪ As: replacing the
    /// embeddings and marginals of every entity outside A in the model by arbitrary values
    /// leaves the slice and RNS bit-identical; adding a component unreachable from A (which
    /// rescales all marginals of A by one factor and leaves the block P3[A][A] unchanged)
    /// leaves RNS unchanged to 1e-9.
    #[test]
    fn independence(n in 4usize..10, edges in prop::collection::vec((0u32..10, 0u32..10), 3..30), seed in any::<u64>(),
                    extra in prop::collection::vec((0u32..5, 0u32..5), 1..10)) {
        let edges: Vec<(u32, u32)> = edges.into_iter().map(|(s, d)| (s % n as u32, d % n as u32)).collect();
        let g = graph(n, &edges);
        let model = Model::compute(&g, &cfg(), false);
        let a: Vec<u32> = vec![0, 1, 2];
        let w = Weights::default();
        let score = |g: &Graph, m: &Model| {
            let s = build_slice(g, m, &BlockCache::default(), &a).unwrap();
            let t = Scorer::new(&s).unwrap().score(&[0], &[1, 2], &w).unwrap();
            (s, t)
        };
        let (s0, t0) = score(&g, &model);
        let mut other = model.clone();
        let mut x = seed | 1;
        for v in 3..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            other.marginals[v] = (x >> 11) as f64 / (1u64 << 53) as f64 + 1e-9;
            for k in 0..8 { other.embeddings.data[v * 8 + k] = ((x >> (k * 4)) & 0xf) as f32 - 7.5; }
        }
        let (s1, t1) = score(&g, &other);
        prop_assert_eq!(&s0, &s1);
        prop_assert_eq!(t0, t1);
        let mut more = edges.clone();
        more.extend(extra.iter().map(|&(s, d)| (s + n as u32, d + n as u32)));
        let bigger = graph(n + 5, &more);
        let (s2, t2) = score(&bigger, &Model::compute(&bigger, &cfg(), false));
        prop_assert_eq!(&s2.block, &s0.block);
        prop_assert!((t2.rns - t0.rns).abs() < 1e-9 && (t2.r - t0.r).abs() < 1e-9 && (t2.n - t0.n).abs() < 1e-9 && (t2.s - t0.s).abs() < 1e-9);
    }
}

fn candidate_terms(g: &Graph, ae: &[u32], cands: &[u32]) -> Vec<Terms> {
    let model = Model::compute(g, &cfg(), false);
    let all: Vec<u32> = ae.iter().chain(cands).copied().collect();
    let slice = build_slice(g, &model, &BlockCache::default(), &all).unwrap();
    let pe: Vec<usize> = (0..ae.len()).collect();
    let pc: Vec<usize> = (ae.len()..all.len()).collect();
    Scorer::new(&slice)
        .unwrap()
        .score_candidates(&pe, &pc, &Weights::default())
        .unwrap()
}

fn same_terms_and_order(a: &[Terms], b: &[Terms]) -> Result<(), TestCaseError> {
    for (x, y) in a.iter().zip(b) {
        prop_assert!(
            (x.r - y.r).abs() < 1e-7 && (x.n - y.n).abs() < 1e-7 && (x.s - y.s).abs() < 1e-7,
            "{x:?} vs {y:?}"
        );
    }
    for i in 0..a.len() {
        for j in 0..a.len() {
            if a[i].rns > a[j].rns + 1e-6 {
                prop_assert!(b[i].rns > b[j].rns);
            }
        }
    }
    Ok(())
}

/// A fixed 8-node graph: two compounds sharing targets, a disease cluster and a far gene.
fn small_graph() -> (Graph, Model) {
    let edges = [
        (0, 2),
        (1, 2),
        (0, 3),
        (1, 3),
        (2, 4),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 7),
        (1, 5),
        (7, 4),
    ];
    let g = graph(8, &edges);
    let m = Model::compute(&g, &cfg(), false);
    (g, m)
}

/// **Non-monotonicity.** A larger serendipity set is not necessarily more serendipitous: on
/// the fixed 8-node graph above with default weights there are Ae and As ⊂ As′ with
/// RNS(Ae, As′) < RNS(Ae, As). The test finds the first such triple in a fixed enumeration
/// (Ae = {0, 1}, As ⊂ As′ ⊆ {2..7}, |As′| = |As| + 1), prints it and checks the inequality.
#[test]
fn non_monotonicity() {
    let (g, model) = small_graph();
    let all: Vec<u32> = (0..8).collect();
    let slice = build_slice(&g, &model, &BlockCache::default(), &all).unwrap();
    let sc = Scorer::new(&slice).unwrap();
    let w = Weights::default();
    let ae = [0usize, 1];
    let pool: Vec<usize> = (2..8).collect();
    let mut found = None;
    'outer: for k in 1..pool.len() {
        for s in combinations(pool.len(), k) {
            let as_: Vec<usize> = s.iter().map(|&i| pool[i]).collect();
            let small = sc.score(&ae, &as_, &w).unwrap().rns;
            for &extra in pool.iter().filter(|x| !as_.contains(x)) {
                let mut bigger = as_.clone();
                bigger.push(extra);
                let big = sc.score(&ae, &bigger, &w).unwrap().rns;
                if big < small - 1e-6 {
                    found = Some((as_.clone(), bigger, small, big));
                    break 'outer;
                }
            }
        }
    }
    let (as_, bigger, small, big) = found.expect("a larger As with lower RNS exists");
    eprintln!("Ae = {ae:?}: RNS(As = {as_:?}) = {small:.6} > RNS(As' = {bigger:?}) = {big:.6}");
    assert!(big < small);
}

/// Counterexample to the paper's wording "A*s remains optimal if R, N **or** S is scaled by a
/// constant": scaling one term's weight alone (here α × 10) changes the optimal As for some
/// slice. (Scaling all three weights by c > 0 never does: `scale_invariance`.)
#[test]
fn counterexample_scaling_one_term_changes_the_optimum() {
    let w = Weights::default();
    let scaled = Weights::new(w.alpha * 10.0, w.beta, w.gamma).unwrap();
    let found = (0..200u64).find(|&seed| {
        let slice = random_slice(8, seed);
        let sc = Scorer::new(&slice).unwrap();
        brute_force(&sc, 8, &w) != brute_force(&sc, 8, &scaled)
    });
    assert!(
        found.is_some(),
        "no slice where scaling R alone changes the optimum"
    );
}

/// Counterexample to the paper's wording "no information from entities not seen in A can
/// affect RNS": on the path 0 – 3 – 4 – 1 with 2 attached to 0, adding the edge 3 – 5 between
/// two entities outside A = {0, 1, 2} changes P3[A][A] (walks from 0 through 3 now leak to 5)
/// and hence RNS. RNS is a function of the slice, not of A's embeddings alone.
#[test]
fn counterexample_outside_edges_change_rns() {
    let base = [(0, 3), (3, 4), (4, 1), (0, 2)];
    let w = Weights::default();
    let score = |edges: &[(u32, u32)]| {
        let g = graph(6, edges);
        let m = Model::compute(&g, &cfg(), false);
        let s = build_slice(&g, &m, &BlockCache::default(), &[0, 1, 2]).unwrap();
        let t = Scorer::new(&s).unwrap().score(&[0], &[1, 2], &w).unwrap();
        (s.block, t.rns)
    };
    let (b0, r0) = score(&base);
    let mut more = base.to_vec();
    more.push((3, 5));
    let (b1, r1) = score(&more);
    assert_ne!(b0, b1);
    assert!((r0 - r1).abs() > 1e-6, "{r0} vs {r1}");
}
