//! `serenqa worker --queue redis://…`: a queue worker for distributed evaluation runs
//! (`serenqa eval --queue …` is the coordinator). Loads the graph and model once, then runs
//! the work items of every active run whose graph matches, until stopped: the first SIGTERM
//! or ctrl-c finishes in-flight items (up to `--grace` seconds), a second abandons them (other
//! workers reclaim them). Model endpoints come from the worker's own `--models` file only; a
//! run whose spec hashes its models differently is refused. Key layout and guarantees:
//! `serenqa_pipeline::queue`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use clap::Args;
use serenqa_graph::datadir;
use serenqa_pipeline::queue::{
    default_worker_name, run_worker, Redis, Shutdown, WorkerConfig, WorkerGraph, MAX_DELIVERIES,
};
use tokio::sync::watch;

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct WorkerArgs {
    /// The queue: redis://HOST:PORT[/DB] (the coordinator's `--queue`).
    #[arg(long, value_name = "URL", env = "SERENQA_QUEUE")]
    queue: String,
    /// Work items in flight at most.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Consumer name, unique per worker (default: HOST-PID).
    #[arg(long)]
    name: Option<String>,
    /// Seconds after which a task pending on a silent worker is taken over.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    reclaim_after: f64,
    /// Deliveries after which a task that keeps killing its workers is recorded as an error.
    #[arg(long, default_value_t = MAX_DELIVERIES)]
    max_deliveries: usize,
    /// Exit when the queue is drained and no run is active (after having seen one).
    #[arg(long)]
    once: bool,
    /// Seconds in-flight items get to finish after the first stop signal.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    grace: f64,
    /// This worker's models file (endpoints, model ids, API-key variable names). Runs whose
    /// coordinator used different models (names, base URLs, model ids, temperature,
    /// max_tokens, roles: compared by hash) are refused; nothing of a model endpoint is ever
    /// taken from Redis. Default: offline agents only (serves offline runs).
    #[arg(long, value_name = "FILE", env = "SERENQA_MODELS")]
    models: Option<std::path::PathBuf>,
    /// Do not use the on-disk LLM response cache.
    #[arg(long)]
    no_cache: bool,
    /// Read T3's edges from this Redis edge store (`serenqa edges export`):
    /// `redis://host:port[/db]` or `redis+cluster://host:port,…`. Results are identical.
    #[arg(long, value_name = "URL", env = "SERENQA_EDGES")]
    edges: Option<String>,
    #[command(flatten)]
    graph: GraphArgs,
}

fn secs(name: &str, v: f64) -> Result<Duration> {
    if !v.is_finite() || v <= 0.0 || v > 86_400.0 {
        bail!("--{name} must be a positive number of seconds (at most a day), not {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn run(args: WorkerArgs, progress: bool) -> Result<()> {
    let reclaim_after = secs("reclaim-after", args.reclaim_after)?;
    let grace = secs("grace", args.grace)?;
    let models = match &args.models {
        Some(p) => serenqa_pipeline::llm::ModelsFile::load(p).map_err(|e| anyhow!(e))?,
        None => serenqa_pipeline::llm::ModelsFile::offline(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Fail fast on an unreachable queue, before the graph is loaded.
    rt.block_on(Redis::connect(&args.queue))
        .map_err(|e| anyhow!(e))?;
    let (g, model) = super::eval::load_graph_and_model(&args.graph, progress)?;
    let g = Arc::new(g);
    let mut graph = WorkerGraph::new(g.clone(), model.map(Arc::new));
    if let Some(url) = &args.edges {
        graph.edges = Some(super::edges::open_store(&rt, url, g)?);
    }
    let mut cfg = WorkerConfig::new(&args.name.clone().unwrap_or_else(default_worker_name));
    cfg.concurrency = args.concurrency.max(1);
    cfg.reclaim_after = reclaim_after;
    cfg.max_deliveries = args.max_deliveries.max(1);
    cfg.once = args.once;
    cfg.grace = grace;
    cfg.cache_dir = if args.no_cache {
        None
    } else {
        Some(
            models
                .cache_dir
                .clone()
                .unwrap_or_else(|| datadir::cache_dir().join("llm")),
        )
    };
    cfg.models = models;
    let report = rt.block_on(async {
        let (tx, rx) = watch::channel(Shutdown::Run);
        tokio::spawn(async move {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let mut stops = 0;
            loop {
                let got = match term.as_mut() {
                    Some(t) => tokio::select! { _ = tokio::signal::ctrl_c() => true, r = t.recv() => r.is_some() },
                    None => tokio::signal::ctrl_c().await.is_ok(),
                };
                if !got {
                    // No more signals can arrive; keep the sender alive.
                    std::future::pending::<()>().await;
                }
                stops += 1;
                let _ = tx.send(if stops == 1 { Shutdown::Drain } else { Shutdown::Abort });
            }
        });
        run_worker(&args.queue, &cfg, graph, rx).await
    });
    let report = report.map_err(|e| anyhow!(e))?;
    if !report.refused.is_empty() && report.completed == 0 && args.once {
        bail!("refused every run: {}", report.refused.join("; "));
    }
    Ok(())
}
