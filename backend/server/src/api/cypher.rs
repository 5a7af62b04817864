//! `POST /api/cypher` `{query, params?}` → `{columns, rows, truncated}`: read-only Cypher on
//! the served graph. Limits: query text, time and row budgets, rows returned.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serenqa_cypher::{Budget, ErrorKind, Options, Value};

use super::error::HttpError;
use super::AppState;

/// Longest query text accepted.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// Most rows returned; longer results are cut and flagged `truncated`.
pub const MAX_RESULT_ROWS: usize = 10_000;
/// Per-query budget: wall time and rows produced inside the executor.
pub const BUDGET: Budget = Budget { time: Duration::from_secs(10), rows: 2_000_000 };

pub fn routes() -> Router<AppState> {
    Router::new().route("/cypher", post(run_query))
}

#[derive(Deserialize)]
struct CypherRequest {
    query: String,
    /// Parameters: strings, numbers, booleans, null, lists and maps of those.
    #[serde(default)]
    params: HashMap<String, serde_json::Value>,
}

fn json_to_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => n.as_i64().map(Value::Int).unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::String(s) => Value::Str(s.clone()),
        serde_json::Value::Array(xs) => Value::List(xs.iter().map(json_to_value).collect()),
        serde_json::Value::Object(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), json_to_value(v))).collect()),
    }
}

async fn run_query(State(s): State<AppState>, Json(req): Json<CypherRequest>) -> Result<Json<serde_json::Value>, HttpError> {
    if req.query.trim().is_empty() {
        return Err(HttpError::bad_request("empty_query", "the query is empty"));
    }
    if req.query.len() > MAX_QUERY_BYTES {
        return Err(HttpError::bad_request("query_too_long", format!("the query is longer than {MAX_QUERY_BYTES} bytes")));
    }
    let opts = Options { budget: BUDGET, params: req.params.iter().map(|(k, v)| (k.clone(), json_to_value(v))).collect() };
    let graph = s.graph.clone();
    // CPU-bound: keep it off the async workers.
    let result = tokio::task::spawn_blocking(move || serenqa_cypher::execute(&*graph, &req.query, &opts))
        .await
        .map_err(|e| HttpError::internal(format!("query task failed: {e}")))?;
    match result {
        Ok(mut r) => {
            let truncated = r.rows.len() > MAX_RESULT_ROWS;
            r.rows.truncate(MAX_RESULT_ROWS);
            let mut body = r.to_json();
            body["truncated"] = serde_json::Value::Bool(truncated);
            Ok(Json(body))
        }
        Err(e) => {
            let code = match e.kind {
                ErrorKind::Syntax { .. } => "cypher_syntax",
                ErrorKind::Semantic => "cypher_semantic",
                ErrorKind::ReadOnly => "cypher_read_only",
                ErrorKind::Budget => "cypher_budget",
                ErrorKind::Runtime => "cypher_runtime",
                ErrorKind::Unsupported => "cypher_unsupported",
            };
            Err(HttpError::bad_request(code, e.to_string()))
        }
    }
}
