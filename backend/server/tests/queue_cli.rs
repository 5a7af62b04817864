//! Distributed evaluation with real processes and a real Redis: three `serenqa worker`s, a
//! coordinator `serenqa eval --queue`, one worker SIGKILLed while it holds tasks, and a fourth
//! worker whose models file disagrees with the run's (it refuses the run). The run must
//! finish with every item exactly once and the tables of a local run over the same items
//! against the same scripted LLM (`src/scripted_llm.rs`, a test double with 300 ms latency).
//!
//! Redis: `$SERENQA_REDIS_URL`, else a throwaway `redis-server`; without either the test
//! prints `SKIPPED: no Redis`. Hetionet: `../shared/data` or `$SERENQA_DATA`.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[path = "../src/scripted_llm.rs"]
mod scripted_llm;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serenqa_pipeline::queue::{live_workers, Redis, RunQueue};
use serenqa_testkit::data::hetionet_data;
use serenqa_testkit::TestRedis;

fn serenqa(cwd: &Path, data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_serenqa"));
    c.current_dir(cwd)
        .env("SERENQA_DATA", data)
        .stdin(Stdio::null());
    c
}

/// Trace lines by key; panics on a key written twice.
fn traces(dir: &Path) -> BTreeMap<String, serde_json::Value> {
    let mut m = BTreeMap::new();
    for f in ["t1.jsonl", "t3.jsonl"] {
        for l in std::fs::read_to_string(dir.join(f))
            .unwrap_or_default()
            .lines()
        {
            let v: serde_json::Value = serde_json::from_str(l).expect("a complete JSON line");
            let k = v["key"].as_str().expect("key").to_string();
            assert!(
                m.insert(k.clone(), v).is_none(),
                "{k} is in the traces twice"
            );
        }
    }
    m
}

