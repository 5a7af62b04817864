//! The evaluation pipeline over HTTP:
//! - `POST /api/ask` `{question, model?, limit?}` → the Ask result (Cypher, existing answers,
//!   serendipitous candidates with R/N/S/RNS and paths, summaries, stage timings), the same
//!   code path as `serenqa ask`. Offline agents unless a model is configured (`serve
//!   --models FILE`); the browser never holds a model key.
//! - `GET /api/runs` → every run in the runs directory with its manifest and aggregate tables.
//! - `GET /api/runs/compare?a=ID&b=ID` → two runs compared question by question (Δ per metric
//!   with a paired-bootstrap 95% interval, the questions each run wins); `serenqa compare`.
//! - `GET /api/runs/{id}/questions` → the questions of a run (`qid`, `pattern`, `question`).
//! - `GET /api/runs/{id}/questions/{qid}` → one question's raw trace lines in a run.
//! - `GET /api/runs/{id}/trace/{qid}` → one question of a run, readable
//!   (`serenqa_shared::api::QuestionTrace`: names, predicted vs gold with hits, each metric,
//!   the beam's tree, summaries); the web app's `/runs/{id}/trace/{qid}` page.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serenqa_pipeline::ask::{
    ask, ask_with_progress, AskContext, AskError, AskRequest, AskResponse,
};
use serenqa_pipeline::runs_dir::{question_lines, run_questions, runs_reply};
use serenqa_shared::api::{ApiError, AskEvent};
use serenqa_shared::api::{QuestionLines, RunQuestion, RunsReply};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::{J, Q};
use super::{session, AppState};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(post_ask))
        .routes(routes!(get_ask_stream))
        .routes(routes!(get_runs))
        .routes(routes!(get_compare))
        .routes(routes!(get_questions))
        .routes(routes!(get_question))
        .routes(routes!(get_trace))
}

pub(crate) fn context(s: &AppState) -> Result<Arc<AskContext>, HttpError> {
    let r = s.ask.get_or_init(|| {
        AskContext::new(
            s.graph.clone(),
            s.model.clone(),
            (*s.models).clone(),
            s.llm_cache.clone(),
        )
        .map(|c| Arc::new(c.with_edges(s.edges.clone())))
    });
    r.clone().map_err(|e| {
        HttpError::hidden(
            StatusCode::SERVICE_UNAVAILABLE,
            "pipeline_unavailable",
            "the Ask pipeline is not available on this server",
            e,
        )
    })
}

/// Run the SerenQA pipeline for one free-text question: retrieval (question → Cypher →
/// existing answers), exploration from them, hop summaries, and serendipitous candidates with
/// R, N, S, RNS and their paths; `stages` gives each stage's time. Body: `{question, model?, limit?}`.
/// Bounded by the server's Ask deadline (`serve --ask-deadline`) and cancelled when the client
/// goes away; with models configured, only signed-in users may ask (unless `--anonymous-llm`).
#[utoipa::path(post, path = "/ask", tag = "pipeline", request_body(content = serde_json::Value, description = "`{question, model?, limit?}`"), responses((status = 200, description = "The Ask result"), (status = 400, description = "Empty question, unknown model, bad JSON"), (status = 401, description = "A model-backed Ask without a signed-in user"), (status = 429, description = "Rate limited or busy (Retry-After)"), (status = 503, description = "The edge store (serve --edges) cannot be read"), (status = 504, description = "The Ask deadline passed")))]
pub async fn post_ask(
    State(s): State<AppState>,
    headers: HeaderMap,
    J(req): J<AskRequest>,
) -> Result<Json<AskResponse>, HttpError> {
    check_ask(&s, &req)?;
    require_user_for_models(&s, &headers, &req).await?;
    let ctx = Arc::new(
        (*context(&s)?)
            .clone()
            .with_weights(crate::weights::of_state(&s)),
    );
    let deadline = s.admission.cfg.ask_deadline;
    // Dropped with this handler's future (the client went away): the Ask stops at its next
    // await point (between stages, between and during model calls).
    let (cancel, cancelled) = CancelOnDrop::new();
    // Offline agents are CPU-bound: run on a blocking thread, driving the async code there.
    let handle = tokio::runtime::Handle::current();
    let st = s.clone();
    let out = tokio::task::spawn_blocking(move || {
        handle
            .block_on(bounded(deadline, cancelled, ask(&ctx, &req)))
            .map(|a| super::discover::for_ask(&st, a))
    })
    .await
    .map_err(|e| HttpError::internal(format!("ask task failed: {e}")))?;
    drop(cancel);
    out.map(|r| Json(public(r))).map_err(HttpError::from)
}

