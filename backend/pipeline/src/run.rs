//! `serenqa eval`: a resumable evaluation run over a benchmark directory.
//!
//! Work items are T1 per question, and T2+T3 per (question, partition, summary mode). Each
//! finished item is appended to its trace file as one JSON line (written whole, then
//! flushed). On start, existing traces are read (a torn last line from a kill is cut off) and
//! finished items are skipped; aggregates are always recomputed from all traces, sorted by
//! key, so an interrupted-and-resumed run ends with exactly the tables of an uninterrupted one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use serenqa_benchmark::query::EdgeMask;
use serenqa_graph::Graph;
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;

use crate::agents::Agents;
use crate::bench::{self, path_ends, resolve_ids, Benchmark};
use crate::explore::{self, path_line, CallTrace, Env, ExploreConfig, LevelTrace, TypeStats};
use crate::llm::{LlmClient, ModelsFile, Roles, StatsSnapshot};
use crate::metrics;
use crate::reasoning::{self, Judged};
use crate::report::{self, Aggregate};
use crate::retrieval::OfflineRetriever;
use crate::retrieval::{self, Retrieved};

pub const T1_FILE: &str = "t1.jsonl";
pub const T3_FILE: &str = "t3.jsonl";

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaskKind {
    T1,
    T2,
    T3,
}

/// Parses `t1,t2,t3`.
pub fn parse_tasks(s: &str) -> Result<BTreeSet<TaskKind>, String> {
    let mut out = BTreeSet::new();
    for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        out.insert(match t.to_ascii_lowercase().as_str() {
            "t1" => TaskKind::T1,
            "t2" => TaskKind::T2,
            "t3" => TaskKind::T3,
            _ => return Err(format!("unknown task {t:?} (tasks: t1, t2, t3)")),
        });
    }
    if out.is_empty() {
        return Err("no task given".into());
    }
    Ok(out)
}

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

/// `$SERENQA_RUNS`, default `./runs`.
pub fn default_runs_dir() -> PathBuf {
    std::env::var_os("SERENQA_RUNS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("runs"))
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    pub format: String,
    pub run_id: String,
    /// Short name for leaderboards: the retrieval/explorer model names or `offline`.
    pub label: String,
    pub status: String,
    pub created_unix: u64,
    pub updated_unix: u64,
    pub dataset: DatasetInfo,
    pub models_file: String,
    /// Declared models (no keys).
    pub models: Vec<serde_json::Value>,
    pub roles: BTreeMap<String, String>,
    pub prompts_hash: String,
    pub code_version: String,
    pub tasks: Vec<String>,
    pub partitions: Vec<String>,
    pub split: Option<String>,
    pub limit: Option<usize>,
    pub explore: ExploreConfig,
    /// Where T3 read edges: `memory` or the Redis edge store's URL.
    pub edge_source: String,
    /// Who scored the benchmark's `llm` partition (`llm`, `offline proxy`, `mixed`, `unknown`).
    pub ensemble: String,
    pub seeds: BTreeMap<String, u64>,
    pub items: BTreeMap<String, usize>,
    pub llm: StatsSnapshot,
    /// Wall seconds of the last invocation.
    pub seconds: f64,
    pub notes: Vec<String>,
    /// Set when the items ran on queue workers (`serenqa eval --queue`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueInfo>,
}

impl Manifest {
    /// The run's settings as the leaderboard labels it.
    pub fn settings(&self) -> serenqa_shared::results::RunSettings {
        serenqa_shared::results::RunSettings {
            id: self.run_id.clone(),
            label: self.label.clone(),
            roles: self.roles.clone(),
            beam: self.explore.beam_width,
            depth: self.explore.depth,
            relations: self.explore.relations_per_node,
            nodes: self.explore.nodes_per_node,
            limit: self.limit,
            split: self.split.clone(),
            questions: self.dataset.questions,
            ensemble: self.ensemble.clone(),
            explorer_params_b: self
                .roles
                .get("nodes")
                .and_then(|name| {
                    self.models
                        .iter()
                        .find(|m| m["name"].as_str() == Some(name.as_str()))
                })
                .and_then(|m| m["params_b"].as_f64()),
            created_unix: self.created_unix,
            status: self.status.clone(),
        }
    }
}

/// A run id that names a directory inside the runs directory (no separators, no dot first).
pub fn check_run_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return Err(format!("no run {id:?}"));
    }
    Ok(())
}

