//! The HTTP API and static file serving. One module per area; each exposes `routes()`, an
//! `OpenApiRouter` whose handlers are registered with `routes!` from their `#[utoipa::path]`,
//! so the router and the OpenAPI document (`GET /api/openapi.json`) list the same endpoints
//! ([`api_routes`]; checked by this module's tests).
//!
//! Every error is JSON `{code, message}` with a 4xx/5xx status. Request bodies are limited in
//! size and in time ([`body`]: JSON 413 / 408, read before admission so a slow body cannot
//! hold a slot). Responses carry the cross-origin isolation headers the WASM threads need, a
//! Content-Security-Policy and `nosniff` (`headers`). The anonymous, expensive endpoints pass
//! admission control first (`admission`: per-client token buckets, per-class concurrency caps,
//! `429` with `Retry-After`).

pub mod admission;
pub mod annotate;
pub mod body;
pub mod cypher;
pub mod discover;
pub mod docs;
pub mod error;
pub mod extract;
pub mod graph;
pub mod headers;
pub mod oversight;
pub mod pipeline;
pub mod predictions;
pub mod reply;
pub mod rns;
pub mod served;
pub mod session;
pub mod shortlist;
pub mod understand;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use axum::http::{header, HeaderValue};
use axum::Router;
use serenqa_graph::Graph;
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// What every handler can read. Immutable after start-up; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub graph: Arc<Graph>,
    /// The precomputed serendipity model; `None` makes the RNS endpoints answer 503.
    pub model: Option<Arc<Model>>,
    /// Exact P3 blocks of recently requested sets.
    pub blocks: Arc<BlockCache>,
    /// Evaluation runs (`GET /api/runs`).
    pub runs_dir: PathBuf,
    /// Models for `POST /api/ask` (none: offline agents).
    pub models: Arc<serenqa_pipeline::llm::ModelsFile>,
    pub llm_cache: Option<PathBuf>,
    /// Built on first use (lexicon and statistics of the graph).
    pub ask: Arc<OnceLock<Result<Arc<serenqa_pipeline::ask::AskContext>, String>>>,
    /// The annotation store and accounts; `None` makes those endpoints answer 503.
    pub annotation: Option<Arc<session::Annotation>>,
    /// Where Ask's exploration reads edges (`None`: the in-memory graph).
    pub edges: Option<Arc<dyn serenqa_edges::EdgeSource>>,
    /// Admission control and Ask's deadline / sign-in rule (`serve`'s flags).
    pub admission: Arc<admission::Admission>,
    /// The plausibility model's predictions (`serenqa predict`); `None`: `/api/predictions`
    /// answers 503 and Discover proposes by walk proximity.
    pub predictions: Option<Arc<serenqa_predict::Predictions>>,
    /// The top lists of a graph past the all-pairs model's size (`serenqa predict --top-k`);
    /// read through [`served::Served`] when `predictions` is absent.
    pub top_k: Option<Arc<serenqa_predict::topk::TopK>>,
    /// Metapath steps for explaining predictions (built with them).
    pub explainer: Option<Arc<serenqa_predict::explain::Explainer>>,
    /// Mechanism labels and safety flags of Discover's candidates (built on first use).
    pub clinical: Arc<OnceLock<Arc<crate::screen::Clinical>>>,
}

