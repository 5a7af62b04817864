//! Graph facts: `GET /api/graph` (counts, provenance, licenses), `GET /api/search?q=`
//! (autocomplete by name prefix), `GET /api/node/{key}` (a node and its neighbourhood),
//! `GET /api/paths?from=…&to=…` (explanation paths of at most three hops), `GET /api/find?q=`
//! (the loading shell's search form, which works before the WebAssembly app has arrived: a
//! redirect to the best-matching entity's page, or to Ask for a question).

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serenqa_graph::paths::{find_paths, PathQuery};
use serenqa_graph::{Graph, NodeId};
use serenqa_shared::api::{
    ApiError, GraphInfo, NeighbourGroup, NodeDetail, NodeView, PathView, PathsReply, SubgraphView,
    TypeCount,
};
use serenqa_shared::links::source_link;
use serenqa_shared::phrases::passive;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::{resolve, Q};
use super::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_graph))
        .routes(routes!(search))
        .routes(routes!(get_node))
        .routes(routes!(get_paths))
        .routes(routes!(find))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct FindQuery {
    /// A name, or a question.
    #[serde(default)]
    q: String,
}

/// Where the search form of the loading shell goes (a plain HTML form, before the app has
/// loaded): `303` to the best search hit's entity page (`/entity/Type::id`) for a name, or to
/// Ask (`/?q=…`) for a question (it ends in `?` or has more than four words) or a name
/// nothing matches; to `/` for an empty form.
#[utoipa::path(get, path = "/find", tag = "graph", params(FindQuery), responses((status = 303, description = "Redirect to the entity page or to Ask")))]
pub async fn find(State(s): State<AppState>, Q(q): Q<FindQuery>) -> axum::response::Redirect {
    use axum::response::Redirect;
    let text: String = q.q.trim().chars().take(500).collect();
    if text.is_empty() {
        return Redirect::to("/");
    }
    let enc = |x: &str| {
        x.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect::<String>()
    };
    let question = text.ends_with('?') || text.split_whitespace().count() > 4;
    if !question && text.len() <= 200 {
        if let Some(&n) = rank_search(&s, &text, None, 1).first() {
            return Redirect::to(&format!(
                "/entity/{}",
                enc(&s.graph.key(n)).replace("%3A", ":")
            ));
        }
    }
    Redirect::to(&format!("/?q={}", enc(&text)))
}

/// A node as the UI shows it (one definition, in the model crate).
pub use serenqa_graph::view::{node_view, path_view};

