//! `serenqa perf`: performance measurements, reported as medians with peak memory.
//!
//! Each measured phase runs in a fresh child process (`serenqa perf phase …`), so its peak RSS
//! (VmHWM) is its own and no cache from an earlier phase helps it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_graph::Graph;

use crate::rss;

#[derive(Args)]
pub struct PerfArgs {
    #[command(subcommand)]
    cmd: PerfCmd,
}

#[derive(Subcommand)]
enum PerfCmd {
    /// Graph store: Hetionet import, snapshot reload, synthetic CKG-scale generation and load.
    Graph {
        /// Runs per measured phase (the median is reported).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Nodes of the synthetic scale graph.
        #[arg(long, default_value_t = 15_400_000)]
        scale_nodes: u64,
        /// Edges of the synthetic scale graph.
        #[arg(long, default_value_t = 200_000_000)]
        scale_edges: u64,
        /// Skip the CKG-scale part (it needs ~10 GB of RAM and a few minutes).
        #[arg(long)]
        skip_scale: bool,
        /// Where temporary snapshots go.
        #[arg(long, default_value = "target/perf")]
        work_dir: PathBuf,
    },
    /// Annotation load test on loopback (50 annotators × 100 submissions by default); with
    /// --crash, the server is killed with SIGKILL halfway and restarted.
    Annotate(super::perf_annotate::AnnotateLoadArgs),
    /// Hostile traffic on loopback (64 attackers: budget-busting Cypher, huge bodies, malformed
    /// JSON, slow clients) while a benign client opens Discover: peak server RSS, benign
    /// p50 / p99, and that every attack got a JSON 4xx/429/503 and the server survived.
    Hostile(super::perf_hostile::HostileArgs),
    /// The whole app on a CKG-sized synthetic graph (synth → precompute → predict → serve →
    /// Discover, Ask, Cypher and paths latencies with resident memory), as one table. Needs
    /// ~13 GB of memory and ~10 minutes at the default size; not part of the test command.
    Ckg(super::perf_ckg::CkgArgs),
    /// Distributed evaluation throughput: N `serenqa worker` processes against a scripted LLM
    /// with a fixed latency (items/s per worker count, speed-up vs one worker).
    Queue(super::perf_queue::QueuePerfArgs),
    /// Cypher latency per SerenQA pattern type (p50 / p99) on the graph.
    Cypher {
        #[command(flatten)]
        graph: crate::graph_source::GraphArgs,
        /// Queries generated per pattern type (different anchor entities).
        #[arg(long, default_value_t = 20)]
        per_pattern: usize,
        /// Runs of each query.
        #[arg(long, default_value_t = 10)]
        reps: usize,
        /// Also (or, on a non-Hetionet graph, only) id-anchored one- and two-hop queries
        /// from this many start nodes.
        #[arg(long, default_value_t = 0)]
        anchored: usize,
    },
    /// Serendipity model on the loaded graph (default Hetionet): marginals against the
    /// bandwidth floor, P3 blocks, slice + greedy swap, browser-style candidate scoring.
    /// For the CKG-scale run use `serenqa-model-bench` (bench/README.md).
    Model {
        #[command(flatten)]
        graph: crate::graph_source::GraphArgs,
        #[arg(long, default_value_t = 10)]
        runs: usize,
    },
    /// Explanation-graph layout as the browser computes it (natively here; WebAssembly is
    /// slower by a small factor and the page prints its own time): the force layout alone and
    /// followed by the name separation, for subgraphs of a few sizes.
    Layout {
        #[arg(long, default_value_t = 21)]
        runs: usize,
    },
    /// One measured phase in this process (used by `perf graph`; prints a PERF line).
    #[command(hide = true)]
    Phase {
        #[command(subcommand)]
        phase: Phase,
    },
}

#[derive(Subcommand, Clone)]
enum Phase {
    ImportHetionet {
        out: PathBuf,
    },
    Reload {
        graph: PathBuf,
    },
    Synth {
        nodes: u64,
        edges: u64,
        out: PathBuf,
    },
}

