//! The nine question pattern types (paper, Appendix A.2) as query shapes, and the sampling of
//! one instance of a shape from the graph.
//!
//! Shapes (x = question node 0; `C` = a class variable; `E` = a named entity; edges keep the
//! stored orientation of their relation, so each can read either way):
//!
//! | type | nodes                 | edges                       | reads like                                   |
//! |------|-----------------------|-----------------------------|----------------------------------------------|
//! | 1.1  | x, E                  | E→x                         | which T does E ‹rel›                          |
//! | 1.2  | x, E                  | x→E                         | which T ‹rel› E                               |
//! | 2.1  | x, C, E               | x–C, C–E                    | T linked to C-s linked to E (chain)           |
//! | 3.1  | x, C2, C1, E          | x–C2, C2–C1, C1–E           | three-hop chain                               |
//! | 3.2  | x, C, E2, E3          | x–C, C–E2, C–E3             | hierarchical: the intermediate has two facts  |
//! | 3.3  | x, E2, C, E3          | x–E2, x–C, C–E3             | branching: one direct and one two-hop fact    |
//! | 4.1  | x, E2, E3             | x–E2, x–E3                  | two-way intersection                          |
//! | 4.2  | x, E2, E3, E4         | x–E2, x–E3, x–E4            | three-way intersection                        |
//! | 4.3  | x, E, C               | x–E, x–C, C–E               | cyclic: x and C both linked to E and each other |
//!
//! Sampling is instance-first: pick a seed answer x₀, then walk real edges from it to fill
//! the shape, so the answer set is never empty; [`crate::generate`] then keeps instances
//! with 2–20 answers. Relation types are picked uniformly among those present at a node
//! before an edge is picked, so huge relations (gene expression) do not crowd out the rest.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use crate::query::{QEdge, QNode, Query};
use crate::rng::Rng;

#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PatternType {
    #[serde(rename = "1.1")]
    P1_1,
    #[serde(rename = "1.2")]
    P1_2,
    #[serde(rename = "2.1")]
    P2_1,
    #[serde(rename = "3.1")]
    P3_1,
    #[serde(rename = "3.2")]
    P3_2,
    #[serde(rename = "3.3")]
    P3_3,
    #[serde(rename = "4.1")]
    P4_1,
    #[serde(rename = "4.2")]
    P4_2,
    #[serde(rename = "4.3")]
    P4_3,
}

impl PatternType {
    pub const ALL: [PatternType; 9] = [
        PatternType::P1_1,
        PatternType::P1_2,
        PatternType::P2_1,
        PatternType::P3_1,
        PatternType::P3_2,
        PatternType::P3_3,
        PatternType::P4_1,
        PatternType::P4_2,
        PatternType::P4_3,
    ];

    pub fn code(self) -> &'static str {
        match self {
            PatternType::P1_1 => "1.1",
            PatternType::P1_2 => "1.2",
            PatternType::P2_1 => "2.1",
            PatternType::P3_1 => "3.1",
            PatternType::P3_2 => "3.2",
            PatternType::P3_3 => "3.3",
            PatternType::P4_1 => "4.1",
            PatternType::P4_2 => "4.2",
            PatternType::P4_3 => "4.3",
        }
    }

    pub fn parse(s: &str) -> Option<PatternType> {
        PatternType::ALL.into_iter().find(|p| p.code() == s)
    }

    /// The family name used in the paper's Table 4.
    pub fn family(self) -> &'static str {
        match self {
            PatternType::P1_1 | PatternType::P1_2 => "One hop",
            PatternType::P2_1 => "Two hop",
            PatternType::P3_1 | PatternType::P3_2 | PatternType::P3_3 => "Three hop",
            _ => "Intersection",
        }
    }

    /// Entries per type in the paper's benchmark (Table 4; 1,529 in all).
    pub fn paper_count(self) -> usize {
        match self {
            PatternType::P1_1 => 152,
            PatternType::P1_2 => 84,
            PatternType::P2_1 => 152,
            PatternType::P3_1 => 62,
            PatternType::P3_2 => 113,
            PatternType::P3_3 => 237,
            PatternType::P4_1 => 263,
            PatternType::P4_2 => 455,
            PatternType::P4_3 => 11,
        }
    }

    /// Per-type targets for `total` questions in the paper's proportions (largest remainder;
    /// every type gets at least one when `total` ≥ 9).
    pub fn quotas(total: usize) -> Vec<(PatternType, usize)> {
        let paper: usize = PatternType::ALL.iter().map(|p| p.paper_count()).sum();
        let mut q: Vec<(PatternType, usize, usize)> = PatternType::ALL
            .iter()
            .map(|&p| {
                let exact = p.paper_count() * total;
                (p, exact / paper, exact % paper)
            })
            .collect();
        if total >= PatternType::ALL.len() {
            for e in &mut q {
                if e.1 == 0 {
                    e.1 = 1;
                    e.2 = 0;
                }
            }
        }
        let mut assigned: usize = q.iter().map(|e| e.1).sum();
        let mut order: Vec<usize> = (0..q.len()).collect();
        order.sort_by(|&a, &b| q[b].2.cmp(&q[a].2).then(a.cmp(&b)));
        let mut i = 0;
        while assigned < total {
            q[order[i % order.len()]].1 += 1;
            assigned += 1;
            i += 1;
        }
        while assigned > total {
            // Only when the minimum of one per type overshoots: take from the largest.
            let Some(big) = (0..q.len()).max_by_key(|&k| (q[k].1, std::cmp::Reverse(k))) else {
                break;
            };
            q[big].1 -= 1;
            assigned -= 1;
        }
        q.into_iter().map(|(p, n, _)| (p, n)).collect()
    }
}

