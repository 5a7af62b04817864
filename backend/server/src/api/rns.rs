//! Serendipity: `GET /api/slice?ids=…` (a slice for scoring in the browser), `POST /api/rns`
//! (score a partition server-side), `POST /api/partition` (RNS-guided partition).

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serenqa_model::slice;
use serenqa_model::{Model, ModelError};
use serenqa_shared::api::{
    PartitionRequest, PartitionResponse, RnsRequest, RnsResponse, SliceResponse,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::Q;
use super::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_slice))
        .routes(routes!(post_rns))
        .routes(routes!(post_partition))
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
        HttpError {
            status,
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// The loaded serendipity model, or the one "no model" reply (503 `no_model`, from
/// [`ModelError::NoModel`]) every model-backed endpoint gives.
pub(crate) fn require_model(s: &AppState) -> Result<Arc<Model>, HttpError> {
    s.model.clone().ok_or_else(|| ModelError::NoModel.into())
}

/// Runs model work off the async workers (a large block takes milliseconds of CPU).
/// The reply goes out under the reply budget (`api::reply`).
async fn blocking<T: serde::Serialize + Send + 'static>(
    f: impl FnOnce() -> Result<T, ModelError> + Send + 'static,
) -> Result<axum::response::Response, HttpError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => super::reply::json(r?, "send fewer entities").await,
        Err(e) => Err(HttpError::internal(e.to_string())),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct SliceQuery {
    /// Comma-separated ids.
    ids: Option<String>,
}

/// The closed-world slice of a set of entities (embeddings, marginals, P3 block), for
/// scoring RNS in the browser.
#[utoipa::path(get, path = "/slice", tag = "serendipity", params(SliceQuery),
    responses((status = 200, body = SliceResponse), (status = 400, body = serenqa_shared::api::ApiError), (status = 404, body = serenqa_shared::api::ApiError), (status = 503, body = serenqa_shared::api::ApiError)))]
pub async fn get_slice(
    State(s): State<AppState>,
    Q(q): Q<SliceQuery>,
) -> Result<axum::response::Response, HttpError> {
    let ids: Vec<String> = q
        .ids
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect();
    let m = require_model(&s)?;
    blocking(move || slice::slice_for(&s.graph, &m, &s.blocks, &ids)).await
}

/// A malformed body is a JSON 400 like every other error, not axum's plain-text rejection.
fn body<T>(b: Result<Json<T>, JsonRejection>) -> Result<T, HttpError> {
    b.map(|Json(v)| v)
        .map_err(|e| HttpError::bad_request("bad_json", e.body_text()))
}

/// R, N, S and RNS of a partition (existing, serendipity).
#[utoipa::path(post, path = "/rns", tag = "serendipity", request_body = RnsRequest,
    responses((status = 200, body = RnsResponse), (status = 400, body = serenqa_shared::api::ApiError), (status = 404, body = serenqa_shared::api::ApiError), (status = 503, body = serenqa_shared::api::ApiError)))]
pub async fn post_rns(
    State(s): State<AppState>,
    req: Result<Json<RnsRequest>, JsonRejection>,
) -> Result<axum::response::Response, HttpError> {
    let req = body(req)?;
    let m = require_model(&s)?;
    blocking(move || {
        let w = crate::weights::for_request(req.weights, &crate::weights::of_state(&s));
        slice::score(&s.graph, &m, &s.blocks, &req.existing, &req.serendipity, &w)
    })
    .await
}

/// RNS-guided partition of a candidate set (greedy swap, Algorithm 1).
#[utoipa::path(post, path = "/partition", tag = "serendipity", request_body = PartitionRequest,
    responses((status = 200, body = PartitionResponse), (status = 400, body = serenqa_shared::api::ApiError), (status = 503, body = serenqa_shared::api::ApiError)))]
