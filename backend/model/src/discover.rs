//! Discovery for one entity (the clinician's view): its known answers, and candidates beyond
//! them ranked by walk proximity, each scored by RNS against the known answers.
//!
//! - **Known answers (Ae)**: for a disease, the drugs related to it by a treatment relation
//!   (verb `treats`, or a name containing `INDICATED`) or a palliation relation (verb
//!   `palliates`: symptomatic standard of care is known too, and never a candidate); for a
//!   drug, the diseases it treats or palliates. Each keeps its relation ([`Discovery::known`]).
//!   With none known, Ae = {the entity itself}, so RNS still measures distance from it.
//! - **Candidates**: entities of the answer type, not in Ae, with the highest P3ᵀx where x is
//!   uniform over {entity} ∪ Ae — the probability of landing on them in a 1–3 step walk from
//!   what is already known (the same P3 the RNS model uses). This is a cheap, deterministic
//!   proposal step; the evaluation pipeline's explorers are the stronger, slower alternative.
//!   [`discover_with`] takes the proposal from the caller instead: the server passes the
//!   plausibility model's best pairs for the entity (crate `serenqa-predict`), so candidates
//!   are the most plausible ones, then scored by RNS like the P3-proposed ones.
//! - **Scores**: RNS(Ae, {c}) per candidate from the slice of Ae ∪ candidates; the slice is
//!   returned too, so the browser can re-weight without asking the server again.
//! - **What a candidate is known for**: [`treatment_links`] — a candidate drug's current
//!   indications, a candidate disease's known drugs — so a clinician sees the size of the leap.

use serenqa_graph::{Direction, Graph, NodeId, TypeId};
use serenqa_shared::rns::{Scorer, Slice, Terms, Weights};

use crate::slice::{build_slice, BlockCache};
use crate::transition::Transition;
use crate::{Model, ModelError};

/// Most candidates one request may ask for (the browser re-scores them per slider move).
pub const MAX_CANDIDATES: usize = 200;
/// Most known answers kept in Ae (the rest are still excluded from the candidates).
pub const MAX_EXISTING: usize = 100;

#[derive(Clone, Debug)]
pub struct Discovery {
    pub query: NodeId,
    /// The answer type (e.g. Compound for a disease).
    pub answer_type: TypeId,
    /// Ae as scored: the known answers (at most [`MAX_EXISTING`]) followed by the query
    /// itself — the entity the page names is always in Ae, as the entities a question names
    /// are in the fitted weights' Ae (docs/RNS.md, "What Ae holds").
    pub existing: Vec<NodeId>,
    /// True when `existing` holds known answers besides the query.
    pub existing_known: bool,
    /// Every known answer with its kind, [`TREATS`] or [`PALLIATES`] (whatever the graph's
    /// verb: a CKG's "is indicated for" is a treatment), treatments first; a node both treated
    /// and palliated is listed once, as treated.
    pub known: Vec<(NodeId, String)>,
    /// (candidate, walk proximity), best first.
    pub candidates: Vec<(NodeId, f64)>,
    /// Slice over `existing` followed by the candidates, in that order.
    pub slice: Slice,
    pub weights: Weights,
    /// RNS(Ae, {c}) per candidate, parallel to `candidates`.
    pub terms: Vec<Terms>,
}

/// Is relation `r` a treatment relation ("treats", "is indicated for")?
fn is_treatment(g: &Graph, r: u16) -> bool {
    let rel = g.relation(r);
    rel.verb.to_lowercase().contains("treat") || rel.name.to_uppercase().contains("INDICATED")
}

/// The two kinds of known answer, as `Discovery::known` names them (the API's words): a
/// treatment (a treats or indication relation: disease-modifying) and a palliation.
pub use serenqa_shared::api::{KNOWN_PALLIATES as PALLIATES, KNOWN_TREATS as TREATS};

/// Is relation `r` a known-answer relation: a treatment, or a palliation?
fn is_known_relation(g: &Graph, r: u16) -> bool {
    is_treatment(g, r) || g.relation(r).verb.to_lowercase().contains("palliat")
}

