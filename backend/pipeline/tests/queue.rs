//! Queue semantics against a real Redis (`$SERENQA_REDIS_URL`, else a throwaway
//! `redis-server`; without either the tests print `SKIPPED: no Redis`): idempotent enqueue,
//! results written at most once, reclaim of idle entries and keepalive, poison tasks, and a
//! distributed offline run that equals the local run. Each test uses its own database.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::{hetionet, small_bench};
use serenqa_pipeline::queue::{
    run_coordinator, run_worker, Keys, QueueError, Redis, RunQueue, Shutdown, WorkerConfig,
    WorkerGraph, WorkerReport, RUNS_KEY,
};
use serenqa_pipeline::run::{
    read_trace, run_eval, EvalConfig, T1Record, T3Record, T1_FILE, T3_FILE,
};
use serenqa_testkit::TestRedis;
use tokio::sync::watch;

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("t1:{i}")).collect()
}

#[tokio::test]
async fn enqueue_is_idempotent() {
    let Some(r) = TestRedis::get(1).await else {
        return;
    };
    let redis = Redis::connect(&r.url).await.unwrap();
    let q = RunQueue::new(redis.clone(), "enq");
    q.create_group().await.unwrap();
    q.create_group().await.expect("an existing group is fine");
    assert_eq!(
        q.enqueue(&keys(700)).await.unwrap(),
        700,
        "new keys, across two script batches"
    );
    assert_eq!(
        q.enqueue(&keys(700)).await.unwrap(),
        0,
        "a second coordinator adds nothing"
    );
    let mut more = keys(702);
    more.reverse();
    assert_eq!(q.enqueue(&more).await.unwrap(), 2, "only the two new keys");
    assert_eq!(
        q.task_count().await.unwrap(),
        702,
        "one stream entry per key"
    );
    let all: Vec<_> = q.read_new("a", 1000).await.unwrap();
    assert_eq!(all.len(), 702);
    assert!(all.iter().all(|d| d.deliveries == 1));
    let distinct: std::collections::BTreeSet<_> = all.iter().map(|d| d.key.clone()).collect();
    assert_eq!(distinct.len(), 702);
    assert!(
        q.read_new("b", 10).await.unwrap().is_empty(),
        "no entry is delivered twice as new"
    );
}

#[tokio::test]
async fn a_result_is_written_at_most_once() {
    let Some(r) = TestRedis::get(2).await else {
        return;
    };
    let redis = Redis::connect(&r.url).await.unwrap();
    let q = RunQueue::new(redis.clone(), "once");
    q.create_group().await.unwrap();
    q.enqueue(&keys(1)).await.unwrap();
    let d = q.read_new("a", 1).await.unwrap().remove(0);
    // A second worker got the same entry (reclaimed from a slow first one).
    let stolen = q.reclaim("b", Duration::ZERO, 10).await.unwrap();
    assert_eq!(stolen.len(), 1);
    assert_eq!(stolen[0].deliveries, 2);
    assert!(
        q.complete(&stolen[0].id, &d.key, "{\"first\":1}")
            .await
            .unwrap(),
        "the first result is stored"
    );
    assert!(
        !q.complete(&d.id, &d.key, "{\"second\":2}").await.unwrap(),
        "HSETNX: the second is dropped"
    );
    assert_eq!(
        q.results(std::slice::from_ref(&d.key)).await.unwrap(),
        vec![Some("{\"first\":1}".to_string())]
    );
    assert_eq!(q.result_count().await.unwrap(), 1);
    let announced = q.done_since("0-0", 100).await.unwrap();
    assert_eq!(announced.len(), 1, "announced once on the done stream");
    assert!(
        q.pending_by_consumer()
            .await
            .unwrap()
            .values()
            .all(|&n| n == 0),
        "acknowledged"
    );
    assert!(q.has_result(&d.key).await.unwrap());
}

