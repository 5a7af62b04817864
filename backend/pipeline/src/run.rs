//! `serenqa eval`: a resumable evaluation run over a benchmark directory — the run's plan
//! ([`plan`]: run id, run directory, work items, what is already done, the manifest), the
//! local executor ([`run_eval`]) and the end of a run ([`finalize`]: aggregates, manifest
//! `complete`, or `incomplete` with the number of failed items).
//!
//! Work items are T1 per question, and T2+T3 per (question, partition, summary mode); one
//! item is run by [`crate::items::run_item`]. Each finished item is appended to its trace
//! file as one JSON line (written whole, then flushed; [`crate::trace`]). On start, existing
//! traces are read (a torn last line from a kill is cut off) and finished items are skipped;
//! an item whose model call failed is not finished: it goes to `failed.jsonl`, not to the
//! traces ([`crate::failures`]), so it is never scored and a rerun retries it;
//! aggregates are always recomputed from all traces, sorted by key, so an
//! interrupted-and-resumed run ends with exactly the tables of an uninterrupted one. The
//! runs directory and the manifest are [`crate::runs_dir`]'s.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serenqa_graph::Graph;
use serenqa_model::Model;

use crate::bench::{self, Benchmark};
use crate::explore::ExploreConfig;
use crate::failures::{self, FailedItem};
use crate::llm::{self, ModelsFile, Roles, StatsSnapshot};
use crate::report::{self, Aggregate};
use crate::runs_dir::{check_run_id, write_json, DatasetInfo, Manifest};

// Re-exported under their old paths for the modules that still import them from here
// (`queue`, `report`); their homes are `items`, `trace` and `runs_dir`.
pub use crate::items::{
    error_item, parse_tasks, run_item, Ctx, Item, ItemError, ItemResult, TaskKind,
};
pub use crate::runs_dir::QueueInfo;
pub(crate) use crate::trace::Writer;
pub use crate::trace::{
    read_trace, T1Record, T2Scores, T3Record, T3Scores, TraceKind, T1_FILE, T3_FILE,
};

#[derive(Clone, Debug)]
pub struct EvalConfig {
    pub bench_dir: PathBuf,
    pub runs_dir: PathBuf,
    /// Default: derived from the configuration, so rerunning the same command resumes.
    pub run_id: Option<String>,
    pub tasks: BTreeSet<TaskKind>,
    /// Partition keys (`llm`, `expert`, `sscore`); empty = all present in the benchmark.
    pub partitions: Vec<String>,
    pub models: ModelsFile,
    /// Where the models came from (for the manifest), e.g. the file path or `offline`.
    pub models_label: String,
    pub explore: ExploreConfig,
    /// `train`, `test` or None for all questions.
    pub split: Option<String>,
    /// N questions only, spread evenly over the qid order (so every pattern type appears).
    pub limit: Option<usize>,
    /// Work items in flight.
    pub concurrency: usize,
    pub progress: bool,
    /// LLM response cache directory (None: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Read T3's edges from this Redis edge store instead of the in-memory graph (identical
    /// results; see `serenqa-edges`).
    pub edges: Option<serenqa_edges::RedisTarget>,
    /// Testing only: after this many newly written records, write half a record and fail,
    /// as a killed process would leave the files.
    pub crash_after: Option<usize>,
}

impl EvalConfig {
    pub fn new(bench_dir: PathBuf, runs_dir: PathBuf) -> EvalConfig {
        EvalConfig {
            bench_dir,
            runs_dir,
            run_id: None,
            tasks: [TaskKind::T1, TaskKind::T2, TaskKind::T3].into(),
            partitions: Vec::new(),
            models: ModelsFile::offline(),
            models_label: "offline".into(),
            explore: ExploreConfig::default(),
            split: None,
            limit: None,
            concurrency: 64,
            progress: false,
            cache_dir: None,
            edges: None,
            crash_after: None,
        }
    }
}

/// The run id for a configuration: stable, so the same command resumes the same run.
pub fn derive_run_id(cfg: &EvalConfig, bench_hash: &str) -> String {
    let key = serde_json::json!({
        "bench": bench_hash,
        "models": cfg.models,
        "tasks": cfg.tasks,
        "partitions": cfg.partitions,
        "explore": cfg.explore,
        "split": cfg.split,
        "limit": cfg.limit,
        "prompts": crate::prompts::prompts_hash(),
    });
    let h = xxhash_rust::xxh3::xxh3_64(key.to_string().as_bytes());
    let label = run_label(&cfg.models);
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{safe}-{:08x}", h as u32)
}

