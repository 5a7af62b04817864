//! The HTTP API and static file serving. One module per area; each exposes `routes()`.
//!
//! Every error is JSON `{code, message}` with a 4xx/5xx status. Request bodies are limited in
//! size. Responses carry the cross-origin isolation headers the WASM threads need.

pub mod annotate;
pub mod cypher;
pub mod discover;
pub mod docs;
pub mod error;
pub mod extract;
pub mod graph;
pub mod rns;
pub mod session;

use std::path::Path;
use std::sync::Arc;

use axum::http::{header, HeaderValue};
use axum::Router;
use serenqa_graph::Graph;
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

/// What every handler can read. Immutable after start-up; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub graph: Arc<Graph>,
    /// The precomputed serendipity model; `None` makes the RNS endpoints answer 503.
    pub model: Option<Arc<Model>>,
    /// Exact P3 blocks of recently requested sets.
    pub blocks: Arc<BlockCache>,
    /// The annotation store and accounts; `None` makes those endpoints answer 503.
    pub annotation: Option<Arc<session::Annotation>>,
}

impl AppState {
    pub fn new(graph: Arc<Graph>) -> Self {
        AppState { graph, model: None, blocks: Arc::new(BlockCache::default()), annotation: None }
    }
    pub fn with_annotation(mut self, svc: Option<session::Annotation>) -> Self {
        self.annotation = svc.map(Arc::new);
        self
    }
    pub fn with_model(mut self, model: Option<Model>) -> Self {
        self.model = model.map(Arc::new);
        self
    }
}

/// Largest request body accepted anywhere (bigger ones get 413).
pub const MAX_BODY_BYTES: usize = 1 << 20;

pub fn router(state: AppState, dist: &Path) -> Router {
    let api = Router::new()
        .merge(graph::routes())
        .merge(rns::routes())
        .merge(discover::routes())
        .merge(cypher::routes())
        .merge(docs::routes())
        .merge(annotate::routes())
        .fallback(error::not_found)
        .with_state(state);
    let static_files = ServeDir::new(dist).fallback(ServeFile::new(dist.join("index.html")));
    Router::new()
        .nest("/api", api)
        .fallback_service(static_files)
        .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY_BYTES))
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
