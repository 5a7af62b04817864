//! `GET /api/discover/{key}`: the clinician's view of one disease or drug.

use axum::extract::{Path, State};
use serde::Deserialize;
use serenqa_graph::view::node_view;
use serenqa_graph::{Graph, NodeId};
use serenqa_model::discover::{known_for, known_of, KNOWN_FOR_SHOWN, MAX_CANDIDATES};
use serenqa_shared::api::{
    ApiError, Candidate, DiscoverResponse, EvidenceStrength, KnownAnswer, ScreenInfo,
};
use serenqa_shared::rns::{Weights, WeightsSource};
use serenqa_shared::screen::{Flagged, ScreenRule};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::resolve;
use super::extract::Q;
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
    /// First-screen band, 0–1 (default: the shipped rule's; 1 = plausibility order).
    band: Option<f64>,
    /// Where drugs recorded as causing the disease go: `unexplained-last` (default), `in-band`,
    /// `last`, `in-place`.
    flagged: Option<String>,
    /// Favour new mechanisms inside the band (default true).
    favour_new: Option<bool>,
}

const METHOD_PLAUSIBLE: &str = "Candidates are the most plausible ones by the plausibility model (a logistic regression and gradient-boosted trees on metapath path counts, learned from the graph's treatment edges and validated by cross-validation with held-out edges removed), each labelled by how it relates to the known treatments and scored by RNS against the known answers.";

/// [`METHOD_PLAUSIBLE`] on a graph past the all-pairs model's size (`serenqa predict --top-k`).
const METHOD_TOP: &str = "Candidates are the most plausible ones by the plausibility model's top lists (an L2 logistic regression on degree-weighted walk counts of the compound–disease metapaths that fit its work budget, plus degree terms, fitted on a sample of diseases; the best 100 of every disease and every compound, exact for the disease side), each labelled by how it relates to the known treatments and scored by RNS against the known answers.";
const METHOD: &str = "Candidates are the entities of the answer type most likely to be reached in a 1–3 step random walk from the known answers (P3 proximity), scored by RNS against the known answers.";

/// Known answers and serendipitous candidates of a disease (drugs) or a drug (diseases).
#[utoipa::path(get, path = "/discover/{key}", tag = "serendipity",
    params(("key" = String, Path, description = "`Type::identifier` of a disease or a drug"), DiscoverQuery),
    responses((status = 200, body = DiscoverResponse), (status = 400, body = ApiError), (status = 404, body = ApiError), (status = 503, body = ApiError)))]
pub async fn get_discover(
    State(s): State<AppState>,
    Path(key): Path<String>,
    Q(q): Q<DiscoverQuery>,
) -> Result<axum::response::Response, HttpError> {
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
    let mut rule = ScreenRule::default();
    if let Some(b) = q.band {
        if !(0.0..=1.0).contains(&b) {
            return Err(HttpError::bad_request(
                "bad_band",
                "band must be a number between 0 and 1",
            ));
        }
        rule.band = b;
    }
    if let Some(f) = q.flagged.as_deref() {
        rule.flagged = Flagged::parse(f).ok_or_else(|| {
            HttpError::bad_request(
                "bad_flagged",
                "flagged must be unexplained-last, in-band, last or in-place",
            )
        })?;
    }
    if let Some(f) = q.favour_new {
        rule.favour_new = f;
    }
    let started = std::time::Instant::now();
    let result = tokio::task::spawn_blocking(move || reply(&s, &model, node, limit, given, rule))
        .await
        .map_err(|e| HttpError::internal(format!("discovery task failed: {e}")))?;
    let mut reply = result.map_err(|e| HttpError::bad_request("cannot_discover", e.to_string()))?;
    reply.elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
    super::reply::json(reply, "ask for fewer candidates (`limit`)").await
}

