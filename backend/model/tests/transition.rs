//! The transition model and marginals against dense computations from the edge list.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use proptest::prelude::*;
use serenqa_model::marginals::{self, MarginalParams, Solver};
use serenqa_model::reorder::{Lists, WalkCsr};
use serenqa_model::transition::Transition;

fn edges_strategy() -> impl Strategy<Value = (usize, Vec<(u32, u32)>)> {
    (1usize..12).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec((0..n as u32, 0..n as u32), 0..40),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// P3 (evaluated exactly on the block of all nodes) is non-negative, row-stochastic, and
    /// equals the dense Σ αₕP1ʰ built from the edge list — both walk directions.
    #[test]
    fn p3_rows_nonnegative_and_stochastic((n, edges) in edges_strategy(), directed in any::<bool>()) {
        let g = graph(n, &edges);
        let t = Transition::new(&g, directed);
        let all: Vec<u32> = (0..n as u32).collect();
        let b = t.block(&all);
        let dense = dense_p3(&dense_p1(n, &edges, directed));
        for i in 0..n {
            let row = &b[i * n..(i + 1) * n];
            prop_assert!(row.iter().all(|&x| x >= 0.0));
            prop_assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            for j in 0..n {
                prop_assert!((row[j] - dense[i][j]).abs() < 1e-12, "P3[{i}][{j}] = {} vs dense {}", row[j], dense[i][j]);
            }
            let p1: f64 = t.p1_row(i as u32).iter().map(|x| x.1).sum();
            prop_assert!((p1 - 1.0).abs() < 1e-12);
        }
    }

    /// The block of any subset, in any order, equals the dense P3 restricted to it.
    #[test]
    fn block_of_subset_matches_dense((n, edges) in edges_strategy(), directed in any::<bool>(), pick in prop::collection::vec(any::<prop::sample::Index>(), 1..6)) {
        let g = graph(n, &edges);
        let t = Transition::new(&g, directed);
        let mut a: Vec<u32> = Vec::new();
        for p in pick {
            let x = p.index(n) as u32;
            if !a.contains(&x) { a.push(x); }
        }
        let b = t.block(&a);
        let dense = dense_p3(&dense_p1(n, &edges, directed));
        let k = a.len();
        for r in 0..k {
            for c in 0..k {
                prop_assert!((b[r * k + c] - dense[a[r] as usize][a[c] as usize]).abs() < 1e-12);
            }
        }
    }

    /// P3ᵀx by three sparse passes equals the dense product.
    #[test]
    fn p3t_matches_dense((n, edges) in edges_strategy(), directed in any::<bool>(), seed in any::<u64>()) {
        let g = graph(n, &edges);
        let t = Transition::new(&g, directed);
        let x: Vec<f64> = (0..n).map(|i| ((seed >> (i % 60)) & 0xff) as f64 / 255.0).collect();
        let mut y = vec![0.0; n];
        t.p3t(&x, &t.inv_degrees(), &mut y);
        let dense = dense_p3(&dense_p1(n, &edges, directed));
        for j in 0..n {
            let want: f64 = (0..n).map(|i| dense[i][j] * x[i]).sum();
            prop_assert!((y[j] - want).abs() < 1e-12);
        }
    }

    /// P3ᵀx at chosen nodes, pushed from a sparse x, equals the dense product there.
    #[test]
    fn p3t_at_matches_dense((n, edges) in edges_strategy(), directed in any::<bool>(), seed in any::<u64>()) {
        let g = graph(n, &edges);
        let t = Transition::new(&g, directed);
        let x: Vec<(u32, f64)> = (0..n)
            .filter(|i| (seed >> (i % 60)) & 3 == 0)
            .map(|i| (i as u32, ((seed >> (i % 50)) & 0xff) as f64 / 255.0))
            .collect();
        let at: Vec<u32> = (0..n as u32).filter(|j| (seed >> (j % 61)) & 1 == 1).collect();
        let y = t.p3t_at(&x, &at);
        let dense = dense_p3(&dense_p1(n, &edges, directed));
        for (k, &j) in at.iter().enumerate() {
            let want: f64 = x.iter().map(|&(i, m)| dense[i as usize][j as usize] * m).sum();
            prop_assert!((y[k] - want).abs() < 1e-12);
        }
    }

    /// Marginals are positive, sum to 1, and equal the dense Algorithm 2 (same iterations) with
    /// the power iteration; conjugate gradients and shifted Lanczos (undirected walks) stop on
    /// the same residual of their own result; all are within ε/(1 − λ) of the exact fixed point.
    #[test]
    fn marginals_sum_to_one((n, edges) in edges_strategy(), directed in any::<bool>()) {
        let g = graph(n, &edges);
        let t = Transition::new(&g, directed);
        let dense = dense_p3(&dense_p1(n, &edges, directed));
        let params = MarginalParams::default();
        let exact = dense_exact_marginals(&dense, params.lambda);
        let bound = params.epsilon / (1.0 - params.lambda) + 1e-13;
        let power = MarginalParams { solver: Solver::Power, ..params };
        let cg = MarginalParams { solver: Solver::ConjugateGradient, ..params };
        let lanczos = MarginalParams { solver: Solver::ShiftedLanczos, ..params };
        let mixed = MarginalParams { solver: Solver::MixedLanczos, ..params };
        let (want, iters) = dense_marginals(&dense, params.lambda, params.epsilon);
        for (which, ps) in [("default", params), ("power", power), ("cg", cg), ("lanczos", lanczos), ("mixed", mixed)] {
            let (p, stats) = marginals::compute(&t, &ps, false);
            prop_assert!(stats.converged, "{}", which);
            prop_assert!(stats.residual < params.epsilon, "{}", which);
            prop_assert!(p.iter().all(|&x| x > 0.0), "{}", which);
            prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{}", which);
            let l1: f64 = p.iter().zip(&exact).map(|(a, b)| (a - b).abs()).sum();
            prop_assert!(l1 <= bound, "{} is {} from the exact marginals", which, l1);
            let solver = if directed { Solver::Power } else { ps.solver };
            prop_assert_eq!(stats.solver, solver);
            if solver == Solver::Power {
                prop_assert_eq!(stats.iterations, iters);
                for i in 0..n {
                    prop_assert!((p[i] - want[i]).abs() < 1e-12);
                }
            }
        }
        // With the long lists cut into source windows (used above 2²⁰ nodes), every solver gives
        // the same marginals: windows of 1..3 nodes and a bound of 1 or 2 entries segment
        // (nearly) every list into many runs.
        let w = WalkCsr::build(&t, Lists::Pull);
        for (window, long_min) in [(1, 1), (2, 1), (3, 2)] {
            let (pb, sb) = marginals::compute_segmented(&w, &power, false, window, long_min);
            prop_assert_eq!(sb.iterations, iters);
            for i in 0..n {
                prop_assert!((pb[i] - want[i]).abs() < 1e-12);
            }
            for ps in [cg, lanczos, mixed] {
                let (pb, sb) = marginals::compute_segmented(&w, &ps, false, window, long_min);
                prop_assert!(sb.converged && sb.residual < params.epsilon);
                let l1: f64 = pb.iter().zip(&exact).map(|(a, b)| (a - b).abs()).sum();
                prop_assert!(l1 <= bound, "{:?} segmented is {} from the exact marginals", ps.solver, l1);
            }
        }
    }
}

