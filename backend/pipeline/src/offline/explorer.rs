//! The offline explorer's decisions (see the module docs of [`crate::offline`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serenqa_graph::{NodeId, RelId, TypeId};
use serenqa_model::slice::{build_slice, MAX_ENTITIES};
use serenqa_shared::rns::{Scorer, Terms};

use crate::explore::{Env, Step};

/// ≤ m relations at u: highest reach of the answer types within the remaining hops from the
/// relation's far-end type, then the rarer relation (fewer edges in the graph), then by id.
pub fn select_relations(
    env: &Env<'_>,
    targets: &BTreeSet<TypeId>,
    u: NodeId,
    rels: &BTreeMap<RelId, usize>,
    m: usize,
    remaining: usize,
) -> Vec<RelId> {
    let g = env.g;
    let far_type = |r: RelId| -> Option<TypeId> {
        let rt = g.relation(r);
        let ut = g.node_type(u);
        match (rt.source_type, rt.target_type) {
            (Some(s), Some(t)) if s == ut => Some(t),
            (Some(s), Some(_)) => Some(s),
            _ => None,
        }
    };
    let mut scored: Vec<(f64, u64, RelId)> = rels
        .keys()
        .map(|&r| {
            let reach = far_type(r)
                .map(|t| env.stats.reach(t, targets, remaining))
                .unwrap_or(0.5);
            (
                reach,
                env.stats.rel_counts.get(r as usize).copied().unwrap_or(0),
                r,
            )
        })
        .filter(|(reach, _, _)| *reach > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.into_iter().take(m).map(|(_, _, r)| r).collect()
}

/// RNS(Ae, {c}) for each candidate c (just the RNS value).
pub fn rns_gains(env: &Env<'_>, roots: &[NodeId], cands: &[NodeId]) -> HashMap<NodeId, f64> {
    rns_gains_terms(env, roots, cands)
        .into_iter()
        .map(|(k, t)| (k, t.rns))
        .collect()
}

/// R, N, S and RNS of (Ae, {c}) for each candidate c (marginal gain of adding c as serendipitous), from one
/// slice of Ae ∪ candidates. Empty when there is no model or the slice fails.
pub fn rns_gains_terms(
    env: &Env<'_>,
    roots: &[NodeId],
    cands: &[NodeId],
) -> HashMap<NodeId, Terms> {
    let Some(model) = env.model else {
        return HashMap::new();
    };
    let mut nodes: Vec<NodeId> = roots.to_vec();
    let room = MAX_ENTITIES.saturating_sub(nodes.len());
    let extra: Vec<NodeId> = cands
        .iter()
        .copied()
        .filter(|c| !roots.contains(c))
        .take(room)
        .collect();
    nodes.extend(&extra);
    let Ok(slice) = build_slice(env.walk, model, env.blocks, &nodes) else {
        return HashMap::new();
    };
    let Ok(sc) = Scorer::new(&slice) else {
        return HashMap::new();
    };
    let ae: Vec<usize> = (0..roots.len()).collect();
    let cs: Vec<usize> = (roots.len()..nodes.len()).collect();
    match sc.score_candidates(&ae, &cs, &env.weights) {
        Ok(terms) => extra.iter().zip(terms).map(|(&c, t)| (c, t)).collect(),
        Err(_) => HashMap::new(),
    }
}

fn normalise(xs: &HashMap<NodeId, f64>) -> HashMap<NodeId, f64> {
    let (lo, hi) = xs
        .values()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    xs.iter()
        .map(|(&k, &v)| (k, if hi > lo { (v - lo) / (hi - lo) } else { 0.5 }))
        .collect()
}

/// ≤ n nodes: answer-typed candidates first, by marginal RNS gain against `known` (Ae: the
/// roots and the entities the question names; or by edge score without a model); then other
/// candidates — and the `named` entities, which are walked through but never proposed — by
/// reach of the answer types × edge score; nothing that can no longer reach an answer type.
pub fn select_nodes(
    env: &Env<'_>,
    targets: &BTreeSet<TypeId>,
    known: &[NodeId],
    named: &[NodeId],
    cands: &[(Step, f64)],
    n: usize,
    remaining: usize,
) -> Vec<NodeId> {
    let g = env.g;
    let mut edge_score: HashMap<NodeId, f64> = HashMap::new();
    for (s, sc) in cands {
        let e = edge_score.entry(s.to).or_insert(*sc);
        *e = e.max(*sc);
    }
    let mut typed: Vec<NodeId> = edge_score
        .keys()
        .copied()
        .filter(|&v| targets.contains(&g.node_type(v)) && !named.contains(&v))
        .collect();
    typed.sort_unstable();
    let rns = normalise(&rns_gains(env, known, &typed));
    let es = normalise(&edge_score);
    let mut ranked: Vec<(f64, NodeId)> = edge_score
        .keys()
        .map(|&v| {
            let e = es.get(&v).copied().unwrap_or(0.0);
            let p = if targets.contains(&g.node_type(v)) && !named.contains(&v) {
                2.0 + rns.get(&v).copied().unwrap_or(e)
            } else {
                env.stats.reach(g.node_type(v), targets, remaining) * (0.5 + 0.5 * e)
            };
            (p, v)
        })
        .filter(|(p, _)| *p > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().take(n).map(|(_, v)| v).collect()
}

/// Go deeper while hops remain, fewer than half of the new nodes are answer-typed (the beam
/// has not yet found its candidates) and some new node can still reach an answer type.
pub fn should_continue(
    env: &Env<'_>,
    targets: &BTreeSet<TypeId>,
    next: &[NodeId],
    remaining: usize,
) -> bool {
    if remaining == 0 || next.is_empty() {
        return false;
    }
    let typed = next
        .iter()
        .filter(|&&v| targets.contains(&env.g.node_type(v)))
        .count();
    typed * 2 < next.len()
        && next
            .iter()
            .any(|&v| env.stats.reach(env.g.node_type(v), targets, remaining) > 0.0)
}
