//! Graph facts: `GET /api/graph` (counts, provenance, licenses), `GET /api/search?q=`
//! (autocomplete by name prefix), `GET /api/node/{key}`.

use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serenqa_graph::{Graph, NodeId};
use serenqa_shared::api::{GraphInfo, NodeView, TypeCount};

use super::error::HttpError;
use super::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/graph", get(get_graph))
        .route("/search", get(search))
        .route("/node/{key}", get(get_node))
}

pub fn node_view(g: &Graph, n: NodeId) -> NodeView {
    NodeView { index: n, id: g.ident(n).to_string(), name: g.name(n).to_string(), kind: g.type_display(g.node_type(n)).to_string() }
}

pub fn graph_info(g: &Graph) -> GraphInfo {
    let meta = g.meta();
    GraphInfo {
        name: meta.name.clone(),
        source: meta.source.clone(),
        synthetic: meta.synthetic,
        nodes: g.node_count() as u64,
        edges: g.edge_count() as u64,
        node_types: g.type_counts().into_iter().map(|(t, c)| TypeCount { name: g.type_display(t).to_string(), count: c }).collect(),
        relations: g
            .relation_counts()
            .into_iter()
            .map(|(r, c)| TypeCount { name: g.relation(r).name.clone(), count: c })
            .collect(),
        dropped: meta.dropped.iter().map(|(n, c)| TypeCount { name: n.clone(), count: *c }).collect(),
        attributions: crate::attribution::for_graph(g),
    }
}

async fn get_graph(State(s): State<AppState>) -> Json<GraphInfo> {
    Json(graph_info(&s.graph))
}

#[derive(Deserialize)]
struct SearchQuery {
    q: String,
    /// Only nodes of this type (display name or label).
    kind: Option<String>,
    limit: Option<usize>,
}

async fn search(State(s): State<AppState>, Query(q): Query<SearchQuery>) -> Result<Json<Vec<NodeView>>, HttpError> {
    let g = &s.graph;
    let text = q.q.trim();
    if text.is_empty() {
        return Err(HttpError::bad_request("empty_query", "the search text is empty"));
    }
    if text.len() > 200 {
        return Err(HttpError::bad_request("query_too_long", "the search text is longer than 200 bytes"));
    }
    let limit = q.limit.unwrap_or(20).min(100);
    let kind = match q.kind.as_deref() {
        Some(k) => Some(g.type_id(k).ok_or_else(|| HttpError::bad_request("unknown_kind", format!("no node type {k:?}")))?),
        None => None,
    };
    // Prefix matches first; scan more than `limit` so the type filter still fills the list.
    let hits = g.search_prefix(text, if kind.is_some() { 20_000 } else { limit });
    let mut out: Vec<NodeView> = hits.into_iter().filter(|&n| kind.is_none_or(|k| g.node_type(n) == k)).take(limit).map(|n| node_view(g, n)).collect();
    if out.is_empty() {
        if let Some(n) = g.find_by_key(text) {
            out.push(node_view(g, n));
        }
    }
    Ok(Json(out))
}

async fn get_node(State(s): State<AppState>, Path(key): Path<String>) -> Result<Json<NodeView>, HttpError> {
    let g = &s.graph;
    let n = g.find_by_key(&key).ok_or_else(|| HttpError::not_found("unknown_node", format!("no node {key:?}")))?;
    Ok(Json(node_view(g, n)))
}