/// How a distributed run was executed (see [`crate::queue`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueueInfo {
    /// The Redis URL without credentials.
    pub redis: String,
    /// Workers that completed items of this run.
    pub workers: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub dir: String,
    pub hash: String,
    pub graph_hash: String,
    pub questions: usize,
}

/// One T1 trace line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T1Record {
    pub key: String,
    pub qid: u32,
    pub pattern: String,
    pub group: String,
    pub question: String,
    pub agent: String,
    pub gold: Vec<String>,
    #[serde(flatten)]
    pub retrieved: Retrieved,
    pub hit: f64,
    pub f1: f64,
    pub call: Option<CallTrace>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T2Scores {
    pub faithfulness: Judged,
    pub comprehensiveness: Judged,
    pub seren_cov: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T3Scores {
    pub relevance: Judged,
    pub type_match: f64,
    pub seren_hit: f64,
}

/// One T2/T3 trace line: one exploration of one question under one partition and mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T3Record {
    pub key: String,
    pub qid: u32,
    pub pattern: String,
    pub partition: String,
    /// `with` or `without` summaries.
    pub mode: String,
    pub question: String,
    pub roots: Vec<String>,
    pub gold: Vec<String>,
    pub gold_paths: Vec<String>,
    pub levels: Vec<LevelTrace>,
    pub paths: Vec<String>,
    pub leaves: Vec<String>,
    pub leaf_types: Vec<String>,
    pub summaries: Vec<String>,
    pub t2: Option<T2Scores>,
    pub t3: Option<T3Scores>,
    pub calls: Vec<CallTrace>,
    pub error: Option<String>,
}

/// Reads a JSONL trace, cutting a torn last line (a killed writer) off the file.
pub fn read_trace<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut good_len = 0usize;
    let mut start = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            let line = &bytes[start..i];
            if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<T>(line) {
                    Ok(v) => out.push(v),
                    Err(e) => {
                        return Err(format!("{} line {}: {e}", path.display(), out.len() + 1))
                    }
                }
            }
            good_len = i + 1;
            start = i + 1;
        }
    }
    if good_len < bytes.len() {
        // A line without its newline was never completed: drop it so it is redone.
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        f.set_len(good_len as u64)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(out)
}

/// Appends whole JSON lines to a trace file (one `write` per line, then flush).
pub(crate) struct Writer {
    file: Mutex<std::fs::File>,
    /// Set by a simulated crash: a dead process writes nothing more, to any file.
    dead: Arc<std::sync::atomic::AtomicBool>,
}

