//! Serendipity: `GET /api/slice?ids=…` (a slice for scoring in the browser), `POST /api/rns`
//! (score a partition server-side), `POST /api/partition` (RNS-guided partition).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serenqa_model::slice;
use serenqa_model::{Model, ModelError};
use serenqa_shared::api::{PartitionRequest, PartitionResponse, RnsRequest, RnsResponse, SliceResponse};

use super::error::HttpError;
use super::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/slice", get(get_slice))
        .route("/rns", post(post_rns))
        .route("/partition", post(post_partition))
}

impl From<ModelError> for HttpError {
    fn from(e: ModelError) -> Self {
        let status = match &e {
            ModelError::UnknownNode(_) => StatusCode::NOT_FOUND,
            ModelError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ModelError::NoModel => StatusCode::SERVICE_UNAVAILABLE,
            e if e.is_client_error() => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        HttpError { status, code: e.code(), message: e.to_string() }
    }
}

fn model(s: &AppState) -> Result<Arc<Model>, HttpError> {
    s.model.clone().ok_or_else(|| ModelError::NoModel.into())
}

/// Runs model work off the async workers (a large block takes milliseconds of CPU).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, ModelError> + Send + 'static) -> Result<Json<T>, HttpError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => Ok(Json(r?)),
        Err(e) => Err(HttpError::internal(e.to_string())),
    }
}

#[derive(Deserialize)]
struct SliceQuery {
    /// Comma-separated ids.
    ids: Option<String>,
}

async fn get_slice(State(s): State<AppState>, Query(q): Query<SliceQuery>) -> Result<Json<SliceResponse>, HttpError> {
    let ids: Vec<String> = q.ids.unwrap_or_default().split(',').map(str::trim).filter(|x| !x.is_empty()).map(String::from).collect();
    let m = model(&s)?;
    blocking(move || slice::slice_for(&s.graph, &m, &s.blocks, &ids)).await
}

async fn post_rns(State(s): State<AppState>, Json(req): Json<RnsRequest>) -> Result<Json<RnsResponse>, HttpError> {
    let m = model(&s)?;
    let w = req.weights.unwrap_or_default();
    blocking(move || slice::score(&s.graph, &m, &s.blocks, &req.existing, &req.serendipity, w)).await
}

async fn post_partition(State(s): State<AppState>, Json(req): Json<PartitionRequest>) -> Result<Json<PartitionResponse>, HttpError> {
    let m = model(&s)?;
    let w = req.weights.unwrap_or_default();
    blocking(move || slice::partition(&s.graph, &m, &s.blocks, &req.candidates, w)).await
}
