//! The evaluation pipeline over HTTP:
//! - `POST /api/ask` `{question, model?, limit?}` → the Ask result (Cypher, existing answers,
//!   serendipitous candidates with R/N/S/RNS and paths, summaries, stage timings), the same
//!   code path as `serenqa ask`. Offline agents unless a model is configured (`serve
//!   --models FILE`); the browser never holds a model key.
//! - `GET /api/runs` → every run in the runs directory with its manifest and aggregate tables.
//! - `GET /api/runs/{id}/questions` → the questions of a run (`qid`, `pattern`, `question`).
//! - `GET /api/runs/{id}/questions/{qid}` → one question's traces in a run.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serenqa_pipeline::ask::{ask, AskContext, AskRequest, AskResponse};
use serenqa_pipeline::run::{list_runs, question_trace, run_questions};

use super::error::HttpError;
use super::extract::J;
use super::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ask", post(post_ask))
        .route("/runs", get(get_runs))
        .route("/runs/{id}/questions", get(get_questions))
        .route("/runs/{id}/questions/{qid}", get(get_question))
}

fn context(s: &AppState) -> Result<Arc<AskContext>, HttpError> {
    let r = s.ask.get_or_init(|| {
        AskContext::new(s.graph.clone(), s.model.clone(), (*s.models).clone(), s.llm_cache.clone()).map(Arc::new)
    });
    r.clone().map_err(|e| HttpError::internal(format!("pipeline unavailable: {e}")))
}

/// Run the SerenQA pipeline for one free-text question: retrieval (question → Cypher →
/// existing answers), exploration from them, hop summaries, and serendipitous candidates with
/// R, N, S, RNS and their paths; `stages` gives each stage's time. Body: `{question, model?, limit?}`.
#[utoipa::path(post, path = "/api/ask", tag = "pipeline", request_body(content = serde_json::Value, description = "`{question, model?, limit?}`"), responses((status = 200, description = "The Ask result"), (status = 400, description = "Empty question, unknown model, bad JSON")))]
pub async fn post_ask(State(s): State<AppState>, J(req): J<AskRequest>) -> Result<Json<AskResponse>, HttpError> {
    if req.question.trim().is_empty() {
        return Err(HttpError::bad_request("empty_question", "the question is empty"));
    }
    if let Some(m) = &req.model {
        if m != "offline" && !s.models.models.iter().any(|x| &x.name == m) {
            return Err(HttpError::bad_request("unknown_model", format!("no model {m:?} is configured on the server")));
        }
    }
    let ctx = context(&s)?;
    // Offline agents are CPU-bound: run on a blocking thread, driving the async code there.
    let handle = tokio::runtime::Handle::current();
    let out = tokio::task::spawn_blocking(move || handle.block_on(ask(&ctx, &req)))
        .await
        .map_err(|e| HttpError::internal(format!("ask task failed: {e}")))?;
    out.map(Json).map_err(|e| HttpError::bad_request("bad_question", e))
}

/// Every evaluation run in the runs directory with its manifest and aggregate tables.
#[utoipa::path(get, path = "/api/runs", tag = "pipeline", responses((status = 200, description = "`{runs_dir, runs: [{id, manifest, aggregate}]}`")))]
pub async fn get_runs(State(s): State<AppState>) -> Json<serde_json::Value> {
    let runs: Vec<serde_json::Value> = list_runs(&s.runs_dir)
        .into_iter()
        .map(|(id, m, a)| serde_json::json!({"id": id, "manifest": m, "aggregate": a}))
        .collect();
    Json(serde_json::json!({"runs_dir": s.runs_dir.display().to_string(), "runs": runs}))
}

/// The questions of one run: `[{qid, pattern, question}]`.
#[utoipa::path(get, path = "/api/runs/{id}/questions", tag = "pipeline", params(("id" = String, Path, description = "Run id")), responses((status = 200, description = "Questions of the run"), (status = 404, description = "No such run")))]
pub async fn get_questions(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Vec<serde_json::Value>>, HttpError> {
    run_questions(&s.runs_dir, &id).map(Json).map_err(|e| HttpError::not_found("no_run", e))
}

/// One question's traces in a run: `{run_id, qid, t1: [...], t3: [...]}` (prompts, replies,
/// Cypher, beam paths, summaries, scores).
#[utoipa::path(get, path = "/api/runs/{id}/questions/{qid}", tag = "pipeline", params(("id" = String, Path, description = "Run id"), ("qid" = u32, Path, description = "Question id")), responses((status = 200, description = "The traces"), (status = 400, description = "Bad question id"), (status = 404, description = "No such run or question")))]
pub async fn get_question(State(s): State<AppState>, Path((id, qid)): Path<(String, String)>) -> Result<Json<serde_json::Value>, HttpError> {
    let qid: u32 = qid.parse().map_err(|_| HttpError::bad_request("bad_qid", format!("question id {qid:?} is not a number")))?;
    let dir: PathBuf = s.runs_dir.clone();
    question_trace(&dir, &id, qid).map(Json).map_err(|e| HttpError::not_found("no_trace", e))
}