impl fmt::Display for PatternType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One step along a real edge: the relation, the node reached, and whether the node we
/// came from is the stored source.
#[derive(Clone, Copy, Debug)]
struct Step {
    rel: RelId,
    to: NodeId,
    from_is_start: bool,
}

/// Which side of a relation the walker may stand on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Any,
    Source,
    Target,
}

/// Node-type and relation facts the sampler needs, computed once per graph.
pub struct Schema {
    /// Types with nodes, each with its sampling weight (drug-repurposing types weigh more).
    seed_types: Vec<(TypeId, u32)>,
    /// Types that make a question drug-repurposing related (Compound / Drug / Disease).
    pub focus: Vec<TypeId>,
}

impl Schema {
    pub fn new(g: &Graph) -> Schema {
        let focus: Vec<TypeId> = (0..g.type_count() as TypeId)
            .filter(|&t| {
                matches!(
                    g.type_display(t).to_lowercase().as_str(),
                    "compound" | "drug" | "disease"
                )
            })
            .collect();
        let seed_types = (0..g.type_count() as TypeId)
            .filter(|&t| !g.nodes_of_type(t).is_empty())
            .map(|t| (t, if focus.contains(&t) { 4 } else { 1 }))
            .collect();
        Schema { seed_types, focus }
    }

    fn seed(&self, g: &Graph, rng: &mut Rng) -> Option<NodeId> {
        let total: u32 = self.seed_types.iter().map(|s| s.1).sum();
        if total == 0 {
            return None;
        }
        let mut r = rng.below(total as usize) as u32;
        for &(t, w) in &self.seed_types {
            if r < w {
                return rng.pick(g.nodes_of_type(t)).copied();
            }
            r -= w;
        }
        None
    }

    /// Whether a query touches a drug or a disease (as a class or an entity).
    pub fn is_focused(&self, g: &Graph, q: &Query) -> bool {
        q.nodes.iter().any(|n| {
            let t = match *n {
                QNode::Class(t) => t,
                QNode::Entity(e) => g.node_type(e),
            };
            self.focus.contains(&t)
        })
    }
}

/// A random edge at `u`: first a uniformly chosen (relation, side) group, then an edge in it.
fn step(g: &Graph, u: NodeId, side: Side, rng: &mut Rng) -> Option<Step> {
    let mut groups: Vec<(RelId, bool, std::ops::Range<usize>)> = Vec::new();
    if side != Side::Target {
        let (_, _, rels) = g.out_csr();
        let r = g.out_range(u);
        let mut i = r.start;
        while i < r.end {
            let rel = rels[i];
            let sub = g.out_range_rel(u, rel);
            i = sub.end.max(i + 1);
            groups.push((rel, true, sub));
        }
    }
    if side != Side::Source {
        let (_, _, rels, _) = g.in_csr();
        let r = g.in_range(u);
        let mut i = r.start;
        while i < r.end {
            let rel = rels[i];
            let sub = g.in_range_rel(u, rel);
            i = sub.end.max(i + 1);
            groups.push((rel, false, sub));
        }
    }
    let (rel, out, range) = rng.pick(&groups)?.clone();
    let i = range.start + rng.below(range.len().max(1));
    let to = if out {
        g.out_csr().1[i]
    } else {
        g.in_csr().1[i]
    };
    Some(Step {
        rel,
        to,
        from_is_start: out,
    })
}

/// Query edge between query nodes `a` (where the walk stood) and `b` for a step.
fn edge(a: usize, b: usize, s: Step) -> QEdge {
    if s.from_is_start {
        QEdge {
            start: a,
            end: b,
            rel: s.rel,
        }
    } else {
        QEdge {
            start: b,
            end: a,
            rel: s.rel,
        }
    }
}

fn class(g: &Graph, n: NodeId) -> QNode {
    QNode::Class(g.node_type(n))
}

fn distinct(xs: &[NodeId]) -> bool {
    xs.iter().enumerate().all(|(i, a)| !xs[..i].contains(a))
}