/// Conjugate gradients need far fewer applications of P3ᵀ than the power iteration on a graph
/// with a slow mode (a long path: the walk mixes slowly), and give the same marginals.
#[test]
fn conjugate_gradients_take_fewer_steps_on_a_slow_graph() {
    let n = 200;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    let g = graph(n as usize, &edges);
    let t = Transition::new(&g, false);
    let cg = MarginalParams {
        solver: Solver::ConjugateGradient,
        ..MarginalParams::default()
    };
    let power = MarginalParams {
        solver: Solver::Power,
        ..cg
    };
    let (pc, sc) = marginals::compute(&t, &cg, false);
    let (pp, sp) = marginals::compute(&t, &power, false);
    assert!(sc.converged && sp.converged);
    assert_eq!(sc.solver, Solver::ConjugateGradient);
    assert!(
        sc.iterations * 2 <= sp.iterations,
        "CG {} vs power {}",
        sc.iterations,
        sp.iterations
    );
    let l1: f64 = pc.iter().zip(&pp).map(|(a, b)| (a - b).abs()).sum();
    assert!(l1 < 2.0 * cg.epsilon / (1.0 - cg.lambda), "{l1}");
    // Shifted Lanczos: one pull pass per step, fewer passes than CG, the same marginals.
    let lanczos = MarginalParams {
        solver: Solver::ShiftedLanczos,
        ..cg
    };
    let (pl, sl) = marginals::compute(&t, &lanczos, false);
    assert!(sl.converged);
    assert_eq!(sl.solver, Solver::ShiftedLanczos);
    assert!(
        sl.passes < sc.passes,
        "Lanczos {} vs CG {} passes",
        sl.passes,
        sc.passes
    );
    let l1: f64 = pl.iter().zip(&pp).map(|(a, b)| (a - b).abs()).sum();
    assert!(l1 < 2.0 * cg.epsilon / (1.0 - cg.lambda), "{l1}");
}