/// The other ends of `q`'s treatment edges: for a drug the diseases it treats (its current
/// indications), for a disease the drugs that treat it. Sorted, distinct.
pub fn treatment_links(g: &Graph, q: NodeId) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = g
        .edges(q, Direction::Both)
        .filter(|e| is_treatment(g, e.rel))
        .map(|e| if e.source == q { e.target } else { e.source })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// At most `shown` of [`treatment_links`], best-connected first (the ones a clinician
/// recognises), and how many there are in all.
pub fn known_for(g: &Graph, q: NodeId, shown: usize) -> (Vec<NodeId>, usize) {
    let mut links = treatment_links(g, q);
    let total = links.len();
    links.sort_by_key(|&x| (std::cmp::Reverse(g.degree(x)), x));
    links.truncate(shown);
    (links, total)
}

/// Treatment links listed per candidate in the clinician's views (the total is sent too).
pub const KNOWN_FOR_SHOWN: usize = 3;

/// Known answers of `q` over treatment and palliation relations (with the relation's verb,
/// treatments first), and the answer type.
fn known_answers(g: &Graph, q: NodeId) -> Option<(TypeId, Vec<(NodeId, String)>)> {
    let mut answer_type = None;
    let mut known: Vec<(bool, NodeId, String)> = Vec::new();
    for e in g.edges(q, Direction::Both) {
        if !is_known_relation(g, e.rel) {
            continue;
        }
        let other = if e.source == q { e.target } else { e.source };
        answer_type.get_or_insert(g.node_type(other));
        if Some(g.node_type(other)) == answer_type {
            // The kind, not the graph's verb ("is indicated for" on a CKG): what the API
            // promises and the page sorts by.
            let treats = is_treatment(g, e.rel);
            let kind = if treats { TREATS } else { PALLIATES };
            known.push((!treats, other, kind.to_string()));
        }
    }
    if answer_type.is_none() {
        // No such edge at this node: take the type at the other end of a treatment
        // relation whose schema includes the query's type.
        let t = g.node_type(q);
        for (r, rel) in g.relations().iter().enumerate() {
            if !is_treatment(g, r as u16) {
                continue;
            }
            if rel.source_type == Some(t) {
                answer_type = rel.target_type;
            } else if rel.target_type == Some(t) {
                answer_type = rel.source_type;
            }
            if answer_type.is_some() {
                break;
            }
        }
    }
    // Treatments first; a node both treated and palliated once, as treated.
    known.sort_by_key(|k| (k.0, k.1));
    let mut seen = std::collections::HashSet::new();
    let known = known
        .into_iter()
        .filter(|k| seen.insert(k.1))
        .map(|(_, n, v)| (n, v))
        .collect();
    answer_type.map(|t| (t, known))
}

/// The known answers of `q` (treated or palliated), sorted: for a disease its drugs, for a
/// drug its diseases.
pub fn known_of(g: &Graph, q: NodeId) -> Vec<NodeId> {
    let mut v: Vec<NodeId> = known_answers(g, q)
        .map(|(_, k)| k.into_iter().map(|x| x.0).collect())
        .unwrap_or_default();
    v.sort_unstable();
    v
}

pub fn discover(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    q: NodeId,
    limit: usize,
    weights: &Weights,
) -> Result<Discovery, ModelError> {
    discover_with(g, model, cache, q, limit, weights, None)
}

/// Candidates proposed by someone else (the plausibility model's best pairs, best first): at
/// most `limit` of them that are of the answer type, not the query and not known are kept and
/// scored by RNS like P3-proposed ones.
pub type Proposal<'a> = &'a dyn Fn(NodeId, TypeId, &[NodeId]) -> Vec<(NodeId, f64)>;

