//! `serenqa-model-bench`: the model benchmark (see `serenqa_model::bench`).
//!
//! ```text
//! serenqa-model-bench [--nodes N] [--edges E] [--seed S] [--hetionet DIR]
//!                     [--skip-embeddings] [--export DIR] [--runs R] [--directed]
//! ```
//! Defaults: the synthetic CKG-scale graph (15.4M nodes, 200M edges). Prints one line per
//! measurement and a JSON summary on stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serenqa_graph::load::{hetionet, LoadOptions};
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_model::bench;
use serenqa_model::embeddings::{EmbeddingInfo, Embeddings, FastRp};
use serenqa_model::marginals::{MarginalParams, Solver};
use serenqa_model::Model;
use serenqa_shared::rns::Weights;

struct Args {
    nodes: u64,
    edges: u64,
    seed: u64,
    hetionet: Option<PathBuf>,
    skip_embeddings: bool,
    export: Option<PathBuf>,
    runs: usize,
    directed: bool,
    graph: Option<PathBuf>,
    save: Option<PathBuf>,
    only: Option<Vec<String>>,
    solver: Option<Solver>,
    window: Option<usize>,
    long_min: usize,
    no_baseline: bool,
}

impl Args {
    fn wants(&self, part: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|x| x == part))
    }
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        nodes: 15_430_157,
        edges: 201_704_256,
        seed: 1,
        hetionet: None,
        skip_embeddings: false,
        export: None,
        runs: 10,
        directed: false,
        graph: None,
        save: None,
        only: None,
        solver: None,
        window: None,
        long_min: serenqa_model::marginals::LONG_MIN,
        no_baseline: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--nodes" => a.nodes = val()?.parse().map_err(|e| format!("--nodes: {e}"))?,
            "--edges" => a.edges = val()?.parse().map_err(|e| format!("--edges: {e}"))?,
            "--seed" => a.seed = val()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--runs" => a.runs = val()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--hetionet" => a.hetionet = Some(PathBuf::from(val()?)),
            "--export" => a.export = Some(PathBuf::from(val()?)),
            "--skip-embeddings" => a.skip_embeddings = true,
            "--graph" => a.graph = Some(PathBuf::from(val()?)),
            "--save" => a.save = Some(PathBuf::from(val()?)),
            "--only" => a.only = Some(val()?.split(',').map(|s| s.trim().to_string()).collect()),
            "--directed" => a.directed = true,
            "--no-baseline" => a.no_baseline = true,
            "--window" => a.window = Some(val()?.parse().map_err(|e| format!("--window: {e}"))?),
            "--long-min" => a.long_min = val()?.parse().map_err(|e| format!("--long-min: {e}"))?,
            "--solver" => {
                a.solver = Some(match val()?.as_str() {
                    "power" => Solver::Power,
                    "cg" => Solver::ConjugateGradient,
                    "lanczos" => Solver::ShiftedLanczos,
                    "mixed" => Solver::MixedLanczos,
                    other => return Err(format!("--solver: power, cg, lanczos or mixed, not {other}")),
                });
            }
            "-h" | "--help" => {
                return Err("usage: serenqa-model-bench [--nodes N] [--edges E] [--seed S] [--hetionet DIR] [--skip-embeddings] [--export DIR] [--runs R] [--directed] [--graph SNAPSHOT] [--save SNAPSHOT] [--only marginals,blocks,embeddings,swap,candidates] [--solver power|cg|lanczos|mixed] [--no-baseline] [--window NODES (0: none)] [--long-min ENTRIES]".into())
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn gb(b: Option<u64>) -> String {
    b.map(|b| format!("{:.2} GB", b as f64 / 1e9))
        .unwrap_or_else(|| "n/a".into())
}

fn run() -> Result<(), String> {
    let a = parse()?;
    let start = Instant::now();
    let (g, kind) = match (&a.hetionet, &a.graph) {
        (_, Some(path)) => {
            let g = serenqa_graph::Graph::load(path).map_err(|e| e.to_string())?;
            let kind = if g.meta().synthetic {
                "Drug"
            } else {
                "Compound"
            };
            (g, kind)
        }
        (Some(dir), None) => {
            let files = hetionet::HetionetFiles::in_dir(dir).map_err(|e| e.to_string())?;
            (
                hetionet::load(&files, &LoadOptions { progress: true })
                    .map_err(|e| e.to_string())?,
                "Compound",
            )
        }
        (None, None) => (
            generate(&SynthSpec {
                nodes: a.nodes,
                edges: a.edges,
                seed: a.seed,
                progress: true,
            }),
            "Drug",
        ),
    };
    if let Some(path) = &a.save {
        g.save(path).map_err(|e| e.to_string())?;
        eprintln!("saved the graph to {}", path.display());
    }
    eprintln!(
        "graph: {} nodes, {} edges, built in {:.1} s, peak RSS so far {}",
        g.node_count(),
        g.edge_count(),
        start.elapsed().as_secs_f64(),
        gb(bench::peak_rss_bytes())
    );
    let mut params = MarginalParams::default();
    if let Some(solver) = a.solver {
        params.solver = solver;
    }
    let (p, mb) = if a.wants("marginals") || a.export.is_some() {
        bench::marginals_with(
            &g,
            &params,
            a.directed,
            true,
            !a.no_baseline,
            !a.no_baseline,
            a.window
                .map(|w| (if w == 0 { usize::MAX } else { w }, a.long_min)),
        )
    } else {
        // Uniform placeholder marginals when only other parts are measured.
        let n = g.node_count();
        let mb = bench::MarginalBench {
            nodes: n,
            edges: g.edge_count(),
            stats: serenqa_model::marginals::MarginalStats {
                iterations: 0,
                residual: 0.0,
                converged: false,
                seconds: 0.0,
                solver: params.solver,
                passes: 0,
            },
            reorder_seconds: 0.0,
            total_seconds: 0.0,
            passes: 0,
            floor_seconds: 0.0,
            ratio: 0.0,
            baseline: None,
            peak_rss_bytes: None,
        };
        (vec![1.0 / n as f64; n], mb)
    };
    println!(
        "marginals: {:.2} s iterating + {:.2} s reordering, {} iterations, {:?} (residual {:.2e}, converged {}), floor {:.2} s for {} passes, ratio {:.2}, peak RSS {}",
        mb.stats.seconds, mb.reorder_seconds, mb.stats.iterations, mb.stats.solver, mb.stats.residual, mb.stats.converged, mb.floor_seconds, mb.passes, mb.ratio, gb(mb.peak_rss_bytes)
    );
    if let Some(b) = &mb.baseline {
        println!(
            "marginals ({:?}) vs Algorithm 2's power iteration in the same run: {:.2} s vs {:.2} s ({} vs {} applications of P3ᵀ), speedup {:.2}×; ÷ the power iteration's streaming floor {:.2}×",
            mb.stats.solver, mb.stats.seconds, b.power.seconds, mb.stats.iterations, b.power.iterations, b.speedup, b.ratio_to_power_floor
        );
        println!(
            "against a tight solve (ε = 1e-14, {} applications): solver L1 {:.2e}, max {:.2e}; power L1 {:.2e}, max {:.2e}",
            b.exact.iterations, b.l1_vs_exact, b.max_abs_vs_exact, b.power_l1_vs_exact, b.power_max_abs_vs_exact
        );
        let u = &b.unsegmented;
        println!(
            "the same solver without source windows: {:.2} s ({} passes), ÷ power's floor {:.2}×; windows save {:.2}×; L1 to the tight solve {:.1e}",
            u.stats.seconds, u.stats.passes, u.ratio_to_power_floor, u.stats.seconds / mb.stats.seconds.max(1e-9), u.l1_vs_exact
        );
        for c in &b.others {
            println!(
                "{:?} in the same run: {:.2} s ({} iterations, {} passes, residual {:.2e}), ÷ the power iteration's streaming floor {:.2}×; L1 to the tight solve {:.2e}, max {:.2e}",
                c.stats.solver, c.stats.seconds, c.stats.iterations, c.stats.passes, c.stats.residual, c.ratio_to_power_floor, c.l1_vs_exact, c.max_abs_vs_exact
            );
        }
    }
    if let Some(dir) = &a.export {
        bench::export_for_scipy(&g, dir, &p, &mb, &params).map_err(|e| e.to_string())?;
        println!("exported CSR and marginals to {}", dir.display());
    }
    let runs_blocks = if a.wants("blocks") { a.runs } else { 0 };
    let blk_any = bench::blocks(&g, a.directed, 50, runs_blocks, a.seed, None);
    println!(
        "P3 block |A|=50 (uniform nodes): median {:.2} ms, max {:.2} ms over {} sets",
        blk_any.median_ms, blk_any.max_ms, blk_any.runs
    );
    let blk_kind = bench::blocks(&g, a.directed, 50, runs_blocks, a.seed + 1, Some(kind));
    println!(
        "P3 block |A|=50 ({kind} nodes): median {:.2} ms, max {:.2} ms over {} sets",
        blk_kind.median_ms, blk_kind.max_ms, blk_kind.runs
    );
    let emb = if a.skip_embeddings || !a.wants("embeddings") {
        // Placeholder rows (not FastRP) so the swap benchmark can run: labelled as such.
        let d = 64;
        let data = (0..g.node_count() * d)
            .map(|i| ((i * 2654435761) % 7) as f32 - 3.0)
            .collect();
        Embeddings {
            info: EmbeddingInfo {
                method: "placeholder".into(),
                dim: d,
                seed: 0,
                hop_weights: vec![],
                directed: a.directed,
                seconds: 0.0,
            },
            data,
        }
    } else {
        let e = bench::embeddings(
            &g,
            &FastRp {
                directed: a.directed,
                ..FastRp::default()
            },
            true,
        );
        println!(
            "embeddings (FastRP, d=64, 3 hops): {:.1} s, peak RSS {}",
            e.info.seconds,
            gb(bench::peak_rss_bytes())
        );
        e
    };
    let model = Model::from_parts(&g, a.directed, params, mb.stats.clone(), p, emb);
    let runs_swap = if a.wants("swap") { a.runs } else { 0 };
    let sw_any = bench::swap(
        &g,
        &model,
        100,
        runs_swap,
        a.seed + 2,
        None,
        &Weights::default(),
    )
    .map_err(|e| e.to_string())?;
    let sw_kind = bench::swap(
        &g,
        &model,
        100,
        runs_swap,
        a.seed + 3,
        Some(kind),
        &Weights::default(),
    )
    .map_err(|e| e.to_string())?;
    for (what, sw) in [("uniform", &sw_any), (kind, &sw_kind)] {
        println!(
            "|Ac|=100 ({what}): slice median {:.2} ms (max {:.2}), greedy swap median {:.2} ms (max {:.2}), swaps {:?}",
            sw.slice.median_ms, sw.slice.max_ms, sw.greedy.median_ms, sw.greedy.max_ms, sw.swaps
        );
    }
    let cand = bench::candidates(
        &g,
        &model,
        10,
        200,
        if a.wants("candidates") { a.runs } else { 1 },
        a.seed + 4,
        Some(kind),
    )
    .map_err(|e| e.to_string())?;
    println!(
        "RNS(Ae, {{c}}) for {} candidates, |Ae| = {}: median {:.3} ms, max {:.3} ms (slice of {} built once in {:.1} ms)",
        cand.candidates, cand.existing, cand.score.median_ms, cand.score.max_ms, cand.candidates + cand.existing, cand.slice.median_ms
    );
    let summary = serde_json::json!({
        "candidates200": cand,
        "graph": { "nodes": g.node_count(), "edges": g.edge_count(), "synthetic": g.meta().synthetic },
        "marginals": mb,
        "block50_uniform": blk_any,
        "block50_kind": blk_kind,
        "kind": kind,
        "embeddings_seconds": model.embeddings.info.seconds,
        "embeddings_method": model.embeddings.info.method,
        "swap100_uniform": sw_any,
        "swap100_kind": sw_kind,
        "peak_rss_bytes": bench::peak_rss_bytes(),
        "total_seconds": start.elapsed().as_secs_f64(),
    });
    println!("{summary}");
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