struct Procs(Vec<Child>);

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn wait_exit(c: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Ok(Some(s)) = c.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn killed_worker_tasks_are_reclaimed_and_the_run_equals_a_local_run() {
    let Some(data) = hetionet_data() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let Some(redis_env) = rt.block_on(TestRedis::get(9)) else {
        return;
    };
    let url = redis_env.url.clone();
    let llm = rt
        .block_on(scripted_llm::start(Duration::from_millis(300)))
        .expect("scripted LLM server");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let models = scripted_llm::models_file(&llm.base_url, &["retrieval", "summary", "judge"], 64);
    std::fs::write(d.join("models.json"), models.to_string()).unwrap();

    let o = serenqa(d, &data)
        .args(["--quiet", "precompute", "--out", "gm.snap"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let common = [
        "--quiet",
        "eval",
        "--graph",
        "gm.snap",
        "--bench",
        "bench",
        "--questions",
        "30",
        "--limit",
        "8",
        "--run",
        "r",
        "--models",
        "models.json",
        "--no-cache",
    ];

    // The reference: a local run over the same items with the same scripted server.
    let o = serenqa(d, &data)
        .args(common)
        .args(["--runs", "local"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "local run: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let local = traces(&d.join("local/r"));
    assert!(local.len() >= 12, "{} items", local.len());

    // Three workers, short reclaim timeout, two items in flight each.
    let mut workers = Procs(Vec::new());
    for i in 0..3 {
        let log = std::fs::File::create(d.join(format!("w{i}.log"))).unwrap();
        let child = serenqa(d, &data)
            .args([
                "worker",
                "--queue",
                &url,
                "--graph",
                "gm.snap",
                "--name",
                &format!("w{i}"),
                "--concurrency",
                "2",
                "--reclaim-after",
                "3",
                "--once",
                "--no-cache",
                "--models",
                "models.json",
            ])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        workers.0.push(child);
    }
    // A fourth worker whose models file points the same model name at another endpoint: it
    // must refuse the run (the spec carries names and a hash, never an endpoint).
    let other = scripted_llm::models_file(
        "http://127.0.0.1:9/v1",
        &["retrieval", "summary", "judge"],
        64,
    );
    std::fs::write(d.join("other-models.json"), other.to_string()).unwrap();
    let log = std::fs::File::create(d.join("wx.log")).unwrap();
    workers.0.push(
        serenqa(d, &data)
            .args([
                "worker",
                "--queue",
                &url,
                "--graph",
                "gm.snap",
                "--name",
                "wx",
                "--once",
                "--no-cache",
                "--models",
                "other-models.json",
            ])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let redis = rt.block_on(Redis::connect(&url)).unwrap();
    let t = Instant::now();
    while rt.block_on(live_workers(&redis)).unwrap().len() < 4 {
        assert!(t.elapsed() < Duration::from_secs(180), "workers not ready");
        std::thread::sleep(Duration::from_millis(100));
    }

    let coord_log = std::fs::File::create(d.join("coordinator.log")).unwrap();
    let mut coordinator = serenqa(d, &data)
        .args(common)
        .args(["--runs", "queued", "--queue", &url])
        .stdout(Stdio::piped())
        .stderr(coord_log)
        .spawn()
        .unwrap();
    let q = RunQueue::new(redis.clone(), "r");

    // SIGKILL w0 as soon as it holds two tasks.
    let t = Instant::now();
    loop {
        let held = rt
            .block_on(q.pending_by_consumer())
            .unwrap_or_default()
            .get("w0")
            .copied()
            .unwrap_or(0);
        if held >= 2 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "w0 never held two tasks"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // An operator's view mid-run: the run, its progress and who holds what.
    let st = serenqa(d, &data)
        .args(["queue", "status", "--queue", &url])
        .output()
        .unwrap();
    let st = String::from_utf8_lossy(&st.stdout).into_owned();
    assert!(
        st.contains("run r:") && st.contains("w0 ") && st.contains("worker w1:"),
        "{st}"
    );
    workers.0[0].kill().unwrap();
    let _ = workers.0[0].wait();
    let orphaned: BTreeSet<String> = rt
        .block_on(q.pending_of("w0"))
        .unwrap()
        .into_keys()
        .collect();
    assert!(!orphaned.is_empty(), "the killed worker left tasks pending");
    eprintln!(
        "killed w0 after {:.1}s holding entries {orphaned:?}",
        t.elapsed().as_secs_f64()
    );

    let status =
        wait_exit(&mut coordinator, Duration::from_secs(300)).expect("the coordinator finishes");
    let mut out = String::new();
    if let Some(mut so) = coordinator.stdout.take() {
        use std::io::Read;
        let _ = so.read_to_string(&mut out);
    }
    assert!(
        status.success(),
        "coordinator: {}",
        std::fs::read_to_string(d.join("coordinator.log")).unwrap_or_default()
    );
    assert!(out.contains("Table 3"), "{out}");

    let refused = rt.block_on(q.refusals()).unwrap();
    assert!(
        refused
            .get("wx")
            .is_some_and(|w| w.contains("differ from this worker's models file")),
        "{refused:?}"
    );
    assert!(
        !refused.contains_key("w1") && !refused.contains_key("w2"),
        "{refused:?}"
    );
    let spec =
        serde_json::to_string(&rt.block_on(q.spec()).unwrap().expect("the run's spec")).unwrap();
    assert!(
        !spec.contains(&llm.base_url) && !spec.contains("base_url"),
        "no endpoint in the spec: {spec}"
    );

    // Every item exactly once, in the traces and in Redis.
    let queued = traces(&d.join("queued/r"));
    assert_eq!(
        queued.keys().collect::<Vec<_>>(),
        local.keys().collect::<Vec<_>>(),
        "same items, each once"
    );
    assert_eq!(
        rt.block_on(q.result_count()).unwrap(),
        local.len(),
        "one result per item in Redis"
    );
    assert!(
        rt.block_on(q.pending_by_consumer())
            .unwrap()
            .values()
            .all(|&n| n == 0),
        "nothing left pending"
    );
    let st = serenqa(d, &data)
        .args(["queue", "status", "--queue", &url])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&st.stdout).contains("no active runs"),
        "{}",
        String::from_utf8_lossy(&st.stdout)
    );
    let forget = serenqa(d, &data)
        .args(["queue", "forget", "r", "--queue", &url])
        .output()
        .unwrap();
    assert!(
        !forget.status.success()
            && String::from_utf8_lossy(&forget.stderr).contains("no active run"),
        "a finished run is not active"
    );

    // The survivors exit (--once) and their logs show the killed worker's tasks reclaimed.
    let mut logs = String::new();
    for i in 1..3 {
        assert!(
            wait_exit(&mut workers.0[i], Duration::from_secs(60)).is_some_and(|s| s.success()),
            "w{i} exits cleanly"
        );
        logs.push_str(&std::fs::read_to_string(d.join(format!("w{i}.log"))).unwrap_or_default());
    }
    eprintln!(
        "{} items; survivors' reclaims:\n{}",
        local.len(),
        logs.lines()
            .filter(|l| l.contains("reclaimed"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let entry_ids: Vec<&String> = orphaned.iter().collect();
    for id in &entry_ids {
        assert!(
            logs.lines()
                .any(|l| l.contains("reclaimed") && l.contains(&format!("entry {id},"))),
            "entry {id} of w0 was reclaimed by a survivor:\n{logs}"
        );
    }

    // The same tables as the local run (the aggregate has no timings).
    let agg = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p.join("aggregate.json")).unwrap()).unwrap()
    };
    assert_eq!(
        agg(&d.join("queued/r")),
        agg(&d.join("local/r")),
        "same tables"
    );
    // And the same records, apart from LLM latencies.
    let strip = |mut v: serde_json::Value| {
        fn walk(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.remove("latency_ms");
                    m.values_mut().for_each(walk);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(&mut v);
        v
    };
    for (k, v) in &local {
        assert_eq!(strip(queued[k].clone()), strip(v.clone()), "record {k}");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("queued/r/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "complete");
    assert!(manifest["queue"]["workers"]
        .as_array()
        .is_some_and(|w| !w.is_empty()));
    assert!(
        manifest["llm"]["calls"].as_u64().unwrap_or(0) > 0,
        "LLM accounting summed from the workers"
    );
    drop(redis_env);
}