/// [`discover`] with an optional proposal step replacing P3 proximity.
pub fn discover_with(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    q: NodeId,
    limit: usize,
    weights: &Weights,
    propose: Option<Proposal>,
) -> Result<Discovery, ModelError> {
    if q as usize >= g.node_count() {
        return Err(ModelError::UnknownNode(format!("#{q}")));
    }
    weights.validate()?;
    let limit = limit.clamp(1, MAX_CANDIDATES);
    let Some((answer_type, known_rel)) = known_answers(g, q) else {
        return Err(ModelError::Invalid(format!(
            "{} is a {}: discovery works from diseases and drugs (entities at either end of a treatment relation)",
            g.name(q),
            g.type_display(g.node_type(q))
        )));
    };
    let mut known: Vec<NodeId> = known_rel.iter().map(|k| k.0).collect();
    let existing_known = !known.is_empty();
    // Ae keeps the treatments first when there are more known answers than it holds.
    let mut existing: Vec<NodeId> = known.iter().copied().take(MAX_EXISTING).collect();
    known.sort_unstable();
    existing.push(q);

    let ranked = if let Some(propose) = propose {
        let mut r: Vec<(NodeId, f64)> = propose(q, answer_type, &known)
            .into_iter()
            .filter(|&(c, _)| {
                c != q
                    && (c as usize) < g.node_count()
                    && g.node_type(c) == answer_type
                    && known.binary_search(&c).is_err()
            })
            .collect();
        r.truncate(limit);
        r
    } else {
        walk_candidates(g, model, q, answer_type, &existing, &known, limit, false)
    };

    let mut nodes = existing.clone();
    nodes.extend(ranked.iter().map(|c| c.0));
    let slice = build_slice(g, model, cache, &nodes)?;
    let scorer = Scorer::new(&slice)?;
    let ae: Vec<usize> = (0..existing.len()).collect();
    let cands: Vec<usize> = (existing.len()..nodes.len()).collect();
    let terms = if cands.is_empty() {
        Vec::new()
    } else {
        scorer.score_candidates(&ae, &cands, weights)?
    };
    Ok(Discovery {
        query: q,
        answer_type,
        existing,
        existing_known,
        known: known_rel,
        candidates: ranked,
        slice,
        weights: *weights,
        terms,
    })
}

/// Candidates by walk proximity: entities of `answer_type` other than `q` and the `known`
/// answers (sorted), by (P3ᵀx)_c with x uniform over {q} ∪ `existing`, best first (ties by
/// id), at most `limit`, only those a walk reaches. `dense` evaluates P3ᵀx with three passes
/// over the whole graph (the baseline `serenqa discover bench` compares against);
/// otherwise [`Transition::p3t_at`] reads only the seeds' neighbourhood and the answer type's
/// adjacency — the same numbers up to summation order.
#[allow(clippy::too_many_arguments)]
pub fn walk_candidates(
    g: &Graph,
    model: &Model,
    q: NodeId,
    answer_type: TypeId,
    existing: &[NodeId],
    known: &[NodeId],
    limit: usize,
    dense: bool,
) -> Vec<(NodeId, f64)> {
    let t = Transition::new(g, model.params.directed);
    let mut seeds = existing.to_vec();
    seeds.push(q);
    seeds.sort_unstable();
    seeds.dedup();
    let x: Vec<(NodeId, f64)> = seeds
        .iter()
        .map(|&s| (s, 1.0 / seeds.len() as f64))
        .collect();
    let pool: Vec<NodeId> = g
        .nodes_of_type(answer_type)
        .iter()
        .copied()
        .filter(|&c| c != q && known.binary_search(&c).is_err())
        .collect();
    let y = if dense {
        let n = g.node_count();
        let mut xd = vec![0.0; n];
        for &(s, m) in &x {
            xd[s as usize] = m;
        }
        let mut yd = vec![0.0; n];
        t.p3t(&xd, &t.inv_degrees(), &mut yd);
        pool.iter().map(|&c| yd[c as usize]).collect()
    } else {
        t.p3t_at(&x, &pool)
    };
    let mut ranked: Vec<(NodeId, f64)> =
        pool.into_iter().zip(y).filter(|&(_, p)| p > 0.0).collect();
    let order = |a: &(NodeId, f64), b: &(NodeId, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if limit == 0 {
        return Vec::new();
    }
    if ranked.len() > limit {
        ranked.select_nth_unstable_by(limit - 1, order);
        ranked.truncate(limit);
    }
    ranked.sort_by(order);
    ranked
}
