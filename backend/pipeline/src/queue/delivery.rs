//! What a worker is given ([`WorkerConfig`], [`WorkerGraph`], [`Shutdown`]) and reports
//! ([`WorkerReport`]), and its side of one run and of one delivery: [`prepare_run`] rebuilds a run's context
//! from its spec and files (or says why the worker must refuse the run), [`process`] runs
//! one delivery to its end (result stored once, or left pending).

use std::path::PathBuf;
use std::sync::Arc;

use serenqa_graph::Graph;
use serenqa_model::Model;
use std::time::Duration;

use super::error::{QueueError, QueueResult};
use super::keys::{models_mismatch, MAX_DELIVERIES, SPEC_FORMAT};
use super::redis::Redis;
use super::stream::{Delivery, RunQueue};
use crate::bench::Benchmark;
use crate::llm::{self, ChatModel, ModelsFile, Roles};
use crate::run::{self, Ctx, Item, ItemResult, T1Record, T3Record, TraceKind};

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Consumer name (unique per worker process).
    pub name: String,
    /// Items in flight at most.
    pub concurrency: usize,
    /// Entries idle this long are taken from their (presumably dead) consumer.
    pub reclaim_after: Duration,
    /// Deliveries after which a task is recorded as an error (poison).
    pub max_deliveries: usize,
    /// Exit when no run is active and nothing is in flight, once a run has been seen.
    pub once: bool,
    /// LLM response cache (None: none).
    pub cache_dir: Option<PathBuf>,
    /// This worker's own models (`serenqa worker --models`): the only source of endpoints and
    /// key variables; a run whose spec hashes its models differently is refused.
    pub models: ModelsFile,
    /// Idle polling interval.
    pub poll: Duration,
    /// On the first stop signal, time allowed to in-flight items before they are abandoned.
    pub grace: Duration,
    /// Log lines on stderr.
    pub log: bool,
}

impl WorkerConfig {
    pub fn new(name: &str) -> WorkerConfig {
        WorkerConfig {
            name: name.to_string(),
            concurrency: 8,
            reclaim_after: Duration::from_secs(60),
            max_deliveries: MAX_DELIVERIES,
            once: false,
            cache_dir: None,
            models: ModelsFile::offline(),
            poll: Duration::from_millis(200),
            grace: Duration::from_secs(60),
            log: true,
        }
    }
}

/// A default worker name: `<host>-<pid>`.
pub fn default_worker_name() -> String {
    format!("{}-{}", host_name(), std::process::id())
}

pub(super) fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "worker".into())
}

/// Stop requests for a worker (from signals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    Run,
    /// Take no new work; finish what is in flight (within the grace time).
    Drain,
    /// Leave now; in-flight entries stay pending and are reclaimed by other workers.
    Abort,
}

/// The graph side of a worker, loaded once at startup.
pub struct WorkerGraph {
    pub g: Arc<Graph>,
    pub model: Option<Arc<Model>>,
    /// Where T3 reads edges (None: the in-memory graph). Results are the same either way, so
    /// this is each worker's own choice, not part of the run spec.
    pub edges: Option<Arc<dyn serenqa_edges::EdgeSource>>,
    /// `serenqa_benchmark::records::graph_hash(&g)`.
    pub graph_hash: String,
}

impl WorkerGraph {
    pub fn new(g: Arc<Graph>, model: Option<Arc<Model>>) -> WorkerGraph {
        let graph_hash = serenqa_benchmark::records::graph_hash(&g);
        WorkerGraph {
            g,
            model,
            graph_hash,
            edges: None,
        }
    }
}

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Results stored by this worker.
    pub completed: usize,
    /// Items whose result another delivery had stored first.
    pub duplicates: usize,
    /// Entries taken over from other (dead) consumers or retried.
    pub reclaimed: usize,
    /// Poison tasks recorded as errors.
    pub poisoned: usize,
    /// Items left pending after an LLM outage.
    pub retried: usize,
    /// Items abandoned (stop signal, Redis failure, panic).
    pub abandoned: usize,
    /// Runs refused (graph / model / prompts mismatch), with the reason.
    pub refused: Vec<String>,
}

/// A run this worker joined.
pub(super) struct RunCtx {
    pub(super) q: RunQueue,
    ctx: Arc<Ctx>,
    client: Option<Arc<dyn ChatModel>>,
}

#[derive(Clone)]
pub(super) enum RunState {
    Ready(Arc<RunCtx>),
    Refused,
}