impl Writer {
    /// A writer that never simulates a crash.
    pub(crate) fn append(path: &Path) -> Result<Writer, String> {
        Writer::open(path, Arc::new(std::sync::atomic::AtomicBool::new(false)))
    }
    fn open(path: &Path, dead: Arc<std::sync::atomic::AtomicBool>) -> Result<Writer, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Writer {
            file: Mutex::new(file),
            dead,
        })
    }
    pub(crate) fn write_line(&self, line: &str, torn: bool) -> Result<(), String> {
        let mut f = self
            .file
            .lock()
            .map_err(|_| "trace writer poisoned".to_string())?;
        if self.dead.load(Ordering::SeqCst) {
            return Err("simulated crash".into());
        }
        if torn {
            self.dead.store(true, Ordering::SeqCst);
            let half = &line.as_bytes()[..line.len() / 2];
            f.write_all(half).map_err(|e| e.to_string())?;
            return Err("simulated crash".into());
        }
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        f.write_all(buf.as_bytes()).map_err(|e| e.to_string())?;
        f.flush().map_err(|e| e.to_string())
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

/// Shared, immutable inputs of all work items of one run: what [`run_item`] reads. Built
/// once per run by [`run_eval`] (local) or per run spec by a queue worker ([`crate::queue`]).
pub struct Ctx {
    g: Arc<Graph>,
    model: Option<Arc<Model>>,
    bench: Arc<Benchmark>,
    stats: Arc<TypeStats>,
    blocks: Arc<BlockCache>,
    /// A remote edge store for T3 (None: the in-memory graph).
    remote_edges: Option<Arc<dyn serenqa_edges::EdgeSource>>,
    /// The agents of the run, chosen once from the roles.
    agents: Agents,
    explore: ExploreConfig,
    t1_example: String,
    examples: BTreeMap<String, String>,
    want_t2: bool,
    want_t3: bool,
    /// qid → index into `bench.kgqa`.
    by_qid: BTreeMap<u32, usize>,
    /// Per partition with a removed set: what its explorations compute on (G = Gc − R).
    views: BTreeMap<String, PartitionView>,
}

/// G = Gc − R of one partition as a graph of its own (same node ids), with the model, the
/// type statistics and the P3 block cache computed on it: what T3 may read, so that no number
/// an explorer sees comes from the removed edges. Built once per run (Hetionet: ~3 s each).
pub struct PartitionView {
    pub g: Arc<Graph>,
    pub model: Option<Arc<Model>>,
    pub stats: Arc<TypeStats>,
    pub blocks: Arc<BlockCache>,
}

impl PartitionView {
    pub fn new(gc: &Graph, removed: &EdgeMask, model: Option<&Model>) -> PartitionView {
        let g = serenqa_graph::filter::without_edges(gc, &|e| removed.contains(e));
        let model = model.map(|m| Arc::new(Model::compute(&g, &m.params.config(), false)));
        PartitionView {
            stats: Arc::new(TypeStats::new(&g)),
            blocks: Arc::new(BlockCache::new(256)),
            g: Arc::new(g),
            model,
        }
    }
}

impl Ctx {
    /// The context of a run over `bench` with `roles` playing the agents.
    pub fn new(
        g: Arc<Graph>,
        model: Option<Arc<Model>>,
        bench: Arc<Benchmark>,
        roles: Roles,
        explore: ExploreConfig,
        partitions: &[String],
        tasks: &BTreeSet<TaskKind>,
    ) -> Ctx {
        let examples: BTreeMap<String, String> = partitions
            .iter()
            .map(|p| (p.clone(), example_text(&bench, p)))
            .collect();
        let t1_example = bench
            .kgqa
            .iter()
            .find(|r| r.partition == "train")
            .map(|r| format!("Question: {}\n```cypher\n{}\n```", r.question, r.cypher))
            .unwrap_or_default();
        let explores = tasks.contains(&TaskKind::T2) || tasks.contains(&TaskKind::T3);
        let views = if explores {
            partitions
                .iter()
                .filter_map(|p| {
                    bench
                        .removed
                        .get(p)
                        .map(|r| (p.clone(), PartitionView::new(&g, r, model.as_deref())))
                })
                .collect()
        } else {
            BTreeMap::new()
        };
        let lex = Arc::new(OfflineRetriever::new(&g));
        Ctx {
            agents: Agents::from_roles(&roles, lex),
            stats: Arc::new(TypeStats::new(&g)),
            blocks: Arc::new(BlockCache::new(256)),
            by_qid: bench
                .kgqa
                .iter()
                .enumerate()
                .map(|(i, r)| (r.qid, i))
                .collect(),
            g,
            model,
            bench,
            explore,
            t1_example,
            examples,
            want_t2: tasks.contains(&TaskKind::T2),
            want_t3: tasks.contains(&TaskKind::T3),
            remote_edges: None,
            views,
        }
    }

    pub fn bench(&self) -> &Benchmark {
        &self.bench
    }

    /// T3 reads edges from `edges` (a Redis edge store) instead of the in-memory graph.
    pub fn with_edges(mut self, edges: Option<Arc<dyn serenqa_edges::EdgeSource>>) -> Ctx {
        self.remote_edges = edges;
        self
    }
}

/// One work item: T1 of a question, or T2+T3 of a (question, partition, summary mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// Index into `bench.kgqa`.
    T1(usize),
    T3 {
        rec: usize,
        partition: String,
        with_summaries: bool,
    },
}

impl Item {
    /// The item's trace key: `t1:<qid>` or `t3:<qid>:<partition>:<with|without>`.
    pub fn key(&self, b: &Benchmark) -> String {
        match self {
            Item::T1(i) => format!("t1:{}", b.kgqa[*i].qid),
            Item::T3 {
                rec,
                partition,
                with_summaries,
            } => format!(
                "t3:{}:{partition}:{}",
                b.kgqa[*rec].qid,
                if *with_summaries { "with" } else { "without" }
            ),
        }
    }