/// The reply of `GET /api/discover/{key}` for `node` (the handler runs it off the async
/// threads; `serenqa discover bench` times it).
pub fn reply(
    s: &AppState,
    model: &serenqa_model::Model,
    node: NodeId,
    limit: usize,
    given: Option<Weights>,
    rule: ScreenRule,
) -> Result<DiscoverResponse, serenqa_model::ModelError> {
    let g = s.graph.clone();
    let includes = g.relation_id("INCLUDES_PCiC");
    let blocks = s.blocks.clone();
    let clinical = s.clinical();
    let defaults = crate::weights::of_state(s);
    let used = crate::weights::for_request(given, &defaults);
    let preds = super::served::Served::of(s);
    let located = preds
        .as_ref()
        .and_then(|p| p.locate(node).map(|l| (p.clone(), l)));
    let screen = located.is_some().then_some((clinical.as_ref(), &rule));
    super::predictions::discover_proposed(
        &g,
        model,
        &blocks,
        preds.as_ref(),
        node,
        limit,
        &used.weights,
        screen,
    )
    .map(|d| {
        let query_is_drug = located.as_ref().is_some_and(|(_, (is_c, _))| *is_c);
        let known_nodes: Vec<NodeId> = {
            let mut v: Vec<NodeId> = d.known.iter().map(|k| k.0).collect();
            v.sort_unstable();
            v
        };
        let mut flagged = 0;
        let candidates: Vec<Candidate> = d
            .candidates
            .iter()
            .zip(&d.terms)
            .map(|(&(c, p), t)| {
                let (links, total) = known_for(&g, c, KNOWN_FOR_SHOWN);
                let plausibility = located
                    .as_ref()
                    .and_then(|(pr, loc)| pr.prediction(&g, *loc, c));
                let classes = match includes {
                    Some(r) => g
                        .in_range_rel(c, r)
                        .map(|i| node_view(&g, g.in_csr().1[i]))
                        .collect(),
                    None => Vec::new(),
                };
                let (drug, disease) = if query_is_drug { (node, c) } else { (c, node) };
                let (m, flags) = if query_is_drug {
                    clinical.pair(&g, drug, disease, &known_of(&g, c))
                } else {
                    clinical.pair(&g, drug, disease, &known_nodes)
                };
                flagged += usize::from(!flags.is_empty());
                Candidate {
                    node: node_view(&g, c),
                    proximity: p,
                    terms: *t,
                    known_for: links.iter().map(|&x| node_view(&g, x)).collect(),
                    known_for_total: total,
                    plausibility,
                    classes,
                    mechanism: crate::screen::mechanism_view(&g, &m),
                    safety: crate::screen::flag_views(&g, disease, &flags),
                }
            })
            .collect();
        let evidence = located.as_ref().map(|_| {
            let best = candidates
                .iter()
                .filter_map(|c| c.plausibility.as_ref().map(|p| p.score))
                .fold(0.0f64, f64::max);
            evidence_strength(best, &g, node)
        });
        let known: Vec<KnownAnswer> = d
            .known
            .iter()
            .map(|(n, verb)| KnownAnswer {
                node: node_view(&g, *n),
                relation: verb.clone(),
            })
            .collect();
        let known_note = known_note(
            &known,
            query_is_drug || g.type_display(g.node_type(node)) != "Disease",
        );
        DiscoverResponse {
            query: node_view(&g, d.query),
            answer_kind: g.type_display(d.answer_type).to_string(),
            existing: d.existing.iter().map(|&x| node_view(&g, x)).collect(),
            existing_known: d.existing_known,
            candidates,
            slice: d.slice,
            weights: d.weights,
            weights_source: used.source.clone(),
            default_weights: defaults,
            method: match located.as_ref().map(|(p, _)| p) {
                Some(super::served::Served::All(_)) => METHOD_PLAUSIBLE,
                Some(super::served::Served::Top(_)) => METHOD_TOP,
                None => METHOD,
            }
            .to_string(),
            known,
            known_note,
            screen: located.as_ref().map(|_| ScreenInfo {
                rule,
                reason: crate::screen::reason(&rule, query_is_drug),
                details: crate::screen::details(
                    &weights_label(&used.source),
                    &clinical.ontology_note,
                ),
                flag_note: clinical.flag_note(),
                flagged,
            }),
            evidence,
            elapsed_ms: 0.0,
        }
    })
}

