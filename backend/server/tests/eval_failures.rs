//! `serenqa eval` against a model endpoint that fails: a failed model call (HTTP 500,
//! malformed reply, timeout, connection refused) marks its work item failed — recorded in
//! `failed.jsonl` with its error kind, never scored — the run ends `incomplete (k failed)`
//! and the command exits non-zero; run again with the endpoint healthy, the run retries
//! exactly the failed items, keeps the good ones, sums the call statistics of both
//! invocations and ends with the per-item results of a clean run, item for item.
//!
//! The endpoint is the scripted OpenAI-compatible server (`src/scripted_llm.rs`, a test
//! double, not a model) with its deterministic failure mode: about a fifth of the prompts
//! (by hash) fail, always alike. Hetionet: `../shared/data` or `$SERENQA_DATA` (a failure,
//! not a skip, under `CI`).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[path = "../src/scripted_llm.rs"]
mod scripted_llm;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use serenqa_testkit::data::hetionet_data;

fn serenqa(cwd: &Path, data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(args)
        .current_dir(cwd)
        .env("SERENQA_DATA", data)
        .env_remove("SERENQA_MODELS")
        .env_remove("SERENQA_BENCH")
        .env_remove("SERENQA_EDGES")
        .stdin(Stdio::null())
        .output()
        .expect("run serenqa")
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn jsonl(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a complete JSON line"))
        .collect()
}

/// A record without what differs between two runs of the same calls (latency, cache).
fn normalised(mut v: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("latency_ms");
                m.remove("cached");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// Trace records by key (normalised); panics on a key written twice.
fn traces(run: &Path) -> BTreeMap<String, serde_json::Value> {
    let mut m = BTreeMap::new();
    for f in ["t1.jsonl", "t3.jsonl"] {
        for v in jsonl(&run.join(f)) {
            let k = v["key"].as_str().expect("key").to_string();
            assert!(
                m.insert(k.clone(), normalised(v)).is_none(),
                "{k} is in the traces twice"
            );
        }
    }
    m
}

/// Whether any model call of a record failed.
fn has_failed_call(v: &serde_json::Value) -> bool {
    let calls: Vec<&serde_json::Value> = match v["calls"].as_array() {
        Some(a) => a.iter().collect(),
        None => v.get("call").into_iter().collect(),
    };
    calls.iter().any(|c| !c["error"].is_null())
}

/// Every key of a run's `failed.jsonl`.
fn failed_keys(run: &Path) -> BTreeSet<String> {
    jsonl(&run.join("failed.jsonl"))
        .iter()
        .map(|v| v["key"].as_str().unwrap().to_string())
        .collect()
}

/// The failed counts of an aggregate's cells: (table, row, column) → failed.
fn cell_failures(agg: &serde_json::Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for t in [
        "table2",
        "table3_reasoning",
        "table3_exploration",
        "table3_exploration_wo_summary",
    ] {
        if let Some(cells) = agg[t].as_object() {
            for (col, c) in cells {
                out.insert(format!("{t}/{col}"), c["failed"].as_u64().unwrap_or(0));
            }
        }
    }
    out
}

#[test]
fn failed_calls_are_recorded_not_scored_and_a_rerun_retries_exactly_them() {
    let Some(data) = hetionet_data() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let faults = scripted_llm::Faults {
        timeouts: true,
        ..Default::default()
    };
    let llm = rt
        .block_on(scripted_llm::start_with_faults(
            Duration::ZERO,
            faults.clone(),
        ))
        .expect("scripted LLM server");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // No retries (a failing prompt fails alike at every attempt) and a short timeout for the
    // calls the server never answers; healthy calls are answered at once.
    let models = |base_url: &str| {
        let mut m = scripted_llm::models_file(base_url, &["retrieval", "summary", "judge"], 16);
        m["models"][0]["max_retries"] = 0.into();
        m["models"][0]["timeout_secs"] = 5.0.into();
        m.to_string()
    };
    std::fs::write(d.join("models.json"), models(&llm.base_url)).unwrap();
    let o = serenqa(d, &data, &["--quiet", "precompute", "--out", "gm.snap"]);
    assert!(o.status.success(), "{}", text(&o));
    let eval = |models: &str, runs: &str| {
        serenqa(
            d,
            &data,
            &[
                "--quiet",
                "eval",
                "--graph",
                "gm.snap",
                "--bench",
                "bench",
                "--questions",
                "30",
                "--limit",
                "6",
                "--run",
                "r",
                "--no-cache",
                "--models",
                models,
                "--runs",
                runs,
            ],
        )
    };

    // A clean run: the reference.
    let o = eval("models.json", "clean");
    assert!(o.status.success(), "clean run: {}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": complete ("),
        "{}",
        text(&o)
    );
    let clean_dir = d.join("clean/r");
    let clean = traces(&clean_dir);
    assert!(clean.len() >= 10, "{} items", clean.len());
    assert!(!clean.values().any(has_failed_call));
    let m = json(&clean_dir.join("manifest.json"));
    assert_eq!(
        (m["status"].as_str(), m["failed"].as_u64()),
        (Some("complete"), Some(0))
    );

    // With about a fifth of the calls failing.
    faults.on.store(true, Ordering::SeqCst);
    let calls_before = llm.calls.load(Ordering::SeqCst);
    let o = eval("models.json", "faulty");
    assert!(
        !o.status.success(),
        "an incomplete run exits non-zero: {}",
        text(&o)
    );
    let run = d.join("faulty/r");
    let m1 = json(&run.join("manifest.json"));
    let failed = failed_keys(&run);
    let k = failed.len();
    assert!(
        k > 0 && k < clean.len(),
        "{k} of {} items failed",
        clean.len()
    );
    assert_eq!(m1["status"], "incomplete");
    assert_eq!(m1["failed"].as_u64(), Some(k as u64));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stdout.contains(&format!("incomplete ({k} failed)")),
        "{}",
        text(&o)
    );
    assert!(
        stderr.contains("run the same command again") && stderr.lines().count() == 1,
        "one line saying how to resume: {}",
        text(&o)
    );
    // Failures are recorded with their kind (the failing prompts are fixed: this run meets
    // all three faults).
    let kinds: BTreeMap<String, u64> = m1["failed_by_kind"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(kinds.values().sum::<u64>(), k as u64, "{kinds:?}");
    assert!(
        kinds
            .keys()
            .all(|k| ["http", "malformed", "timeout"].contains(&k.as_str())),
        "{kinds:?}"
    );
    assert!(
        ["http", "malformed", "timeout"]
            .iter()
            .all(|k| kinds.contains_key(*k)),
        "{kinds:?} (which prompts fail is fixed by their hash: a change of the prompts or the \
         benchmark may change the mix, then pick another --limit)"
    );
    eprintln!("{k} of {} items failed: {kinds:?}", clean.len());
    for f in jsonl(&run.join("failed.jsonl")) {
        assert!(f["error"].as_str().is_some_and(|e| !e.is_empty()), "{f}");
    }
    // No failed item is scored: none is in the traces, and every record there is a clean
    // run's, item for item.
    let partial = traces(&run);
    assert!(partial.keys().all(|key| !failed.contains(key)));
    assert_eq!(
        partial.keys().chain(&failed).collect::<BTreeSet<_>>(),
        clean.keys().collect::<BTreeSet<_>>(),
        "every item either has a result or failed"
    );
    for (key, v) in &partial {
        assert_eq!(Some(v), clean.get(key), "{key}");
    }
    let agg1 = json(&run.join("aggregate.json"));
    let cells = cell_failures(&agg1);
    let t1_failed = failed.iter().filter(|k| k.starts_with("t1:")).count() as u64;
    assert_eq!(
        cells.get("table2/all").copied(),
        Some(t1_failed),
        "{cells:?}"
    );
    assert_eq!(
        agg1["table2"]["all"]["n"].as_u64(),
        Some(partial.keys().filter(|k| k.starts_with("t1:")).count() as u64)
    );
    for (cell, n) in &cells {
        if let Some(p) = cell.strip_prefix("table3_exploration/") {
            let want = failed
                .iter()
                .filter(|k| k.starts_with("t3:") && k.ends_with(&format!(":{p}:with")))
                .count() as u64;
            assert_eq!(*n, want, "{cell}");
        }
    }
    assert!(cells.values().sum::<u64>() >= k as u64, "{cells:?}");
    // Every call was counted: the server's requests, its failures.
    let s1 = &m1["llm"];
    let served = (llm.calls.load(Ordering::SeqCst) - calls_before) as u64;
    assert_eq!(s1["calls"].as_u64(), Some(served));
    assert_eq!(
        s1["errors"].as_u64(),
        Some(faults.failed.load(Ordering::SeqCst) as u64)
    );
    let t1_before = std::fs::read_to_string(run.join("t1.jsonl")).unwrap_or_default();
    let t3_before = std::fs::read_to_string(run.join("t3.jsonl")).unwrap_or_default();

    // The endpoint healthy again: the same command resumes.
    faults.on.store(false, Ordering::SeqCst);
    let calls_before = llm.calls.load(Ordering::SeqCst);
    let o = eval("models.json", "faulty");
    assert!(o.status.success(), "resumed run: {}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": complete ("),
        "{}",
        text(&o)
    );
    let m2 = json(&run.join("manifest.json"));
    assert_eq!(
        (m2["status"].as_str(), m2["failed"].as_u64()),
        (Some("complete"), Some(0))
    );
    // The good items were kept as they were; exactly the failed ones were run again.
    let t1_after = std::fs::read_to_string(run.join("t1.jsonl")).unwrap();
    let t3_after = std::fs::read_to_string(run.join("t3.jsonl")).unwrap();
    assert!(t1_after.starts_with(&t1_before) && t3_after.starts_with(&t3_before));
    let rerun: BTreeSet<String> = t1_after[t1_before.len()..]
        .lines()
        .chain(t3_after[t3_before.len()..].lines())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["key"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(rerun, failed, "the rerun ran exactly the failed items");
    // Item for item the clean run's results, and the same tables.
    assert_eq!(traces(&run), clean);
    assert_eq!(
        json(&run.join("aggregate.json")),
        json(&clean_dir.join("aggregate.json"))
    );
    // Call statistics add up over the two invocations.
    let s2 = &m2["llm"];
    let served = (llm.calls.load(Ordering::SeqCst) - calls_before) as u64;
    assert_eq!(
        s2["calls"].as_u64(),
        Some(s1["calls"].as_u64().unwrap() + served)
    );
    assert_eq!(
        s2["errors"], s1["errors"],
        "the errors of the first invocation stay"
    );

    // An endpoint that refuses connections: every item fails with `connect`, nothing is scored.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    std::fs::write(
        d.join("down.json"),
        models(&format!("http://127.0.0.1:{port}/v1")),
    )
    .unwrap();
    let o = eval("down.json", "down");
    assert!(!o.status.success(), "{}", text(&o));
    let down = d.join("down/r");
    let m = json(&down.join("manifest.json"));
    // Only items that never call a model (a question whose roots do not resolve) have a
    // record; every other item failed.
    let kept = traces(&down);
    assert!(kept
        .values()
        .all(|v| v["calls"].as_array().is_some_and(Vec::is_empty) && !v["error"].is_null()));
    let n = (clean.len() - kept.len()) as u64;
    assert!(n > 0);
    assert_eq!(m["status"], "incomplete");
    assert_eq!(m["failed"].as_u64(), Some(n));
    assert_eq!(m["failed_by_kind"], serde_json::json!({"connect": n}));
    assert_eq!(
        failed_keys(&down)
            .iter()
            .chain(kept.keys())
            .collect::<BTreeSet<_>>(),
        clean.keys().collect::<BTreeSet<_>>()
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("incomplete ({n} failed)")));
}
