//! Benchmarks of the model as library functions (not timed tests): marginals against a
//! bandwidth floor, exact P3 blocks, slice + greedy swap, embeddings, and an export of the CSR
//! arrays for the scipy.sparse comparison in `bench/marginals_scipy.py`.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use serenqa_graph::{Graph, NodeId};
use serenqa_shared::rns::{Scorer, Weights};

use crate::embeddings::{splitmix64, Embedder, Embeddings, FastRp};
use crate::marginals::{self, MarginalParams, MarginalStats, Solver};
use crate::reorder::{Lists, WalkCsr};
use crate::slice::{build_slice, BlockCache};
use crate::transition::Transition;
use crate::{Model, ModelError};

/// Peak resident set size of this process (VmHWM), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[derive(Clone, Debug, Serialize)]
pub struct MarginalBench {
    pub nodes: usize,
    pub edges: usize,
    /// `stats.seconds` is the iterations alone; the reordering is timed separately.
    pub stats: MarginalStats,
    pub reorder_seconds: f64,
    pub total_seconds: f64,
    /// Pull passes done (3 per application of P3ᵀ).
    pub passes: usize,
    /// `passes` plain sequential sweeps over the arrays a pull pass reads.
    pub floor_seconds: f64,
    /// iteration seconds / floor seconds of the same passes (cost per pass; goal ≤ 2).
    pub ratio: f64,
    /// When the solver is not the power iteration: Algorithm 2 as written on the same arrays in
    /// the same run (the baseline), and how far both are from a tight solve.
    pub baseline: Option<SolverCheck>,
    pub peak_rss_bytes: Option<u64>,
}

/// The power iteration beside another solver, and both against a tight solve (ε = 1e-14).
#[derive(Clone, Debug, Serialize)]
pub struct SolverCheck {
    pub power: MarginalStats,
    /// power seconds / solver seconds.
    pub speedup: f64,
    /// iteration seconds / the floor of the power iteration's passes (the issue's "streaming
    /// floor": what Algorithm 2 must stream at least).
    pub ratio_to_power_floor: f64,
    /// ‖p − p_exact‖₁ and max |p − p_exact| of the solver and of the power iteration.
    pub l1_vs_exact: f64,
    pub max_abs_vs_exact: f64,
    pub power_l1_vs_exact: f64,
    pub power_max_abs_vs_exact: f64,
    pub exact: MarginalStats,
    /// The same solver without source windows (every list gathered in the plain pass), same
    /// run: what `segmented` saves.
    pub unsegmented: OtherSolver,
    /// The other solvers of the symmetric system in the same run (conjugate gradients and the
    /// Lanczos solvers not timed above), with their distances to the tight solve.
    pub others: Vec<OtherSolver>,
}

/// Another solver on the same arrays in the same run.
#[derive(Clone, Debug, Serialize)]
pub struct OtherSolver {
    pub stats: MarginalStats,
    /// its seconds / the floor of the power iteration's passes.
    pub ratio_to_power_floor: f64,
    pub l1_vs_exact: f64,
    pub max_abs_vs_exact: f64,
}

/// The marginals timed with `params`' solver, then the bandwidth floor with the same number of
/// passes; with a solver other than the power iteration, also the power iteration (same run)
/// and a tight solve to check both against.
pub fn marginals(
    g: &Graph,
    params: &MarginalParams,
    directed: bool,
    progress: bool,
) -> (Vec<f64>, MarginalBench) {
    marginals_with(g, params, directed, progress, true, false, None)
}

