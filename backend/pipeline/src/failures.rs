//! Failed work items: an item one of whose model calls failed (connection refused, timeout,
//! HTTP error, malformed reply: any [`crate::llm::LlmError`]) is not a result. Its record is
//! never written to the trace files, so it is never scored; instead one [`FailedItem`] line
//! (key, question, cell, error kind and message) is appended to the run's [`FAILED_FILE`].
//! Resuming a run reruns every item without a trace record, so exactly the failed items are
//! retried and the good ones kept.
//!
//! A failure is read off the record's own call traces ([`t1_failure`], [`t3_failure`]), so
//! records with a failed call that reached a trace file anyway (written before failures were
//! recorded, or stored by a queue worker) are moved out of the traces into [`FAILED_FILE`]
//! when the run is planned or finalised ([`sweep`]). A reply the paper scores (a judge's reply
//! without `Score: N`, a reply with no Cypher) is a model's answer, not a failure.
//!
//! Also here: summing a run's LLM call statistics over invocations ([`add_stats`]).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::llm::{CallTrace, StatsSnapshot};
use crate::trace::{read_trace, T1Record, T3Record, T1_FILE, T3_FILE};

/// A run's failed items, one JSON line per failed attempt (the last line of a key wins).
pub const FAILED_FILE: &str = "failed.jsonl";

/// One failed attempt at a work item.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailedItem {
    /// The item's trace key (`t1:<qid>` or `t3:<qid>:<partition>:<with|without>`).
    pub key: String,
    pub qid: u32,
    pub pattern: String,
    /// T1: the pattern group (Table 2's column).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// T2/T3: the partition and the summary mode (Table 3's cell).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub partition: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mode: String,
    /// The first failed call's kind: `connect`, `timeout`, `http` or `malformed`.
    pub error_kind: String,
    /// The first failed call's error message.
    pub error: String,
    /// The role (or judge template) of the first failed call.
    pub role: String,
    /// Failed model calls of the attempt, and all its model calls.
    pub failed_calls: usize,
    pub calls: usize,
    /// When the attempt ended (seconds since the epoch).
    pub unix: u64,
}

/// The kind of a failed call: its recorded `error_kind`, else read from the message (traces
/// written before the kind was recorded).
pub fn kind_of(call: &CallTrace) -> String {
    if let Some(k) = &call.error_kind {
        return k.clone();
    }
    let e = call.error.as_deref().unwrap_or_default();
    if e.contains(": timed out after ") {
        "timeout"
    } else if e.starts_with("HTTP ") {
        "http"
    } else if e.contains(": malformed reply: ") {
        "malformed"
    } else {
        "connect"
    }
    .into()
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The failure of an item with these model calls: `None` when none failed.
fn from_calls<'a>(calls: impl Iterator<Item = &'a CallTrace>) -> Option<FailedItem> {
    let (mut n, mut failed) = (0, 0);
    let mut first: Option<FailedItem> = None;
    for c in calls {
        n += 1;
        if let Some(e) = &c.error {
            failed += 1;
            if first.is_none() {
                first = Some(FailedItem {
                    error_kind: kind_of(c),
                    error: e.clone(),
                    role: c.role.clone(),
                    ..Default::default()
                });
            }
        }
    }
    first.map(|f| FailedItem {
        failed_calls: failed,
        calls: n,
        unix: now_unix(),
        ..f
    })
}

/// The failure of a T1 record (its model call failed), if any.
pub fn t1_failure(r: &T1Record) -> Option<FailedItem> {
    from_calls(r.call.iter()).map(|f| FailedItem {
        key: r.key.clone(),
        qid: r.qid,
        pattern: r.pattern.clone(),
        group: r.group.clone(),
        ..f
    })
}

/// The failure of a T2/T3 record (one of its model calls failed), if any.
pub fn t3_failure(r: &T3Record) -> Option<FailedItem> {
    from_calls(r.calls.iter()).map(|f| FailedItem {
        key: r.key.clone(),
        qid: r.qid,
        pattern: r.pattern.clone(),
        partition: r.partition.clone(),
        mode: r.mode.clone(),
        ..f
    })
}

