//! Short paths between node sets: the explanation paths shown to clinicians and the
//! ground-truth paths of the benchmark.
//!
//! Edges are walked in both directions (biomedical relations read both ways), each step
//! remembering whether it followed the stored direction. Paths are simple (no repeated node)
//! and come out shortest first, then in adjacency order, so results are deterministic.
//!
//! Method: a multi-source BFS from the targets (bounded by `max_hops − 1`) gives every nearby
//! node its distance to the target set; a depth-first walk from the sources then only steps
//! to nodes that can still reach a target in the hops left. Hubs are cheap to skip because the
//! distance check prunes before recursion.

use std::collections::HashMap;

use crate::{EdgeId, Graph, NodeId, RelId};

/// One step of a path: the relation, and whether it was walked in the stored direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub edge: EdgeId,
    pub rel: RelId,
    pub forward: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// `nodes.len() == steps.len() + 1`.
    pub nodes: Vec<NodeId>,
    pub steps: Vec<Step>,
}

impl Path {
    pub fn hops(&self) -> usize {
        self.steps.len()
    }

    /// The SerenQA record form `ID--REL--Name:Type--REL--…--ID` (paper, Appendix A.3):
    /// end points by identifier, inner nodes by name and type.
    /// Empty for a path without nodes.
    pub fn to_record_string(&self, g: &Graph) -> String {
        let Some(&first) = self.nodes.first() else {
            return String::new();
        };
        let mut s = String::from(g.ident(first));
        for (i, step) in self.steps.iter().enumerate() {
            s.push_str("--");
            s.push_str(&g.relation(step.rel).name);
            s.push_str("--");
            let n = self.nodes[i + 1];
            if i + 1 == self.steps.len() {
                s.push_str(g.ident(n));
            } else {
                s.push_str(g.name(n));
                s.push(':');
                s.push_str(g.type_display(g.node_type(n)));
            }
        }
        s
    }
}

/// Limits for [`find_paths`].
#[derive(Clone, Copy, Debug)]
pub struct PathQuery {
    pub max_hops: usize,
    pub limit: usize,
    /// Stop expanding a node with more edges than this (0 = no cap) — guards interactive
    /// requests against hubs on CKG-scale graphs.
    pub max_degree: usize,
}

impl Default for PathQuery {
    fn default() -> Self {
        PathQuery {
            max_hops: 3,
            limit: 20,
            max_degree: 0,
        }
    }
}

/// All neighbours of `v` in both directions: (neighbour, step).
fn neighbours(g: &Graph, v: NodeId) -> impl Iterator<Item = (NodeId, Step)> + '_ {
    let out = g.edges(v, crate::Direction::Out).map(|e| {
        (
            e.target,
            Step {
                edge: e.id,
                rel: e.rel,
                forward: true,
            },
        )
    });
    let inc = g.edges(v, crate::Direction::In).map(|e| {
        (
            e.source,
            Step {
                edge: e.id,
                rel: e.rel,
                forward: false,
            },
        )
    });
    out.chain(inc)
}

