//! Test helpers: a scripted OpenAI-compatible server on loopback, the Hetionet graph through
//! the CLI's cached snapshot, and a small benchmark built once per test binary.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serenqa_graph::Graph;

/// What the script answers: status, body, delay before answering.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub delay: Duration,
}

impl Answer {
    pub fn ok(content: &str) -> Answer {
        Answer {
            status: 200,
            body: chat_body(content),
            delay: Duration::ZERO,
        }
    }
    pub fn status(status: u16) -> Answer {
        Answer {
            status,
            body: "{\"error\":\"scripted\"}".into(),
            delay: Duration::ZERO,
        }
    }
    pub fn raw(body: &str) -> Answer {
        Answer {
            status: 200,
            body: body.into(),
            delay: Duration::ZERO,
        }
    }
    pub fn after(mut self, d: Duration) -> Answer {
        self.delay = d;
        self
    }
}

pub fn chat_body(content: &str) -> String {
    serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
    .to_string()
}

pub type Script = Arc<dyn Fn(&serde_json::Value, usize) -> Answer + Send + Sync>;

pub struct Recorded {
    pub path: String,
    pub auth: Option<String>,
    pub body: serde_json::Value,
}

#[derive(Clone)]
struct S {
    script: Script,
    count: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<Recorded>>>,
}

/// A running scripted server.
pub struct TestServer {
    pub base_url: String,
    pub count: Arc<AtomicUsize>,
    pub max_in_flight: Arc<AtomicUsize>,
    pub log: Arc<Mutex<Vec<Recorded>>>,
}

async fn handle(
    State(s): State<S>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let n = s.count.fetch_add(1, Ordering::SeqCst);
    let now = s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    s.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
    if let Ok(mut l) = s.log.lock() {
        l.push(Recorded {
            path: uri.path().to_string(),
            auth: headers
                .get("authorization")
                .and_then(|h| h.to_str().ok())
                .map(String::from),
            body: v.clone(),
        });
    }
    let a = (s.script)(&v, n);
    if !a.delay.is_zero() {
        tokio::time::sleep(a.delay).await;
    }
    s.in_flight.fetch_sub(1, Ordering::SeqCst);
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [("content-type", "application/json")], a.body).into_response()
}

/// Starts a server on 127.0.0.1 (an ephemeral port) in the current tokio runtime.
pub async fn start(script: Script) -> TestServer {
    let s = S {
        script,
        count: Arc::new(AtomicUsize::new(0)),
        in_flight: Arc::new(AtomicUsize::new(0)),
        max_in_flight: Arc::new(AtomicUsize::new(0)),
        log: Arc::new(Mutex::new(Vec::new())),
    };
    let app = Router::new()
        .route("/v1/chat/completions", post(handle))
        .with_state(s.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    TestServer {
        base_url: format!("http://{addr}/v1"),
        count: s.count,
        max_in_flight: s.max_in_flight,
        log: s.log,
    }
}

/// The user message of a request.
pub fn user_text(v: &serde_json::Value) -> String {
    v["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

pub fn system_text(v: &serde_json::Value) -> String {
    v["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["role"] == "system"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

pub use serenqa_testkit::data::shared_data;

/// Hetionet as the CLI loads it, through the same cached snapshot.
pub fn hetionet() -> Arc<Graph> {
    static G: OnceLock<Arc<Graph>> = OnceLock::new();
    G.get_or_init(|| {
        let data = shared_data().expect("Hetionet data (../shared/data/hetionet or $SERENQA_DATA)");
        Arc::new(serenqa_testkit::data::hetionet_graph(&data))
    })
    .clone()
}

/// A small benchmark (40 questions, offline ensemble partition; no model so no RNS-guided
/// partition) built once per test process into the test temp directory.
pub fn small_bench() -> PathBuf {
    static B: OnceLock<PathBuf> = OnceLock::new();
    B.get_or_init(|| {
        let g = hetionet();
        // Rebuilt once per test process (a few seconds), so it never lags the builder's code.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("serenqa-pipeline-bench-40-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let scorers = serenqa_benchmark::partition::offline_scorers(&g, None);
        let mut cfg = serenqa_benchmark::build::BuildConfig::default();
        cfg.gen.questions = 40;
        let b = serenqa_benchmark::build::build(&g, None, &scorers, None, &cfg)
            .expect("build benchmark");
        b.write(&g, &dir).expect("write benchmark");
        dir
    })
    .clone()
}

/// Question understanding through the offline retriever, as `ask` reaches it.
pub mod understand {
    use std::sync::{Arc, OnceLock};

    use serenqa_graph::Graph;
    use serenqa_pipeline::retrieval::OfflineRetriever;

    use super::shared_data;

    pub fn graph() -> Option<Arc<Graph>> {
        if shared_data().is_none() {
            serenqa_graph::datadir::missing_resource("Hetionet data (../shared/data/hetionet)");
            return None;
        }
        Some(super::hetionet())
    }

    pub fn retriever(g: &Graph) -> &'static OfflineRetriever {
        static R: OnceLock<OfflineRetriever> = OnceLock::new();
        // With the Disease Ontology's names from the shared data, as the app has them.
        R.get_or_init(|| {
            let data = shared_data().expect("shared data");
            let d = serenqa_graph::load::disease_ontology::DiseaseOntology::load(
                &data.join("disease-ontology"),
            )
            .expect("Disease Ontology files (../shared/data/disease-ontology)");
            OfflineRetriever::with_ontology(g, Some(&d))
        })
    }

    pub fn answers(g: &Graph, q: &str) -> (Vec<String>, serenqa_shared::api::Understood) {
        let (r, u) = retriever(g).retrieve(g, q);
        (r.answers, u)
    }

    pub fn gold(g: &Graph, cypher: &str) -> Vec<String> {
        let r = serenqa_pipeline::retrieval::run_query(g, Some(cypher.to_string()));
        assert!(r.executable, "{cypher}: {:?}", r.error);
        r.answers
    }
}
