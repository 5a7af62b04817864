//! `GET /api/understand/score`: the offline retrieval agent scored on the project's own
//! everyday-question set (`serenqa_pipeline::offline::understand_eval`), which the leaderboard
//! shows as the offline agent's T1 result. Computed once per graph on first request (one
//! pass over the set, off the async runtime) and kept.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serenqa_pipeline::offline::understand_eval as ev;
use serenqa_shared::api::{UnderstandRow, UnderstandScore};
use tokio::sync::OnceCell;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_score))
}

type Cell = Arc<OnceCell<Result<UnderstandScore, String>>>;

/// Scores per graph, keyed by the address of the server's graph (one graph per server in
/// practice; tests start several).
static SCORES: std::sync::Mutex<Vec<(usize, Cell)>> = std::sync::Mutex::new(Vec::new());

fn cell_for(key: usize) -> Cell {
    let mut v = SCORES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, c)) = v.iter().find(|(k, _)| *k == key) {
        return c.clone();
    }
    let c = Arc::new(OnceCell::new());
    v.push((key, c.clone()));
    c
}

/// The offline agent's answer F1 and exact-interpretation rate per pattern type on the
/// independent everyday-question set (not generated from the benchmark's templates).
#[utoipa::path(get, path = "/understand/score", tag = "pipeline", responses((status = 200, description = "Scores per pattern type", body = UnderstandScore), (status = 503, description = "The Ask pipeline is not available")))]
pub async fn get_score(State(s): State<AppState>) -> Result<Json<UnderstandScore>, HttpError> {
    let ctx = super::pipeline::context(&s)?;
    let cell = cell_for(Arc::as_ptr(&s.graph) as usize);
    let r = cell
        .get_or_init(|| async move {
            tokio::task::spawn_blocking(move || {
                let items = ev::load(ev::UNDERSTAND_SET, "eval/understand.jsonl")?;
                let (rows, _) = ev::evaluate(&ctx.g, ctx.lex.as_ref(), &items)?;
                Ok(UnderstandScore {
                    source: "backend/pipeline/eval/understand.jsonl".into(),
                    questions: items.len(),
                    rows: rows
                        .into_iter()
                        .map(|r| UnderstandRow {
                            group: r.pattern,
                            n: r.n,
                            f1: r.f1,
                            exact: r.exact,
                        })
                        .collect(),
                })
            })
            .await
            .unwrap_or_else(|e| Err(format!("scoring task failed: {e}")))
        })
        .await;
    r.clone().map(Json).map_err(|e| {
        HttpError::hidden(
            StatusCode::SERVICE_UNAVAILABLE,
            "score_unavailable",
            "the question-understanding score could not be computed",
            e,
        )
    })
}