pub(super) enum Outcome {
    Stored,
    Duplicate,
    Poisoned,
    Retry(String),
    Abandoned(String),
}

/// Prepares a run for this worker: `Ok(Err(reason))` when the worker must refuse it, `Err`
/// for a transient problem (Redis).
pub(super) async fn prepare_run(
    redis: &Arc<Redis>,
    run_id: &str,
    graph: &WorkerGraph,
    cfg: &WorkerConfig,
) -> QueueResult<Result<Arc<RunCtx>, String>> {
    let q = RunQueue::new(redis.clone(), run_id);
    let spec = match q.spec().await {
        Ok(Some(spec)) => spec,
        Ok(None) => {
            return Ok(Err(format!(
                "run {run_id} is active but has no spec in Redis"
            )))
        }
        // Transient (Redis) errors are retried; a spec that does not parse is refused.
        Err(e @ QueueError::UnreadableSpec { .. }) => return Ok(Err(e.to_string())),
        Err(e) => return Err(e),
    };
    if spec.format != SPEC_FORMAT {
        return Ok(Err(format!("run {run_id}: spec format {:?}, this worker reads {SPEC_FORMAT:?} (another serenqa version?)", spec.format)));
    }
    if spec.graph_hash != graph.graph_hash {
        return Ok(Err(format!(
            "run {run_id} was planned on graph {}, this worker loaded graph {}: start the worker on the same graph (--graph) as the coordinator",
            spec.graph_hash, graph.graph_hash
        )));
    }
    if spec.has_model != graph.model.is_some() {
        return Ok(Err(format!(
            "run {run_id}: the coordinator {} the serendipity model, this worker {}: use the same snapshot (with `serenqa precompute`)",
            if spec.has_model { "had" } else { "had no" },
            if graph.model.is_some() { "has it" } else { "has none" }
        )));
    }
    let prompts = crate::prompts::prompts_hash();
    if spec.prompts_hash != prompts {
        return Ok(Err(format!("run {run_id}: prompts {} differ from this worker's {prompts} (another serenqa version?)", spec.prompts_hash)));
    }
    let files = q.files().await?;
    let g = graph.g.clone();
    let label = PathBuf::from(format!("redis:{run_id}"));
    let bench = tokio::task::spawn_blocking(move || {
        Benchmark::from_files(&label, &g, |name| {
            files
                .get(name)
                .cloned()
                .ok_or_else(|| format!("benchmark file {name} is not in Redis"))
        })
    })
    .await
    .map_err(|e| QueueError::Task {
        what: "loading the benchmark",
        detail: e.to_string(),
    })?;
    let bench = match bench {
        Ok(b) => b,
        Err(e) => return Ok(Err(format!("run {run_id}: {e}"))),
    };
    if bench.hash != spec.bench_hash {
        return Ok(Err(format!(
            "run {run_id}: the benchmark files in Redis hash to {}, the spec says {}",
            bench.hash, spec.bench_hash
        )));
    }
    if let Some(why) = models_mismatch(run_id, &spec.models, &cfg.models) {
        return Ok(Err(why));
    }
    // Clients come from this worker's own models file only, never from Redis.
    let client = match llm::connect(&cfg.models, cfg.cache_dir.clone()) {
        Ok(c) => c,
        Err(e) => return Ok(Err(format!("run {run_id}: {e}"))),
    };
    let roles = Roles::with_model(&cfg.models, client.clone());
    let (g, model, edges) = (graph.g.clone(), graph.model.clone(), graph.edges.clone());
    let ctx = tokio::task::spawn_blocking(move || {
        Ctx::new(
            g,
            model,
            Arc::new(bench),
            roles,
            spec.explore.clone(),
            &spec.partitions,
            &spec.tasks,
        )
        .with_edges(edges)
    })
    .await
    .map_err(|e| QueueError::Task {
        what: "building the run context",
        detail: e.to_string(),
    })?;
    Ok(Ok(Arc::new(RunCtx {
        q,
        ctx: Arc::new(ctx),
        client,
    })))
}