/// A leaderboard label: the distinct models of the roles, or `offline`.
pub fn run_label(models: &ModelsFile) -> String {
    let mut names: Vec<String> = Vec::new();
    for role in crate::llm::ROLES {
        let n = models
            .model_for(role)
            .map(|m| m.name.clone())
            .unwrap_or_else(|| "offline".into());
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names.join("+")
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// What [`run_eval`] returns.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub aggregate: Aggregate,
    pub markdown: String,
}

/// What a run consists of, decided before any item runs: [`plan`]'s output, shared by the
/// local executor ([`run_eval`]) and the queue coordinator ([`crate::queue::run_coordinator`]).
pub struct Plan {
    pub bench: Arc<Benchmark>,
    pub run_id: String,
    /// The run's directory (created).
    pub dir: PathBuf,
    /// Partitions of the tables (all three by default, present or not).
    pub partitions: Vec<String>,
    /// Every work item in scope with its key, finished or not, in plan order.
    pub items: Vec<(String, Item)>,
    /// Keys already in the trace files (a torn last line was cut off).
    pub done: BTreeSet<String>,
    pub notes: Vec<String>,
    /// Some LLM plays an explorer role (so the w.o. summary rows are run, not copied).
    pub agents_use_context: bool,
    pub graph_hash: String,
    /// The manifest as written with status `running`.
    pub manifest: Manifest,
}

impl Plan {
    /// Items not yet in the traces.
    pub fn todo(&self) -> impl Iterator<Item = &(String, Item)> {
        self.items.iter().filter(|(k, _)| !self.done.contains(k))
    }
}

/// Plans a run: loads the benchmark, derives the run id, creates the run directory, reads
/// the traces (what is done) and writes the manifest with status `running`.
pub fn plan(cfg: &EvalConfig, g: &Graph) -> Result<Plan, String> {
    let bench = Arc::new(Benchmark::load(&cfg.bench_dir, g)?);
    let mut notes = Vec::new();
    if bench.unmatched_removed > 0 {
        notes.push(format!("{} removed edges of the benchmark are not in this graph (was it built on another graph?)", bench.unmatched_removed));
    }
    let available = bench.available_partitions();
    // All three columns of Table 3 by default; a partition the benchmark lacks stays empty.
    let partitions: Vec<String> = if cfg.partitions.is_empty() {
        bench::PARTITIONS
            .iter()
            .map(|(k, _)| k.to_string())
            .collect()
    } else {
        for p in &cfg.partitions {
            if !bench::PARTITIONS.iter().any(|(k, _)| k == p) {
                return Err(format!(
                    "unknown partition {p:?} (partitions: llm, expert, sscore)"
                ));
            }
        }
        cfg.partitions.clone()
    };
    for (k, t) in bench::PARTITIONS {
        if !available.contains(k) && partitions.iter().any(|p| p == k) {
            notes.push(format!(
                "the benchmark has no {t} partition ({k}{}); its columns stay empty",
                if *k == "expert" {
                    ": no expert rankings file was given to the builder"
                } else {
                    ""
                }
            ));
        }
    }
    let run_id = match &cfg.run_id {
        Some(id) => id.clone(),
        None => derive_run_id(cfg, &bench.hash),
    };
    check_run_id(&run_id).map_err(|_| format!("bad run id {run_id:?}"))?;
    let dir = cfg.runs_dir.join(&run_id);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;

    // Questions in scope.
    let mut idx: Vec<usize> = (0..bench.kgqa.len())
        .filter(|&i| {
            cfg.split
                .as_ref()
                .is_none_or(|s| &bench.kgqa[i].partition == s)
        })
        .collect();
    idx.sort_by_key(|&i| bench.kgqa[i].qid);
    if let Some(n) = cfg.limit.filter(|&n| n < idx.len()) {
        // An even spread over the qid order, so a small run still covers every pattern type.
        let len = idx.len();
        idx = (0..n).map(|k| idx[k * len / n]).collect();
    }

    let want_t1 = cfg.tasks.contains(&TaskKind::T1);
    let want_t2 = cfg.tasks.contains(&TaskKind::T2);
    let want_t3 = cfg.tasks.contains(&TaskKind::T3);
    // Decided from the models file (not from a client), so planning needs no API key.
    let agents_use_context = ["relations", "nodes", "continue"]
        .iter()
        .any(|r| cfg.models.model_for(r).is_some());
    let judge_offline = cfg.models.model_for("judge").is_none();
    // Records with a failed model call are moved out of the traces: not done, to be retried.
    let (t1_done, t3_done) = failures::sweep(&dir)?;
    let done: BTreeSet<String> = t1_done
        .into_iter()
        .map(|r| r.key)
        .chain(t3_done.into_iter().map(|r| r.key))
        .collect();

    let mut items = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    if want_t1 {
        for &i in &idx {
            *counts.entry("t1".into()).or_default() += 1;
            let item = Item::T1(i);
            items.push((item.key(&bench), item));
        }
    }
    if want_t2 || want_t3 {
        // The offline explorer ignores summaries, so its without-summary run would repeat
        // the with-summary run exactly; it is reported from the same traces instead.
        let modes: &[bool] = if want_t3 && agents_use_context {
            &[true, false]
        } else {
            &[true]
        };
        for &i in &idx {
            let qid = bench.kgqa[i].qid;
            for p in &partitions {
                if bench.entry(qid, p).is_none() {
                    continue;
                }
                for &m in modes {
                    *counts
                        .entry(format!("t3:{p}:{}", if m { "with" } else { "without" }))
                        .or_default() += 1;
                    let item = Item::T3 {
                        rec: i,
                        partition: p.clone(),
                        with_summaries: m,
                    };
                    items.push((item.key(&bench), item));
                }
            }
        }
    }
    if !agents_use_context && want_t3 {
        notes.push("offline explorer: it does not read summaries, so the w.o. summary rows equal the with-summary rows".into());
    }
    if bench.ensemble == "offline proxy"
        && partitions.iter().any(|p| p == "llm")
        && (want_t2 || want_t3)
    {
        notes.push("the benchmark's LLM Ensemble partition was scored by offline proxies (degree / marginal obviousness), not by language models (`serenqa bench build --models FILE` builds a real one)".into());
    }
    if judge_offline && (want_t2 || want_t3) {
        notes.push("judge scores (Faithfulness, Comprehensiveness, Relevance) are offline code-based PROXIES, not LLM judgments".into());
    }

    // Manifest (created once; updated at the end).
    let manifest_path = dir.join("manifest.json");
    let old: Option<Manifest> = std::fs::read_to_string(&manifest_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let graph_hash = serenqa_benchmark::records::graph_hash(g);
    let role_labels: BTreeMap<String, String> = crate::llm::ROLES
        .iter()
        .map(|r| {
            (
                r.to_string(),
                cfg.models
                    .model_for(r)
                    .map(|m| m.name.clone())
                    .unwrap_or_else(|| "offline".into()),
            )
        })
        .collect();
    let manifest = Manifest {
        format: "serenqa-run".into(),
        run_id: run_id.clone(),
        label: run_label(&cfg.models),
        status: "running".into(),
        created_unix: old.as_ref().map(|m| m.created_unix).unwrap_or_else(now_unix),
        updated_unix: now_unix(),
        dataset: DatasetInfo { dir: cfg.bench_dir.display().to_string(), hash: bench.hash.clone(), graph_hash: graph_hash.clone(), questions: idx.len() },
        models_file: cfg.models_label.clone(),
        models: cfg
            .models
            .models
            .iter()
            .map(|m| serde_json::json!({"name": m.name, "model": m.model, "base_url": m.base_url, "temperature": m.temperature, "max_tokens": m.max_tokens, "params_b": m.params_b}))
            .collect(),
        roles: role_labels,
        prompts_hash: crate::prompts::prompts_hash(),
        code_version: match env!("SERENQA_GIT_COMMIT") {
            "" => format!("serenqa-pipeline {}", env!("CARGO_PKG_VERSION")),
            commit => format!("serenqa-pipeline {} (git {commit})", env!("CARGO_PKG_VERSION")),
        },
        tasks: cfg.tasks.iter().map(|t| format!("{t:?}").to_lowercase()).collect(),
        partitions: partitions.clone(),
        split: cfg.split.clone(),
        limit: cfg.limit,
        explore: cfg.explore.clone(),
        edge_source: cfg.edges.as_ref().map(std::string::ToString::to_string).unwrap_or_else(|| "memory".into()),
        ensemble: bench.ensemble.clone(),
        seeds: BTreeMap::from([("explore".to_string(), cfg.explore.seed)]),
        items: counts,
        // Earlier invocations' calls; this one's are added at the end.
        llm: old.as_ref().map(|m| m.llm.clone()).unwrap_or_default(),
        failed: 0,
        failed_by_kind: BTreeMap::new(),
        seconds: 0.0,
        notes: notes.clone(),
        queue: None,
    };
    write_json(&manifest_path, &manifest)?;
    Ok(Plan {
        bench,
        run_id,
        dir,
        partitions,
        items,
        done,
        notes,
        agents_use_context,
        graph_hash,
        manifest,
    })
}

/// Finishes a run whose items have all been attempted: aggregates from the trace files (the
/// failed items left out and counted per cell), writes `aggregate.{json,csv,md}` and marks
/// the manifest `complete`, or `incomplete` with `failed` when some items failed; `llm` (this
/// invocation's call statistics) is added to the earlier invocations'.
pub fn finalize(
    cfg: &EvalConfig,
    plan: &Plan,
    mut manifest: Manifest,
    started: Instant,
    llm: Option<StatsSnapshot>,
) -> Result<RunOutcome, String> {
    let dir = &plan.dir;
    let (t1, t3) = failures::sweep(dir)?;
    let done: BTreeSet<String> = t1
        .iter()
        .map(|r| r.key.clone())
        .chain(t3.iter().map(|r| r.key.clone()))
        .collect();
    let planned: BTreeSet<String> = plan.items.iter().map(|(k, _)| k.clone()).collect();
    let failed: Vec<FailedItem> = failures::current(dir, &planned, &done)?;
    let (want_t1, want_t2, want_t3) = (
        cfg.tasks.contains(&TaskKind::T1),
        cfg.tasks.contains(&TaskKind::T2),
        cfg.tasks.contains(&TaskKind::T3),
    );
    let mut agg = report::aggregate(
        &manifest.label,
        &t1,
        &t3,
        &plan.partitions,
        !plan.agents_use_context,
        want_t1,
        want_t2,
        want_t3,
    );
    agg.ensemble = manifest.ensemble.clone();
    report::count_failed(&mut agg, &failed, !plan.agents_use_context);
    let mut notes = plan.notes.clone();
    if !failed.is_empty() {
        notes.insert(0, format!("INCOMPLETE: {} work item(s) failed (a model call failed: {}) and are left out of every table; running the same `serenqa eval` again retries exactly these (listed in {})", failed.len(), kinds_text(&failures::by_kind(&failed)), failures::FAILED_FILE));
    }
    let md = report::markdown(&agg, &notes);
    write_json(&dir.join("aggregate.json"), &agg)?;
    std::fs::write(
        dir.join("aggregate.csv"),
        serenqa_shared::tidy::csv(&manifest.run_id, &agg),
    )
    .map_err(|e| format!("writing aggregate.csv: {e}"))?;
    std::fs::write(dir.join("aggregate.md"), &md)
        .map_err(|e| format!("writing aggregate.md: {e}"))?;
    manifest.status = if failed.is_empty() {
        "complete"
    } else {
        "incomplete"
    }
    .into();
    manifest.failed = failed.len();
    manifest.failed_by_kind = failures::by_kind(&failed);
    manifest.updated_unix = now_unix();
    manifest.seconds = started.elapsed().as_secs_f64();
    if let Some(s) = llm {
        manifest.llm = failures::add_stats(&manifest.llm, &s);
    }
    write_json(&dir.join("manifest.json"), &manifest)?;
    Ok(RunOutcome {
        dir: dir.clone(),
        manifest,
        aggregate: agg,
        markdown: md,
    })
}

/// Runs (or resumes) an evaluation in this process.
pub async fn run_eval(
    cfg: &EvalConfig,
    g: Arc<Graph>,
    model: Option<Arc<Model>>,
) -> Result<RunOutcome, String> {
    let started = Instant::now();
    let client = llm::connect(&cfg.models, cfg.cache_dir.clone())?;
    let roles = Roles::with_model(&cfg.models, client.clone());
    // The edge store first: an unreachable one must not leave a run directory behind.
    let remote_edges: Option<Arc<dyn serenqa_edges::EdgeSource>> = match &cfg.edges {
        Some(t) => Some(Arc::new(
            serenqa_edges::RedisEdges::open(t.clone(), g.clone())
                .await
                .map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let plan = plan(cfg, &g)?;
    let ctx = Arc::new(
        Ctx::new(
            g,
            model,
            plan.bench.clone(),
            roles,
            cfg.explore.clone(),
            &plan.partitions,
            &cfg.tasks,
        )
        .with_edges(remote_edges),
    );
    let items: Vec<Item> = plan.todo().map(|(_, i)| i.clone()).collect();

    // Progress bars per task.
    let mp = MultiProgress::new();
    if !cfg.progress {
        mp.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let n_t1 = items.iter().filter(|i| matches!(i, Item::T1(_))).count() as u64;
    let n_t3 = items.len() as u64 - n_t1;
    let (bar_t1, bar_t3) = progress_bars(&mp, n_t1, n_t3);

    let dead = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let w1 = Arc::new(Writer::open(&plan.dir.join(T1_FILE), dead.clone())?);
    let w3 = Arc::new(Writer::open(&plan.dir.join(T3_FILE), dead)?);
    let wf = Arc::new(Writer::append(&plan.dir.join(failures::FAILED_FILE))?);
    let written = Arc::new(AtomicUsize::new(0));
    let sem = Arc::new(tokio::sync::Semaphore::new(cfg.concurrency.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let crash_after = cfg.crash_after;
    for item in items {
        let permit = sem
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| "scheduler closed".to_string())?;
        let (ctx, w1, w3, written) = (ctx.clone(), w1.clone(), w3.clone(), written.clone());
        let (b1, b3, wf) = (bar_t1.clone(), bar_t3.clone(), wf.clone());
        set.spawn(async move {
            let _permit = permit;
            let out = run_item(&ctx, &item).await.map_err(|e| e.to_string())?;
            let (writer, bar) = match out.kind {
                TraceKind::T1 => (w1, b1),
                TraceKind::T3 => (w3, b3),
            };
            if let Some(f) = &out.failed {
                // Not a result: recorded as failed, left out of the traces (retried on resume).
                wf.write_line(&serde_json::to_string(f).map_err(|e| e.to_string())?, false)?;
                bar.inc(1);
                return Ok(());
            }
            let n = written.fetch_add(1, Ordering::SeqCst);
            let torn = crash_after.is_some_and(|c| n >= c);
            writer.write_line(&out.line, torn)?;
            bar.inc(1);
            Ok::<(), String>(())
        });
        // Surface a failure (or the simulated crash) promptly.
        while let Some(done) = set.try_join_next() {
            done.map_err(|e| format!("work item panicked: {e}"))??;
        }
    }
    while let Some(done) = set.join_next().await {
        done.map_err(|e| format!("work item panicked: {e}"))??;
    }
    bar_t1.finish();
    bar_t3.finish();
    let manifest = plan.manifest.clone();
    finalize(
        cfg,
        &plan,
        manifest,
        started,
        client.as_ref().map(|c| c.stats()),
    )
}

/// The T1 and T2+T3 progress bars of a run.
pub(crate) fn progress_bars(
    mp: &MultiProgress,
    n_t1: u64,
    n_t3: u64,
) -> (ProgressBar, ProgressBar) {
    let style = ProgressStyle::with_template(
        "{prefix:>6} [{bar:40}] {pos}/{len} {per_sec} eta {eta} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    let bar_t1 = mp.add(
        ProgressBar::new(n_t1)
            .with_style(style.clone())
            .with_prefix("T1"),
    );
    let bar_t3 = mp.add(
        ProgressBar::new(n_t3)
            .with_style(style)
            .with_prefix("T2+T3"),
    );
    (bar_t1, bar_t3)
}

/// `http: 2, malformed: 1`.
pub fn kinds_text(by_kind: &BTreeMap<String, usize>) -> String {
    by_kind
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