#[derive(Serialize, Deserialize, Debug, Clone)]
struct PhaseResult {
    secs: f64,
    peak_rss: u64,
    nodes: u64,
    edges: u64,
}

pub fn run(args: PerfArgs, progress: bool) -> Result<()> {
    match args.cmd {
        PerfCmd::Phase { phase } => run_phase(phase, progress),
        PerfCmd::Annotate(a) => super::perf_annotate::run(a),
        PerfCmd::Hostile(a) => super::perf_hostile::run(a),
        PerfCmd::Ckg(a) => super::perf_ckg::run(a),
        PerfCmd::Queue(a) => super::perf_queue::run(a, progress),
        PerfCmd::Model { graph, runs } => perf_model(&graph, runs.max(1), progress),
        PerfCmd::Layout { runs } => perf_layout(runs.max(1)),
        PerfCmd::Cypher {
            graph,
            per_pattern,
            reps,
            anchored,
        } => perf_cypher(&graph, per_pattern, reps, anchored, progress),
        PerfCmd::Graph {
            runs,
            scale_nodes,
            scale_edges,
            skip_scale,
            work_dir,
        } => perf_graph(runs.max(1), scale_nodes, scale_edges, skip_scale, &work_dir),
    }
}

fn run_phase(phase: Phase, progress: bool) -> Result<()> {
    let t = Instant::now();
    let g: Graph = match &phase {
        Phase::ImportHetionet { out } => {
            let (files, _) = crate::graph_source::default_snapshot()?;
            crate::graph_source::import_hetionet(&files, out, progress)?
        }
        Phase::Reload { graph } => Graph::load(graph)?,
        Phase::Synth { nodes, edges, out } => {
            let g = generate(&SynthSpec {
                nodes: *nodes,
                edges: *edges,
                seed: 42,
                progress,
            });
            g.save(out)?;
            g
        }
    };
    let r = PhaseResult {
        secs: t.elapsed().as_secs_f64(),
        peak_rss: rss::peak_rss_bytes().unwrap_or(0),
        nodes: g.node_count() as u64,
        edges: g.edge_count() as u64,
    };
    println!("PERF {}", serde_json::to_string(&r)?);
    Ok(())
}