pub async fn post_partition(
    State(s): State<AppState>,
    req: Result<Json<PartitionRequest>, JsonRejection>,
) -> Result<axum::response::Response, HttpError> {
    let req = body(req)?;
    let m = require_model(&s)?;
    blocking(move || {
        let w = crate::weights::for_request(req.weights, &crate::weights::of_state(&s));
        slice::partition(&s.graph, &m, &s.blocks, &req.candidates, &w)
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use serenqa_graph::synth::{generate, SynthSpec};
    use serenqa_model::embeddings::FastRp;
    use serenqa_model::{Model, ModelConfig};
    use serenqa_shared::api::{ApiError, RnsResponse, SliceResponse};
    use serenqa_shared::rns::{Scorer, Weights};
    use tower::ServiceExt;

    use crate::api::{router, AppState};

    fn app(with_model: bool) -> (axum::Router, Vec<String>) {
        let g = generate(&SynthSpec {
            nodes: 300,
            edges: 2_000,
            seed: 3,
            progress: false,
        });
        let keys: Vec<String> = (0..g.node_count() as u32)
            .filter(|&n| g.degree(n) > 0)
            .take(8)
            .map(|n| g.key(n))
            .collect();
        let model = with_model.then(|| {
            Model::compute(
                &g,
                &ModelConfig {
                    embedding: FastRp {
                        dim: 16,
                        ..FastRp::default()
                    },
                    ..ModelConfig::default()
                },
                false,
            )
        });
        let state = AppState::new(Arc::new(g)).with_model(model);
        (router(state, std::path::Path::new("/nonexistent")), keys)
    }

    async fn call(app: &axum::Router, req: Request<Body>) -> (StatusCode, Vec<u8>) {
        let resp = app.clone().oneshot(req).await.expect("router answers");
        let status = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes()
            .to_vec();
        (status, bytes)
    }

    fn get(uri: &str) -> Request<Body> {
        // Synthetic type names contain spaces.
        Request::get(uri.replace(' ', "%20"))
            .body(Body::empty())
            .expect("request")
    }

    fn post(uri: &str, json: String) -> Request<Body> {
        Request::post(uri)
            .header("content-type", "application/json")
            .body(Body::from(json))
            .expect("request")
    }

    fn code(bytes: &[u8]) -> String {
        serde_json::from_slice::<ApiError>(bytes)
            .expect("JSON error body")
            .code
    }

    /// The slice sent to the browser scores exactly like the server does.
    #[tokio::test]
    async fn slice_scored_in_client_equals_server_score() {
        let (app, k) = app(true);
        let (st, body) = call(&app, get(&format!("/api/slice?ids={}", k[..5].join(",")))).await;
        assert_eq!(st, StatusCode::OK);
        let slice: SliceResponse = serde_json::from_slice(&body).expect("slice JSON");
        assert_eq!(slice.slice.len(), 5);
        let w = Weights::new(0.2, 0.3, 0.5).expect("weights");
        let client = Scorer::new(&slice.slice)
            .expect("valid slice")
            .score(&[0, 1], &[2, 3, 4], &w)
            .expect("score");
        let req = serde_json::json!({"existing": &k[..2], "serendipity": &k[2..5], "weights": w})
            .to_string();
        let (st, body) = call(&app, post("/api/rns", req)).await;
        assert_eq!(st, StatusCode::OK);
        let server: RnsResponse = serde_json::from_slice(&body).expect("rns JSON");
        assert_eq!(server.terms, client);
        assert_eq!(server.weights, w);
    }

    #[tokio::test]
    async fn clear_json_errors() {
        let (app, k) = app(true);
        let cases: Vec<(Request<Body>, StatusCode, &str)> = vec![
            (get("/api/slice?ids=Thing::nope"), StatusCode::NOT_FOUND, "unknown_node"),
            (get("/api/slice?ids="), StatusCode::BAD_REQUEST, "empty_set"),
            (get(&format!("/api/slice?ids={},{}", k[0], k[0])), StatusCode::BAD_REQUEST, "overlapping_sets"),
            (post("/api/rns", serde_json::json!({"existing": [&k[0]], "serendipity": [&k[0]]}).to_string()), StatusCode::BAD_REQUEST, "overlapping_sets"),
            (post("/api/rns", serde_json::json!({"existing": [], "serendipity": [&k[0]]}).to_string()), StatusCode::BAD_REQUEST, "empty_set"),
            (post("/api/rns", serde_json::json!({"existing": [&k[0]], "serendipity": []}).to_string()), StatusCode::BAD_REQUEST, "empty_set"),
            (post("/api/rns", r#"{"existing": ["a"]}"#.to_string()), StatusCode::BAD_REQUEST, "bad_json"),
            (
                post("/api/rns", serde_json::json!({"existing": [&k[0]], "serendipity": [&k[1]], "weights": {"alpha": 1, "beta": 1}}).to_string()),
                StatusCode::BAD_REQUEST,
                "bad_json",
            ),
            (post("/api/partition", serde_json::json!({"candidates": [&k[0]]}).to_string()), StatusCode::BAD_REQUEST, "bad_request"),
            (
                post("/api/partition", serde_json::json!({"candidates": (0..600).map(|i| format!("x{i}")).collect::<Vec<_>>()}).to_string()),
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
            ),
        ];
        for (req, status, want) in cases {
            let uri = req.uri().to_string();
            let (st, body) = call(&app, req).await;
            assert_eq!(
                (st, code(&body).as_str()),
                (status, want),
                "{uri}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        let (st, _) = call(
            &app,
            post(
                "/api/partition",
                serde_json::json!({"candidates": &k}).to_string(),
            ),
        )
        .await;
        assert_eq!(st, StatusCode::OK);
    }

    #[tokio::test]
    async fn no_model_is_503() {
        let (app, k) = app(false);
        let (st, body) = call(&app, get(&format!("/api/slice?ids={}", k[0]))).await;
        assert_eq!(
            (st, code(&body).as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, "no_model")
        );
    }
}
