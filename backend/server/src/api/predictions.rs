//! `GET /api/predictions?disease=…` / `?compound=…`: the plausibility model's predictions for
//! one disease (its compounds) or one compound (its diseases), best first (crate
//! `serenqa-predict`; computed by `serenqa predict`, read at start-up).

use axum::extract::State;
use serde::Deserialize;
use serenqa_graph::view::node_view;
use serenqa_graph::{Graph, NodeId};
use serenqa_predict::Predictions;
use serenqa_shared::api::{
    ApiError, ContradictionGroup, ExplainEdge, ExplainPath, ExplainResponse, MetapathGroup,
    PredictionsResponse, SubgraphView,
};
use serenqa_shared::screen::Mechanism;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::resolve;
use super::extract::Q;
use super::AppState;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_predictions))
        .routes(routes!(get_explain))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct PredictionsQuery {
    /// `Type::identifier` of a disease (give this or `compound`, not both).
    disease: Option<String>,
    /// `Type::identifier` of a compound.
    compound: Option<String>,
    /// Pairs to return, best first (1–2000, default 50).
    limit: Option<usize>,
}

pub const MAX_LIMIT: usize = 2000;

pub const METHOD: &str = "Plausibility: the mean of an L2 logistic regression and gradient-boosted trees, both on degree-weighted path counts (DWPC, w = 0.4) of the compound–disease metapaths up to length 4 plus treatment-degree terms and whether the graph records the drug as causing the disease (a SIDER side effect joined to it by Disease Ontology identifier, by name or by a defining symptom; on Hetionet such records go with known treatments, since drug labels list the indication among side effects), learned from the graph's treatment edges (Project Rephetio's features), its probability calibrated on out-of-fold predictions; the metapath contributions shown are the logistic half's; percentiles rank the pair among the disease's compounds and among the compound's diseases. A second model on the same features, learned from the palliation edges, gives the palliation score.";

/// A disease's compounds or a compound's diseases, best first.
#[utoipa::path(get, path = "/predictions", tag = "serendipity", params(PredictionsQuery),
    responses((status = 200, body = PredictionsResponse), (status = 400, body = ApiError), (status = 404, body = ApiError), (status = 503, body = ApiError)))]
