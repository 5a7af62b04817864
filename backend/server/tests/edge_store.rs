//! T3 reads the same edges from the in-memory graph, a single Redis and a three-shard Redis
//! Cluster: the whole offline benchmark (every question × partition) gives identical T3
//! records on all three (`serenqa edges export`, then `serenqa eval --edges …`); and a queued
//! run whose worker reads the cluster (`serenqa worker --edges …`) gives the same records.
//! Ask (`serenqa ask --edges`, `serenqa serve --edges`) answers as it does from memory, and a
//! store that vanishes under a running server gives a 503, not a wrong answer.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[path = "../../edges/tests/common/mod.rs"]
mod redis_fixture;

use std::path::{Path, PathBuf};
use std::process::Command;

use serenqa_testkit::data::hetionet_data;
use serenqa_testkit::http::agent;
use serenqa_testkit::serve::{Serve, Served};

/// The cluster has one keyspace (no databases): the tests here take turns on it, since each
/// flushes it before exporting.
static CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serenqa(args: &[&str], cwd: &Path, data: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(args)
        .current_dir(cwd)
        .env("SERENQA_DATA", data)
        .env_remove("SERENQA_EDGES")
        .output()
        .expect("run serenqa");
    assert!(
        o.status.success(),
        "serenqa {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// T3 records by key (each record whole, as JSON).
fn t3_records(runs: &Path) -> Vec<(String, serde_json::Value)> {
    let dir = std::fs::read_dir(runs)
        .expect("runs dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
        .expect("a run");
    let text = std::fs::read_to_string(dir.join("t3.jsonl")).expect("t3 trace");
    let mut out: Vec<(String, serde_json::Value)> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("trace line");
            (v["key"].as_str().expect("key").to_string(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn edge_source(runs: &Path) -> String {
    let dir = std::fs::read_dir(runs)
        .expect("runs dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
        .expect("a run");
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("manifest.json")).expect("manifest"),
    )
    .expect("json");
    m["edge_source"].as_str().unwrap_or("").to_string()
}

/// What each test starts from: the data, the single Redis (base URL; each test uses its own
/// databases) and the cluster, held for the whole test, and a directory holding the graph and
/// its model as `gm.snap`.
struct Fixture {
    data: PathBuf,
    single: String,
    cluster: String,
    dir: tempfile::TempDir,
    _servers: (
        Option<redis_fixture::Servers>,
        Option<redis_fixture::Servers>,
    ),
    _cluster_is_ours: std::sync::MutexGuard<'static, ()>,
}

/// `None` (after saying why) when the data or Redis is missing.
fn fixture() -> Option<Fixture> {
    let data = hetionet_data()?;
    let (single, s1) = redis_fixture::single()?;
    let (cluster, s2) = redis_fixture::cluster()?;
    let lock = CLUSTER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().expect("tempdir");
    serenqa(
        &["--quiet", "precompute", "--out", "gm.snap"],
        dir.path(),
        &data,
    );
    Some(Fixture {
        data,
        single,
        cluster,
        dir,
        _servers: (s1, s2),
        _cluster_is_ours: lock,
    })
}

#[test]
fn t3_is_identical_on_memory_single_redis_and_cluster() {
    let Some(f) = fixture() else { return };
    let (data, cluster, d) = (&f.data, &f.cluster, f.dir.path());
    // Databases 12 and 13 of the single instance are this test's own.
    let queue = format!("{}/13", f.single);
    let single = format!("{}/12", f.single);
    // The default benchmark of this graph (all 1529 questions; built once, then cached).
    let eval = |runs: &str, edges: Option<&str>| {
        let mut args = vec![
            "--quiet", "eval", "--graph", "gm.snap", "--tasks", "t3", "--runs", runs,
        ];
        if let Some(e) = edges {
            args.extend(["--edges", e]);
        }
        serenqa(&args, d, data)
    };
    eval("mem", None);
    for url in [&single, cluster] {
        let out = serenqa(
            &[
                "--quiet", "edges", "export", "--graph", "gm.snap", "--flush", "--to", url,
            ],
            d,
            data,
        );
        assert!(out.contains("2049746 edge keys"), "{out}");
    }
    let out = serenqa(
        &[
            "--quiet", "edges", "check", "--graph", "gm.snap", "--from", cluster,
        ],
        d,
        data,
    );
    assert!(out.contains("equals the graph's"), "{out}");
    eval("single", Some(&single));
    eval("cluster", Some(cluster));

    let mem = t3_records(&d.join("mem"));
    assert!(
        mem.len() > 2000,
        "the whole benchmark: {} T3 records",
        mem.len()
    );
    let explored = mem
        .iter()
        .filter(|(_, v)| v["paths"].as_array().is_some_and(|p| !p.is_empty()))
        .count();
    assert!(
        explored * 10 > mem.len() * 9,
        "most explorations go somewhere: {explored} of {}",
        mem.len()
    );
    assert_eq!(edge_source(&d.join("mem")), "memory");
    for (name, url) in [("single", &single), ("cluster", cluster)] {
        assert_eq!(
            &edge_source(&d.join(name)),
            url,
            "the {name} run read its edges from Redis"
        );
        let other = t3_records(&d.join(name));
        assert_eq!(other.len(), mem.len(), "{name}: record count");
        for ((k, a), (_, b)) in mem.iter().zip(&other) {
            assert_eq!(a, b, "{name}: record {k} differs from the in-memory run");
        }
    }

    // A distributed run: one worker reading its edges from the cluster.
    let flushed = Command::new("redis-cli")
        .args(["-u", &queue, "flushdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(flushed, "redis-cli flushdb {queue}");
    let mut worker = Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args([
            "--quiet",
            "worker",
            "--queue",
            &queue,
            "--graph",
            "gm.snap",
            "--once",
            "--concurrency",
            "4",
            "--edges",
            cluster,
        ])
        .current_dir(d)
        .env("SERENQA_DATA", data)
        .spawn()
        .expect("start worker");
    serenqa(
        &[
            "--quiet", "eval", "--graph", "gm.snap", "--tasks", "t3", "--limit", "40", "--runs",
            "queued", "--queue", &queue,
        ],
        d,
        data,
    );
    let status = worker.wait().expect("worker exits (--once)");
    assert!(status.success(), "worker: {status}");
    let queued = t3_records(&d.join("queued"));
    assert!(queued.len() >= 40, "{} queued T3 records", queued.len());
    let by_key: std::collections::BTreeMap<&str, &serde_json::Value> =
        mem.iter().map(|(k, v)| (k.as_str(), v)).collect();
    for (k, v) in &queued {
        assert_eq!(
            Some(&v),
            by_key.get(k.as_str()),
            "queued record {k} (worker on the cluster) differs from the in-memory run"
        );
    }
}

fn serve(d: &Path, data: &Path, edges: &str) -> Served {
    Serve::new(env!("CARGO_BIN_EXE_serenqa"), d)
        .args(&[
            "--graph",
            "gm.snap",
            "--db",
            "serve.sqlite",
            "--runs",
            "no-runs",
            "--dist",
            "no-dist",
            "--edges",
            edges,
        ])
        .env("SERENQA_DATA", data)
        .spawn()
}

fn post_ask(base: &str, question: &str) -> (u16, serde_json::Value) {
    let agent = agent();
    let body = serde_json::json!({"question": question}).to_string();
    let mut resp = agent
        .post(format!("{base}/api/ask"))
        .header("Content-Type", "application/json")
        .send(body)
        .expect("POST /api/ask");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().expect("reply body");
    (status, serde_json::from_str(&text).expect("JSON reply"))
}

/// The parts of an Ask result that must not depend on where the edges came from.
fn comparable(mut v: serde_json::Value) -> serde_json::Value {
    v["stages"] = serde_json::Value::Null;
    v["edge_source"] = serde_json::Value::Null;
    v
}

#[test]
fn ask_explores_on_the_redis_edge_store_with_the_in_memory_answer() {
    let Some(f) = fixture() else { return };
    let (data, cluster, d) = (&f.data, f.cluster.clone(), f.dir.path());
    // Database 10 of the single instance is this test's own.
    let single = format!("{}/10", f.single);
    serenqa(
        &[
            "--quiet", "edges", "export", "--graph", "gm.snap", "--flush", "--to", &single,
        ],
        d,
        data,
    );
    serenqa(
        &[
            "--quiet", "edges", "export", "--graph", "gm.snap", "--flush", "--to", &cluster,
        ],
        d,
        data,
    );

    let question = "Which compounds treat asthma?";
    let ask = |edges: Option<&str>| -> serde_json::Value {
        let mut args = vec!["--quiet", "ask", "--json", "--graph", "gm.snap", question];
        if let Some(e) = edges {
            args.extend(["--edges", e]);
        }
        serde_json::from_str(&serenqa(&args, d, data)).expect("ask --json")
    };
    let mem = ask(None);
    assert_eq!(mem["edge_source"], "memory");
    let candidates = mem["candidates"].as_array().map_or(0, std::vec::Vec::len);
    assert!(
        candidates >= 5,
        "the asthma question finds candidates to compare: {candidates}"
    );
    let on_cluster = ask(Some(&cluster));
    assert_eq!(
        on_cluster["edge_source"],
        serde_json::Value::String(cluster.clone())
    );
    assert_eq!(
        comparable(on_cluster),
        comparable(mem.clone()),
        "`ask --edges` on the cluster differs from memory"
    );

    // The web app's Ask (`serve --edges`), on the single instance.
    let server = serve(d, data, &single);
    let (status, web) = post_ask(&server.base, question);
    assert_eq!(status, 200, "{web}");
    assert_eq!(
        web["edge_source"],
        serde_json::Value::String(single.clone())
    );
    assert_eq!(
        comparable(web),
        comparable(mem),
        "`serve --edges` answers differently from memory"
    );

    // The store vanishes under a running server: a clear 503, not a wrong answer.
    let flushed = Command::new("redis-cli")
        .args(["-u", &single, "flushdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(flushed, "redis-cli flushdb {single}");
    let (status, err) = post_ask(&server.base, question);
    assert_eq!(status, 503, "{err}");
    assert_eq!(err["code"], "edge_store_unavailable", "{err}");
    let message = err["message"].as_str().unwrap_or_default();
    // The detail (URL, missing key) is in the server's log; anonymous clients get one generic line.
    assert!(
        message.contains("edge store")
            && !message.contains('\n')
            && !message.contains(&single)
            && !message.contains("adj:"),
        "one generic line: {message}"
    );
}