/// Why an Ask ended without a result.
enum Stop {
    Ask(AskError),
    Deadline(Duration),
    Cancelled,
}

impl From<Stop> for HttpError {
    fn from(s: Stop) -> HttpError {
        match s {
            Stop::Ask(e) => e.into(),
            Stop::Deadline(d) => HttpError {
                status: StatusCode::GATEWAY_TIMEOUT,
                code: "ask_deadline",
                message: format!("the question was not answered within the server's limit of {} s; try a narrower question", d.as_secs_f64()),
            },
            Stop::Cancelled => HttpError { status: StatusCode::SERVICE_UNAVAILABLE, code: "cancelled", message: "the request was cancelled".into() },
        }
    }
}

/// Cancels the Ask it was made for when dropped.
struct CancelOnDrop(#[allow(dead_code)] tokio::sync::oneshot::Sender<()>);

impl CancelOnDrop {
    fn new() -> (CancelOnDrop, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (CancelOnDrop(tx), rx)
    }
}

/// `f` unless the deadline passes or the guard of `cancelled` is dropped first; either drops
/// `f` (its pending model call included).
async fn bounded<T>(
    deadline: Duration,
    cancelled: tokio::sync::oneshot::Receiver<()>,
    f: impl std::future::Future<Output = Result<T, AskError>>,
) -> Result<T, Stop> {
    tokio::select! {
        r = tokio::time::timeout(deadline, f) => match r {
            Ok(r) => r.map_err(Stop::Ask),
            Err(_) => Err(Stop::Deadline(deadline)),
        },
        _ = cancelled => Err(Stop::Cancelled),
    }
}

/// The result as anonymous clients may see it: model-call failures reduced to one generic
/// line each (endpoint URLs and provider replies go to the server log).
fn public(mut r: AskResponse) -> AskResponse {
    for d in serenqa_pipeline::ask::redact(&mut r) {
        eprintln!("ask: {d}");
    }
    r
}

impl From<AskError> for HttpError {
    fn from(e: AskError) -> HttpError {
        match &e {
            AskError::BadQuestion(_) => HttpError::bad_request(e.code(), e.to_string()),
            AskError::Unavailable(_) => HttpError::hidden(
                StatusCode::SERVICE_UNAVAILABLE,
                e.code(),
                "the edge store cannot be read right now; try again later",
                &e,
            ),
        }
    }
}

fn check_ask(s: &AppState, req: &AskRequest) -> Result<(), HttpError> {
    if req.question.trim().is_empty() {
        return Err(HttpError::bad_request(
            "empty_question",
            "the question is empty",
        ));
    }
    if let Some(m) = &req.model {
        if m != "offline" && !s.models.models.iter().any(|x| &x.name == m) {
            return Err(HttpError::bad_request(
                "unknown_model",
                format!("no model {m:?} is configured on the server"),
            ));
        }
    }
    Ok(())
}

/// Whether this request would call a language model (any role played by a configured model).
fn uses_models(s: &AppState, req: &AskRequest) -> bool {
    let models = match &req.model {
        Some(m) => s
            .models
            .all_roles(m)
            .unwrap_or_else(|_| (*s.models).clone()),
        None => (*s.models).clone(),
    };
    serenqa_pipeline::llm::ROLES
        .iter()
        .any(|r| models.model_for(r).is_some())
}

/// A model-backed Ask needs a signed-in user (an annotation account), unless the server runs
/// with `--anonymous-llm`: every anonymous request would otherwise spend the operator's model
/// budget.
async fn require_user_for_models(
    s: &AppState,
    headers: &HeaderMap,
    req: &AskRequest,
) -> Result<(), HttpError> {
    if s.admission.cfg.anonymous_llm || !uses_models(s, req) {
        return Ok(());
    }
    let unauth = || {
        HttpError {
        status: StatusCode::UNAUTHORIZED,
        code: "not_signed_in",
        message: "this server answers with a language model: sign in first (or ask with model \"offline\")".into(),
    }
    };
    let svc = s.annotation.clone().ok_or_else(unauth)?;
    let token = session::cookie(headers, session::SESSION_COOKIE).ok_or_else(unauth)?;
    let hash = serenqa_store::auth::token_hash(&token);
    let found = session::db(&svc, move |r| r.session(&hash, serenqa_store::now())).await?;
    found.map(|_| ()).ok_or_else(unauth)
}

#[derive(Deserialize)]
pub(crate) struct AskQuery {
    question: String,
    model: Option<String>,
    limit: Option<usize>,
}

/// The same pipeline as `POST /api/ask`, as server-sent events: one `stage` event as each
/// stage completes (`{kind: "stage", name, ms}`), then `{kind: "result", …AskResponse}` or
/// `{kind: "error", code, message}`. The page shows progress from these. A request whose
/// `Origin` is another site is refused (403): any page can open an EventSource.
#[utoipa::path(get, path = "/ask/stream", tag = "pipeline", params(("question" = String, Query, description = "The question"), ("model" = Option<String>, Query, description = "A configured model for every role (default: the server's roles)"), ("limit" = Option<usize>, Query, description = "Candidates at most")), responses((status = 200, description = "text/event-stream of AskEvent JSON"), (status = 400, description = "Empty question, unknown model"), (status = 401, description = "A model-backed Ask without a signed-in user"), (status = 403, description = "Cross-origin request"), (status = 429, description = "Rate limited or busy (Retry-After)")))]
pub async fn get_ask_stream(
    State(s): State<AppState>,
    Peer(peer): Peer,
    headers: HeaderMap,
    Q(q): Q<AskQuery>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>>, HttpError>
{
    same_origin(&headers, peer, &s.admission.cfg.trusted_proxies)?;
    let req = AskRequest {
        question: q.question,
        model: q.model,
        limit: q.limit,
    };
    check_ask(&s, &req)?;
    require_user_for_models(&s, &headers, &req).await?;
    let ctx = Arc::new(
        (*context(&s)?)
            .clone()
            .with_weights(crate::weights::of_state(&s)),
    );
    let deadline = s.admission.cfg.ask_deadline;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<AskEvent>();
    // The guard lives in the event stream: a closed page drops the stream, which cancels the
    // Ask at its next await point.
    let (cancel, cancelled) = CancelOnDrop::new();
    let handle = tokio::runtime::Handle::current();
    let st = s.clone();
    tokio::task::spawn_blocking(move || {
        let stages = tx.clone();
        let r = handle.block_on(bounded(
            deadline,
            cancelled,
            ask_with_progress(&ctx, &req, move |st| {
                let _ = stages.send(AskEvent::Stage(st.clone()));
            }),
        ));
        let _ = tx.send(match r {
            Ok(a) => AskEvent::Result(public(super::discover::for_ask(&st, a))),
            Err(e) => {
                let e = HttpError::from(e);
                AskEvent::Error(ApiError {
                    code: e.code.into(),
                    message: e.message,
                })
            }
        });
    });
    let events = futures_util::stream::unfold((rx, cancel), |(mut rx, cancel)| async move {
        let ev = rx.recv().await?;
        let event = Event::default().json_data(&ev).unwrap_or_else(|_| Event::default().data("{\"kind\":\"error\",\"code\":\"internal\",\"message\":\"the event could not be encoded\"}"));
        Some((Ok(event), (rx, cancel)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(5))))
}

/// The peer address of the connection, when the server knows it.
pub struct Peer(pub Option<std::net::IpAddr>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|c| c.0.ip()),
        ))
    }
}