/// A record for a key that does not even parse (never expected: the benchmark hash is checked).
fn fallback_error_line(key: &str, msg: &str) -> String {
    let qid: u32 = key
        .split(':')
        .nth(1)
        .and_then(|q| q.parse().ok())
        .unwrap_or(0);
    match TraceKind::of_key(key) {
        Some(TraceKind::T1) => serde_json::to_string(&T1Record {
            key: key.into(),
            qid,
            retrieved: crate::retrieval::Retrieved {
                error: Some(msg.into()),
                ..Default::default()
            },
            ..Default::default()
        }),
        _ => serde_json::to_string(&T3Record {
            key: key.into(),
            qid,
            error: Some(msg.into()),
            ..Default::default()
        }),
    }
    .unwrap_or_default()
}

/// Runs one delivery to its end (result stored, or left pending).
pub(super) async fn process(rc: Arc<RunCtx>, d: Delivery, cfg: WorkerConfig) -> Outcome {
    let q = &rc.q;
    // A result from an earlier delivery whose acknowledgement was lost: acknowledge only.
    match q.has_result(&d.key).await {
        Ok(true) => {
            return match q.ack(&d.id).await {
                Ok(()) => Outcome::Duplicate,
                Err(e) => Outcome::Abandoned(e.to_string()),
            }
        }
        Ok(false) => {}
        Err(e) => return Outcome::Abandoned(e.to_string()),
    }
    let item = Item::parse(&d.key, &rc.ctx);
    // Poison: delivered more than `max_deliveries` times, deliveries that ended in an LLM
    // outage not counted. Recorded as an error record so the run completes.
    if d.deliveries > cfg.max_deliveries {
        let outages = match q.retries(&d.key).await {
            Ok(n) => n,
            Err(e) => return Outcome::Abandoned(e.to_string()),
        };
        let crashes = d.deliveries.saturating_sub(outages);
        if crashes > cfg.max_deliveries {
            let msg = format!(
                "given up after {} deliveries: every worker that ran it crashed or was stopped",
                crashes - 1
            );
            let line = match &item {
                Ok(i) => run::error_item(&rc.ctx, i, &msg)
                    .map(|r| r.line)
                    .unwrap_or_else(|_| fallback_error_line(&d.key, &msg)),
                Err(_) => fallback_error_line(&d.key, &msg),
            };
            return match q.complete(&d.id, &d.key, &line).await {
                Ok(true) => Outcome::Poisoned,
                Ok(false) => Outcome::Duplicate,
                Err(e) => Outcome::Abandoned(e.to_string()),
            };
        }
    }
    let line: String = match item {
        Err(e) => fallback_error_line(&d.key, &e),
        Ok(item) => {
            let (res, unavailable) = llm::track_unavailable(run::run_item(&rc.ctx, &item)).await;
            if unavailable > 0 {
                let _ = q.note_retry(&d.key).await;
                return Outcome::Retry(format!("{unavailable} LLM call(s) failed with the endpoint unavailable; left pending for a retry after {}s", cfg.reclaim_after.as_secs()));
            }
            match res {
                Ok(ItemResult { line, .. }) => line,
                // Not a result: leave it pending, another delivery redoes it.
                Err(run::ItemError::Unavailable(e)) => {
                    let _ = q.note_retry(&d.key).await;
                    return Outcome::Retry(format!(
                        "edge store unavailable ({e}); left pending for a retry after {}s",
                        cfg.reclaim_after.as_secs()
                    ));
                }
                Err(run::ItemError::Record(e)) => match run::error_item(&rc.ctx, &item, &e) {
                    Ok(r) => r.line,
                    Err(e) => return Outcome::Abandoned(e),
                },
            }
        }
    };
    let mut last = QueueError::Run(String::new());
    for attempt in 0..4u32 {
        match q.complete(&d.id, &d.key, &line).await {
            Ok(new) => {
                if let Some(c) = &rc.client {
                    if let Ok(text) = serde_json::to_string(&c.stats()) {
                        let _: QueueResult<i64> = q
                            .redis
                            .query(
                                redis::cmd("HSET")
                                    .arg(q.keys.llm())
                                    .arg(&cfg.name)
                                    .arg(text),
                            )
                            .await;
                    }
                } else {
                    let _: QueueResult<i64> = q
                        .redis
                        .query(
                            redis::cmd("HSETNX")
                                .arg(q.keys.llm())
                                .arg(&cfg.name)
                                .arg("{}"),
                        )
                        .await;
                }
                return if new {
                    Outcome::Stored
                } else {
                    Outcome::Duplicate
                };
            }
            Err(e) => {
                last = e;
                tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
            }
        }
    }
    Outcome::Abandoned(last.to_string())
}
