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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serenqa_graph::Graph;
use serenqa_shared::api::{
    QuestionLines, QuestionTrace, RunEntry, RunQuestion, RunsReply, TraceFailure,
};

/// The manifest's types live with the API replies that carry them.
pub use serenqa_shared::api::{DatasetInfo, Manifest, QueueInfo};

use crate::failures::{FailedItem, FAILED_FILE};
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

/// Writes `v` as pretty JSON to `path` whole (a temporary file, then a rename).
pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())? + "\n";
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Runs listed in a runs directory (the directories with a readable manifest; the aggregate
/// when finished), newest first.
pub fn list_runs(runs_dir: &Path) -> Vec<RunEntry> {
    let Ok(rd) = std::fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let dir = e.path();
        let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else {
            continue;
        };
        let Ok(manifest) = serde_json::from_str::<Manifest>(&text) else {
            continue;
        };
        let aggregate = std::fs::read_to_string(dir.join("aggregate.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let id = e.file_name().to_string_lossy().to_string();
        let mut settings = manifest.settings();
        settings.id = id.clone();
        out.push(RunEntry {
            aggregate,
            id,
            manifest,
            settings,
        });
    }
    out.sort_by(|a, b| {
        b.manifest
            .updated_unix
            .cmp(&a.manifest.updated_unix)
            .then(a.id.cmp(&b.id))
    });
    out
}

/// `GET /api/runs`: every run ([`list_runs`]) and the runs directory's name (only the name:
/// absolute server paths are not for anonymous clients).
pub fn runs_reply(runs_dir: &Path) -> RunsReply {
    RunsReply {
        // Endpoint hosts only, no server paths: the reply is for anonymous clients.
        runs: list_runs(runs_dir)
            .into_iter()
            .map(|mut r| {
                r.manifest = r.manifest.for_clients();
                r
            })
            .collect(),
        runs_dir: runs_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
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
    let failed = open_failures(&dir, &t1, &t3)?;
    question_view(g, run_id, manifest.settings(), &t1, &t3, &failed, qid)
}

/// The run's items that failed and have no result since (the last attempt of each), as the
/// trace shows them: (qid, item).
fn open_failures(
    dir: &Path,
    t1: &[T1Record],
    t3: &[T3Record],
) -> Result<Vec<(u32, TraceFailure)>, TraceError> {
    let done: BTreeSet<&str> = t1
        .iter()
        .map(|r| r.key.as_str())
        .chain(t3.iter().map(|r| r.key.as_str()))
        .collect();
    let mut last: BTreeMap<String, FailedItem> = BTreeMap::new();
    for f in read_complete::<FailedItem>(&dir.join(FAILED_FILE))? {
        if !done.contains(f.key.as_str()) {
            last.insert(f.key.clone(), f);
        }
    }
    Ok(last
        .into_values()
        .map(|f| {
            let cell = if f.partition.is_empty() {
                "Knowledge retrieval (T1)".to_string()
            } else {
                format!(
                    "{} · {} summaries",
                    serenqa_shared::results::partition_title(&f.partition),
                    if f.mode == "with" { "with" } else { "without" }
                )
            };
            (
                f.qid,
                TraceFailure {
                    key: f.key,
                    cell,
                    error_kind: f.error_kind,
                    error: f.error,
                    role: f.role,
                    failed_calls: f.failed_calls,
                    calls: f.calls,
                },
            )
        })
        .collect())
}

/// The trace records of one question in a run (T1 and every T2/T3 exploration).
pub fn question_lines(runs_dir: &Path, run_id: &str, qid: u32) -> Result<QuestionLines, String> {
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
    let (mut t1, mut t3) = (t1, t3);
    t1.iter_mut().chain(t3.iter_mut()).for_each(redact_errors);
    Ok(QuestionLines {
        qid,
        run_id: run_id.to_string(),
        t1,
        t3,
    })
}

/// Every `error` text in a raw trace line with endpoint URLs reduced to their host (as the
/// readable trace shows them): the raw lines are served to anyone.
fn redact_errors(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    serde_json::Value::String(t) if k == "error" => {
                        *t = serenqa_shared::api::redact_urls(t);
                    }
                    _ => redact_errors(x),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_errors),
        _ => {}
    }
}

/// The questions of a run (`qid`, `pattern`, `question`), by qid: each from its first line.
pub fn run_questions(runs_dir: &Path, run_id: &str) -> Result<Vec<RunQuestion>, String> {
    check_run_id(run_id)?;
    if !runs_dir.join(run_id).join("manifest.json").is_file() {
        return Err(format!("no run {run_id:?}"));
    }
    let dir = runs_dir.join(run_id);
    let text = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut seen: BTreeMap<u32, RunQuestion> = BTreeMap::new();
    for v in read_lines(&dir.join(T1_FILE))
        .into_iter()
        .chain(read_lines(&dir.join(T3_FILE)))
    {
        // Records' question ids are `u32` (`T1Record::qid`, `T3Record::qid`).
        let Some(qid) = v
            .get("qid")
            .and_then(serde_json::Value::as_u64)
            .and_then(|q| u32::try_from(q).ok())
        else {
            continue;
        };
        seen.entry(qid).or_insert_with(|| RunQuestion {
            pattern: text(&v, "pattern"),
            qid,
            question: text(&v, "question"),
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A question's failed items show on its trace (cell, kind, host-only error); an item
    /// that succeeded on a resume is no longer listed; a question with only failures has a
    /// trace.
    #[test]
    fn failed_items_show_on_the_trace() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("run-a");
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = serde_json::to_string(&serenqa_shared::api::Manifest::default()).unwrap();
        std::fs::write(dir.join("manifest.json"), manifest).unwrap();
        let t1 = T1Record {
            key: "t1:5".into(),
            qid: 5,
            question: "q5".into(),
            ..Default::default()
        };
        std::fs::write(
            dir.join(T1_FILE),
            format!("{}\n", serde_json::to_string(&t1).unwrap()),
        )
        .unwrap();
        let line = |key: &str, qid: u32, partition: &str| {
            serde_json::to_string(&FailedItem {
                key: key.into(),
                qid,
                partition: partition.into(),
                mode: "with".into(),
                error_kind: "timeout".into(),
                error: "no reply from http://10.0.0.9:8000/v1/chat within 30 s".into(),
                role: "judge".into(),
                failed_calls: 1,
                calls: 4,
                ..Default::default()
            })
            .unwrap()
        };
        // t1:5 failed once and then succeeded; t3:5 and t1:6 are still failed.
        let text = [
            line("t1:5", 5, ""),
            line("t3:5:llm:with", 5, "llm"),
            line("t1:6", 6, ""),
        ]
        .join("\n")
            + "\n";
        std::fs::write(dir.join(FAILED_FILE), text).unwrap();
        let g = serenqa_graph::GraphBuilder::default().build();
        let v = question_trace(&g, root.path(), "run-a", 5).unwrap();
        assert_eq!(v.failed.len(), 1, "{:?}", v.failed);
        let f = &v.failed[0];
        assert_eq!(f.key, "t3:5:llm:with");
        assert_eq!(f.cell, "LLM Ensemble · with summaries");
        assert_eq!(f.error, "no reply from 10.0.0.9:8000 within 30 s");
        assert_eq!(v.next_qid, Some(6));
        let only = question_trace(&g, root.path(), "run-a", 6).unwrap();
        assert_eq!(only.failed[0].cell, "Knowledge retrieval (T1)");
        assert!(only.retrieval.is_none());
    }

    #[test]
    fn raw_lines_show_endpoint_hosts_only() {
        let mut v = serde_json::json!({
            "qid": 3,
            "error": "model call failed: http://user:pw@10.1.2.3:8000/v1/chat?x=1",
            "calls": [{"error": "refused by https://api.example.com/v1 with sk-live123", "reply": "see http://pubmed.example/1"}]
        });
        redact_errors(&mut v);
        assert_eq!(v["error"], "model call failed: 10.1.2.3:8000");
        assert_eq!(
            v["calls"][0]["error"],
            "refused by api.example.com with [key]"
        );
        // Replies stay as the model wrote them.
        assert_eq!(v["calls"][0]["reply"], "see http://pubmed.example/1");
    }
}
