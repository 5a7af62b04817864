//! Ground-truth exploration paths: up to 20 shortest paths of at most 3 hops in G (= Gc − R)
//! from an existing answer to a serendipity answer, walking edges in either direction.
//!
//! For each (e ∈ Ae, s ∈ As) pair, in node-id order, the paths of the pair's shortest length
//! (1, 2 or 3) are enumerated in adjacency order; all pairs' paths are then sorted by
//! (hops, text) and the first 20 kept. Three-hop search is bounded per pair
//! ([`THREE_HOP_WORK`] edge visits) so a pair of hubs cannot stall the build.
//!
//! Text form (paper A.3): `ID--REL--Name:Type--REL--Name:Type--REL--ID`.

use std::collections::HashMap;

use serenqa_graph::{Direction, EdgeId, Graph, NodeId};

use crate::query::View;

pub const MAX_PATHS: usize = 20;
pub const MAX_HOPS: usize = 3;
pub const THREE_HOP_WORK: usize = 3_000_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GtPath {
    /// hops + 1 nodes, from an existing to a serendipity answer.
    pub nodes: Vec<NodeId>,
    /// One edge per hop.
    pub edges: Vec<EdgeId>,
}

impl GtPath {
    pub fn hops(&self) -> usize {
        self.edges.len()
    }

    pub fn render(&self, g: &Graph) -> String {
        let mut s = g.ident(self.nodes[0]).to_string();
        for (i, &e) in self.edges.iter().enumerate() {
            s.push_str("--");
            s.push_str(&g.relation(g.edge(e).rel).name);
            s.push_str("--");
            let n = self.nodes[i + 1];
            if i + 1 == self.edges.len() {
                s.push_str(g.ident(n));
            } else {
                s.push_str(&format!("{}:{}", g.name(n), g.type_label(g.node_type(n))));
            }
        }
        s
    }
}

/// Neighbours through visible edges: (other end, edge), in adjacency order.
fn neighbours(view: View<'_>, n: NodeId) -> Vec<(NodeId, EdgeId)> {
    view.graph
        .edges(n, Direction::Both)
        .filter(|e| !view.removed.is_some_and(|m| m.contains(e.id)))
        .map(|e| (if e.source == n { e.target } else { e.source }, e.id))
        .filter(|&(o, _)| o != n)
        .collect()
}

/// Shortest paths (≤ 3 hops, ≤ `cap`) between two distinct nodes.
pub fn shortest_between(view: View<'_>, a: NodeId, b: NodeId, cap: usize) -> Vec<GtPath> {
    let na = neighbours(view, a);
    let nb = neighbours(view, b);
    let mut out = Vec::new();
    for &(o, e) in &na {
        if o == b {
            out.push(GtPath {
                nodes: vec![a, b],
                edges: vec![e],
            });
            if out.len() >= cap {
                return out;
            }
        }
    }
    if !out.is_empty() {
        return out;
    }
    let mut at_b: HashMap<NodeId, Vec<EdgeId>> = HashMap::new();
    for &(o, e) in &nb {
        if o != a {
            at_b.entry(o).or_default().push(e);
        }
    }
    for &(u, e1) in &na {
        if let Some(es) = at_b.get(&u) {
            for &e2 in es {
                out.push(GtPath {
                    nodes: vec![a, u, b],
                    edges: vec![e1, e2],
                });
                if out.len() >= cap {
                    return out;
                }
            }
        }
    }
    if !out.is_empty() {
        return out;
    }
    // Three hops a–u–w–b, expanding from the endpoint with the smaller neighbourhood.
    let (from, to, nf, flip) = if na.len() <= nb.len() {
        (a, b, &na, false)
    } else {
        (b, a, &nb, true)
    };
    let mut at_to: HashMap<NodeId, Vec<EdgeId>> = HashMap::new();
    for &(o, e) in if flip { &na } else { &nb } {
        if o != from {
            at_to.entry(o).or_default().push(e);
        }
    }
    let mut work = 0usize;
    for &(u, e1) in nf {
        if u == to {
            continue;
        }
        let g = view.graph;
        for er in g.edges(u, Direction::Both) {
            work += 1;
            if work > THREE_HOP_WORK {
                return out;
            }
            if view.removed.is_some_and(|m| m.contains(er.id)) {
                continue;
            }
            let w = if er.source == u { er.target } else { er.source };
            if w == u || w == from || w == to {
                continue;
            }
            if let Some(es) = at_to.get(&w) {
                for &e3 in es {
                    let p = if flip {
                        GtPath {
                            nodes: vec![to, w, u, from],
                            edges: vec![e3, er.id, e1],
                        }
                    } else {
                        GtPath {
                            nodes: vec![from, u, w, to],
                            edges: vec![e1, er.id, e3],
                        }
                    };
                    out.push(p);
                    if out.len() >= cap {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// Up to [`MAX_PATHS`] shortest paths from Ae to As on `view`, rendered.
pub fn ground_truth(
    view: View<'_>,
    existing: &[NodeId],
    serendipity: &[NodeId],
) -> Vec<(GtPath, String)> {
    let mut all: Vec<(GtPath, String)> = Vec::new();
    for &e in existing {
        for &s in serendipity {
            if e == s {
                continue;
            }
            for p in shortest_between(view, e, s, MAX_PATHS) {
                let text = p.render(view.graph);
                all.push((p, text));
            }
        }
    }
    all.sort_by(|a, b| a.0.hops().cmp(&b.0.hops()).then_with(|| a.1.cmp(&b.1)));
    all.dedup_by(|a, b| a.1 == b.1);
    all.truncate(MAX_PATHS);
    all
}