/// Samples one instance of pattern `p` (or `None` when this attempt hit a dead end).
pub fn sample(g: &Graph, schema: &Schema, p: PatternType, rng: &mut Rng) -> Option<Query> {
    let x = schema.seed(g, rng)?;
    let q = match p {
        PatternType::P1_1 | PatternType::P1_2 => {
            let side = if p == PatternType::P1_1 {
                Side::Target
            } else {
                Side::Source
            };
            let s = step(g, x, side, rng)?;
            if s.to == x || (crate::query::symmetric(g, s.rel) && p == PatternType::P1_1) {
                // Symmetric relations have no "source" reading; they count as type 1.2.
                return None;
            }
            Query {
                nodes: vec![class(g, x), QNode::Entity(s.to)],
                edges: vec![edge(0, 1, s)],
            }
        }
        PatternType::P2_1 => {
            let s1 = step(g, x, Side::Any, rng)?;
            let s2 = step(g, s1.to, Side::Any, rng)?;
            if !distinct(&[x, s1.to, s2.to]) {
                return None;
            }
            Query {
                nodes: vec![class(g, x), class(g, s1.to), QNode::Entity(s2.to)],
                edges: vec![edge(0, 1, s1), edge(1, 2, s2)],
            }
        }
        PatternType::P3_1 => {
            let s1 = step(g, x, Side::Any, rng)?;
            let s2 = step(g, s1.to, Side::Any, rng)?;
            let s3 = step(g, s2.to, Side::Any, rng)?;
            if !distinct(&[x, s1.to, s2.to, s3.to]) {
                return None;
            }
            Query {
                nodes: vec![
                    class(g, x),
                    class(g, s1.to),
                    class(g, s2.to),
                    QNode::Entity(s3.to),
                ],
                edges: vec![edge(0, 1, s1), edge(1, 2, s2), edge(2, 3, s3)],
            }
        }
        PatternType::P3_2 => {
            let s1 = step(g, x, Side::Any, rng)?;
            let s2 = step(g, s1.to, Side::Any, rng)?;
            let s3 = step(g, s1.to, Side::Any, rng)?;
            if !distinct(&[x, s1.to, s2.to, s3.to]) {
                return None;
            }
            Query {
                nodes: vec![
                    class(g, x),
                    class(g, s1.to),
                    QNode::Entity(s2.to),
                    QNode::Entity(s3.to),
                ],
                edges: vec![edge(0, 1, s1), edge(1, 2, s2), edge(1, 3, s3)],
            }
        }
        PatternType::P3_3 => {
            let s1 = step(g, x, Side::Any, rng)?;
            let s2 = step(g, x, Side::Any, rng)?;
            let s3 = step(g, s2.to, Side::Any, rng)?;
            if !distinct(&[x, s1.to, s2.to, s3.to]) {
                return None;
            }
            Query {
                nodes: vec![
                    class(g, x),
                    QNode::Entity(s1.to),
                    class(g, s2.to),
                    QNode::Entity(s3.to),
                ],
                edges: vec![edge(0, 1, s1), edge(0, 2, s2), edge(2, 3, s3)],
            }
        }
        PatternType::P4_1 | PatternType::P4_2 => {
            let k = if p == PatternType::P4_1 { 2 } else { 3 };
            let mut nodes = vec![class(g, x)];
            let mut edges = Vec::new();
            let mut seen = vec![x];
            for i in 1..=k {
                let s = step(g, x, Side::Any, rng)?;
                if seen.contains(&s.to) {
                    return None;
                }
                seen.push(s.to);
                nodes.push(QNode::Entity(s.to));
                edges.push(edge(0, i, s));
            }
            Query { nodes, edges }
        }
        PatternType::P4_3 => {
            let s1 = step(g, x, Side::Any, rng)?;
            let e = s1.to;
            // Nodes adjacent to both x and e, with the steps that reach them.
            let mut from_x: BTreeMap<NodeId, Vec<Step>> = BTreeMap::new();
            for er in g.edges(x, serenqa_graph::Direction::Both) {
                let (to, out) = if er.source == x {
                    (er.target, true)
                } else {
                    (er.source, false)
                };
                if to != e && to != x {
                    from_x.entry(to).or_default().push(Step {
                        rel: er.rel,
                        to,
                        from_is_start: out,
                    });
                }
            }
            let mut common: Vec<(Step, Step)> = Vec::new();
            for er in g.edges(e, serenqa_graph::Direction::Both) {
                let (m, m_is_start) = if er.target == e {
                    (er.source, true)
                } else {
                    (er.target, false)
                };
                if let Some(steps) = from_x.get(&m) {
                    for s in steps {
                        common.push((
                            *s,
                            Step {
                                rel: er.rel,
                                to: e,
                                from_is_start: m_is_start,
                            },
                        ));
                    }
                }
            }
            let &(s2, s3) = rng.pick(&common)?;
            Query {
                nodes: vec![class(g, x), QNode::Entity(e), class(g, s2.to)],
                edges: vec![edge(0, 1, s1), edge(0, 2, s2), edge(2, 1, s3)],
            }
        }
    };
    Some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_follow_table_4() {
        let q = PatternType::quotas(1529);
        for (p, n) in &q {
            assert_eq!(*n, p.paper_count(), "{p}");
        }
        for total in [9, 10, 100, 150, 1000] {
            let q = PatternType::quotas(total);
            assert_eq!(q.iter().map(|x| x.1).sum::<usize>(), total);
            assert!(q.iter().all(|x| x.1 >= 1), "{total}: {q:?}");
        }
    }
}