pub async fn get_predictions(
    State(s): State<AppState>,
    Q(q): Q<PredictionsQuery>,
) -> Result<axum::response::Response, HttpError> {
    let (key, want_compound) = match (&q.disease, &q.compound) {
        (Some(d), None) => (d.as_str(), false),
        (None, Some(c)) => (c.as_str(), true),
        _ => {
            return Err(HttpError::bad_request(
                "bad_query",
                "give exactly one of `disease` or `compound` (a `Type::identifier`)",
            ))
        }
    };
    let limit = q.limit.unwrap_or(50);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(HttpError::bad_request(
            "bad_limit",
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let g = s.graph.clone();
    let node = resolve(&g, key)?;
    let Some(served) = super::served::Served::of(&s) else {
        return Err(HttpError::unavailable("no_predictions", "the plausibility predictions are not loaded; run `serenqa predict` and restart the server"));
    };
    let Some((is_compound, local)) = served.locate(node) else {
        return Err(HttpError::bad_request(
            "wrong_type",
            format!(
                "{} is a {}, not a compound or a disease of the model",
                g.name(node),
                g.type_display(g.node_type(node))
            ),
        ));
    };
    if is_compound != want_compound {
        let want = if want_compound { "compound" } else { "disease" };
        return Err(HttpError::bad_request(
            "wrong_type",
            format!(
                "{} is a {}; `{want}=` needs a {want}",
                g.name(node),
                g.type_display(g.node_type(node))
            ),
        ));
    }
    let known = serenqa_model::discover::treatment_links(&g, node);
    let p = match &served {
        super::served::Served::All(p) => p.clone(),
        super::served::Served::Top(t) => {
            // The stored list: the best `k` unknown pairs (known treatments are not in it).
            let list = t.propose((is_compound, local), &[], usize::MAX);
            let total = list.len();
            let predictions = list
                .into_iter()
                .take(limit)
                .filter_map(|(other, _)| served.prediction(&g, (is_compound, local), other))
                .collect();
            return super::reply::json(
                PredictionsResponse {
                    query: node_view(&g, node),
                    total,
                    predictions,
                    method: super::served::METHOD_TOP.to_string(),
                },
                "ask for fewer predictions (`limit`)",
            )
            .await;
        }
    };
    let ranked = p.ranked_pairs(is_compound, local);
    let total = ranked.len();
    let predictions = ranked
        .into_iter()
        .take(limit)
        .map(|(c, d)| {
            let other = if is_compound {
                p.diseases[d]
            } else {
                p.compounds[c]
            };
            super::served::prediction(&g, &p, c, d, known.binary_search(&other).is_ok())
        })
        .collect();
    super::reply::json(
        PredictionsResponse {
            query: node_view(&g, node),
            total,
            predictions,
            method: METHOD.to_string(),
        },
        "ask for fewer predictions (`limit`)",
    )
    .await
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct ExplainQuery {
    /// `Type::identifier` of the compound.
    compound: Option<String>,
    /// `Type::identifier` of the disease.
    disease: Option<String>,
}

/// Paths shown per metapath.
const PATHS_PER_METAPATH: usize = 6;
/// Path expansions per metapath before the enumeration stops (the reply says it was cut).
const MAX_VISITS: usize = 200_000;

/// The paths that carry one prediction, grouped by its top metapaths.
#[utoipa::path(get, path = "/predictions/explain", tag = "serendipity", params(ExplainQuery),
    responses((status = 200, body = ExplainResponse), (status = 400, body = ApiError), (status = 404, body = ApiError), (status = 503, body = ApiError)))]
pub async fn get_explain(
    State(s): State<AppState>,
    Q(q): Q<ExplainQuery>,
) -> Result<axum::response::Response, HttpError> {
    let (Some(ck), Some(dk)) = (&q.compound, &q.disease) else {
        return Err(HttpError::bad_request(
            "bad_query",
            "give both `compound` and `disease` (each a `Type::identifier`)",
        ));
    };
    let g = s.graph.clone();
    let cn = resolve(&g, ck)?;
    let dn = resolve(&g, dk)?;
    let (Some(p), Some(ex)) = (s.predictions.clone(), s.explainer.clone()) else {
        if s.top_k.is_some() {
            return Err(HttpError::unavailable("no_metapath_explanation", "this server holds top lists (a graph too large to score every pair), whose model keeps no per-pair metapath values: the graph's paths from the known answers (`GET /api/paths`) explain a candidate instead"));
        }
        return Err(HttpError::unavailable("no_predictions", "the plausibility predictions are not loaded; run `serenqa predict` and restart the server"));
    };
    let (Some((true, c)), Some((false, d))) = (p.locate(cn), p.locate(dn)) else {
        return Err(HttpError::bad_request(
            "wrong_type",
            "`compound` must be a compound and `disease` a disease of the model",
        ));
    };
    // The safety index is built on first use (a few ms): off the async threads too.
    let reply = tokio::task::spawn_blocking(move || explain(&g, &p, &ex, &s.clinical(), c, d))
        .await
        .map_err(|e| HttpError::internal(format!("explain task failed: {e}")))?;
    super::reply::json(reply, "this explanation's subgraph is too large to send").await
}

pub fn explain(
    g: &Graph,
    p: &Predictions,
    ex: &serenqa_predict::explain::Explainer,
    clinical: &crate::screen::Clinical,
    c: usize,
    d: usize,
) -> ExplainResponse {
    let (cn, dn) = (p.compounds[c], p.diseases[d]);
    let known = serenqa_model::discover::treatment_links(g, cn)
        .binary_search(&dn)
        .is_ok();
    let prediction = super::served::prediction(g, p, c, d, known);
    let mut sg = SubgraphView::default();
    let mut index: std::collections::HashMap<NodeId, u32> = std::collections::HashMap::new();
    let mut add = |sg: &mut SubgraphView, n: NodeId| -> u32 {
        *index.entry(n).or_insert_with(|| {
            sg.nodes.push(node_view(g, n));
            (sg.nodes.len() - 1) as u32
        })
    };
    add(&mut sg, cn);
    add(&mut sg, dn);
    let mut seen_edges = std::collections::BTreeSet::new();
    let mut edge_sources = Vec::new();
    let mut groups = Vec::new();
    for mc in &prediction.top_metapaths {
        let Some(steps) = ex.by_name.get(&mc.metapath) else {
            continue;
        };
        let ps = serenqa_predict::explain::paths(
            g,
            &ex.mg,
            steps,
            cn,
            dn,
            ex.damping,
            PATHS_PER_METAPATH,
            MAX_VISITS,
        );
        let mut shown = Vec::new();
        for wp in &ps.paths {
            let nodes: Vec<u32> = wp.nodes.iter().map(|&n| add(&mut sg, n)).collect();
            let mut edges = Vec::new();
            for (k, &e) in wp.edges.iter().enumerate() {
                let er = g.edge(e);
                let rel = g.relation(er.rel);
                let (source, license) = crate::attribution::metaedge_source(&rel.abbrev);
                edges.push(ExplainEdge {
                    relation: rel.name.clone(),
                    verb: rel.verb.clone(),
                    source: source.to_string(),
                    license: license.to_string(),
                });
                if seen_edges.insert(e) {
                    let (a, b) = (add(&mut sg, er.source), add(&mut sg, er.target));
                    let _ = k;
                    sg.edges.push((a, b, rel.name.clone()));
                    edge_sources.push(format!("{source} ({license})"));
                }
            }
            let share = if ps.total_weight > 0.0 {
                wp.weight / ps.total_weight
            } else {
                0.0
            };
            shown.push(ExplainPath {
                nodes,
                edges,
                weight: wp.weight,
                share,
            });
        }
        groups.push(MetapathGroup {
            metapath: mc.metapath.clone(),
            reading: ex.reading(g, steps),
            contribution: mc.contribution,
            paths_found: ps.found,
            truncated: ps.truncated,
            paths: shown,
        });
    }
    let (contradictions, contradiction_note) = contradictions(g, p, clinical, cn, dn);
    ExplainResponse {
        prediction,
        groups,
        contradictions,
        contradiction_note,
        subgraph: sg,
        edge_sources,
    }
}

/// The contradiction features that fired for (`cn`, `dn`): the side-effect records the
/// server's safety index finds for the pair (the join the model's features use), grouped by
/// feature, each with its contribution to the logistic half of the score.
/// The pair's contradiction groups, and the note they share (said once above them).
fn contradictions(
    g: &Graph,
    p: &Predictions,
    clinical: &crate::screen::Clinical,
    cn: NodeId,
    dn: NodeId,
) -> (Vec<ContradictionGroup>, Option<String>) {
    use serenqa_predict::contra::{
        caveat, describe, kind, Contradiction, ContradictionInfo, NAMES,
    };
    let flags = clinical.safety.flags(g, cn, dn);
    if flags.is_empty() {
        return (Vec::new(), None);
    }
    // A predictions file from before the features: evidence only.
    let info = p.info.contradiction.clone().unwrap_or(ContradictionInfo {
        ontology: false,
        fitted: false,
        features: Vec::new(),
        pairs_flagged: 0,
        treatments_flagged: 0,
        treatments: 0,
    });
    let values = Contradiction::values(&flags);
    let contributions = info.contributions(&values);
    let mut out = Vec::new();
    for (k, name) in NAMES.iter().enumerate() {
        let mine: Vec<serenqa_graph::safety::Flag> =
            flags.iter().filter(|f| kind(&f.by) == k).cloned().collect();
        if mine.is_empty() {
            continue;
        }
        let side_effects: Vec<String> = mine
            .iter()
            .map(|f| format!("\"{}\"", g.name(f.condition)))
            .collect();
        out.push(ContradictionGroup {
            feature: (*name).to_string(),
            contribution: contributions[k],
            fitted: info.fitted,
            text: describe(&info, k, g.name(dn), &side_effects, contributions[k]),
            records: crate::screen::flag_views(g, dn, &mine),
        });
    }
    let shown: Vec<f64> = NAMES
        .iter()
        .enumerate()
        .filter(|(k, _)| flags.iter().any(|f| kind(&f.by) == *k))
        .map(|(k, _)| contributions[k])
        .collect();
    let note = caveat(&info, &shown);
    (out, note)
}

/// Discover's candidates for `node`, as `GET /api/discover` and `serenqa rns spread` both take
/// them: proposed by the plausibility model when `preds` covers the node, else by walk
/// proximity; then scored by RNS against its known answers. With `screen`, the model's best
/// [`MAX_CANDIDATES`](serenqa_model::discover::MAX_CANDIDATES) are put in the first-screen
/// order (`crate::screen`) before the first `limit` are kept, so a short reply is the top of
/// the page's list; without it they stay in plausibility order.
#[allow(clippy::too_many_arguments)]
pub fn discover_proposed(
    g: &Graph,
    model: &serenqa_model::Model,
    blocks: &serenqa_model::slice::BlockCache,
    preds: Option<&super::served::Served>,
    node: NodeId,
    limit: usize,
    weights: &serenqa_shared::rns::Weights,
    screen: Option<(
        &crate::screen::Clinical,
        &serenqa_shared::screen::ScreenRule,
    )>,
) -> Result<serenqa_model::discover::Discovery, serenqa_model::ModelError> {
    let located = preds.and_then(|p| p.locate(node).map(|loc| (p, loc)));
    let propose = |q: NodeId, _t: serenqa_graph::TypeId, known: &[NodeId]| -> Vec<(NodeId, f64)> {
        let Some((p, loc)) = located else {
            return Vec::new();
        };
        let Some((clinical, rule)) = screen else {
            return p.propose(loc, known, limit);
        };
        let proposed = p.propose(loc, known, serenqa_model::discover::MAX_CANDIDATES);
        let items: Vec<(NodeId, f64, bool, Mechanism)> = proposed
            .iter()
            .map(|&(c, score)| {
                let (m, flags) = if loc.0 {
                    // A drug's page: c is a disease; compare with the drugs known for it.
                    let known_d = serenqa_model::discover::known_of(g, c);
                    clinical.pair(g, q, c, &known_d)
                } else {
                    clinical.pair(g, c, q, known)
                };
                (c, score, !flags.is_empty(), m.kind)
            })
            .collect();
        crate::screen::order(&items, rule)
            .into_iter()
            .take(limit)
            .map(|i| proposed[i])
            .collect()
    };
    let proposal: Option<serenqa_model::discover::Proposal> = located.is_some().then_some(&propose);
    serenqa_model::discover::discover_with(g, model, blocks, node, limit, weights, proposal)
}