    /// The item of a trace key in this run's benchmark.
    pub fn parse(key: &str, ctx: &Ctx) -> Result<Item, String> {
        let bad = || format!("bad work item key {key:?}");
        let parts: Vec<&str> = key.split(':').collect();
        let qid: u32 = parts.get(1).and_then(|q| q.parse().ok()).ok_or_else(bad)?;
        let rec = *ctx
            .by_qid
            .get(&qid)
            .ok_or_else(|| format!("work item {key:?}: question {qid} is not in the benchmark"))?;
        match parts.as_slice() {
            ["t1", _] => Ok(Item::T1(rec)),
            ["t3", _, p, m]
                if bench::PARTITIONS.iter().any(|(k, _)| k == p)
                    && (*m == "with" || *m == "without") =>
            {
                Ok(Item::T3 {
                    rec,
                    partition: p.to_string(),
                    with_summaries: *m == "with",
                })
            }
            _ => Err(bad()),
        }
    }
}

/// Which trace file an item's record goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    T1,
    T3,
}

impl TraceKind {
    /// By key prefix (`t1:` / `t3:`).
    pub fn of_key(key: &str) -> Option<TraceKind> {
        if key.starts_with("t1:") {
            Some(TraceKind::T1)
        } else if key.starts_with("t3:") {
            Some(TraceKind::T3)
        } else {
            None
        }
    }

    pub fn file(self) -> &'static str {
        match self {
            TraceKind::T1 => T1_FILE,
            TraceKind::T3 => T3_FILE,
        }
    }
}

/// A finished work item: its trace line (one JSON object, no newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemResult {
    pub kind: TraceKind,
    pub key: String,
    pub line: String,
}

/// Why [`run_item`] produced no record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemError {
    /// The edge store failed (Redis down): not a result; the item is to be redone.
    Unavailable(String),
    /// The record could not be serialised.
    Record(String),
}

impl std::fmt::Display for ItemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemError::Unavailable(m) | ItemError::Record(m) => f.write_str(m),
        }
    }
}

/// Runs one work item. Every problem of the question or the model is inside the record
/// (`error`, `issues`), as in the paper; `Err` is for what is not a result (see [`ItemError`]).
pub async fn run_item(ctx: &Ctx, item: &Item) -> Result<ItemResult, ItemError> {
    match item {
        Item::T1(i) => {
            let rec = run_t1(ctx, *i).await;
            Ok(ItemResult {
                kind: TraceKind::T1,
                line: serde_json::to_string(&rec).map_err(|e| ItemError::Record(e.to_string()))?,
                key: rec.key,
            })
        }
        Item::T3 {
            rec,
            partition,
            with_summaries,
        } => {
            let r = run_t3(ctx, *rec, partition, *with_summaries)
                .await
                .map_err(ItemError::Unavailable)?;
            Ok(ItemResult {
                kind: TraceKind::T3,
                line: serde_json::to_string(&r).map_err(|e| ItemError::Record(e.to_string()))?,
                key: r.key,
            })
        }
    }
}

/// The record of an item that could not be run (e.g. a task that crashed every worker it was
/// given to): the question's fields and `error`; it counts as non-executable (T1) or is left
/// out of the means like any T3 record with an error.
pub fn error_item(ctx: &Ctx, item: &Item, msg: &str) -> Result<ItemResult, String> {
    let key = item.key(&ctx.bench);
    match item {
        Item::T1(i) => {
            let r = &ctx.bench.kgqa[*i];
            let rec = T1Record {
                key: key.clone(),
                qid: r.qid,
                pattern: r.pattern_type.clone(),
                group: bench::pattern_group(&r.pattern_type).to_string(),
                question: r.question.clone(),
                agent: ctx.agents.retriever.model().unwrap_or("offline").into(),
                gold: r.answer.iter().map(|a| a.answer_argument.clone()).collect(),
                retrieved: Retrieved {
                    error: Some(msg.to_string()),
                    ..Default::default()
                },
                ..Default::default()
            };
            Ok(ItemResult {
                kind: TraceKind::T1,
                key,
                line: serde_json::to_string(&rec).map_err(|e| e.to_string())?,
            })
        }
        Item::T3 {
            rec,
            partition,
            with_summaries,
        } => {
            let r = &ctx.bench.kgqa[*rec];
            let t = T3Record {
                key: key.clone(),
                qid: r.qid,
                pattern: r.pattern_type.clone(),
                partition: partition.clone(),
                mode: if *with_summaries { "with" } else { "without" }.into(),
                question: r.question.clone(),
                error: Some(msg.to_string()),
                ..Default::default()
            };
            Ok(ItemResult {
                kind: TraceKind::T3,
                key,
                line: serde_json::to_string(&t).map_err(|e| e.to_string())?,
            })
        }
    }
}