impl AppState {
    pub fn new(graph: Arc<Graph>) -> Self {
        AppState {
            graph,
            model: None,
            blocks: Arc::new(BlockCache::default()),
            runs_dir: serenqa_pipeline::runs_dir::default_runs_dir(),
            models: Arc::new(serenqa_pipeline::llm::ModelsFile::offline()),
            llm_cache: None,
            ask: Arc::new(OnceLock::new()),
            annotation: None,
            edges: None,
            admission: Arc::new(admission::Admission::default()),
            predictions: None,
            top_k: None,
            explainer: None,
            clinical: Arc::new(OnceLock::new()),
        }
    }
    /// Admission limits other than the defaults.
    pub fn with_admission(mut self, cfg: admission::AdmissionConfig) -> Self {
        self.admission = Arc::new(admission::Admission::new(cfg));
        self
    }
    /// Where runs are listed from and which models `POST /api/ask` may use.
    pub fn with_pipeline(
        mut self,
        runs_dir: PathBuf,
        models: serenqa_pipeline::llm::ModelsFile,
        llm_cache: Option<PathBuf>,
    ) -> Self {
        self.runs_dir = runs_dir;
        self.models = Arc::new(models);
        self.llm_cache = llm_cache;
        self.ask = Arc::new(OnceLock::new());
        self
    }
    /// Ask explores on this edge store (a Redis edge store of the same graph).
    pub fn with_edges(mut self, edges: Option<Arc<dyn serenqa_edges::EdgeSource>>) -> Self {
        self.edges = edges;
        self.ask = Arc::new(OnceLock::new());
        self
    }
    pub fn with_annotation(mut self, svc: Option<session::Annotation>) -> Self {
        self.annotation = svc.map(Arc::new);
        self
    }
    pub fn with_top_k(mut self, t: Option<serenqa_predict::topk::TopK>) -> Self {
        self.top_k = t.map(Arc::new);
        self
    }
    pub fn with_predictions(mut self, p: Option<serenqa_predict::Predictions>) -> Self {
        self.explainer = p
            .as_ref()
            .and_then(|_| {
                serenqa_predict::explain::Explainer::new(&self.graph, &Default::default()).ok()
            })
            .map(Arc::new);
        self.predictions = p.map(Arc::new);
        self
    }
    /// The clinician's labels of this graph (built the first time they are needed).
    pub fn clinical(&self) -> Arc<crate::screen::Clinical> {
        self.clinical
            .get_or_init(|| Arc::new(crate::screen::Clinical::load(&self.graph)))
            .clone()
    }
    pub fn with_model(mut self, model: Option<Model>) -> Self {
        self.model = model.map(Arc::new);
        self
    }
}

/// Largest request body accepted anywhere (bigger ones get 413).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Every endpoint under `/api`, each registered once, by its handler's `#[utoipa::path]`
/// (`routes!`): the same registration gives the route and its entry in the OpenAPI document,
/// so no handler is routed without being documented or documented without being routed.
/// Unknown `/api` paths answer JSON 404; replies are compressed.
pub fn api_routes() -> OpenApiRouter<AppState> {
    let api = OpenApiRouter::new()
        .merge(graph::routes())
        .merge(rns::routes())
        .merge(cypher::routes())
        .merge(pipeline::routes())
        .merge(discover::routes())
        .merge(predictions::routes())
        .merge(docs::routes())
        .merge(annotate::routes())
        .merge(oversight::routes())
        .merge(shortlist::routes())
        .merge(understand::routes())
        .fallback(error::not_found)
        // API replies are per user and per moment (the CSRF token of `/api/auth/me`, the
        // reviewer export with e-mails): no cache keeps them unless a handler says otherwise.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        // JSON replies (a disease page is ~250 KB) go compressed when the client accepts it;
        // the event stream of Ask is never buffered for compression (tower-http skips SSE).
        .layer(tower_http::compression::CompressionLayer::new());
    OpenApiRouter::with_openapi(docs::ApiDoc::openapi()).nest("/api", api)
}

/// The OpenAPI document (`GET /api/openapi.json`): [`api_routes`]'s, built once.
pub fn openapi() -> utoipa::openapi::OpenApi {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    DOC.get_or_init(|| api_routes().into_openapi()).clone()
}