/// Up to `q.limit` shortest simple paths of at most `q.max_hops` hops from any node of
/// `sources` to any node of `targets`, over the edges `keep` accepts (e.g. a benchmark graph
/// with edges removed).
pub fn find_paths(
    g: &Graph,
    sources: &[NodeId],
    targets: &[NodeId],
    q: PathQuery,
    keep: &dyn Fn(EdgeId) -> bool,
) -> Vec<Path> {
    if q.max_hops == 0 || q.limit == 0 || sources.is_empty() || targets.is_empty() {
        return Vec::new();
    }
    // dist[v] = hops from v to the nearest target, for dist ≤ max_hops − 1.
    let mut dist: HashMap<NodeId, u8> = targets.iter().map(|&t| (t, 0u8)).collect();
    let mut frontier: Vec<NodeId> = targets.to_vec();
    for d in 1..q.max_hops {
        let mut next = Vec::new();
        for &v in &frontier {
            if q.max_degree > 0 && g.degree(v) > q.max_degree && d > 1 {
                continue;
            }
            for (u, step) in neighbours(g, v) {
                if keep(step.edge) && !dist.contains_key(&u) {
                    dist.insert(u, d as u8);
                    next.push(u);
                }
            }
        }
        frontier = next;
    }
    let is_target: std::collections::HashSet<NodeId> = targets.iter().copied().collect();
    let mut out = Vec::new();
    for len in 1..=q.max_hops {
        for &s in sources {
            if out.len() >= q.limit {
                return out;
            }
            let mut nodes = vec![s];
            let mut steps = Vec::new();
            walk(
                g, &dist, &is_target, len, &mut nodes, &mut steps, &mut out, q, keep,
            );
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn walk(
    g: &Graph,
    dist: &HashMap<NodeId, u8>,
    is_target: &std::collections::HashSet<NodeId>,
    len: usize,
    nodes: &mut Vec<NodeId>,
    steps: &mut Vec<Step>,
    out: &mut Vec<Path>,
    q: PathQuery,
    keep: &dyn Fn(EdgeId) -> bool,
) {
    if out.len() >= q.limit {
        return;
    }
    let v = *nodes.last().unwrap_or(&0);
    let left = len - steps.len();
    if left == 0 {
        if is_target.contains(&v) {
            out.push(Path {
                nodes: nodes.clone(),
                steps: steps.clone(),
            });
        }
        return;
    }
    if !steps.is_empty() && q.max_degree > 0 && g.degree(v) > q.max_degree {
        return;
    }
    for (u, step) in neighbours(g, v) {
        if !keep(step.edge) || nodes.contains(&u) {
            continue;
        }
        // u must reach a target in exactly the hops left after this step (shortest first).
        match dist.get(&u) {
            Some(&d) if (d as usize) < left => {}
            _ => continue,
        }
        if left - 1 == 0 && !is_target.contains(&u) {
            continue;
        }
        nodes.push(u);
        steps.push(step);
        walk(g, dist, is_target, len, nodes, steps, out, q, keep);
        nodes.pop();
        steps.pop();
        if out.len() >= q.limit {
            return;
        }
    }
}

/// A path's relation sequence with directions.
type Metapath = Vec<(RelId, bool)>;

/// Picks `limit` paths round-robin over their metapaths (relation sequence and directions),
/// shortest first within each, so twenty paths through twenty shared side effects do not
/// crowd out the one path through a shared target gene.
pub fn diverse(paths: Vec<Path>, limit: usize) -> Vec<Path> {
    let mut groups: Vec<(Metapath, std::collections::VecDeque<Path>)> = Vec::new();
    for p in paths {
        let sig: Metapath = p.steps.iter().map(|s| (s.rel, s.forward)).collect();
        match groups.iter_mut().find(|(k, _)| *k == sig) {
            Some((_, q)) => q.push_back(p),
            None => groups.push((sig, std::collections::VecDeque::from([p]))),
        }
    }
    // Shorter metapaths first; stable for equal lengths (first seen first).
    groups.sort_by_key(|(k, _)| k.len());
    let mut out = Vec::with_capacity(limit);
    while out.len() < limit {
        let mut took = false;
        for (_, q) in &mut groups {
            if out.len() >= limit {
                break;
            }
            if let Some(p) = q.pop_front() {
                out.push(p);
                took = true;
            }
        }
        if !took {
            break;
        }
    }
    out.sort_by_key(Path::hops);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GraphBuilder, GraphMeta, RelationType};

    fn graph() -> (Graph, Vec<NodeId>) {
        let mut b = GraphBuilder::new(GraphMeta::default());
        let t = b.node_type("T", "T");
        let r = b
            .relation(RelationType {
                name: "R".into(),
                verb: "r".into(),
                abbrev: "R".into(),
                source_type: None,
                target_type: None,
                directed: false,
            })
            .unwrap();
        let n: Vec<NodeId> = (0..6)
            .map(|i| b.add_node(t, &format!("n{i}"), &format!("N{i}")))
            .collect();
        // 0-1-2-3, 0-4-3, 5 isolated, 3->0 stored backwards.
        for (a, c) in [(0, 1), (1, 2), (2, 3), (0, 4), (4, 3)] {
            b.add_edge(n[a], r, n[c], None);
        }
        b.add_edge(n[3], r, n[0], None);
        (b.build(), n)
    }

    #[test]
    fn shortest_first_simple_and_both_directions() {
        let (g, n) = graph();
        let paths = find_paths(&g, &[n[0]], &[n[3]], PathQuery::default(), &|_| true);
        let hops: Vec<usize> = paths.iter().map(Path::hops).collect();
        assert_eq!(hops, vec![1, 2, 3]);
        assert!(
            !paths[0].steps[0].forward,
            "3->0 is walked against its direction"
        );
        assert_eq!(paths[1].nodes, vec![n[0], n[4], n[3]]);
        assert_eq!(paths[2].to_record_string(&g), "n0--R--N1:T--R--N2:T--R--n3");
        for p in &paths {
            let mut seen = p.nodes.clone();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), p.nodes.len());
        }
    }

    #[test]
    fn removed_edges_and_limits() {
        let (g, n) = graph();
        let direct: Vec<EdgeId> = g.edges(n[0], crate::Direction::In).map(|e| e.id).collect();
        let paths = find_paths(&g, &[n[0]], &[n[3]], PathQuery::default(), &|e| {
            !direct.contains(&e)
        });
        assert_eq!(paths.iter().map(Path::hops).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(
            find_paths(
                &g,
                &[n[0]],
                &[n[3]],
                PathQuery {
                    limit: 1,
                    ..Default::default()
                },
                &|_| true
            )
            .len(),
            1
        );
        assert!(find_paths(&g, &[n[0]], &[n[5]], PathQuery::default(), &|_| true).is_empty());
        assert_eq!(
            find_paths(
                &g,
                &[n[0]],
                &[n[3]],
                PathQuery {
                    max_hops: 2,
                    ..Default::default()
                },
                &|_| true
            )
            .len(),
            2
        );
    }
}