/// Candidates a repurposing question shows: as many as the entity page asks for, so the
/// list and its order are the page's.
pub const ASK_CANDIDATES: usize = MAX_CANDIDATES;

/// A repurposing question's answer ([`serenqa_shared::api::Understood::repurpose`]): the
/// named entity's own Discover reply with the page's defaults, so Ask shows the same
/// candidates, order, labels and flags as the entity page. Without the precomputed model the
/// reply says so in a note.
pub fn for_ask(
    s: &AppState,
    mut r: serenqa_shared::api::AskResponse,
) -> serenqa_shared::api::AskResponse {
    let Some(view) = r.understood.repurpose.clone() else {
        return r;
    };
    let g = s.graph.clone();
    let node = view.index as NodeId;
    if (node as usize) >= g.node_count() || g.ident(node) != view.id {
        return r;
    }
    let Some(model) = s.model.clone() else {
        r.notes.push("repurposing candidates need the precomputed model (serenqa precompute); the entity page lists them once it is there".into());
        return r;
    };
    match reply(s, &model, node, ASK_CANDIDATES, None, ScreenRule::default()) {
        Ok(d) => r.discover = Some(d),
        Err(e) => r.notes.push(format!("repurposing candidates: {e}")),
    }
    r
}

/// Below this calibrated probability even the best candidate is weak evidence: fewer than one
/// in twenty such predictions would be expected to be a treatment.
pub const WEAK_EVIDENCE: f64 = 0.05;

fn evidence_strength(best: f64, g: &Graph, node: NodeId) -> EvidenceStrength {
    let weak = best < WEAK_EVIDENCE;
    let note = if weak {
        format!(
            "The evidence is thin for every candidate of {}: the most plausible has a calibrated probability of {:.1}% of being a treatment. Percentiles only rank candidates against each other; read them as leads to check, not as likely treatments.",
            g.name(node),
            best * 100.0
        )
    } else {
        format!(
            "The most plausible candidate has a calibrated probability of {:.0}% of being a treatment.",
            best * 100.0
        )
    };
    EvidenceStrength {
        best,
        weak,
        threshold: WEAK_EVIDENCE,
        note,
    }
}

/// The known answers in words: how many treat, how many only palliate.
fn known_note(known: &[KnownAnswer], drug_page: bool) -> String {
    let treats = known
        .iter()
        .filter(|k| k.relation != serenqa_model::discover::PALLIATES)
        .count();
    let palliates = known.len() - treats;
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    if drug_page {
        return match (treats, palliates) {
            (0, 0) => "No indication recorded in the graph.".to_string(),
            (0, p) => format!(
                "Treats no disease recorded in the graph; palliates {}.",
                n(p, "disease", "diseases")
            ),
            (t, 0) => format!(
                "Treats {}; palliates none recorded.",
                n(t, "disease", "diseases")
            ),
            (t, p) => format!(
                "Treats {}; palliates {}.",
                n(t, "disease", "diseases"),
                n(p, "more", "more")
            ),
        };
    }
    match (treats, palliates) {
        (0, 0) => "No treatment or palliative drug recorded in the graph.".to_string(),
        (0, p) => format!("No disease-modifying treatment recorded; {p} symptomatic (palliative)."),
        (t, 0) => format!(
            "{}; no drug recorded as only symptomatic.",
            n(
                t,
                "disease-modifying treatment",
                "disease-modifying treatments"
            )
        ),
        (t, p) => format!(
            "{}; {p} symptomatic (palliative).",
            n(
                t,
                "disease-modifying treatment",
                "disease-modifying treatments"
            )
        ),
    }
}

/// Which weights the RNS columns use, and why (for the reply's reason).
fn weights_label(source: &WeightsSource) -> String {
    format!("the weights in force ({})", source.label)
}
