//! Code-based PROXIES for the three LLM judges, on the same 1–5 scale. They are not LLM
//! judgments and are labelled `proxy` wherever they appear.
//! - Faithfulness proxy: 1 + 4 × (share of entity ids mentioned in the summaries that are
//!   nodes of the explored subgraph); 1 when the summaries mention no entity.
//! - Comprehensiveness proxy: 1 + 4 × (share of explored non-root nodes whose id the summaries
//!   mention); 1 when nothing was explored.
//! - Relevance proxy: 1 + 4 × (share of predicted entities that are in the gold set, or have a
//!   gold type and share a neighbour with a gold entity in Gc); 1 for an empty prediction.

use std::collections::{BTreeSet, HashSet};

use serenqa_graph::{Direction, Graph, NodeId};

use crate::metrics::id_tokens;

/// Tokens of `text` that can name a node: all-digit tokens (Entrez gene ids) only inside
/// parentheses, so counts and hop numbers in prose are not read as gene ids.
fn id_like(text: &str) -> Vec<&str> {
    id_tokens(text)
        .into_iter()
        .filter(|t| !t.chars().all(|c| c.is_ascii_digit()) || text.contains(&format!("({t})")))
        .collect()
}

/// Ids in `text` that are identifiers of some graph node.
fn mentioned_nodes(g: &Graph, text: &str) -> BTreeSet<NodeId> {
    let mut out = BTreeSet::new();
    for t in id_like(text) {
        for &n in g.find_by_ident(t) {
            out.insert(n);
        }
    }
    out
}

pub fn faithfulness(g: &Graph, summaries: &[String], subgraph: &BTreeSet<NodeId>) -> f64 {
    let text = summaries.join("\n");
    let tokens = id_like(&text);
    // An id names a subgraph node if any node with that id is in the subgraph.
    let mut mentioned = 0usize;
    let mut inside = 0usize;
    for t in tokens {
        let ns = g.find_by_ident(t);
        if ns.is_empty() {
            continue;
        }
        mentioned += 1;
        if ns.iter().any(|n| subgraph.contains(n)) {
            inside += 1;
        }
    }
    if mentioned == 0 {
        return 1.0;
    }
    1.0 + 4.0 * inside as f64 / mentioned as f64
}

pub fn comprehensiveness(g: &Graph, summaries: &[String], explored: &BTreeSet<NodeId>) -> f64 {
    if explored.is_empty() {
        return 1.0;
    }
    let m = mentioned_nodes(g, &summaries.join("\n"));
    1.0 + 4.0 * explored.iter().filter(|n| m.contains(n)).count() as f64 / explored.len() as f64
}

pub fn relevance(g: &Graph, predicted: &[NodeId], gold: &[NodeId]) -> f64 {
    if predicted.is_empty() {
        return 1.0;
    }
    let gold_set: HashSet<NodeId> = gold.iter().copied().collect();
    let gold_types: HashSet<_> = gold.iter().map(|&n| g.node_type(n)).collect();
    let mut gold_nb: HashSet<NodeId> = HashSet::new();
    for &x in gold {
        gold_nb.extend(g.edges(x, Direction::Both).map(|e| {
            if e.source == x {
                e.target
            } else {
                e.source
            }
        }));
    }
    let rel = predicted
        .iter()
        .filter(|&&p| {
            gold_set.contains(&p)
                || (gold_types.contains(&g.node_type(p))
                    && g.edges(p, Direction::Both).any(|e| {
                        gold_nb.contains(&if e.source == p { e.target } else { e.source })
                    }))
        })
        .count();
    1.0 + 4.0 * rel as f64 / predicted.len() as f64
}