/// [`marginals`], without the baseline and the tight solve when `baseline` is false (a quick
/// look at one solver); with `others`, the baseline also times the other symmetric solvers.
/// `windows` = (window nodes, long-list bound) for the timed solver instead of the default
/// policy ([`marginals::compute_on`]): how the defaults were chosen.
pub fn marginals_with(
    g: &Graph,
    params: &MarginalParams,
    directed: bool,
    progress: bool,
    baseline: bool,
    others: bool,
    windows: Option<(usize, usize)>,
) -> (Vec<f64>, MarginalBench) {
    let t = Transition::new(g, directed);
    let start = Instant::now();
    let w = WalkCsr::build(&t, Lists::Pull);
    let reorder_seconds = start.elapsed().as_secs_f64();
    let (p, stats) = match windows {
        Some((window, long_min)) => {
            marginals::compute_segmented(&w, params, progress, window, long_min)
        }
        None => marginals::compute_on(&w, params, progress),
    };
    let passes = stats.passes;
    let (floor, _) = marginals::bandwidth_floor(&w, passes);
    let baseline = (baseline && stats.solver != Solver::Power).then(|| {
        let power_params = MarginalParams {
            solver: Solver::Power,
            ..*params
        };
        let (pp, power) = marginals::compute_on(&w, &power_params, progress);
        // The tight solve is always conjugate gradients (a different method from the one checked
        // when that is the shifted Lanczos solver).
        let exact_params = MarginalParams {
            epsilon: 1e-14,
            max_iterations: 10_000,
            solver: Solver::ConjugateGradient,
            ..*params
        };
        let (pe, exact) = marginals::compute_on(&w, &exact_params, progress);
        let dist = |a: &[f64]| {
            a.iter()
                .zip(&pe)
                .fold((0.0f64, 0.0f64), |(l1, mx), (x, y)| {
                    let d = (x - y).abs();
                    (l1 + d, mx.max(d))
                })
        };
        let (l1, mx) = dist(&p);
        let (pl1, pmx) = dist(&pp);
        let per_pass = floor / passes.max(1) as f64;
        let power_floor = (per_pass * power.passes as f64).max(1e-9);
        let other = |(po, os): (Vec<f64>, MarginalStats)| {
            let (ol1, omx) = dist(&po);
            OtherSolver {
                ratio_to_power_floor: os.seconds / power_floor,
                stats: os,
                l1_vs_exact: ol1,
                max_abs_vs_exact: omx,
            }
        };
        let unsegmented = other(marginals::compute_segmented(
            &w,
            params,
            progress,
            usize::MAX,
            marginals::LONG_MIN,
        ));
        let others = [
            Solver::ConjugateGradient,
            Solver::ShiftedLanczos,
            Solver::MixedLanczos,
        ]
        .into_iter()
        .filter(|&s| others && s != stats.solver)
        .map(|solver| {
            let other_params = MarginalParams { solver, ..*params };
            other(marginals::compute_on(&w, &other_params, progress))
        })
        .collect();
        SolverCheck {
            speedup: power.seconds / stats.seconds.max(1e-9),
            ratio_to_power_floor: stats.seconds / power_floor,
            power,
            l1_vs_exact: l1,
            max_abs_vs_exact: mx,
            power_l1_vs_exact: pl1,
            power_max_abs_vs_exact: pmx,
            exact,
            unsegmented,
            others,
        }
    });
    let bench = MarginalBench {
        nodes: g.node_count(),
        edges: g.edge_count(),
        ratio: stats.seconds / floor.max(1e-9),
        total_seconds: reorder_seconds + stats.seconds,
        reorder_seconds,
        stats,
        passes,
        floor_seconds: floor,
        baseline,
        peak_rss_bytes: peak_rss_bytes(),
    };
    (p, bench)
}

