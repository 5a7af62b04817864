//! `POST /api/cypher` `{query, params?}` → `{columns, rows, truncated}`: read-only Cypher on
//! the served graph. Limits: query text, time and row budgets, rows returned, and the reply's
//! serialised size and the time a client may take to read it (`super::reply`).

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serenqa_cypher::{Budget, ErrorKind, Options, Value};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::AppState;

/// Longest query text accepted.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// Most rows returned; longer results are cut and flagged `truncated`.
pub const MAX_RESULT_ROWS: usize = 10_000;
/// Per-query budget: wall time, rows produced inside the executor, bytes held (64 MiB),
/// size of one value (16 MiB) and the depth of an unbounded `*` (32).
pub const BUDGET: Budget = Budget::with_time_rows(Duration::from_secs(10), 1_000_000);

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(run_query))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct CypherRequest {
    query: String,
    /// Parameters: strings, numbers, booleans, null, lists and maps of those.
    #[serde(default)]
    #[schema(value_type = Object)]
    params: HashMap<String, serde_json::Value>,
}

fn json_to_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .unwrap_or_else(|| Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::String(s) => Value::Str(s.clone()),
        serde_json::Value::Array(xs) => Value::List(xs.iter().map(json_to_value).collect()),
        serde_json::Value::Object(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (k.clone(), json_to_value(v)))
                .collect(),
        ),
    }
}

/// Runs a read-only Cypher query on the loaded graph (time and row budgets; writing clauses
/// are refused). Errors carry a `cypher_*` code and, for syntax errors, line and column.
#[utoipa::path(post, path = "/cypher", tag = "cypher", request_body = CypherRequest,
    responses((status = 200, description = "columns and rows (truncated beyond the row limit)", body = Object), (status = 400, description = "bad query, or a budget passed (`cypher_budget`, also for a reply over 16 MiB serialised)", body = serenqa_shared::api::ApiError), (status = 503, description = "too many large replies held for slow readers (`busy`, with Retry-After)", body = serenqa_shared::api::ApiError)))]
pub async fn run_query(
    State(s): State<AppState>,
    super::extract::J(req): super::extract::J<CypherRequest>,
) -> Result<Response, HttpError> {
    if req.query.trim().is_empty() {
        return Err(HttpError::bad_request("empty_query", "the query is empty"));
    }
    if req.query.len() > MAX_QUERY_BYTES {
        return Err(HttpError::bad_request(
            "query_too_long",
            format!("the query is longer than {MAX_QUERY_BYTES} bytes"),
        ));
    }
    let opts = Options {
        budget: BUDGET,
        params: req
            .params
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
        max_rows: Some(MAX_RESULT_ROWS),
    };
    let graph = s.graph.clone();
    let limit = super::reply::max_reply_bytes();
    // CPU-bound: keep it off the async workers. The reply is serialised there too, under its
    // size limit, so a reply too large is refused before it is built whole.
    let result = tokio::task::spawn_blocking(move || {
        serenqa_cypher::execute(&*graph, &req.query, &opts).map(|r| {
            let mut body = r.to_json();
            body["truncated"] = serde_json::Value::Bool(r.truncated);
            super::reply::to_json_bounded(&body, limit)
        })
    })
    .await
    .map_err(|e| HttpError::internal(format!("query task failed: {e}")))?;
    match result {
        Ok(Ok(bytes)) => Ok(super::reply::held_json(bytes)),
        Ok(Err(too)) => Err(HttpError::bad_request(
            "cypher_budget",
            format!(
                "reply budget: the result would be more than {} as JSON; return fewer or smaller values (LIMIT, a projection, size())",
                super::reply::size(too.limit)
            ),
        )),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serenqa_graph::{GraphBuilder, GraphMeta, RelationType};

    use super::*;

    fn small_graph() -> serenqa_graph::Graph {
        let mut b = GraphBuilder::new(GraphMeta {
            name: "test".into(),
            ..Default::default()
        });
        let c = b.node_type("Compound", "Compound");
        let d = b.node_type("Disease", "Disease");
        let treats = b
            .relation(RelationType {
                name: "TREATS_CtD".into(),
                verb: "treats".into(),
                abbrev: "CtD".into(),
                source_type: Some(c),
                target_type: Some(d),
                directed: false,
            })
            .unwrap();
        let a = b.add_node(c, "DB1", "Aspirin");
        let p = b.add_node(d, "D1", "Pain");
        b.add_edge(a, treats, p, None);
        b.build()
    }

    /// Serves the API on an ephemeral port and POSTs to /api/cypher.
    fn post(bodies: Vec<String>) -> Vec<(u16, serde_json::Value)> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = crate::api::router(
                AppState::new(Arc::new(small_graph())),
                std::path::Path::new("/nonexistent"),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            tokio::task::spawn_blocking(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                bodies
                    .into_iter()
                    .map(|b| {
                        let mut resp = agent
                            .post(&format!("http://{addr}/api/cypher"))
                            .header("content-type", "application/json")
                            .send(b)
                            .unwrap();
                        let status = resp.status().as_u16();
                        let text = resp.body_mut().read_to_string().unwrap();
                        (status, serde_json::from_str(&text).unwrap())
                    })
                    .collect()
            })
            .await
            .unwrap()
        })
    }

    #[test]
    fn cypher_endpoint_answers_and_limits() {
        let q = |s: &str| serde_json::json!({ "query": s }).to_string();
        let long = "RETURN 1 AS x".to_string() + &" ".repeat(MAX_QUERY_BYTES);
        let r = post(vec![
            q("MATCH (c:Compound)-[:TREATS_CtD]->(d) RETURN c.name AS c, d.name AS d"),
            serde_json::json!({ "query": "RETURN $x + 1 AS y", "params": { "x": 41 } }).to_string(),
            q("MATCH (c RETURN c"),
            q("CREATE (n)"),
            q(&long),
            q("UNWIND range(1, 20000) AS i RETURN i"),
            // A 4 Mi-character string of U+0001 (inside the value budget) is 24 MiB as JSON.
            serde_json::json!({
                "query": "WITH reduce(s = $c, i IN range(1, 22) | s + s) AS s RETURN s AS a, s AS b",
                "params": { "c": "\u{1}" }
            })
            .to_string(),
        ]);
        assert_eq!(r[0].0, 200);
        assert_eq!(r[0].1["columns"], serde_json::json!(["c", "d"]));
        assert_eq!(r[0].1["rows"], serde_json::json!([["Aspirin", "Pain"]]));
        assert_eq!(r[1].1["rows"], serde_json::json!([[42]]));
        assert_eq!(
            (r[2].0, r[2].1["code"].as_str()),
            (400, Some("cypher_syntax"))
        );
        assert_eq!(
            (r[3].0, r[3].1["code"].as_str()),
            (400, Some("cypher_read_only"))
        );
        assert_eq!(
            (r[4].0, r[4].1["code"].as_str()),
            (400, Some("query_too_long"))
        );
        assert_eq!(
            r[5].1["rows"].as_array().map(Vec::len),
            Some(MAX_RESULT_ROWS)
        );
        assert_eq!(r[5].1["truncated"], serde_json::json!(true));
        assert_eq!(
            (r[6].0, r[6].1["code"].as_str()),
            (400, Some("cypher_budget")),
            "{}",
            r[6].1
        );
        assert!(
            r[6].1["message"].as_str().unwrap_or("").contains("16 MiB"),
            "{}",
            r[6].1
        );
    }
}