#[tokio::test]
async fn idle_entries_are_reclaimed_and_keepalive_protects_live_ones() {
    let Some(r) = TestRedis::get(3).await else {
        return;
    };
    let redis = Redis::connect(&r.url).await.unwrap();
    let q = RunQueue::new(redis.clone(), "reclaim");
    q.create_group().await.unwrap();
    q.enqueue(&keys(2)).await.unwrap();
    let got = q.read_new("dead", 1).await.unwrap();
    let slow = q.read_new("slow", 1).await.unwrap();
    assert_eq!((got.len(), slow.len()), (1, 1));
    let after = Duration::from_millis(600);
    assert!(
        q.reclaim("rescuer", after, 10).await.unwrap().is_empty(),
        "nothing is idle long enough yet"
    );
    // "slow" renews its entry twice within the timeout; "dead" says nothing.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(q
            .keepalive("slow", &[slow[0].id.clone()])
            .await
            .unwrap()
            .is_empty());
    }
    let taken = q.reclaim("rescuer", after, 10).await.unwrap();
    assert_eq!(taken.len(), 1, "only the dead consumer's entry: {taken:?}");
    assert_eq!(taken[0].key, got[0].key);
    assert_eq!(taken[0].deliveries, 2, "a reclaim counts as a delivery");
    // Keepalive by the old owner no longer claims it back.
    assert_eq!(
        q.keepalive("dead", &[got[0].id.clone()]).await.unwrap(),
        vec![got[0].id.clone()],
        "lost"
    );
    let pending = q.pending_by_consumer().await.unwrap();
    assert_eq!(pending.get("rescuer"), Some(&1));
    assert_eq!(pending.get("slow"), Some(&1));
    assert_eq!(pending.get("dead").copied().unwrap_or(0), 0);
    // Keepalive does not count deliveries.
    assert_eq!(q.pending_of("slow").await.unwrap()[&slow[0].id], 1);
}

fn worker_cfg(name: &str) -> WorkerConfig {
    let mut c = WorkerConfig::new(name);
    c.concurrency = 4;
    c.reclaim_after = Duration::from_millis(300);
    c.poll = Duration::from_millis(50);
    c.once = true;
    c
}

fn config(runs: &std::path::Path, id: &str) -> EvalConfig {
    let mut c = EvalConfig::new(small_bench(), runs.to_path_buf());
    c.limit = Some(8);
    c.concurrency = 4;
    c.run_id = Some(id.into());
    c
}

