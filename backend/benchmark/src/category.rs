//! The annotation category of a question ("class:subclass"), derived from the graph. The
//! paper grouped questions into expert batches by disease class; Hetionet has no disease
//! ontology edges, but it localises diseases in anatomy (`LOCALIZES_DlA`), which groups them
//! by organ system. The rule:
//!
//! 1. The *focus disease* is the first named Disease of the query; else, when the answers are
//!    diseases, the first answer; else the first disease (by node id) that a named compound
//!    treats or palliates.
//! 2. With a focus disease: among the anatomy it localises to, the class is the one shared by
//!    the most diseases (the broad system, e.g. "blood"), the subclass the one shared by the
//!    fewest (the most specific site); ties by node id. A disease with no anatomy gets
//!    `disease:<name>`.
//! 3. Without one: a named pharmacologic class gives `drug:<class>`; else the first named
//!    compound — or, when the answers are compounds, the first answer — gives
//!    `drug:<its smallest pharmacologic class>` (the most specific) or `drug:unclassified`;
//!    anything else is `other:<answer type>`.

use serenqa_graph::{Direction, Graph, NodeId};

use crate::query::{QNode, Query};

fn type_named(g: &Graph, display: &str) -> Option<u16> {
    (0..g.type_count() as u16).find(|&t| g.type_display(t).eq_ignore_ascii_case(display))
}

fn is_type(g: &Graph, n: NodeId, t: Option<u16>) -> bool {
    t.is_some_and(|t| g.node_type(n) == t)
}

/// Neighbours of `n` of type `t` through any relation, sorted, distinct.
fn neighbours_of_type(g: &Graph, n: NodeId, t: u16, rel_names: &[&str]) -> Vec<NodeId> {
    let rels: Vec<u16> = rel_names.iter().filter_map(|r| g.relation_id(r)).collect();
    let mut v: Vec<NodeId> = g
        .edges(n, Direction::Both)
        .filter(|e| rels.is_empty() || rels.contains(&e.rel))
        .map(|e| if e.source == n { e.target } else { e.source })
        .filter(|&m| g.node_type(m) == t)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

pub fn category(g: &Graph, q: &Query, answers: &[NodeId]) -> String {
    let disease = type_named(g, "Disease");
    let compound = type_named(g, "Compound").or_else(|| type_named(g, "Drug"));
    let anatomy = type_named(g, "Anatomy");
    let entities: Vec<NodeId> = q.entities().collect();
    let mut focus = entities.iter().copied().find(|&e| is_type(g, e, disease));
    if focus.is_none() && matches!(q.nodes.first(), Some(QNode::Class(t)) if Some(*t) == disease) {
        focus = answers.first().copied();
    }
    if focus.is_none() {
        if let (Some(d), Some(c)) = (
            disease,
            entities.iter().copied().find(|&e| is_type(g, e, compound)),
        ) {
            focus = neighbours_of_type(g, c, d, &["TREATS_CtD", "PALLIATES_CpD"])
                .first()
                .copied();
        }
    }
    if let Some(d) = focus {
        let sites = match anatomy {
            Some(a) => neighbours_of_type(g, d, a, &["LOCALIZES_DlA"]),
            None => Vec::new(),
        };
        let dla = g.relation_id("LOCALIZES_DlA");
        let share = |a: NodeId| {
            dla.map_or(0, |r| {
                g.in_range_rel(a, r).len() + g.out_range_rel(a, r).len()
            })
        };
        let broad = sites
            .iter()
            .copied()
            .max_by_key(|&a| (share(a), std::cmp::Reverse(a)));
        let specific = sites.iter().copied().min_by_key(|&a| (share(a), a));
        return match (broad, specific) {
            (Some(b), Some(s)) => format!("{}:{}", g.name(b), g.name(s)),
            _ => format!("disease:{}", g.name(d)),
        };
    }
    let pharm = type_named(g, "Pharmacologic Class");
    if let Some(pc) = entities.iter().copied().find(|&e| is_type(g, e, pharm)) {
        return format!("drug:{}", g.name(pc));
    }
    let answer_drug = match q.nodes.first() {
        Some(QNode::Class(t)) if Some(*t) == compound => answers.first().copied(),
        _ => None,
    };
    if let Some(c) = entities
        .iter()
        .copied()
        .find(|&e| is_type(g, e, compound))
        .or(answer_drug)
    {
        if let Some(pc) = pharm {
            let classes = neighbours_of_type(g, c, pc, &[]);
            if let Some(best) = classes.iter().copied().min_by_key(|&k| (g.degree(k), k)) {
                return format!("drug:{}", g.name(best));
            }
        }
        return "drug:unclassified".into();
    }
    let t = match q.nodes.first() {
        Some(QNode::Class(t)) => g.type_display(*t).to_lowercase(),
        _ => "unknown".into(),
    };
    format!("other:{t}")
}