/// The graph's source as anyone may read it: an absolute path (where the server keeps its
/// data) is cut to its last component ("… in /srv/data/hetionet" → "… in hetionet").
pub fn public_source(source: &str) -> String {
    source
        .split(' ')
        .map(|w| {
            let path = w.starts_with('/') || w.starts_with('~') || w.get(1..3) == Some(":\\");
            match w.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next() {
                Some(last) if path && !last.is_empty() => last,
                _ => w,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn graph_info(g: &Graph) -> GraphInfo {
    let meta = g.meta();
    GraphInfo {
        name: meta.name.clone(),
        source: public_source(&meta.source),
        synthetic: meta.synthetic,
        nodes: g.node_count() as u64,
        edges: g.edge_count() as u64,
        node_types: g
            .type_counts()
            .into_iter()
            .map(|(t, c)| TypeCount {
                name: g.type_display(t).to_string(),
                count: c,
            })
            .collect(),
        relations: g
            .relation_counts()
            .into_iter()
            .map(|(r, c)| TypeCount {
                name: g.relation(r).name.clone(),
                count: c,
            })
            .collect(),
        dropped: meta
            .dropped
            .iter()
            .map(|(n, c)| TypeCount {
                name: n.clone(),
                count: *c,
            })
            .collect(),
        attributions: crate::attribution::for_graph(g),
    }
}

/// The loaded graph: counts by type, provenance, what the filter dropped, data licenses.
#[utoipa::path(get, path = "/graph", tag = "graph", responses((status = 200, body = GraphInfo)))]
pub async fn get_graph(State(s): State<AppState>) -> Json<GraphInfo> {
    Json(graph_info(&s.graph))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct SearchQuery {
    q: String,
    /// Only nodes of this type (display name or label).
    kind: Option<String>,
    limit: Option<usize>,
}

/// Autocomplete: nodes whose name starts with `q` (case-insensitive), or the node whose key is `q`.
#[utoipa::path(get, path = "/search", tag = "graph", params(SearchQuery),
    responses((status = 200, body = Vec<NodeView>), (status = 400, body = ApiError)))]
pub async fn search(
    State(s): State<AppState>,
    Q(q): Q<SearchQuery>,
) -> Result<Json<Vec<NodeView>>, HttpError> {
    let g = &s.graph;
    let text = q.q.trim();
    if text.is_empty() {
        return Err(HttpError::bad_request(
            "empty_query",
            "the search text is empty",
        ));
    }
    if text.len() > 200 {
        return Err(HttpError::bad_request(
            "query_too_long",
            "the search text is longer than 200 bytes",
        ));
    }
    let limit = q.limit.unwrap_or(20).min(100);
    let kind = match q.kind.as_deref() {
        Some(k) => Some(g.type_id(k).ok_or_else(|| {
            HttpError::bad_request("unknown_kind", format!("no node type {k:?}"))
        })?),
        None => None,
    };
    let ranked = rank_search(&s, text, kind, limit);
    let mut out: Vec<NodeView> = ranked.into_iter().map(|n| node_view(g, n)).collect();
    if out.is_empty() {
        if let Some(n) = g.find_by_key(text) {
            out.push(node_view(g, n));
        }
    }
    Ok(Json(out))
}

/// Search hits, best first: exact names, then prefixes (of the name or of a word of it, with
/// apostrophes folded: "alzheimers"), then misspellings and names containing the words (from
/// the question understander's name index, aliases included: "asprin", "COPD"). Within a
/// class, diseases and drugs come before other types (clinicians search for them), then
/// better-connected nodes, then by name.
fn rank_search(
    s: &AppState,
    text: &str,
    kind: Option<serenqa_graph::TypeId>,
    limit: usize,
) -> Vec<NodeId> {
    use serenqa_graph::search::HitClass;
    use serenqa_pipeline::offline::understand::{fold_word, Match};
    let g = &s.graph;
    let mut extra = Vec::new();
    if let Ok(ctx) = super::pipeline::context(s) {
        if let Ok(u) = &ctx.lex.understander {
            extra = u
                .suggest(g, text, 200)
                .into_iter()
                .map(|(n, how)| {
                    let class = match how {
                        Match::Exact => HitClass::Exact,
                        Match::Synonym | Match::Prefix => HitClass::Prefix,
                        _ => HitClass::Fuzzy,
                    };
                    (n, class)
                })
                .collect();
        }
    }
    serenqa_graph::search::rank_search(g, text, kind, limit, &fold_word, extra)
}
/// Neighbours shown per relation group.
const GROUP_SAMPLE: usize = 12;

pub fn node_detail(g: &Graph, n: NodeId) -> NodeDetail {
    let view = node_view(g, n);
    let link = source_link(&view.kind, &view.id).map(|(a, b)| (a.to_string(), b));
    let mut groups = Vec::new();
    for outgoing in [true, false] {
        for r in 0..g.relation_count() as u16 {
            let range = if outgoing {
                g.out_range_rel(n, r)
            } else {
                g.in_range_rel(n, r)
            };
            if range.is_empty() {
                continue;
            }
            let ids = if outgoing {
                &g.out_csr().1[range.clone()]
            } else {
                &g.in_csr().1[range.clone()]
            };
            let mut nodes: Vec<NodeId> = ids.to_vec();
            nodes.sort_by(|&a, &b| serenqa_graph::store::cmp_folded(g.name(a), g.name(b)));
            nodes.dedup();
            let rel = g.relation(r);
            groups.push(NeighbourGroup {
                relation: rel.name.clone(),
                phrase: if outgoing {
                    rel.verb.clone()
                } else {
                    passive(&rel.verb)
                },
                outgoing,
                count: nodes.len() as u64,
                nodes: nodes
                    .into_iter()
                    .take(GROUP_SAMPLE)
                    .map(|m| node_view(g, m))
                    .collect(),
            });
        }
    }
    NodeDetail {
        node: view,
        link,
        degree: g.degree(n) as u64,
        groups,
    }
}

/// A node, its source-database link and its neighbours grouped by relation and direction.
#[utoipa::path(get, path = "/node/{key}", tag = "graph",
    params(("key" = String, Path, description = "`Type::identifier`, e.g. `Compound::DB00945`")),
    responses((status = 200, body = NodeDetail), (status = 404, body = ApiError)))]
pub async fn get_node(
    State(s): State<AppState>,
    Path(key): Path<String>,
) -> Result<axum::response::Response, HttpError> {
    let g = &s.graph;
    let n = resolve(g, &key)?;
    super::reply::json(
        node_detail(g, n),
        "this node's neighbourhood is too large to send",
    )
    .await
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct PathsQuery {
    /// Comma-separated node keys.
    from: String,
    to: String,
    max_hops: Option<usize>,
    limit: Option<usize>,
}

fn keys(g: &Graph, list: &str, what: &str) -> Result<Vec<NodeId>, HttpError> {
    let keys: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    if keys.is_empty() {
        return Err(HttpError::bad_request(
            "empty_set",
            format!("`{what}` names no node"),
        ));
    }
    if keys.len() > 200 {
        return Err(HttpError::bad_request(
            "too_many_nodes",
            format!("`{what}` names more than 200 nodes"),
        ));
    }
    keys.into_iter().map(|k| resolve(g, k)).collect()
}

/// Up to `limit` shortest explanation paths (≤ `max_hops` hops, both edge directions) from
/// any `from` node to any `to` node, and their union as a subgraph to draw.
#[utoipa::path(get, path = "/paths", tag = "graph", params(PathsQuery),
    responses((status = 200, body = PathsReply), (status = 400, body = ApiError), (status = 404, body = ApiError)))]
