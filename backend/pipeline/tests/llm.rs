//! The LLM client against a scripted OpenAI-compatible server on loopback: request format,
//! retries on 429/500, timeouts, cache hits on rerun, malformed replies, the concurrency
//! limit, and the throughput of the LLM path with 200 ms simulated latency.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{start, Answer};
use serenqa_pipeline::llm::{LlmClient, LlmError, Message, ModelSpec, ModelsFile};

fn spec(base: &str) -> ModelSpec {
    ModelSpec {
        name: "m".into(),
        base_url: base.into(),
        model: "test-model".into(),
        api_key_env: None,
        temperature: 0.2,
        max_tokens: 77,
        timeout_secs: 5.0,
        max_retries: 3,
        backoff_ms: 10,
        concurrency: 64,
        params_b: None,
    }
}

fn client(s: ModelSpec, cache: Option<std::path::PathBuf>) -> LlmClient {
    let f = ModelsFile {
        models: vec![s],
        ..Default::default()
    };
    LlmClient::new(&f, cache).expect("client")
}

fn msgs(text: &str) -> Vec<Message> {
    vec![Message::system("sys"), Message::user(text)]
}

#[tokio::test]
async fn request_format_is_openai_chat_completions() {
    let srv = start(Arc::new(|_, _| Answer::ok("hello"))).await;
    std::env::set_var("SERENQA_TEST_KEY", "sk-test-123");
    let mut s = spec(&srv.base_url);
    s.api_key_env = Some("SERENQA_TEST_KEY".into());
    let c = client(s, None);
    let r = c.chat("m", &msgs("question?")).await.expect("reply");
    assert_eq!(r.text, "hello");
    assert_eq!(
        (r.prompt_tokens, r.completion_tokens, r.attempts, r.cached),
        (11, 7, 1, false)
    );
    let log = srv.log.lock().unwrap();
    assert_eq!(log.len(), 1);
    let req = &log[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.auth.as_deref(), Some("Bearer sk-test-123"));
    assert_eq!(req.body["model"], "test-model");
    assert_eq!(req.body["max_tokens"], 77);
    assert!((req.body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    assert_eq!(req.body["stream"], false);
    assert_eq!(req.body["messages"][0]["role"], "system");
    assert_eq!(req.body["messages"][1]["role"], "user");
    assert_eq!(req.body["messages"][1]["content"], "question?");
    let st = c.stats.snapshot();
    assert_eq!(
        (st.calls, st.prompt_tokens, st.completion_tokens),
        (1, 11, 7)
    );
}

#[tokio::test]
async fn retries_on_429_and_500_then_succeeds() {
    let srv = start(Arc::new(|_, n| match n {
        0 => Answer::status(429),
        1 => Answer::status(500),
        _ => Answer::ok("third time"),
    }))
    .await;
    let c = client(spec(&srv.base_url), None);
    let r = c.chat("m", &msgs("q")).await.expect("reply after retries");
    assert_eq!(r.text, "third time");
    assert_eq!(r.attempts, 3);
    assert_eq!(srv.count.load(Ordering::SeqCst), 3);
    assert_eq!(c.stats.snapshot().retries, 2);
}

#[tokio::test]
async fn gives_up_after_max_retries_and_does_not_retry_400() {
    let srv = start(Arc::new(|_, _| Answer::status(503))).await;
    let c = client(spec(&srv.base_url), None);
    match c.chat("m", &msgs("q")).await {
        Err(LlmError::Status { status: 503, .. }) => {}
        other => panic!("expected 503 error, got {other:?}"),
    }
    assert_eq!(srv.count.load(Ordering::SeqCst), 4, "1 try + 3 retries");
    let srv2 = start(Arc::new(|_, _| Answer::status(400))).await;
    let c2 = client(spec(&srv2.base_url), None);
    assert!(matches!(
        c2.chat("m", &msgs("q")).await,
        Err(LlmError::Status { status: 400, .. })
    ));
    assert_eq!(srv2.count.load(Ordering::SeqCst), 1, "400 is not retried");
}

#[tokio::test]
async fn timeouts_are_retried_then_reported() {
    let srv = start(Arc::new(|_, _| {
        Answer::ok("late").after(Duration::from_millis(1500))
    }))
    .await;
    let mut s = spec(&srv.base_url);
    s.timeout_secs = 0.2;
    s.max_retries = 1;
    let c = client(s, None);
    let t = Instant::now();
    let e = c.chat("m", &msgs("q")).await.expect_err("must time out");
    assert!(matches!(e, LlmError::Timeout { attempts: 2, .. }), "{e:?}");
    assert!(
        t.elapsed() < Duration::from_millis(1400),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(srv.count.load(Ordering::SeqCst), 2);
    // A retry that succeeds after a timeout.
    let srv2 = start(Arc::new(|_, n| {
        if n == 0 {
            Answer::ok("late").after(Duration::from_millis(1500))
        } else {
            Answer::ok("fast")
        }
    }))
    .await;
    let mut s2 = spec(&srv2.base_url);
    s2.timeout_secs = 0.2;
    let c2 = client(s2, None);
    assert_eq!(
        c2.chat("m", &msgs("q"))
            .await
            .expect("retry after timeout")
            .text,
        "fast"
    );
}

#[tokio::test]
async fn cache_hits_on_rerun_with_a_new_client() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(Arc::new(|v, _| {
        Answer::ok(&format!("echo {}", common::user_text(v)))
    }))
    .await;
    let c1 = client(spec(&srv.base_url), Some(dir.path().to_path_buf()));
    let a = c1.chat("m", &msgs("one")).await.unwrap();
    let b = c1.chat("m", &msgs("two")).await.unwrap();
    assert_eq!(srv.count.load(Ordering::SeqCst), 2);
    // "Rerun": a new client on the same cache directory.
    let c2 = client(spec(&srv.base_url), Some(dir.path().to_path_buf()));
    let a2 = c2.chat("m", &msgs("one")).await.unwrap();
    let b2 = c2.chat("m", &msgs("two")).await.unwrap();
    assert_eq!(
        srv.count.load(Ordering::SeqCst),
        2,
        "no network call on rerun"
    );
    assert!(a2.cached && b2.cached);
    assert_eq!((a2.text, b2.text), (a.text, b.text));
    assert_eq!(c2.stats.snapshot().cache_hits, 2);
    // Different parameters are a different key.
    let mut s3 = spec(&srv.base_url);
    s3.temperature = 0.9;
    let c3 = client(s3, Some(dir.path().to_path_buf()));
    assert!(!c3.chat("m", &msgs("one")).await.unwrap().cached);
    assert_eq!(srv.count.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn malformed_replies_are_errors_not_panics() {
    let srv = start(Arc::new(|_, n| match n {
        0 => Answer::raw("this is not json"),
        1 => Answer::raw("{\"choices\": []}"),
        2 => Answer::raw("{\"choices\": [{\"message\": {\"role\": \"assistant\"}}]}"),
        3 => Answer::raw("{\"choices\": [{\"message\": {\"content\": null}}]}"),
        _ => Answer::ok(&"x".repeat(40_000)),
    }))
    .await;
    let c = client(spec(&srv.base_url), None);
    for _ in 0..3 {
        assert!(matches!(
            c.chat("m", &msgs("q")).await,
            Err(LlmError::Malformed { .. })
        ));
    }
    assert_eq!(
        c.chat("m", &msgs("q")).await.unwrap().text,
        "",
        "null content is an empty reply"
    );
    let long = c.chat("m", &msgs("q")).await.unwrap();
    assert!(
        long.truncated && long.text.len() == serenqa_pipeline::llm::MAX_REPLY_CHARS,
        "endless text is cut"
    );
    assert_eq!(c.stats.snapshot().errors, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limit_is_honoured() {
    let srv = start(Arc::new(|_, _| {
        Answer::ok("ok").after(Duration::from_millis(80))
    }))
    .await;
    let mut s = spec(&srv.base_url);
    s.concurrency = 4;
    let c = Arc::new(client(s, None));
    let mut set = tokio::task::JoinSet::new();
    for i in 0..24 {
        let c = c.clone();
        set.spawn(async move { c.chat("m", &msgs(&format!("q{i}"))).await });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
    assert_eq!(srv.count.load(Ordering::SeqCst), 24);
    assert_eq!(
        srv.max_in_flight.load(Ordering::SeqCst),
        4,
        "server saw exactly the limit in flight"
    );
    assert_eq!(c.stats.snapshot().max_in_flight, 4);
}

#[test]
fn models_file_validation() {
    let ok = r#"{"models":[{"name":"a","base_url":"http://x/v1","model":"m"}],"roles":{"retrieval":"a","judge":"offline"}}"#;
    let f: ModelsFile = serde_json::from_str(ok).unwrap();
    f.validate().unwrap();
    assert_eq!(f.model_for("retrieval").map(|m| m.name.as_str()), Some("a"));
    assert!(f.model_for("judge").is_none());
    assert!(f.model_for("nodes").is_none(), "unmapped roles run offline");
    assert_eq!(f.models[0].concurrency, 64, "default concurrency");
    let bad_role = r#"{"models":[],"roles":{"writer":"a"}}"#;
    assert!(serde_json::from_str::<ModelsFile>(bad_role)
        .unwrap()
        .validate()
        .unwrap_err()
        .contains("unknown role"));
    let undeclared = r#"{"models":[],"roles":{"judge":"gpt"}}"#;
    assert!(serde_json::from_str::<ModelsFile>(undeclared)
        .unwrap()
        .validate()
        .unwrap_err()
        .contains("undeclared"));
}

/// Throughput of the LLM path: 200 ms simulated latency, a limit of 128 in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throughput_with_200ms_latency() {
    let srv = start(Arc::new(|_, _| {
        Answer::ok("Score: 3\n#END").after(Duration::from_millis(200))
    }))
    .await;
    let mut s = spec(&srv.base_url);
    s.concurrency = 128;
    let c = Arc::new(client(s, None));
    let n = 640;
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..n {
        let c = c.clone();
        set.spawn(async move { c.chat("m", &msgs(&format!("q{i}"))).await });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    let peak = srv.max_in_flight.load(Ordering::SeqCst);
    println!("LLM path throughput: {n} calls in {secs:.2}s = {:.0} calls/s, {peak} in flight at peak (200 ms latency)", n as f64 / secs);
    assert!(peak >= 100, "only {peak} calls in flight");
    assert!(peak <= 128);
}
