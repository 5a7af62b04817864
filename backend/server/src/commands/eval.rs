//! `serenqa eval`: run (or resume) the SerenQA evaluation — T1 retrieval, T2 reasoning, T3
//! exploration — over a benchmark directory, with the models of a models file or the offline
//! agents, and print the Table 2 / Table 3 layouts. `serenqa ask`: one question end to end.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serenqa_graph::{datadir, Graph};
use serenqa_model::{Model, ModelConfig};
use serenqa_pipeline::ask::{ask, render_text, AskContext, AskRequest};
use serenqa_pipeline::llm::ModelsFile;
use serenqa_pipeline::queue::run_coordinator;
use serenqa_pipeline::run::{parse_tasks, run_eval, EvalConfig};
use serenqa_pipeline::runs_dir::default_runs_dir;

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct EvalArgs {
    /// Models file (JSON: models and role → model map). Default: offline agents only.
    #[arg(
        long,
        value_name = "FILE",
        env = "SERENQA_MODELS",
        long_help = crate::commands::models::models_flag_help()
    )]
    models: Option<PathBuf>,
    /// Tasks to run.
    #[arg(long, default_value = "t1,t2,t3")]
    tasks: String,
    /// Partitions (llm, expert, sscore), comma-separated; default: all in the benchmark.
    #[arg(long)]
    partition: Option<String>,
    /// Benchmark directory (kgqa.jsonl, serendipity.jsonl, removed-*.tsv). Built there with
    /// the offline scorers when missing. Default: `$SERENQA_BENCH`, else `./serenqa-benchmark`
    /// when `serenqa bench build` wrote one, else a per-graph directory in the cache.
    #[arg(long, value_name = "DIR", env = "SERENQA_BENCH")]
    bench: Option<PathBuf>,
    /// Questions when the benchmark has to be built.
    #[arg(long, default_value_t = 1529)]
    questions: usize,
    /// Runs directory.
    #[arg(long, value_name = "DIR")]
    runs: Option<PathBuf>,
    /// Run id (default: derived from the configuration, so the same command resumes).
    #[arg(long)]
    run: Option<String>,
    /// Only the `train` or `test` split.
    #[arg(long)]
    split: Option<String>,
    /// N questions only, spread evenly over the benchmark (every pattern type appears).
    #[arg(long)]
    limit: Option<usize>,
    /// Beam width n.
    #[arg(long, default_value_t = 30)]
    beam: usize,
    /// Beam depth h.
    #[arg(long, default_value_t = 3)]
    depth: usize,
    /// Relation types per frontier node (m).
    #[arg(long, default_value_t = 3)]
    relations: usize,
    /// Candidate nodes per frontier node (k).
    #[arg(long, default_value_t = 10)]
    nodes: usize,
    /// Score edges without a confidence by the graph score (Adamic–Adar of the far end)
    /// instead of the paper's uniform sampling of a frontier node without scores.
    #[arg(long)]
    graph_score: bool,
    /// Work items in flight.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Do not use the on-disk LLM response cache.
    #[arg(long)]
    no_cache: bool,
    /// Read T3's edges from a Redis edge store (`serenqa edges export` first):
    /// `redis://host:port[/db]` or `redis+cluster://host:port,…`. Results are identical.
    #[arg(long, value_name = "URL", env = "SERENQA_EDGES")]
    edges: Option<String>,
    /// Distribute the work items over `serenqa worker`s through this Redis
    /// (redis://HOST:PORT[/DB]); this process coordinates: it enqueues, collects the results
    /// into the run directory and writes the tables.
    #[arg(long, value_name = "URL")]
    queue: Option<String>,
    #[command(flatten)]
    graph: GraphArgs,
}

/// Graph and model: the model from the snapshot, else computed in memory for small graphs.
pub fn load_graph_and_model(args: &GraphArgs, progress: bool) -> Result<(Graph, Option<Model>)> {
    let (g, m, _) = crate::model_source::load(args, progress)?;
    let m = model_or_compute(&g, m, progress);
    Ok((g, m))
}

/// The stored model, else one computed now when the graph is small enough to take seconds.
fn model_or_compute(g: &Graph, stored: Option<Model>, progress: bool) -> Option<Model> {
    match stored {
        Some(m) => Some(m),
        None if g.edge_count() <= 5_000_000 => {
            eprintln!("no precomputed model in the snapshot: computing it now (run `serenqa precompute` to store it)");
            Some(Model::compute(g, &ModelConfig::default(), progress))
        }
        None => {
            eprintln!("warning: no precomputed model: RNS-based steps are skipped");
            None
        }
    }
}