/// What [`run_eval`] returns.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub aggregate: Aggregate,
    pub markdown: String,
}

/// One-shot guidance text for a partition: a training question and its paths.
fn example_text(b: &Benchmark, partition: &str) -> String {
    match b.one_shot(partition) {
        Some((r, e)) => format!(
            "Question: {}\nRoots: {}\nSerendipity set: {}\nPaths:\n{}",
            r.question,
            e.exact_matches.list.join(", "),
            e.serendipity_set.list.join(", "),
            e.explore_queries
                .paths
                .iter()
                .take(6)
                .map(|p| format!("- {p}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        None => "(no example available)".into(),
    }
}

async fn run_t1(ctx: &Ctx, i: usize) -> T1Record {
    let r = &ctx.bench.kgqa[i];
    let gold: Vec<String> = r.answer.iter().map(|a| a.answer_argument.clone()).collect();
    let (retrieved, call, _) = ctx
        .agents
        .retriever
        .retrieve(&ctx.g, &r.question, &ctx.t1_example)
        .await;
    let (hit, f1) = retrieval::score(&gold, &retrieved);
    T1Record {
        key: format!("t1:{}", r.qid),
        qid: r.qid,
        pattern: r.pattern_type.clone(),
        group: bench::pattern_group(&r.pattern_type).to_string(),
        question: r.question.clone(),
        agent: ctx.agents.retriever.model().unwrap_or("offline").into(),
        gold,
        retrieved,
        hit,
        f1,
        call,
    }
}

/// The answer type label of a record (its question node's class).
fn answer_type(r: &serenqa_benchmark::records::KgqaRecord) -> Option<String> {
    r.graph_query
        .nodes
        .iter()
        .find(|n| n.question_node == 1)
        .map(|n| n.class.clone())
}

/// One exploration record. `Err` is an infrastructure failure (the edge store is unreachable):
/// not a result, the item stays to be redone.
async fn run_t3(
    ctx: &Ctx,
    i: usize,
    partition: &str,
    with_summaries: bool,
) -> Result<T3Record, String> {
    let g = &*ctx.g;
    let r = &ctx.bench.kgqa[i];
    let mode = if with_summaries { "with" } else { "without" };
    let mut rec = T3Record {
        key: format!("t3:{}:{partition}:{mode}", r.qid),
        qid: r.qid,
        pattern: r.pattern_type.clone(),
        partition: partition.to_string(),
        mode: mode.into(),
        question: r.question.clone(),
        ..Default::default()
    };
    let Some(entry) = ctx.bench.entry(r.qid, partition) else {
        rec.error = Some("no partition entry".into());
        return Ok(rec);
    };
    let ty = answer_type(r);
    let roots = resolve_ids(g, &entry.exact_matches.list, ty.as_deref());
    let gold = resolve_ids(g, &entry.serendipity_set.list, ty.as_deref());
    rec.roots = roots.iter().map(|&n| g.ident(n).to_string()).collect();
    rec.gold = gold.iter().map(|&n| g.ident(n).to_string()).collect();
    rec.gold_paths = entry.explore_queries.paths.clone();
    if roots.is_empty() || gold.is_empty() {
        rec.error = Some("roots or gold set do not resolve in this graph".into());
        return Ok(rec);
    }
    let memory = serenqa_edges::MemoryEdges::new(g);
    let edges: &dyn serenqa_edges::EdgeSource = match &ctx.remote_edges {
        Some(r) => r.as_ref(),
        None => &memory,
    };
    let weights = serenqa_model::weights::shipped().weights;
    let env = match ctx.views.get(partition) {
        Some(v) => Env {
            g,
            edges,
            removed: ctx.bench.removed.get(partition),
            walk: &v.g,
            model: v.model.as_deref(),
            blocks: &v.blocks,
            stats: &v.stats,
            weights,
        },
        None => Env {
            g,
            edges,
            removed: None,
            walk: g,
            model: ctx.model.as_deref(),
            blocks: &ctx.blocks,
            stats: &ctx.stats,
            weights,
        },
    };
    let mut cfg = ctx.explore.clone();
    cfg.use_summaries = with_summaries;
    let example = ctx.examples.get(partition).cloned().unwrap_or_default();
    let task = explore::Task {
        question: &r.question,
        roots,
        example,
    };
    let ex = explore::explore(&env, &ctx.agents.explore, &cfg, &task).await?;
    let leaves = ex.leaves();
    let mut calls = ex.calls.clone();
    rec.levels = ex.levels.clone();
    rec.paths = ex
        .order
        .iter()
        .filter_map(|n| ex.paths.get(n))
        .filter(|p| !p.is_empty())
        .map(|p| path_line(g, p))
        .collect();
    rec.leaves = leaves.iter().map(|&n| g.ident(n).to_string()).collect();
    rec.leaf_types = leaves
        .iter()
        .map(|&n| g.type_label(g.node_type(n)).to_string())
        .collect();
    rec.summaries = ex.summaries.clone();
    let judge = ctx.agents.judge.as_ref();
    if with_summaries && ctx.want_t2 {
        let ends: Vec<(String, String)> =
            rec.gold_paths.iter().filter_map(|p| path_ends(p)).collect();
        let f = reasoning::faithfulness(g, judge, &r.question, &ex, &mut calls).await;
        let c = reasoning::comprehensiveness(g, judge, &r.question, &ex, &mut calls).await;
        rec.t2 = Some(T2Scores {
            faithfulness: f,
            comprehensiveness: c,
            seren_cov: reasoning::seren_cov(&ex, &ends),
        });
    }
    if ctx.want_t3 {
        let gold_types: BTreeSet<String> = gold
            .iter()
            .map(|&n| g.type_label(g.node_type(n)).to_string())
            .collect();
        let gold_ids: BTreeSet<String> = rec.gold.iter().cloned().collect();
        // The proxy judge reads the graph the explorer saw.
        let rel = reasoning::relevance(
            env.walk,
            judge,
            &r.question,
            &ex,
            &leaves,
            &gold,
            &mut calls,
        )
        .await;
        rec.t3 = Some(T3Scores {
            relevance: rel,
            type_match: metrics::type_match(&rec.leaf_types, &gold_types),
            seren_hit: metrics::seren_hit(&rec.leaves, &gold_ids),
        });
    }
    rec.calls = calls;
    Ok(rec)
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
    if run_id.is_empty() || run_id.contains(['/', '\\']) || run_id.starts_with('.') {
        return Err(format!("bad run id {run_id:?}"));
    }
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
    let mut done: BTreeSet<String> = read_trace::<T1Record>(&dir.join(T1_FILE))?
        .into_iter()
        .map(|r| r.key)
        .collect();
    done.extend(
        read_trace::<T3Record>(&dir.join(T3_FILE))?
            .into_iter()
            .map(|r| r.key),
    );

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
        code_version: format!("serenqa-pipeline {}", env!("CARGO_PKG_VERSION")),
        tasks: cfg.tasks.iter().map(|t| format!("{t:?}").to_lowercase()).collect(),
        partitions: partitions.clone(),
        split: cfg.split.clone(),
        limit: cfg.limit,
        explore: cfg.explore.clone(),
        edge_source: cfg.edges.as_ref().map(std::string::ToString::to_string).unwrap_or_else(|| "memory".into()),
        ensemble: bench.ensemble.clone(),
        seeds: BTreeMap::from([("explore".to_string(), cfg.explore.seed)]),
        items: counts,
        llm: StatsSnapshot::default(),
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

/// Finishes a run whose items are all in the traces: aggregates from the trace files,
/// writes `aggregate.{json,csv,md}` and marks the manifest `complete` (with `llm` stats).
pub fn finalize(
    cfg: &EvalConfig,
    plan: &Plan,
    mut manifest: Manifest,
    started: Instant,
    llm: Option<StatsSnapshot>,
) -> Result<RunOutcome, String> {
    let dir = &plan.dir;
    let t1: Vec<T1Record> = read_trace(&dir.join(T1_FILE))?;
    let t3: Vec<T3Record> = read_trace(&dir.join(T3_FILE))?;
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
    let md = report::markdown(&agg, &plan.notes);
    write_json(&dir.join("aggregate.json"), &agg)?;
    std::fs::write(dir.join("aggregate.csv"), report::csv(&agg))
        .map_err(|e| format!("writing aggregate.csv: {e}"))?;
    std::fs::write(dir.join("aggregate.md"), &md)
        .map_err(|e| format!("writing aggregate.md: {e}"))?;
    manifest.status = "complete".into();
    manifest.updated_unix = now_unix();
    manifest.seconds = started.elapsed().as_secs_f64();
    if let Some(s) = llm {
        manifest.llm = s;
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
    let client = if cfg.models.models.is_empty() {
        None
    } else {
        Some(Arc::new(LlmClient::new(
            &cfg.models,
            cfg.cache_dir.clone(),
        )?))
    };
    let roles = Roles::from_file(&cfg.models, client.clone());
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
        let (b1, b3) = (bar_t1.clone(), bar_t3.clone());
        set.spawn(async move {
            let _permit = permit;
            let out = run_item(&ctx, &item).await.map_err(|e| e.to_string())?;
            let (writer, bar) = match out.kind {
                TraceKind::T1 => (w1, b1),
                TraceKind::T3 => (w3, b3),
            };
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
        client.as_ref().map(|c| c.stats.snapshot()),
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

pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())? + "\n";
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Runs listed in a runs directory: (id, manifest, aggregate if finished), newest first.
pub fn list_runs(runs_dir: &Path) -> Vec<(String, Manifest, Option<Aggregate>)> {
    let Ok(rd) = std::fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let dir = e.path();
        let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else {
            continue;
        };
        let Ok(m) = serde_json::from_str::<Manifest>(&text) else {
            continue;
        };
        let agg = std::fs::read_to_string(dir.join("aggregate.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        out.push((e.file_name().to_string_lossy().to_string(), m, agg));
    }
    out.sort_by(|a, b| b.1.updated_unix.cmp(&a.1.updated_unix).then(a.0.cmp(&b.0)));
    out
}

/// The trace records of one question in a run (T1 and every T2/T3 exploration).
pub fn question_trace(
    runs_dir: &Path,
    run_id: &str,
    qid: u32,
) -> Result<serde_json::Value, String> {
    if run_id.is_empty() || run_id.contains(['/', '\\']) || run_id.starts_with('.') {
        return Err(format!("no run {run_id:?}"));
    }
    let dir = runs_dir.join(run_id);
    if !dir.join("manifest.json").is_file() {
        return Err(format!("no run {run_id:?}"));
    }
    let t1: Vec<serde_json::Value> = read_lines(&dir.join(T1_FILE))
        .into_iter()
        .filter(|v| v.get("qid").and_then(serde_json::Value::as_u64) == Some(u64::from(qid)))
        .collect();
    let t3: Vec<serde_json::Value> = read_lines(&dir.join(T3_FILE))
        .into_iter()
        .filter(|v| v.get("qid").and_then(serde_json::Value::as_u64) == Some(u64::from(qid)))
        .collect();
    if t1.is_empty() && t3.is_empty() {
        return Err(format!("run {run_id} has no trace for question {qid}"));
    }
    Ok(serde_json::json!({"run_id": run_id, "qid": qid, "t1": t1, "t3": t3}))
}

/// The questions of a run (`qid`, `pattern`, `question`), by qid.
pub fn run_questions(runs_dir: &Path, run_id: &str) -> Result<Vec<serde_json::Value>, String> {
    if run_id.is_empty()
        || run_id.contains(['/', '\\'])
        || run_id.starts_with('.')
        || !runs_dir.join(run_id).join("manifest.json").is_file()
    {
        return Err(format!("no run {run_id:?}"));
    }
    let dir = runs_dir.join(run_id);
    let mut seen: BTreeMap<u64, serde_json::Value> = BTreeMap::new();
    for v in read_lines(&dir.join(T1_FILE))
        .into_iter()
        .chain(read_lines(&dir.join(T3_FILE)))
    {
        if let Some(q) = v.get("qid").and_then(serde_json::Value::as_u64) {
            seen.entry(q).or_insert_with(|| serde_json::json!({"qid": q, "pattern": v.get("pattern").cloned().unwrap_or_default(), "question": v.get("question").cloned().unwrap_or_default()}));
        }
    }
    Ok(seen.into_values().collect())
}

/// Complete JSON lines of a trace file (read-only; a torn line is skipped).
fn read_lines(path: &Path) -> Vec<serde_json::Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