fn child(args: &[String]) -> Result<PhaseResult> {
    let exe = std::env::current_exe()?;
    let out = Command::new(exe)
        .arg("--quiet")
        .arg("perf")
        .arg("phase")
        .args(args)
        .output()
        .context("running a perf phase")?;
    if !out.status.success() {
        bail!(
            "perf phase {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("PERF "))
        .context("perf phase printed no result")?;
    Ok(serde_json::from_str(line)?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(label: &str, runs: usize, args: &[String]) -> Result<PhaseResult> {
    let mut results = Vec::new();
    for i in 0..runs {
        let r = child(args)?;
        eprintln!(
            "  {label} run {}/{runs}: {:.3} s, peak RSS {}",
            i + 1,
            r.secs,
            rss::human_bytes(r.peak_rss)
        );
        results.push(r);
    }
    let secs = median(results.iter().map(|r| r.secs).collect());
    let peak = results.iter().map(|r| r.peak_rss).max().unwrap_or(0);
    Ok(PhaseResult {
        secs,
        peak_rss: peak,
        nodes: results[0].nodes,
        edges: results[0].edges,
    })
}

fn path_arg(p: &Path) -> String {
    p.display().to_string()
}

fn perf_graph(
    runs: usize,
    scale_nodes: u64,
    scale_edges: u64,
    skip_scale: bool,
    work: &Path,
) -> Result<()> {
    std::fs::create_dir_all(work)?;
    let het = work.join("hetionet-perf.snap");
    let mut rows: Vec<(String, PhaseResult, usize)> = Vec::new();
    eprintln!("Hetionet import (files → filtered graph → snapshot), {runs} runs");
    rows.push((
        "hetionet import".into(),
        measure("import", runs, &["import-hetionet".into(), path_arg(&het)])?,
        runs,
    ));
    let reload_runs = runs.max(5);
    eprintln!("Hetionet snapshot reload, {reload_runs} runs");
    rows.push((
        "hetionet snapshot reload".into(),
        measure("reload", reload_runs, &["reload".into(), path_arg(&het)])?,
        reload_runs,
    ));
    let _ = std::fs::remove_file(&het);
    if !skip_scale {
        let big = work.join("synth-scale.snap");
        eprintln!("synthetic CKG-scale graph: {scale_nodes} nodes, {scale_edges} edges (1 run)");
        rows.push((
            format!("synth {scale_nodes}/{scale_edges} + save"),
            measure(
                "synth",
                1,
                &[
                    "synth".into(),
                    scale_nodes.to_string(),
                    scale_edges.to_string(),
                    path_arg(&big),
                ],
            )?,
            1,
        ));
        let load_runs = runs.min(3);
        rows.push((
            format!("synth {scale_nodes}/{scale_edges} snapshot load"),
            measure("load", load_runs, &["reload".into(), path_arg(&big)])?,
            load_runs,
        ));
        let _ = std::fs::remove_file(&big);
    }
    println!("\n| phase | nodes | edges | median time | peak RSS | runs |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (label, r, n) in &rows {
        println!(
            "| {label} | {} | {} | {:.3} s | {} | {n} |",
            r.nodes,
            r.edges,
            r.secs,
            rss::human_bytes(r.peak_rss)
        );
    }
    Ok(())
}

fn perf_cypher(
    graph: &crate::graph_source::GraphArgs,
    per_pattern: usize,
    reps: usize,
    anchored: usize,
    progress: bool,
) -> Result<()> {
    let g = graph.load(progress)?;
    let mut cases = serenqa_benchmark::perf::pattern_cases(&g, per_pattern.max(1));
    cases.extend(serenqa_benchmark::perf::anchored_cases(&g, anchored));
    if cases.is_empty() {
        bail!("the graph lacks Hetionet's relation types (SerenQA patterns); use --anchored N for id-anchored queries");
    }
    eprintln!(
        "{} queries, {reps} runs each (parse + plan + execute + render)",
        cases.len()
    );
    let rows = serenqa_benchmark::perf::measure(
        &g,
        &cases,
        reps.max(1),
        &serenqa_cypher::Options::default(),
    );
    print!("{}", serenqa_benchmark::perf::report(&rows));
    Ok(())
}

/// Medians of `force_layout` and of `force_layout` + `separate` on deterministic subgraphs
/// shaped like explanations (a tree around the pinned query entity plus cross links), on the
/// wide 800 × 520 canvas with names 40–140 units wide, at sizes whose names still cover at
/// most half the canvas (the frontend separates only then) and one beyond.
fn perf_layout(runs: usize) -> Result<()> {
    use serenqa_shared::layout::{force_layout, overlapping_pairs, separate, LayoutParams, Rect};
    let (w, h) = (800.0, 520.0);
    println!(
        "| nodes | edges | force layout | + separate | ratio | overlapping names before → after |"
    );
    println!("|---:|---:|---:|---:|---:|---|");
    for n in [20usize, 40, 80, 100, 200] {
        let mut edges: Vec<(usize, usize)> = (1..n).map(|i| ((i - 1) / 4, i)).collect();
        edges.extend((0..n / 3).map(|k| ((k * 7 + 3) % n, (k * 13 + 5) % n)));
        let fp: Vec<Rect> = (0..n)
            .map(|i| Rect {
                x: -10.0,
                y: -10.0,
                w: 21.0 + 40.0 + ((i * 37) % 100) as f64,
                h: 20.0,
            })
            .collect();
        let mut pins = vec![None; n];
        pins[0] = Some((w / 2.0, h / 2.0));
        let params = LayoutParams {
            width: w,
            height: h,
            iterations: if n > 200 { 80 } else { 150 },
        };
        let overlapping = |pos: &[(f64, f64)]| overlapping_pairs(pos, &fp);
        let (mut alone, mut both) = (Vec::new(), Vec::new());
        let (mut before, mut after) = (0, 0);
        for _ in 0..runs {
            let t = Instant::now();
            let mut pos = force_layout(n, &edges, &pins, params).positions;
            alone.push(t.elapsed().as_secs_f64() * 1e3);
            before = overlapping(&pos);
            let t = Instant::now();
            let mut pos2 = force_layout(n, &edges, &pins, params).positions;
            separate(&mut pos2, &fp, &pins, w, h, 60);
            both.push(t.elapsed().as_secs_f64() * 1e3);
            pos = pos2;
            after = overlapping(&pos);
        }
        let area: f64 = fp.iter().map(|r| r.w * r.h).sum();
        let (a, b) = (median(alone), median(both));
        println!(
            "| {n} | {} | {a:.2} ms | {b:.2} ms | {:.2} | {before} → {after}{} |",
            edges.len(),
            b / a,
            if area > 0.5 * w * h {
                " (names cover more than half the canvas: the page skips this pass)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

fn perf_model(args: &crate::graph_source::GraphArgs, runs: usize, progress: bool) -> Result<()> {
    use serenqa_model::bench;
    let (g, model, _) = crate::model_source::load(args, progress)?;
    let params = serenqa_model::marginals::MarginalParams::default();
    let (_, m) = bench::marginals(&g, &params, false, progress);
    println!("| measurement | median | notes |");
    println!("|---|---:|---|");
    println!(
        "| marginals ({} nodes, {} edges) | {:.3} s | {} iterations, residual {:.1e}; bandwidth floor {:.3} s for {} passes → ratio {:.2}; reorder {:.3} s |",
        m.nodes, m.edges, m.stats.seconds, m.stats.iterations, m.stats.residual, m.floor_seconds, m.passes, m.ratio, m.reorder_seconds
    );
    if let Some(b) = &m.baseline {
        println!(
            "| marginals, Algorithm 2's power iteration (same run) | {:.3} s | {} iterations; {:?} {:.2}× faster, {:.1e} vs {:.1e} (L1) from a tight solve |",
            b.power.seconds, b.power.iterations, m.stats.solver, b.speedup, b.l1_vs_exact, b.power_l1_vs_exact
        );
    }
    let b = bench::blocks(&g, false, 50, runs, 1, None);
    println!(
        "| P3 block, 50 entities (cold) | {:.2} ms | min {:.2}, max {:.2} ms over {} sets |",
        b.median_ms, b.min_ms, b.max_ms, b.runs
    );
    let model = match model {
        Some(m) => m,
        None => serenqa_model::Model::compute(&g, &serenqa_model::ModelConfig::default(), progress),
    };
    // The same candidate sets (same seed) under the weights in force (what a server uses) and
    // under equal weights (every term used: S's JSD is the O(m) part of a swap evaluation).
    let shipped = serenqa_model::weights::shipped();
    let equal = serenqa_shared::rns::Weights::default();
    for (label, w) in [
        ("the shipped weights", &shipped.weights),
        ("equal weights", &equal),
    ] {
        let s = bench::swap(&g, &model, 100, runs, 1, None, w)?;
        println!(
            "| slice + greedy swap, 100 candidates, {label} (α {:.2}, β {:.2}, γ {:.2}) | {:.2} ms | slice {:.2} ms (block included, cold cache) + swap {:.2} ms (min {:.2}, max {:.2}); medians of each |",
            w.alpha,
            w.beta,
            w.gamma,
            s.slice.median_ms + s.greedy.median_ms,
            s.slice.median_ms,
            s.greedy.median_ms,
            s.greedy.min_ms,
            s.greedy.max_ms
        );
    }
    let c = bench::candidates(&g, &model, 20, 200, runs, 1, None)?;
    println!("| score 200 candidates vs 20 existing | {:.3} ms | the browser's per-slider work, native |", c.score.median_ms);
    println!(
        "\npeak RSS {}",
        rss::peak_rss_bytes()
            .map(rss::human_bytes)
            .unwrap_or_else(|| "n/a".into())
    );
    Ok(())
}