async fn spawn_worker(
    url: &str,
    cfg: WorkerConfig,
    graph: WorkerGraph,
) -> (
    watch::Sender<Shutdown>,
    tokio::task::JoinHandle<Result<WorkerReport, QueueError>>,
) {
    let (tx, rx) = watch::channel(Shutdown::Run);
    let url = url.to_string();
    let h = tokio::spawn(async move { run_worker(&url, &cfg, graph, rx).await });
    (tx, h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poison_task_is_recorded_as_an_error_after_n_deliveries() {
    let Some(r) = TestRedis::get(4).await else {
        return;
    };
    let g = hetionet();
    let runs = tempfile::tempdir().unwrap();
    let mut cfg = config(runs.path(), "poison");
    cfg.limit = Some(2);
    cfg.tasks = serenqa_pipeline::run::parse_tasks("t1").unwrap();
    // The coordinator publishes and enqueues; it waits for results in the background.
    let coord = {
        let (cfg, g, url) = (cfg.clone(), g.clone(), r.url.clone());
        tokio::spawn(async move { run_coordinator(&cfg, g, None, &url).await })
    };
    let redis = Redis::connect(&r.url).await.unwrap();
    let q = RunQueue::new(redis.clone(), "poison");
    let mut waited = 0;
    while q.task_count().await.unwrap_or(0) < 2 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
        assert!(waited < 400, "the coordinator enqueued nothing");
    }
    // Five workers take the first entry in turn and die with it.
    let first = q.read_new("crash-0", 1).await.unwrap().remove(0);
    for i in 1..5 {
        let d = q
            .reclaim(&format!("crash-{i}"), Duration::ZERO, 1)
            .await
            .unwrap();
        assert_eq!(d[0].deliveries, i + 1);
    }
    // A live worker reclaims it (delivery 6 > 5) and records it as an error; it runs the other.
    let (_tx, h) = spawn_worker(
        &r.url,
        worker_cfg("live"),
        WorkerGraph::new(g.clone(), None),
    )
    .await;
    let out = tokio::time::timeout(Duration::from_secs(120), coord)
        .await
        .expect("coordinator finishes")
        .unwrap()
        .expect("run completes");
    let report = tokio::time::timeout(Duration::from_secs(30), h)
        .await
        .expect("--once worker exits")
        .unwrap()
        .unwrap();
    assert_eq!(report.poisoned, 1, "{report:?}");
    assert_eq!(report.completed, 1, "{report:?}");
    let t1: Vec<T1Record> = read_trace(&out.dir.join(T1_FILE)).unwrap();
    assert_eq!(t1.len(), 2);
    let bad = t1.iter().find(|r| r.key == first.key).unwrap();
    let err = bad.retrieved.error.as_deref().unwrap_or("");
    assert!(err.contains("given up after 5 deliveries"), "{err}");
    assert!(
        !bad.retrieved.executable && bad.hit == 0.0 && bad.question.len() > 5,
        "a full record of the question"
    );
    assert_eq!(out.manifest.status, "complete");
    let active: Vec<String> = redis
        .query(redis::cmd("SMEMBERS").arg(RUNS_KEY))
        .await
        .unwrap();
    assert!(active.is_empty(), "a finished run is no longer active");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_offline_run_equals_local_run() {
    let Some(r) = TestRedis::get(5).await else {
        return;
    };
    let g = hetionet();
    let local_dir = tempfile::tempdir().unwrap();
    let queue_dir = tempfile::tempdir().unwrap();
    let local = run_eval(&config(local_dir.path(), "same"), g.clone(), None)
        .await
        .expect("local run");

    // A worker on another graph refuses; two good workers share the items.
    let wrong = WorkerGraph {
        g: g.clone(),
        model: None,
        graph_hash: "not-this-graph".into(),
        edges: None,
    };
    let (_t0, h0) = spawn_worker(&r.url, worker_cfg("wrong-graph"), wrong).await;
    let (_t1, h1) = spawn_worker(&r.url, worker_cfg("w1"), WorkerGraph::new(g.clone(), None)).await;
    let (_t2, h2) = spawn_worker(&r.url, worker_cfg("w2"), WorkerGraph::new(g.clone(), None)).await;
    let cfg = config(queue_dir.path(), "same");
    let out = tokio::time::timeout(
        Duration::from_secs(300),
        run_coordinator(&cfg, g.clone(), None, &r.url),
    )
    .await
    .expect("in time")
    .expect("queue run");
    assert_eq!(out.aggregate, local.aggregate, "same tables");
    assert_eq!(out.markdown, local.markdown, "same printed tables");
    let lines = |d: &std::path::Path| -> BTreeMap<String, serde_json::Value> {
        let mut m = BTreeMap::new();
        for f in [T1_FILE, T3_FILE] {
            for l in std::fs::read_to_string(d.join(f)).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let k = v["key"].as_str().unwrap().to_string();
                assert!(m.insert(k.clone(), v).is_none(), "{k} appears twice");
            }
        }
        m
    };
    assert_eq!(
        lines(&out.dir),
        lines(&local.dir),
        "identical trace records, each once"
    );
    let named = out
        .manifest
        .queue
        .as_ref()
        .map(|q| q.workers.clone())
        .unwrap_or_default();
    assert!(
        !named.is_empty() && named.iter().all(|w| w == "w1" || w == "w2"),
        "{named:?}"
    );
    let mut reports: Vec<WorkerReport> = Vec::new();
    for h in [h1, h2] {
        reports.push(
            tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .expect("--once worker exits")
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(
        reports.iter().map(|r| r.completed).sum::<usize>(),
        lines(&out.dir).len()
    );
    let refused = tokio::time::timeout(Duration::from_secs(30), h0)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(refused.completed, 0);
    assert!(
        refused
            .refused
            .iter()
            .any(|e| e.contains("planned on graph") && e.contains("not-this-graph")),
        "{:?}",
        refused.refused
    );

    // Rerunning the coordinator: nothing is enqueued again, nothing appended twice.
    let redis = Redis::connect(&r.url).await.unwrap();
    let q = RunQueue::new(redis, "same");
    let before = q.task_count().await.unwrap();
    let again = run_coordinator(&cfg, g.clone(), None, &r.url)
        .await
        .unwrap();
    assert_eq!(again.aggregate, local.aggregate);
    assert_eq!(q.task_count().await.unwrap(), before);
    assert_eq!(lines(&again.dir).len(), lines(&local.dir).len());
    let t3: Vec<T3Record> = read_trace(&again.dir.join(T3_FILE)).unwrap();
    assert!(!t3.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_outage_is_retried_not_recorded() {
    let Some(r) = TestRedis::get(6).await else {
        return;
    };
    // The endpoint fails (503) for its first three requests, then answers.
    let srv = common::start(Arc::new(|_v: &serde_json::Value, n: usize| {
        if n < 3 {
            common::Answer::status(503)
        } else {
            common::Answer::ok("```cypher\nMATCH (x:Compound) RETURN DISTINCT x.id AS id, x.name AS name LIMIT 3\n```")
        }
    }))
    .await;
    let spec = serenqa_pipeline::llm::ModelSpec {
        name: "scripted".into(),
        base_url: srv.base_url.clone(),
        model: "scripted-1".into(),
        api_key_env: None,
        temperature: 0.0,
        max_tokens: 64,
        timeout_secs: 10.0,
        max_retries: 0,
        backoff_ms: 1,
        concurrency: 4,
        params_b: None,
    };
    let runs = tempfile::tempdir().unwrap();
    let mut cfg = config(runs.path(), "outage");
    cfg.limit = Some(4);
    cfg.tasks = serenqa_pipeline::run::parse_tasks("t1").unwrap();
    cfg.models = serenqa_pipeline::llm::ModelsFile {
        models: vec![spec],
        roles: [("retrieval".to_string(), "scripted".to_string())].into(),
        cache_dir: None,
        ensemble: Vec::new(),
    };
    let g = hetionet();
    let mut wc = worker_cfg("w");
    wc.models = cfg.models.clone();
    let (_tx, h) = spawn_worker(&r.url, wc, WorkerGraph::new(g.clone(), None)).await;
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        run_coordinator(&cfg, g, None, &r.url),
    )
    .await
    .expect("in time")
    .expect("run");
    let report = tokio::time::timeout(Duration::from_secs(30), h)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(report.retried >= 1, "{report:?}");
    assert_eq!(report.poisoned, 0);
    let t1: Vec<T1Record> = read_trace(&out.dir.join(T1_FILE)).unwrap();
    assert_eq!(t1.len(), 4);
    assert!(
        t1.iter()
            .all(|r| r.call.as_ref().is_some_and(|c| c.error.is_none()) && r.retrieved.executable),
        "no result carries the outage: {t1:?}"
    );
    let redis = Redis::connect(&r.url).await.unwrap();
    let retries: BTreeMap<String, usize> = redis
        .query(redis::cmd("HGETALL").arg(RunQueue::new(redis.clone(), "outage").keys.retries()))
        .await
        .unwrap();
    assert_eq!(
        retries.values().sum::<usize>(),
        report.retried,
        "{retries:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_coordinator_collects_what_finished_while_it_was_down() {
    let Some(r) = TestRedis::get(7).await else {
        return;
    };
    let g = hetionet();
    let local_dir = tempfile::tempdir().unwrap();
    let queue_dir = tempfile::tempdir().unwrap();
    let local = run_eval(&config(local_dir.path(), "restart"), g.clone(), None)
        .await
        .expect("local run");
    let n = read_trace::<T1Record>(&local.dir.join(T1_FILE))
        .unwrap()
        .len()
        + read_trace::<T3Record>(&local.dir.join(T3_FILE))
            .unwrap()
            .len();

    // The coordinator enqueues, then dies before any worker is there.
    let cfg = config(queue_dir.path(), "restart");
    let c = {
        let (cfg, g, url) = (cfg.clone(), g.clone(), r.url.clone());
        tokio::spawn(async move { run_coordinator(&cfg, g, None, &url).await })
    };
    let redis = Redis::connect(&r.url).await.unwrap();
    let q = RunQueue::new(redis.clone(), "restart");
    for _ in 0..400 {
        if q.task_count().await.unwrap_or(0) == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(q.task_count().await.unwrap(), n, "every item enqueued");
    c.abort();
    let _ = c.await;

    // A worker does everything meanwhile, then is stopped with a signal.
    let mut wc = worker_cfg("w");
    wc.once = false;
    let (tx, h) = spawn_worker(&r.url, wc, WorkerGraph::new(g.clone(), None)).await;
    for _ in 0..1200 {
        if q.result_count().await.unwrap_or(0) == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(q.result_count().await.unwrap(), n);
    tx.send(Shutdown::Drain).unwrap();
    let report = tokio::time::timeout(Duration::from_secs(30), h)
        .await
        .expect("the worker stops on the signal")
        .unwrap()
        .unwrap();
    assert_eq!(report.completed, n);
    assert_eq!(
        std::fs::read_to_string(queue_dir.path().join("restart").join(T1_FILE)).unwrap_or_default(),
        "",
        "nobody wrote the traces yet"
    );

    // The same command again: collects every result, enqueues nothing, same tables.
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        run_coordinator(&cfg, g, None, &r.url),
    )
    .await
    .expect("in time")
    .expect("resumed run");
    assert_eq!(out.aggregate, local.aggregate);
    assert_eq!(q.task_count().await.unwrap(), n, "no item enqueued twice");
    let t1: Vec<T1Record> = read_trace(&out.dir.join(T1_FILE)).unwrap();
    let t3: Vec<T3Record> = read_trace(&out.dir.join(T3_FILE)).unwrap();
    assert_eq!(t1.len() + t3.len(), n, "each result appended once");
}

#[path = "../../edges/tests/common/mod.rs"]
mod redis_fixture;

/// The queue on a three-shard Redis Cluster: every key of a run shares its hash tag, so the
/// scripts run on one shard; the client follows the slot map. Same records as a local run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_run_on_a_redis_cluster_equals_local_run() {
    let Some((url, _servers)) = redis_fixture::cluster() else {
        return;
    };
    let g = hetionet();
    let local_dir = tempfile::tempdir().unwrap();
    let queue_dir = tempfile::tempdir().unwrap();
    let local = run_eval(&config(local_dir.path(), "on-cluster"), g.clone(), None)
        .await
        .expect("local run");
    // A fresh run on the cluster (earlier test runs may have left this run id's keys).
    let redis = Redis::connect(&url).await.expect("cluster");
    for k in Keys::new("on-cluster").all() {
        let _: Result<i64, QueueError> = redis.query(redis::cmd("DEL").arg(&k)).await;
    }
    let _: Result<i64, QueueError> = redis
        .query(redis::cmd("SREM").arg(RUNS_KEY).arg("on-cluster"))
        .await;
    let (_t1, h1) = spawn_worker(&url, worker_cfg("c1"), WorkerGraph::new(g.clone(), None)).await;
    let (_t2, h2) = spawn_worker(&url, worker_cfg("c2"), WorkerGraph::new(g.clone(), None)).await;
    let out = tokio::time::timeout(
        Duration::from_secs(300),
        run_coordinator(
            &config(queue_dir.path(), "on-cluster"),
            g.clone(),
            None,
            &url,
        ),
    )
    .await
    .expect("in time")
    .expect("queue run on the cluster");
    assert_eq!(out.aggregate, local.aggregate, "same tables");
    for f in [T1_FILE, T3_FILE] {
        let sorted = |d: &std::path::Path| {
            let mut v: Vec<String> = std::fs::read_to_string(d.join(f))
                .unwrap()
                .lines()
                .map(String::from)
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(&out.dir),
            sorted(&local.dir),
            "{f}: identical records, each once"
        );
    }
    let mut completed = 0;
    for h in [h1, h2] {
        completed += tokio::time::timeout(Duration::from_secs(30), h)
            .await
            .expect("--once worker exits")
            .unwrap()
            .unwrap()
            .completed;
    }
    assert_eq!(
        completed,
        std::fs::read_to_string(out.dir.join(T1_FILE))
            .unwrap()
            .lines()
            .count()
            + std::fs::read_to_string(out.dir.join(T3_FILE))
                .unwrap()
                .lines()
                .count()
    );
}

fn scripted_model(base_url: &str) -> serenqa_pipeline::llm::ModelSpec {
    serenqa_pipeline::llm::ModelSpec {
        name: "scripted".into(),
        base_url: base_url.into(),
        model: "scripted-1".into(),
        api_key_env: None,
        temperature: 0.0,
        max_tokens: 64,
        timeout_secs: 10.0,
        max_retries: 0,
        backoff_ms: 1,
        concurrency: 4,
        params_b: None,
    }
}

/// Runs a worker until it has refused `run_id` (its reason in the run's `refused` hash), then
/// stops it; returns the reason.
async fn refusal_of(
    url: &str,
    run_id: &str,
    wc: WorkerConfig,
    g: Arc<serenqa_graph::Graph>,
) -> String {
    let name = wc.name.clone();
    let (tx, h) = spawn_worker(url, wc, WorkerGraph::new(g, None)).await;
    let redis = Redis::connect(url).await.unwrap();
    let q = RunQueue::new(redis, run_id);
    let mut why = None;
    for _ in 0..600 {
        if let Some(w) = q.refusals().await.unwrap().get(&name) {
            why = Some(w.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tx.send(Shutdown::Abort).unwrap();
    let report = tokio::time::timeout(Duration::from_secs(30), h)
        .await
        .expect("the worker stops")
        .unwrap()
        .unwrap();
    assert_eq!(report.completed, 0, "{report:?}");
    let why =
        why.unwrap_or_else(|| panic!("worker {name} did not refuse run {run_id}: {report:?}"));
    assert!(report.refused.contains(&why), "{report:?}");
    why
}

/// A worker takes its model endpoints from its own models file: a spec whose models hash
/// differs is refused with a clear reason, and a spec carrying an endpoint (base URL, key
/// variable) is refused without a single request to that endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_use_their_own_models_and_refuse_others() {
    let Some(r) = TestRedis::get(8).await else {
        return;
    };
    let g = hetionet();
    let srv = common::start(Arc::new(|_v: &serde_json::Value, _n: usize| {
        common::Answer::ok("```cypher\nMATCH (x:Compound) RETURN x.id AS id LIMIT 1\n```")
    }))
    .await;
    let elsewhere = common::start(Arc::new(|_v: &serde_json::Value, _n: usize| {
        common::Answer::ok("no")
    }))
    .await;
    let runs = tempfile::tempdir().unwrap();
    let mut cfg = config(runs.path(), "models-differ");
    cfg.limit = Some(2);
    cfg.tasks = serenqa_pipeline::run::parse_tasks("t1").unwrap();
    cfg.models = serenqa_pipeline::llm::ModelsFile {
        models: vec![scripted_model(&srv.base_url)],
        roles: [("retrieval".to_string(), "scripted".to_string())].into(),
        cache_dir: None,
        ensemble: Vec::new(),
    };
    let coord = {
        let (cfg, g, url) = (cfg.clone(), g.clone(), r.url.clone());
        tokio::spawn(async move { run_coordinator(&cfg, g, None, &url).await })
    };
    // Same model name, another base URL: refused, nothing sent anywhere.
    let mut wc = worker_cfg("other-endpoint");
    wc.once = false;
    wc.models = serenqa_pipeline::llm::ModelsFile {
        models: vec![scripted_model(&elsewhere.base_url)],
        ..cfg.models.clone()
    };
    let why = refusal_of(&r.url, "models-differ", wc, g.clone()).await;
    assert!(
        why.contains("differ from this worker's models file")
            && why.contains(&cfg.models.config_hash()),
        "{why}"
    );
    // No models file at all (offline): refused too.
    let mut wc = worker_cfg("offline-worker");
    wc.once = false;
    let why = refusal_of(&r.url, "models-differ", wc, g.clone()).await;
    assert!(why.contains("none (offline)"), "{why}");
    assert_eq!(elsewhere.count.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(
        srv.count.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "refusing workers call nothing"
    );
    // The matching worker (its own copy of the file, a different timeout is fine) runs it.
    let mut wc = worker_cfg("matching");
    let mut mine = cfg.models.clone();
    mine.models[0].timeout_secs = 5.0;
    wc.models = mine;
    let (_tx, h) = spawn_worker(&r.url, wc, WorkerGraph::new(g.clone(), None)).await;
    let out = tokio::time::timeout(Duration::from_secs(120), coord)
        .await
        .expect("in time")
        .unwrap()
        .expect("run");
    assert_eq!(out.manifest.status, "complete");
    assert!(
        tokio::time::timeout(Duration::from_secs(30), h)
            .await
            .unwrap()
            .unwrap()
            .unwrap()
            .completed
            >= 2
    );
    assert!(
        srv.count.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "the matching worker called its own endpoint"
    );

    // A spec written by someone else with an endpoint and a key variable in it.
    let redis = Redis::connect(&r.url).await.unwrap();
    let spec_text: String = redis
        .query(redis::cmd("GET").arg(Keys::new("models-differ").spec()))
        .await
        .unwrap();
    let mut spec: serde_json::Value = serde_json::from_str(&spec_text).unwrap();
    assert!(
        spec["models"].get("hash").is_some()
            && !spec_text.contains("base_url")
            && !spec_text.contains(&srv.base_url),
        "the spec holds names and a hash only: {spec_text}"
    );
    spec["run_id"] = "injected".into();
    spec["models"] = serde_json::json!({
        "names": ["scripted"], "roles": {"retrieval": "scripted"}, "hash": spec["models"]["hash"],
        "models": [{"name": "scripted", "base_url": elsewhere.base_url, "model": "x", "api_key_env": "HOME"}],
    });
    let injected = Keys::new("injected");
    let _: () = redis
        .query(redis::cmd("SET").arg(injected.spec()).arg(spec.to_string()))
        .await
        .unwrap();
    let _: i64 = redis
        .query(redis::cmd("SADD").arg(RUNS_KEY).arg("injected"))
        .await
        .unwrap();
    let mut wc = worker_cfg("victim");
    wc.once = false;
    wc.models = cfg.models.clone();
    let why = refusal_of(&r.url, "injected", wc, g.clone()).await;
    assert!(
        why.contains("unreadable spec") && why.contains("unknown field"),
        "{why}"
    );
    assert_eq!(
        elsewhere.count.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request to the injected endpoint"
    );
    let _: i64 = redis
        .query(redis::cmd("SREM").arg(RUNS_KEY).arg("injected"))
        .await
        .unwrap();
}