pub fn router(state: AppState, dist: &Path) -> Router {
    let admission = state.admission.clone();
    let (api, _) = api_routes().split_for_parts();
    let api = api.with_state(state);
    // Static files: the brotli / gzip copies `serve` writes beside them (`static_assets`).
    let static_files = ServeDir::new(dist)
        .precompressed_br()
        .precompressed_gzip()
        .fallback(
            ServeFile::new(dist.join("index.html"))
                .precompressed_br()
                .precompressed_gzip(),
        );
    api.fallback_service(static_files)
        .layer(axum::middleware::from_fn_with_state(admission, admission::admit))
        // Outside admission: the whole body is read (bounded in size and time) before a
        // request may take a slot.
        .layer(axum::middleware::from_fn(body::bounded))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_str(&headers::content_security_policy(dist)).unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'")),
        ))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        // Invite and reset links carry their token in the address: never sent on as a referrer.
        .layer(SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")))
        .layer(SetResponseHeaderLayer::overriding(
            header::HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::HeaderName::from_static("cross-origin-embedder-policy"),
            HeaderValue::from_static("require-corp"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::HeaderName::from_static("cross-origin-resource-policy"),
            HeaderValue::from_static("same-origin"),
        ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use serenqa_graph::synth::{generate, SynthSpec};
    use tower::ServiceExt;

    use super::{openapi, router, AppState};

    /// The error code of the `/api` fallback (no route matched).
    const NO_ROUTE: &str = "no_such_endpoint";

    async fn answer(app: &axum::Router, method: &str, uri: &str) -> (StatusCode, String) {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .body(Body::empty())
            .expect("request");
        let resp = app.clone().oneshot(req).await.expect("router answers");
        let status = resp.status();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// Every operation of `/api/openapi.json` reaches a handler: no 405, no fallback 404.
    /// (The converse, no route outside the document, is `routes_come_from_the_document`.)
    #[tokio::test]
    async fn every_documented_operation_is_routed() {
        let g = generate(&SynthSpec {
            nodes: 50,
            edges: 200,
            seed: 1,
            progress: false,
        });
        let app = router(
            AppState::new(Arc::new(g)),
            std::path::Path::new("/nonexistent"),
        );
        // The check can tell: an unknown path is the fallback's.
        let (st, body) = answer(&app, "GET", "/api/no-such-thing").await;
        assert_eq!(st, StatusCode::NOT_FOUND);
        assert!(body.contains(NO_ROUTE), "{body}");

        let doc = serde_json::to_value(openapi()).expect("document as JSON");
        let paths = doc["paths"].as_object().expect("paths");
        assert!(paths.len() >= 40, "{} paths", paths.len());
        let mut checked = 0;
        for (path, ops) in paths {
            assert!(path.starts_with("/api/"), "{path}");
            // Path parameters get a placeholder value.
            let uri: String = path
                .split('/')
                .map(|seg| if seg.starts_with('{') { "x" } else { seg })
                .collect::<Vec<_>>()
                .join("/");
            for method in ops.as_object().expect("operations").keys() {
                let (st, body) = answer(&app, &method.to_uppercase(), &uri).await;
                assert_ne!(st, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
                assert!(
                    !(st == StatusCode::NOT_FOUND && body.contains(NO_ROUTE)),
                    "{method} {path} is documented but not routed"
                );
                checked += 1;
            }
        }
        assert!(checked >= paths.len());
    }

    /// Every schema the document refers to is in it (`routes!` collects each handler's
    /// request and reply types).
    #[test]
    fn every_schema_reference_resolves() {
        fn refs(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        match (k.as_str(), x.as_str()) {
                            ("$ref", Some(r)) => out.push(r.to_string()),
                            _ => refs(x, out),
                        }
                    }
                }
                serde_json::Value::Array(xs) => xs.iter().for_each(|x| refs(x, out)),
                _ => {}
            }
        }
        let doc = serde_json::to_value(openapi()).expect("document as JSON");
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.iter().any(|r| r.ends_with("/RunsReply")), "{all:?}");
        for r in all {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("unexpected reference {r}"));
            assert!(
                doc["components"]["schemas"].get(name).is_some(),
                "{r} is not in the document"
            );
        }
    }

    /// Routes under `/api` come only from `routes!` (one registration for the router and the
    /// document): no `axum` `.route(…)` in the API modules outside their tests.
    #[test]
    fn routes_come_from_the_document() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api");
        let mut files = 0;
        for e in std::fs::read_dir(&dir).expect("src/api") {
            let path = e.expect("entry").path();
            if path.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for banned in [
                ".route(",
                ".route_service(",
                ".nest_service(",
                "axum::routing",
            ] {
                assert!(
                    !code.contains(banned),
                    "{}: `{banned}` routes outside the OpenAPI document (use `routes!`)",
                    path.display()
                );
            }
            files += 1;
        }
        assert!(files > 10, "{files} API modules");
    }
}