fn load_models(path: &Option<PathBuf>) -> Result<(ModelsFile, String)> {
    match path {
        Some(p) => Ok((
            ModelsFile::load(p).map_err(|e| anyhow!(e))?,
            p.display().to_string(),
        )),
        None => Ok((ModelsFile::offline(), "offline".into())),
    }
}

fn llm_cache(models: &ModelsFile, no_cache: bool) -> Option<PathBuf> {
    if no_cache {
        return None;
    }
    Some(
        models
            .cache_dir
            .clone()
            .unwrap_or_else(|| datadir::cache_dir().join("llm")),
    )
}

/// Builds the benchmark into `dir` with the offline ensemble scorers and the RNS-guided
/// strategy (when the model is there).
fn build_bench(
    g: &Graph,
    model: Option<&Model>,
    dir: &std::path::Path,
    questions: usize,
    progress: bool,
) -> Result<()> {
    use serenqa_benchmark::build::{build, BuildConfig};
    use serenqa_benchmark::partition::offline_scorers;
    let t = Instant::now();
    if progress {
        eprintln!(
            "building the benchmark ({questions} questions) into {}",
            dir.display()
        );
    }
    let scorers = offline_scorers(g, model.map(|m| &m.marginals[..]));
    let mut cfg = BuildConfig::default();
    cfg.gen.questions = questions;
    let b = build(g, model, &scorers, None, &cfg)
        .map_err(|e| anyhow!("building the benchmark: {e}"))?;
    b.write(g, dir).map_err(|e| anyhow!("{e}"))?;
    if progress {
        eprintln!("benchmark built in {:.1?}", t.elapsed());
    }
    Ok(())
}

/// The benchmark directory of `eval`: `dir`, else `./serenqa-benchmark` when `serenqa bench
/// build` wrote one, else a per-graph directory in the cache; built when missing.
pub fn bench_dir(
    dir: Option<&std::path::Path>,
    g: &Graph,
    model: Option<&Model>,
    questions: usize,
    progress: bool,
) -> Result<PathBuf> {
    let bench = match dir {
        Some(b) => b.to_path_buf(),
        None if std::path::Path::new("serenqa-benchmark/kgqa.jsonl").is_file() => {
            PathBuf::from("serenqa-benchmark")
        }
        None => datadir::cache_dir().join(format!(
            "bench-{}-q{}",
            &serenqa_benchmark::records::graph_hash(g),
            questions
        )),
    };
    if !bench.join("kgqa.jsonl").is_file() {
        build_bench(g, model, &bench, questions, progress)?;
    }
    Ok(bench)
}