/// A hub with many leaves takes the "look up each predecessor" path of the block
/// computation (its degree exceeds the lookup budget); results must not change.
#[test]
fn hub_lookup_path_matches_dense() {
    let n = 300;
    let mut edges: Vec<(u32, u32)> = (1..250).map(|i| (0, i)).collect();
    edges.extend([
        (1, 2),
        (2, 3),
        (3, 1),
        (5, 0),
        (250, 251),
        (251, 0),
        (7, 7),
        (1, 2),
    ]);
    for directed in [false, true] {
        let g = graph(n, &edges);
        let t = Transition::new(&g, directed);
        let dense = dense_p3(&dense_p1(n, &edges, directed));
        for a in [
            vec![1u32, 2],
            vec![0, 3, 250],
            vec![7, 251, 299, 5],
            vec![4, 1],
        ] {
            let b = t.block(&a);
            let k = a.len();
            for r in 0..k {
                for c in 0..k {
                    let want = dense[a[r] as usize][a[c] as usize];
                    assert!(
                        (b[r * k + c] - want).abs() < 1e-12,
                        "directed {directed} A {a:?} [{r}][{c}]: {} vs {want}",
                        b[r * k + c]
                    );
                }
            }
        }
    }
}

/// Multiplicity counts edges in either stored direction (undirected) or the stored one.
#[test]
fn multiplicity_counts_parallel_edges() {
    let mut edges = vec![(0u32, 1u32), (0, 1), (1, 0), (2, 1)];
    // A long list on node 0 so the segment binary search is used.
    edges.extend((3..60).map(|i| (0, i)));
    let g = graph(60, &edges);
    assert_eq!(Transition::new(&g, false).multiplicity(0, 1), 3);
    assert_eq!(Transition::new(&g, true).multiplicity(0, 1), 2);
    assert_eq!(Transition::new(&g, true).multiplicity(1, 0), 1);
    assert_eq!(Transition::new(&g, false).multiplicity(0, 2), 0);
    assert_eq!(Transition::new(&g, false).multiplicity(59, 0), 1);
}

/// Hitting the iteration cap is reported, not hidden.
#[test]
fn iteration_cap_is_reported() {
    let g = graph(4, &[(0, 1), (1, 2)]);
    let t = Transition::new(&g, true);
    let (_, stats) = marginals::compute(
        &t,
        &MarginalParams {
            max_iterations: 1,
            ..Default::default()
        },
        false,
    );
    assert_eq!(stats.iterations, 1);
    assert!(!stats.converged);
}

/// The P3 block is bit-identical whatever the thread count: RNS scores (and every ranking
/// built on them) must not change between runs, processes or machines.
#[test]
fn block_is_bit_identical_on_any_thread_count() {
    use serenqa_graph::synth::{generate, SynthSpec};
    let g = generate(&SynthSpec {
        nodes: 20_000,
        edges: 200_000,
        seed: 3,
        progress: false,
    });
    let t = Transition::new(&g, false);
    let a: Vec<u32> = (0..60u32).map(|i| i * 311 % 20_000).collect();
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        pool.install(|| t.block(&a))
    };
    let one = on(1);
    assert!(one.iter().any(|&x| x > 0.0));
    for threads in [2, 3, 8] {
        for _ in 0..3 {
            let other = on(threads);
            assert!(
                one.iter()
                    .zip(&other)
                    .all(|(x, y)| x.to_bits() == y.to_bits()),
                "block differs on {threads} threads"
            );
        }
    }
}
