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
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serenqa_pipeline::ask::{ask, ask_with_progress, AskContext, AskError, AskRequest, AskResponse};
use serenqa_shared::api::{ApiError, AskEvent};
use serenqa_pipeline::run::{list_runs, question_trace, run_questions};

use super::error::HttpError;
use super::extract::{J, Q};
use super::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ask", post(post_ask))
        .route("/ask/stream", get(get_ask_stream))
        .route("/runs", get(get_runs))
        .route("/runs/{id}/questions", get(get_questions))
        .route("/runs/{id}/questions/{qid}", get(get_question))
}

fn context(s: &AppState) -> Result<Arc<AskContext>, HttpError> {
    let r = s.ask.get_or_init(|| {
        AskContext::new(s.graph.clone(), s.model.clone(), (*s.models).clone(), s.llm_cache.clone()).map(|c| Arc::new(c.with_edges(s.edges.clone())))
    });
    r.clone().map_err(|e| HttpError::internal(format!("pipeline unavailable: {e}")))
}

/// Run the SerenQA pipeline for one free-text question: retrieval (question → Cypher →
/// existing answers), exploration from them, hop summaries, and serendipitous candidates with
/// R, N, S, RNS and their paths; `stages` gives each stage's time. Body: `{question, model?, limit?}`.
#[utoipa::path(post, path = "/api/ask", tag = "pipeline", request_body(content = serde_json::Value, description = "`{question, model?, limit?}`"), responses((status = 200, description = "The Ask result"), (status = 400, description = "Empty question, unknown model, bad JSON"), (status = 503, description = "The edge store (serve --edges) cannot be read")))]
pub async fn post_ask(State(s): State<AppState>, J(req): J<AskRequest>) -> Result<Json<AskResponse>, HttpError> {
    check_ask(&s, &req)?;
    let ctx = Arc::new((*context(&s)?).clone().with_weights(crate::weights::of_state(&s)));
    // Offline agents are CPU-bound: run on a blocking thread, driving the async code there.
    let handle = tokio::runtime::Handle::current();
    let out = tokio::task::spawn_blocking(move || handle.block_on(ask(&ctx, &req)))
        .await
        .map_err(|e| HttpError::internal(format!("ask task failed: {e}")))?;
    out.map(Json).map_err(HttpError::from)
}

impl From<AskError> for HttpError {
    fn from(e: AskError) -> HttpError {
        match &e {
            AskError::BadQuestion(_) => HttpError::bad_request(e.code(), e.to_string()),
            AskError::Unavailable(_) => HttpError::unavailable(e.code(), e.to_string()),
        }
    }
}

fn check_ask(s: &AppState, req: &AskRequest) -> Result<(), HttpError> {
    if req.question.trim().is_empty() {
        return Err(HttpError::bad_request("empty_question", "the question is empty"));
    }
    if let Some(m) = &req.model {
        if m != "offline" && !s.models.models.iter().any(|x| &x.name == m) {
            return Err(HttpError::bad_request("unknown_model", format!("no model {m:?} is configured on the server")));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
pub(crate) struct AskQuery {
    question: String,
    model: Option<String>,
    limit: Option<usize>,
}

/// The same pipeline as `POST /api/ask`, as server-sent events: one `stage` event as each
/// stage completes (`{kind: "stage", name, ms}`), then `{kind: "result", …AskResponse}` or
/// `{kind: "error", code, message}`. The page shows progress from these.
#[utoipa::path(get, path = "/api/ask/stream", tag = "pipeline", params(("question" = String, Query, description = "The question"), ("model" = Option<String>, Query, description = "A configured model for every role (default: the server's roles)"), ("limit" = Option<usize>, Query, description = "Candidates at most")), responses((status = 200, description = "text/event-stream of AskEvent JSON"), (status = 400, description = "Empty question, unknown model")))]
pub async fn get_ask_stream(State(s): State<AppState>, Q(q): Q<AskQuery>) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>>, HttpError> {
    let req = AskRequest { question: q.question, model: q.model, limit: q.limit };
    check_ask(&s, &req)?;
    let ctx = Arc::new((*context(&s)?).clone().with_weights(crate::weights::of_state(&s)));
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<AskEvent>();
    let handle = tokio::runtime::Handle::current();
    // Offline agents are CPU-bound: a blocking thread drives the pipeline; a closed page just
    // makes the sends fail.
    tokio::task::spawn_blocking(move || {
        let stages = tx.clone();
        let r = handle.block_on(ask_with_progress(&ctx, &req, move |st| {
            let _ = stages.send(AskEvent::Stage(st.clone()));
        }));
        let _ = tx.send(match r {
            Ok(a) => AskEvent::Result(a),
            Err(e) => AskEvent::Error(ApiError { code: e.code().into(), message: e.to_string() }),
        });
    });
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let ev = rx.recv().await?;
        let event = Event::default().json_data(&ev).unwrap_or_else(|e| Event::default().data(format!("{{\"kind\":\"error\",\"code\":\"internal\",\"message\":\"{e}\"}}")));
        Some((Ok(event), rx))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
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