/// `count` distinct nodes drawn deterministically (from nodes of type `kind` when given and
/// present, else from all nodes).
pub fn sample_nodes(g: &Graph, count: usize, seed: u64, kind: Option<&str>) -> Vec<NodeId> {
    let pool: Vec<NodeId> = match kind.and_then(|k| g.type_id(k)) {
        Some(t) => g.nodes_of_type(t).to_vec(),
        None => (0..g.node_count() as NodeId).collect(),
    };
    let want = count.min(pool.len());
    let mut out: Vec<NodeId> = Vec::with_capacity(want);
    let mut s = seed;
    while out.len() < want {
        s = splitmix64(s);
        let n = pool[(s % pool.len() as u64) as usize];
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    pub runs: usize,
    pub median_ms: f64,
    pub max_ms: f64,
    pub min_ms: f64,
}

fn timing(mut ms: Vec<f64>) -> Timing {
    ms.sort_by(f64::total_cmp);
    Timing {
        runs: ms.len(),
        median_ms: ms.get(ms.len() / 2).copied().unwrap_or(0.0),
        max_ms: ms.last().copied().unwrap_or(0.0),
        min_ms: ms.first().copied().unwrap_or(0.0),
    }
}

/// Exact P3 blocks for `runs` random sets of `size` nodes (cold: no cache).
pub fn blocks(
    g: &Graph,
    directed: bool,
    size: usize,
    runs: usize,
    seed: u64,
    kind: Option<&str>,
) -> Timing {
    let t = Transition::new(g, directed);
    let ms = (0..runs)
        .map(|r| {
            let a = sample_nodes(g, size, seed.wrapping_add(r as u64 * 7919), kind);
            let start = Instant::now();
            let b = t.block(&a);
            std::hint::black_box(&b);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    timing(ms)
}

#[derive(Clone, Debug, Serialize)]
pub struct SwapBench {
    pub candidates: usize,
    /// Building the slice (block included, cold cache).
    pub slice: Timing,
    /// Greedy swap on the slice (RNS evaluations included).
    pub greedy: Timing,
    pub swaps: Vec<usize>,
    pub evaluations: Vec<u64>,
}

/// Slice + greedy swap for `runs` random candidate sets of `size`.
pub fn swap(
    g: &Graph,
    model: &Model,
    size: usize,
    runs: usize,
    seed: u64,
    kind: Option<&str>,
    w: &Weights,
) -> Result<SwapBench, ModelError> {
    let mut slice_ms = Vec::new();
    let mut greedy_ms = Vec::new();
    let mut swaps = Vec::new();
    let mut evaluations = Vec::new();
    for r in 0..runs {
        let a = sample_nodes(g, size, seed.wrapping_add(r as u64 * 104_729), kind);
        let cache = BlockCache::new(1);
        let start = Instant::now();
        let slice = build_slice(g, model, &cache, &a)?;
        slice_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        let sc = Scorer::new(&slice)?;
        let ac: Vec<usize> = (0..a.len()).collect();
        let res = sc.greedy_swap(&ac, None, w)?;
        greedy_ms.push(start.elapsed().as_secs_f64() * 1e3);
        swaps.push(res.swaps);
        evaluations.push(res.evaluations);
    }
    Ok(SwapBench {
        candidates: size,
        slice: timing(slice_ms),
        greedy: timing(greedy_ms),
        swaps,
        evaluations,
    })
}

/// FastRP at scale, timed (seconds are in the returned info).
pub fn embeddings(g: &Graph, cfg: &FastRp, progress: bool) -> Embeddings {
    cfg.embed(g, progress)
}

/// Writes the CSR arrays (raw little-endian) and a JSON header for `bench/marginals_scipy.py`:
/// `out_offsets.u64`, `out_targets.u32`, `marginals.f64` (ours), `header.json`.
pub fn export_for_scipy(
    g: &Graph,
    dir: &Path,
    ours: &[f64],
    bench: &MarginalBench,
    params: &MarginalParams,
) -> Result<(), ModelError> {
    let io = |e: std::io::Error| ModelError::Invalid(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let (oo, ot, _) = g.out_csr();
    let write = |name: &str, bytes: &[u8]| -> Result<(), ModelError> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(name)).map_err(io)?);
        f.write_all(bytes).map_err(io)?;
        f.flush().map_err(io)
    };
    write(
        "out_offsets.u64",
        &oo.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
    )?;
    write(
        "out_targets.u32",
        &ot.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
    )?;
    write(
        "marginals.f64",
        &ours
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    )?;
    let header = serde_json::json!({
        "nodes": g.node_count(),
        "edges": g.edge_count(),
        "lambda": params.lambda,
        "epsilon": params.epsilon,
        "directed": false,
        "ours": bench,
    });
    write("header.json", header.to_string().as_bytes())
}

#[derive(Clone, Debug, Serialize)]
pub struct CandidateBench {
    pub existing: usize,
    pub candidates: usize,
    /// One `score_candidates` call (what the UI runs per slider move), slice already built.
    pub score: Timing,
    pub slice: Timing,
}

/// RNS(Ae, {c}) for `candidates` candidates against `existing` existing answers: the
/// browser's per-slider-move work, timed natively.
pub fn candidates(
    g: &Graph,
    model: &Model,
    existing: usize,
    candidates: usize,
    runs: usize,
    seed: u64,
    kind: Option<&str>,
) -> Result<CandidateBench, ModelError> {
    let nodes = sample_nodes(g, existing + candidates, seed, kind);
    let start = Instant::now();
    let slice = build_slice(g, model, &BlockCache::new(1), &nodes)?;
    let slice_ms = start.elapsed().as_secs_f64() * 1e3;
    let sc = Scorer::new(&slice)?;
    let ae: Vec<usize> = (0..existing.min(nodes.len())).collect();
    let cs: Vec<usize> = (ae.len()..nodes.len()).collect();
    let mut ms = Vec::new();
    for r in 0..runs.max(1) {
        let w = Weights::new(0.2 + 0.01 * r as f64, 0.4, 0.4)?;
        let start = Instant::now();
        let t = sc.score_candidates(&ae, &cs, &w)?;
        std::hint::black_box(&t);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(CandidateBench {
        existing: ae.len(),
        candidates: cs.len(),
        score: timing(ms),
        slice: timing(vec![slice_ms]),
    })
}
