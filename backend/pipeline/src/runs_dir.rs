//! The runs directory (`$SERENQA_RUNS`, default `./runs`; layout in the crate docs): one
//! subdirectory per run, named by its run id, holding `manifest.json` ([`Manifest`]), the
//! trace files ([`crate::trace`]) and the aggregate tables. Everything that names a run by
//! id goes through [`check_run_id`] (the only run-id validation: no separators, no dot
//! first, so an id never leaves the directory). Here: listing runs ([`list_runs`]), a run's
//! questions ([`run_questions`]), one question's raw lines ([`question_lines`]) and its
//! reviewer view ([`question_trace`]), and writing a JSON file whole ([`write_json`]).
//!
//! Reading here never modifies a file: a torn last line is skipped, not cut off (only the
//! run's writer, [`crate::trace::read_trace`], may cut).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serenqa_graph::Graph;
use serenqa_shared::api::QuestionTrace;
use serenqa_shared::results::Aggregate;

use crate::explore::ExploreConfig;
use crate::llm::StatsSnapshot;
use crate::trace::{question_view, T1Record, T3Record, TraceError, T1_FILE, T3_FILE};

/// `$SERENQA_RUNS`, default `./runs`.
pub fn default_runs_dir() -> PathBuf {
    std::env::var_os("SERENQA_RUNS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("runs"))
}

/// A run id that names a directory inside the runs directory (no separators, no dot first).
pub fn check_run_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return Err(format!("no run {id:?}"));
    }
    Ok(())
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

/// One question of run `run_id`, readable, with names from `g` (the served graph): the
/// run's manifest and trace records read here, the view built by [`question_view`].
pub fn question_trace(
    g: &Graph,
    runs_dir: &Path,
    run_id: &str,
    qid: u32,
) -> Result<QuestionTrace, TraceError> {
    check_run_id(run_id).map_err(TraceError::NoRun)?;
    let dir = runs_dir.join(run_id);
    let manifest: Manifest = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| TraceError::NoRun(format!("no run {run_id:?}")))?;
    // Read-only: a line being written is not cut off here (`read_trace` would truncate a torn
    // last line, which only the writer may do).
    let t1: Vec<T1Record> = read_complete(&dir.join(T1_FILE))?;
    let t3: Vec<T3Record> = read_complete(&dir.join(T3_FILE))?;
    question_view(g, run_id, manifest.settings(), &t1, &t3, qid)
}

/// The trace records of one question in a run (T1 and every T2/T3 exploration).
pub fn question_lines(
    runs_dir: &Path,
    run_id: &str,
    qid: u32,
) -> Result<serde_json::Value, String> {
    check_run_id(run_id)?;
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
    check_run_id(run_id)?;
    if !runs_dir.join(run_id).join("manifest.json").is_file() {
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

/// The complete lines of a trace file (a missing file has none).
fn read_complete<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, TraceError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Vec::new());
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = Vec::new();
    for (i, line) in complete
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        out.push(serde_json::from_str(line).map_err(|e| {
            TraceError::Unreadable(format!("{} line {}: {e}", path.display(), i + 1))
        })?);
    }
    Ok(out)
}