/// 403 `cross_origin` when a browser says the request comes from another site: `Origin`
/// naming another host than `Host` (or, from a trusted proxy, `X-Forwarded-Host`), an opaque
/// `Origin: null`, or `Sec-Fetch-Site: cross-site`. No `Origin` at all (same-origin GETs,
/// non-browser clients) passes.
pub fn same_origin(
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
    trusted: &[super::admission::Cidr],
) -> Result<(), HttpError> {
    let refuse = |m: &str| HttpError {
        status: StatusCode::FORBIDDEN,
        code: "cross_origin",
        message: m.to_string(),
    };
    let h = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if h("sec-fetch-site") == Some("cross-site") {
        return Err(refuse("cross-site requests are refused"));
    }
    let Some(origin) = h("origin") else {
        return Ok(());
    };
    if origin == "null" {
        return Err(refuse("requests from an opaque origin are refused"));
    }
    let authority = origin.split_once("://").map(|(_, a)| a).unwrap_or(origin);
    let from_proxy = peer.is_some_and(|p| trusted.iter().any(|c| c.contains(p)));
    let hosts = [
        h("host"),
        if from_proxy {
            h("x-forwarded-host")
        } else {
            None
        },
    ];
    if hosts
        .iter()
        .flatten()
        .any(|host| host.eq_ignore_ascii_case(authority))
    {
        Ok(())
    } else {
        Err(refuse("the request's Origin is not this server"))
    }
}