/// Appends failed attempts to `dir`'s [`FAILED_FILE`] (whole lines, flushed).
pub fn append(dir: &Path, failed: &[FailedItem]) -> Result<(), String> {
    if failed.is_empty() {
        return Ok(());
    }
    let path = dir.join(FAILED_FILE);
    let mut text = String::new();
    for f in failed {
        text.push_str(&serde_json::to_string(f).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Moves the records of one trace file that have a failed call out of it (rewritten whole,
/// through a temporary file) into [`FAILED_FILE`]; returns the records kept.
fn sweep_file<T: serde::de::DeserializeOwned>(
    dir: &Path,
    file: &str,
    failure: impl Fn(&T) -> Option<FailedItem>,
) -> Result<Vec<T>, String> {
    let path = dir.join(file);
    // Cuts a torn last line first, so every line left is complete.
    let records: Vec<T> = read_trace(&path)?;
    let failed: Vec<FailedItem> = records.iter().filter_map(&failure).collect();
    if failed.is_empty() {
        return Ok(records);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut kept_text = String::new();
    let mut kept = Vec::new();
    for (line, r) in lines.iter().zip(records) {
        if failure(&r).is_none() {
            kept_text.push_str(line);
            kept_text.push('\n');
            kept.push(r);
        }
    }
    append(dir, &failed)?;
    let tmp = path.with_extension("jsonl.tmp");
    std::fs::write(&tmp, kept_text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(kept)
}

/// The run's good trace records (T1, T2/T3), after moving any record with a failed model call
/// out of the trace files into [`FAILED_FILE`]. Only the run's writer may call this.
pub fn sweep(dir: &Path) -> Result<(Vec<T1Record>, Vec<T3Record>), String> {
    let t1 = sweep_file(dir, T1_FILE, t1_failure)?;
    let t3 = sweep_file(dir, T3_FILE, t3_failure)?;
    Ok((t1, t3))
}

/// The run's failed items now: the last failed attempt of each item of `planned` that has no
/// result (`done`), by key.
pub fn current(
    dir: &Path,
    planned: &BTreeSet<String>,
    done: &BTreeSet<String>,
) -> Result<Vec<FailedItem>, String> {
    let all: Vec<FailedItem> = read_trace(&dir.join(FAILED_FILE))?;
    let mut last: BTreeMap<String, FailedItem> = BTreeMap::new();
    for f in all {
        if planned.contains(&f.key) && !done.contains(&f.key) {
            last.insert(f.key.clone(), f);
        }
    }
    Ok(last.into_values().collect())
}

/// Failed items by error kind.
pub fn by_kind(failed: &[FailedItem]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for f in failed {
        *out.entry(f.error_kind.clone()).or_default() += 1;
    }
    out
}

/// `a` then `b`: the statistics of two invocations of a run together (counts summed, the mean
/// latency weighted by network calls, the larger peak of calls in flight).
pub fn add_stats(a: &StatsSnapshot, b: &StatsSnapshot) -> StatsSnapshot {
    let net = |s: &StatsSnapshot| s.calls.saturating_sub(s.cache_hits) as f64;
    let (na, nb) = (net(a), net(b));
    StatsSnapshot {
        calls: a.calls + b.calls,
        cache_hits: a.cache_hits + b.cache_hits,
        errors: a.errors + b.errors,
        retries: a.retries + b.retries,
        prompt_tokens: a.prompt_tokens + b.prompt_tokens,
        completion_tokens: a.completion_tokens + b.completion_tokens,
        mean_latency_ms: if na + nb == 0.0 {
            0.0
        } else {
            (a.mean_latency_ms * na + b.mean_latency_ms * nb) / (na + nb)
        },
        max_in_flight: a.max_in_flight.max(b.max_in_flight),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(error: Option<&str>, kind: Option<&str>) -> CallTrace {
        CallTrace {
            role: "judge_relevance".into(),
            error: error.map(String::from),
            error_kind: kind.map(String::from),
            reply: error.is_none().then(|| "Score: 3".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_failed_call_fails_the_item_with_its_kind() {
        let mut r = T3Record {
            key: "t3:7:llm:with".into(),
            qid: 7,
            partition: "llm".into(),
            mode: "with".into(),
            calls: vec![call(None, None), call(None, None)],
            ..Default::default()
        };
        assert_eq!(t3_failure(&r), None);
        r.calls
            .push(call(Some("HTTP 500 from m: boom"), Some("http")));
        r.calls
            .push(call(Some("m: timed out after 1.0s (1 attempts)"), None));
        let f = t3_failure(&r).expect("failed");
        assert_eq!(
            (
                f.key.as_str(),
                f.error_kind.as_str(),
                f.failed_calls,
                f.calls
            ),
            ("t3:7:llm:with", "http", 2, 4)
        );
        assert_eq!((f.partition.as_str(), f.mode.as_str()), ("llm", "with"));
        // Old traces: the kind from the message.
        assert_eq!(kind_of(&r.calls[3]), "timeout");
        assert_eq!(
            kind_of(&call(Some("m: malformed reply: no choices"), None)),
            "malformed"
        );
        assert_eq!(kind_of(&call(Some("HTTP 429 from m: slow"), None)), "http");
        assert_eq!(
            kind_of(&call(Some("m: connection failed: refused"), None)),
            "connect"
        );
    }

    #[test]
    fn sweep_moves_failed_records_out_and_current_lists_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let good = T1Record {
            key: "t1:1".into(),
            qid: 1,
            ..Default::default()
        };
        let bad = T1Record {
            key: "t1:2".into(),
            qid: 2,
            group: "one_hop".into(),
            call: Some(call(Some("m: connection failed: refused"), Some("connect"))),
            ..Default::default()
        };
        let line = |r: &T1Record| serde_json::to_string(r).expect("json");
        std::fs::write(
            d.join(T1_FILE),
            format!("{}\n{}\n{}", line(&good), line(&bad), "{\"key\": \"t1:"),
        )
        .expect("write");
        let (t1, t3) = sweep(d).expect("sweep");
        assert_eq!((t1, t3.len()), (vec![good.clone()], 0));
        assert_eq!(
            std::fs::read_to_string(d.join(T1_FILE)).expect("read"),
            format!("{}\n", line(&good))
        );
        let planned: BTreeSet<String> = ["t1:1", "t1:2", "t1:3"].map(String::from).into();
        let done: BTreeSet<String> = ["t1:1".to_string()].into();
        let failed = current(d, &planned, &done).expect("current");
        assert_eq!(failed.len(), 1);
        assert_eq!(
            (
                failed[0].key.as_str(),
                failed[0].error_kind.as_str(),
                failed[0].group.as_str()
            ),
            ("t1:2", "connect", "one_hop")
        );
        assert_eq!(
            by_kind(&failed),
            BTreeMap::from([("connect".to_string(), 1)])
        );
        // Once retried successfully, it is no longer failed.
        let done: BTreeSet<String> = ["t1:1", "t1:2"].map(String::from).into();
        assert!(current(d, &planned, &done).expect("current").is_empty());
    }

    #[test]
    fn stats_add_up_over_invocations() {
        let a = StatsSnapshot {
            calls: 10,
            cache_hits: 2,
            errors: 5,
            mean_latency_ms: 10.0,
            max_in_flight: 4,
            ..Default::default()
        };
        let b = StatsSnapshot {
            calls: 8,
            errors: 0,
            mean_latency_ms: 20.0,
            max_in_flight: 3,
            ..Default::default()
        };
        let s = add_stats(&a, &b);
        assert_eq!(
            (s.calls, s.cache_hits, s.errors, s.max_in_flight),
            (18, 2, 5, 4)
        );
        assert!((s.mean_latency_ms - 15.0).abs() < 1e-9);
        assert_eq!(add_stats(&StatsSnapshot::default(), &a), a);
    }
}
