//! `GET /api/discover/{key}`: the clinician's view of one disease or drug.

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serenqa_graph::view::node_view;
use serenqa_model::discover::{known_for, KNOWN_FOR_SHOWN, MAX_CANDIDATES};
use serenqa_shared::api::{ApiError, Candidate, DiscoverResponse};
use serenqa_shared::rns::Weights;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::Q;
use super::graph::resolve;
use super::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_discover))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct DiscoverQuery {
    /// Candidates to return (1–200, default 50).
    limit: Option<usize>,
    /// Weights `a,b,c` for R, N, S (default: the weights in force — an expert calibration in
    /// the annotation store, else the shipped fitted weights; the reply says which).
    weights: Option<String>,
}

const METHOD_PLAUSIBLE: &str = "Candidates are the most plausible ones by the plausibility model (a logistic regression on metapath path counts learned from the graph's treatment edges, validated by cross-validation with held-out edges removed), each scored by RNS against the known answers; blend plausibility and serendipity with the slider.";

const METHOD: &str = "Candidates are the entities of the answer type most likely to be reached in a 1–3 step random walk from the known answers (P3 proximity), scored by RNS against the known answers.";

/// Known answers and serendipitous candidates of a disease (drugs) or a drug (diseases).
#[utoipa::path(get, path = "/discover/{key}", tag = "serendipity",
    params(("key" = String, Path, description = "`Type::identifier` of a disease or a drug"), DiscoverQuery),
    responses((status = 200, body = DiscoverResponse), (status = 400, body = ApiError), (status = 404, body = ApiError), (status = 503, body = ApiError)))]
pub async fn get_discover(
    State(s): State<AppState>,
    Path(key): Path<String>,
    Q(q): Q<DiscoverQuery>,
) -> Result<Json<DiscoverResponse>, HttpError> {
    let g = s.graph.clone();
    let node = resolve(&g, &key)?;
    let model = super::rns::require_model(&s)?;
    let limit = q.limit.unwrap_or(50);
    if limit == 0 || limit > MAX_CANDIDATES {
        return Err(HttpError::bad_request(
            "bad_limit",
            format!("limit must be between 1 and {MAX_CANDIDATES}"),
        ));
    }
    let given = match q.weights.as_deref() {
        Some(w) => Some(
            Weights::parse(w).map_err(|e| HttpError::bad_request("bad_weights", e.to_string()))?,
        ),
        None => None,
    };
    let blocks = s.blocks.clone();
    let started = std::time::Instant::now();
    let result = tokio::task::spawn_blocking(move || {
        let defaults = crate::weights::of_state(&s);
        let used = crate::weights::for_request(given, &defaults);
        let preds = s.predictions.clone();
        let located = preds
            .as_ref()
            .and_then(|p| p.locate(node).map(|l| (p.clone(), l)));
        let includes = g.relation_id("INCLUDES_PCiC");
        super::predictions::discover_proposed(
            &g,
            &model,
            &blocks,
            preds.as_deref(),
            node,
            limit,
            &used.weights,
        )
        .map(|d| {
            let candidates = d
                .candidates
                .iter()
                .zip(&d.terms)
                .map(|(&(c, p), t)| {
                    let (links, total) = known_for(&g, c, KNOWN_FOR_SHOWN);
                    let plausibility = located.as_ref().and_then(|(pr, (is_c, local))| {
                        let other = pr.locate(c)?;
                        let (ci, di) = if *is_c {
                            (*local, other.1)
                        } else {
                            (other.1, *local)
                        };
                        Some(super::predictions::prediction(&g, pr, ci, di, false))
                    });
                    let classes = match includes {
                        Some(r) => g
                            .in_range_rel(c, r)
                            .map(|i| node_view(&g, g.in_csr().1[i]))
                            .collect(),
                        None => Vec::new(),
                    };
                    Candidate {
                        node: node_view(&g, c),
                        proximity: p,
                        terms: *t,
                        known_for: links.iter().map(|&x| node_view(&g, x)).collect(),
                        known_for_total: total,
                        plausibility,
                        classes,
                    }
                })
                .collect();
            DiscoverResponse {
                query: node_view(&g, d.query),
                answer_kind: g.type_display(d.answer_type).to_string(),
                existing: d.existing.iter().map(|&x| node_view(&g, x)).collect(),
                existing_known: d.existing_known,
                candidates,
                slice: d.slice,
                weights: d.weights,
                weights_source: used.source,
                default_weights: defaults,
                method: if located.is_some() {
                    METHOD_PLAUSIBLE
                } else {
                    METHOD
                }
                .to_string(),
                elapsed_ms: 0.0,
            }
        })
    })
    .await
    .map_err(|e| HttpError::internal(format!("discovery task failed: {e}")))?;
    let mut reply = result.map_err(|e| HttpError::bad_request("cannot_discover", e.to_string()))?;
    reply.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(Json(reply))
}