pub fn run(args: EvalArgs, progress: bool) -> Result<()> {
    let t = Instant::now();
    let tasks = parse_tasks(&args.tasks).map_err(|e| anyhow!(e))?;
    let (models, label) = load_models(&args.models)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if args.queue.is_some() && args.edges.is_some() {
        bail!("--edges is a worker setting in a queued run: pass it to `serenqa worker --edges …` (the coordinator runs no items)");
    }
    if let Some(url) = &args.queue {
        // Fail fast on an unreachable queue, before the graph is loaded.
        rt.block_on(serenqa_pipeline::queue::Redis::connect(url))
            .map_err(|e| anyhow!(e))?;
    }
    let (g, model) = load_graph_and_model(&args.graph, progress)?;
    let bench = bench_dir(
        args.bench.as_deref(),
        &g,
        model.as_ref(),
        args.questions,
        progress,
    )?;
    let mut cfg = EvalConfig::new(bench, args.runs.clone().unwrap_or_else(default_runs_dir));
    cfg.tasks = tasks;
    cfg.partitions = args
        .partition
        .as_deref()
        .map(|p| {
            p.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    cfg.cache_dir = llm_cache(&models, args.no_cache);
    cfg.models = models;
    cfg.models_label = label;
    cfg.run_id = args.run.clone();
    cfg.split = args.split.clone();
    cfg.limit = args.limit;
    cfg.concurrency = args.concurrency.max(1);
    cfg.progress = progress;
    cfg.edges = args
        .edges
        .as_deref()
        .map(serenqa_edges::RedisTarget::parse)
        .transpose()
        .map_err(|e| anyhow!(e))?;
    cfg.explore.beam_width = args.beam.max(1);
    cfg.explore.depth = args.depth.max(1);
    cfg.explore.relations_per_node = args.relations.max(1);
    cfg.explore.nodes_per_node = args.nodes.max(1);
    cfg.explore.graph_score = args.graph_score;
    let out = match &args.queue {
        Some(url) => rt
            .block_on(run_coordinator(&cfg, Arc::new(g), model.map(Arc::new), url))
            .map_err(|e| e.to_string()),
        None => rt.block_on(run_eval(&cfg, Arc::new(g), model.map(Arc::new))),
    }
    .map_err(|e| anyhow!(e))?;
    println!("{}", out.markdown);
    println!("settings: {}", out.manifest.settings().summary());
    let m = &out.manifest;
    let status = if m.failed > 0 {
        format!("incomplete ({} failed)", m.failed)
    } else {
        m.status.clone()
    };
    println!(
        "run {} in {}: {status} ({:.1}s, this invocation)",
        m.run_id,
        out.dir.display(),
        t.elapsed().as_secs_f64()
    );
    if m.llm.calls > 0 {
        let s = &m.llm;
        println!(
            "LLM (every invocation of the run): {} calls ({} cached, {} errors, {} retries), {} prompt + {} completion tokens, mean latency {:.0} ms, max {} in flight",
            s.calls, s.cache_hits, s.errors, s.retries, s.prompt_tokens, s.completion_tokens, s.mean_latency_ms, s.max_in_flight
        );
    }
    if m.failed > 0 {
        // Exit non-zero: a run with unscored items is not a result to report.
        bail!(
            "run {} is incomplete ({} failed: {}): those work items' model calls failed and they are not scored; run the same command again to retry exactly them (details in {})",
            m.run_id,
            m.failed,
            serenqa_pipeline::run::kinds_text(&m.failed_by_kind),
            out.dir.join(serenqa_pipeline::failures::FAILED_FILE).display()
        );
    }
    Ok(())
}

#[derive(Args)]
pub struct CompareArgs {
    /// Run A (a directory name in the runs directory).
    a: String,
    /// Run B.
    b: String,
    /// Runs directory (default `$SERENQA_RUNS`, else `./runs`).
    #[arg(long, value_name = "DIR")]
    runs: Option<PathBuf>,
    /// Print the comparison as JSON (the shape of `GET /api/runs/compare`).
    #[arg(long)]
    json: bool,
}

/// `serenqa compare A B`: Δ = B − A per metric and cell over the questions both runs
/// answered, with paired-bootstrap 95% intervals and the questions each run wins.
pub fn run_compare(args: CompareArgs) -> Result<()> {
    let dir = args.runs.unwrap_or_else(default_runs_dir);
    let c = serenqa_pipeline::compare::compare_runs(&dir, &args.a, &args.b)
        .map_err(|e| anyhow!("{e} (in {})", dir.display()))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&c).context("serialising the comparison")?
        );
    } else {
        print!("{}", serenqa_pipeline::compare::markdown(&c));
    }
    Ok(())
}

#[derive(Args)]
pub struct AskArgs {
    /// The question, in free text.
    question: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// A declared model for every role (default: the models file's roles, else offline).
    #[arg(long)]
    model: Option<String>,
    /// Models file.
    #[arg(
        long,
        value_name = "FILE",
        env = "SERENQA_MODELS",
        long_help = crate::commands::models::models_flag_help()
    )]
    models: Option<PathBuf>,
    /// Candidates shown at most.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    #[arg(long)]
    no_cache: bool,
    /// Explore on a Redis edge store (`serenqa edges export` first): `redis://host:port[/db]`
    /// or `redis+cluster://h:p,h:p,…`. Default: the in-memory graph.
    #[arg(long, value_name = "URL")]
    edges: Option<String>,
    #[command(flatten)]
    graph: GraphArgs,
}

pub fn run_ask(args: AskArgs, progress: bool) -> Result<()> {
    let (models, _) = load_models(&args.models)?;
    let (g, stored, _) = crate::model_source::load(&args.graph, progress)?;
    let cache = llm_cache(&models, args.no_cache);
    let g = Arc::new(g);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // The edge store first: a wrong URL or a foreign store fails before any model work.
    let edges = args
        .edges
        .as_deref()
        .map(|url| super::edges::open_store(&rt, url, g.clone()))
        .transpose()?;
    let model = model_or_compute(&g, stored, progress);
    let ctx = AskContext::new(g, model.map(Arc::new), models, cache)
        .map_err(|e| anyhow!(e))?
        .with_edges(edges);
    let req = AskRequest {
        question: args.question.clone(),
        model: args.model.clone(),
        limit: Some(args.limit),
    };
    let r = rt.block_on(ask(&ctx, &req)).map_err(|e| anyhow!(e))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&r).context("serialising the result")?
        );
    } else {
        print!("{}", render_text(&r));
    }
    Ok(())
}