/// Every evaluation run in the runs directory with its manifest, its settings (what the
/// leaderboard labels it with) and aggregate tables.
#[utoipa::path(get, path = "/runs", tag = "pipeline", responses((status = 200, description = "`{runs_dir, runs: [{id, manifest, settings, aggregate}]}`", body = RunsReply)))]
pub async fn get_runs(State(s): State<AppState>) -> Result<Response, HttpError> {
    let dir = s.runs_dir.clone();
    // Reads every run's manifest and aggregates: off the async threads.
    let reply = tokio::task::spawn_blocking(move || runs_reply(&dir))
        .await
        .map_err(|e| HttpError::internal(format!("runs task failed: {e}")))?;
    super::reply::json(
        reply,
        "the runs directory holds too many runs to list at once",
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct CompareQuery {
    a: String,
    b: String,
}

/// Two runs compared question by question: for every metric of every cell both have, the
/// questions both answered, the means, Δ = B − A with a paired-bootstrap 95% interval, and
/// the questions where A wins and B loses (and the reverse).
#[utoipa::path(get, path = "/runs/compare", tag = "pipeline", params(("a" = String, Query, description = "Run id A"), ("b" = String, Query, description = "Run id B")), responses((status = 200, description = "The comparison", body = serenqa_shared::results::Comparison), (status = 400, description = "Missing run id"), (status = 404, description = "No such run"), (status = 429, description = "Busy (Retry-After)")))]
pub async fn get_compare(
    State(s): State<AppState>,
    Q(q): Q<CompareQuery>,
) -> Result<Response, HttpError> {
    if q.a.len() > 200 || q.b.len() > 200 {
        return Err(HttpError::bad_request(
            "bad_run",
            "a run id is at most 200 characters",
        ));
    }
    let dir = s.runs_dir.clone();
    // Reads two runs' traces and resamples them: off the async threads.
    let cmp = tokio::task::spawn_blocking(move || {
        serenqa_pipeline::compare::compare_runs(&dir, &q.a, &q.b)
    })
    .await
    .map_err(|e| HttpError::internal(format!("compare task failed: {e}")))?
    .map_err(|e| HttpError::not_found("no_run", e))?;
    super::reply::json(cmp, "this comparison is too large to send").await
}

/// The questions of one run: `[{qid, pattern, question}]`.
#[utoipa::path(get, path = "/runs/{id}/questions", tag = "pipeline", params(("id" = String, Path, description = "Run id")), responses((status = 200, description = "Questions of the run", body = Vec<RunQuestion>), (status = 404, description = "No such run", body = ApiError)))]
pub async fn get_questions(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let qs = run_questions(&s.runs_dir, &id).map_err(|e| HttpError::not_found("no_run", e))?;
    super::reply::json(qs, "this run has too many questions to list at once").await
}

/// One question's traces in a run: `{run_id, qid, t1: [...], t3: [...]}` (prompts, replies,
/// Cypher, beam paths, summaries, scores).
#[utoipa::path(get, path = "/runs/{id}/questions/{qid}", tag = "pipeline", params(("id" = String, Path, description = "Run id"), ("qid" = u32, Path, description = "Question id")), responses((status = 200, description = "The traces", body = QuestionLines), (status = 400, description = "Bad question id", body = ApiError), (status = 404, description = "No such run or question", body = ApiError)))]
pub async fn get_question(
    State(s): State<AppState>,
    Path((id, qid)): Path<(String, String)>,
) -> Result<Response, HttpError> {
    let qid: u32 = qid.parse().map_err(|_| {
        HttpError::bad_request("bad_qid", format!("question id {qid:?} is not a number"))
    })?;
    let dir: PathBuf = s.runs_dir.clone();
    let lines = question_lines(&dir, &id, qid).map_err(|e| HttpError::not_found("no_trace", e))?;
    super::reply::json(lines, "read this question's trace files on the server").await
}

/// One question of a run as a reviewer reads it: the question, the Cypher, predicted vs gold
/// answers with the hits marked, every metric of the question with its scale, and per
/// partition and summary mode the beam's paths as a tree, the levels and the summaries. Ids
/// are named from the served graph (`other_graph` when some are not in it).
#[utoipa::path(get, path = "/runs/{id}/trace/{qid}", tag = "pipeline", params(("id" = String, Path, description = "Run id"), ("qid" = u32, Path, description = "Question id")), responses((status = 200, description = "The question's trace", body = serenqa_shared::api::QuestionTrace), (status = 400, description = "The question id is not a number", body = ApiError), (status = 404, description = "No such run, or no such question in it", body = ApiError)))]
pub async fn get_trace(
    State(s): State<AppState>,
    Path((id, qid)): Path<(String, String)>,
) -> Result<Response, HttpError> {
    use serenqa_pipeline::trace::TraceError;
    if id.len() > 200 {
        return Err(HttpError::bad_request(
            "bad_run",
            "a run id is at most 200 characters",
        ));
    }
    let qid: u32 = qid.parse().map_err(|_| {
        HttpError::bad_request("bad_qid", format!("question id {qid:?} is not a number"))
    })?;
    let (g, dir) = (s.graph.clone(), s.runs_dir.clone());
    // Reads the run's trace files: off the async threads.
    let trace = tokio::task::spawn_blocking(move || {
        serenqa_pipeline::runs_dir::question_trace(&g, &dir, &id, qid)
    })
    .await
    .map_err(|e| HttpError::internal(format!("trace task failed: {e}")))?
    .map_err(|e| match e {
        TraceError::NoRun(m) => HttpError::not_found("no_run", m),
        TraceError::NoQuestion(m) => HttpError::not_found("no_question", m),
        TraceError::Unreadable(m) => HttpError::internal(m),
    })?;
    super::reply::json(trace, "read this question's trace files on the server").await
}