pub async fn get_paths(
    State(s): State<AppState>,
    Q(q): Q<PathsQuery>,
) -> Result<axum::response::Response, HttpError> {
    let g = &s.graph;
    let from = keys(g, &q.from, "from")?;
    let to = keys(g, &q.to, "to")?;
    let max_hops = q.max_hops.unwrap_or(3);
    if !(1..=3).contains(&max_hops) {
        return Err(HttpError::bad_request(
            "bad_max_hops",
            "max_hops must be 1, 2 or 3",
        ));
    }
    let limit = q.limit.unwrap_or(20).clamp(1, 100);
    // Hubs beyond this degree are not expanded in the middle of a path: an explanation through
    // a node with tens of thousands of edges explains nothing and costs the most.
    let query = PathQuery {
        max_hops,
        limit: (limit * 8).min(400),
        max_degree: 20_000,
    };
    let paths = serenqa_graph::paths::diverse(find_paths(g, &from, &to, query, &|_| true), limit);
    let views: Vec<PathView> = paths.iter().map(|p| path_view(g, p)).collect();
    let subgraph = SubgraphView::from_paths(&views);
    super::reply::json(
        PathsReply {
            paths: views,
            subgraph,
        },
        "ask for fewer paths (`limit`), fewer hops or fewer nodes",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::public_source;

    #[test]
    fn absolute_paths_are_cut_to_their_last_component() {
        assert_eq!(
            public_source("Hetionet files a.tsv.gz and b.sif.gz in /work/shared/data/hetionet"),
            "Hetionet files a.tsv.gz and b.sif.gz in hetionet"
        );
        assert_eq!(public_source("snapshot /tmp/x/g.snap"), "snapshot g.snap");
        assert_eq!(
            public_source("snapshot C:\\data\\g.snap"),
            "snapshot g.snap"
        );
        assert_eq!(
            public_source("synthetic graph (seed 7)"),
            "synthetic graph (seed 7)"
        );
    }
}
