//! The paths behind one prediction: for a metapath and a pair (c, d), the simple paths of
//! that metapath from c to d, each with its DWPC path weight — the product over its edges of
//! `(degree of the edge's source in its metaedge × degree of its target)^-w` — so paths
//! through hubs (CYP enzymes, common side effects) weigh little, exactly as in the feature.
//!
//! Enumeration is typed and pruned on the CSR: the nodes that can still reach d in the
//! remaining steps are found backwards from d first, then a depth-first walk from c only
//! enters those, so only complete paths are visited (bounded by `max_visits`). Paths with a
//! repeated node are skipped (Rephetio's path definition; the feature counts walks, see
//! [`crate::dwpc`]). `petgraph` is not used here: its path search has no notion of
//! metaedge types and would need a copy of the neighbourhood first.

use std::collections::HashSet;

use serenqa_graph::{EdgeId, Graph, NodeId};

use crate::metagraph::Metagraph;

#[derive(Clone, Debug, PartialEq)]
pub struct WeightedPath {
    pub nodes: Vec<NodeId>,
    pub edges: Vec<EdgeId>,
    pub weight: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PathSet {
    /// Heaviest first (ties: node ids).
    pub paths: Vec<WeightedPath>,
    /// Paths found in all, and the sum of their weights (the pair's path-count DWPC).
    pub found: usize,
    pub total_weight: f64,
    /// Whether the visit budget ran out before every path was seen.
    pub truncated: bool,
}

/// Neighbours of `u` over step `s` of the metagraph: (neighbour, edge id).
fn step_neighbours(g: &Graph, mg: &Metagraph, s: usize, u: NodeId) -> Vec<(NodeId, EdgeId)> {
    let st = &mg.steps[s];
    let (_, out_t, _) = g.out_csr();
    let (_, in_s, _, in_e) = g.in_csr();
    let mut v = Vec::new();
    if st.out {
        for i in g.out_range_rel(u, st.rel) {
            if g.node_type(out_t[i]) == st.to {
                v.push((out_t[i], i as EdgeId));
            }
        }
    }
    if st.inn {
        for i in g.in_range_rel(u, st.rel) {
            if g.node_type(in_s[i]) == st.to {
                v.push((in_s[i], in_e[i]));
            }
        }
    }
    v
}

fn step_degree(g: &Graph, mg: &Metagraph, s: usize, u: NodeId) -> usize {
    step_neighbours(g, mg, s, u).len()
}

/// The paths of metapath `steps` (read from `c` to `d`), at most `keep` of them returned.
pub fn paths(
    g: &Graph,
    mg: &Metagraph,
    steps: &[usize],
    c: NodeId,
    d: NodeId,
    damping: f64,
    keep: usize,
    max_visits: usize,
) -> PathSet {
    let l = steps.len();
    // reach[i]: nodes at position i that can reach d through steps i.. (reach[l] = {d}).
    let mut reach: Vec<HashSet<NodeId>> = vec![HashSet::new(); l + 1];
    reach[l].insert(d);
    for i in (1..l).rev() {
        let back = mg.steps[steps[i]].reverse;
        let mut next = HashSet::new();
        let mut from: Vec<NodeId> = reach[i + 1].iter().copied().collect();
        from.sort_unstable();
        for y in from {
            for (x, _) in step_neighbours(g, mg, back, y) {
                next.insert(x);
            }
        }
        reach[i] = next;
    }
    let mut out = Vec::new();
    let mut visits = 0usize;
    let mut truncated = false;
    let mut nodes = vec![c];
    let mut edges = Vec::new();
    #[allow(clippy::too_many_arguments)]
    fn dfs(
        g: &Graph,
        mg: &Metagraph,
        steps: &[usize],
        reach: &[HashSet<NodeId>],
        w: f64,
        damping: f64,
        nodes: &mut Vec<NodeId>,
        edges: &mut Vec<EdgeId>,
        out: &mut Vec<WeightedPath>,
        visits: &mut usize,
        max_visits: usize,
        truncated: &mut bool,
    ) {
        let i = edges.len();
        if i == steps.len() {
            out.push(WeightedPath {
                nodes: nodes.clone(),
                edges: edges.clone(),
                weight: w,
            });
            return;
        }
        let s = steps[i];
        let u = *nodes.last().unwrap_or(&0);
        let du = step_degree(g, mg, s, u) as f64;
        for (v, e) in step_neighbours(g, mg, s, u) {
            if !reach[i + 1].contains(&v) || nodes.contains(&v) {
                continue;
            }
            *visits += 1;
            if *visits > max_visits {
                *truncated = true;
                return;
            }
            let dv = step_degree(g, mg, mg.steps[s].reverse, v) as f64;
            nodes.push(v);
            edges.push(e);
            dfs(
                g,
                mg,
                steps,
                reach,
                w * (du * dv).powf(-damping),
                damping,
                nodes,
                edges,
                out,
                visits,
                max_visits,
                truncated,
            );
            nodes.pop();
            edges.pop();
            if *truncated {
                return;
            }
        }
    }
    if l > 0 {
        dfs(
            g,
            mg,
            steps,
            &reach,
            1.0,
            damping,
            &mut nodes,
            &mut edges,
            &mut out,
            &mut visits,
            max_visits,
            &mut truncated,
        );
    }
    let found = out.len();
    let total_weight = out.iter().map(|p| p.weight).sum();
    out.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then_with(|| a.nodes.cmp(&b.nodes))
    });
    out.truncate(keep);
    PathSet {
        paths: out,
        found,
        total_weight,
        truncated,
    }
}

/// What the server keeps to explain predictions: the metagraph and each metapath's steps by
/// name (compound → disease).
pub struct Explainer {
    pub mg: Metagraph,
    pub by_name: std::collections::HashMap<String, Vec<usize>>,
    pub damping: f64,
}

impl Explainer {
    pub fn new(
        g: &Graph,
        params: &crate::features::FeatureParams,
    ) -> Result<Self, crate::PredictError> {
        let space = crate::features::Space::new(g, params)?;
        let by_name = space
            .paths
            .iter()
            .zip(&space.names)
            .map(|(p, n)| (n.clone(), space.mg.reversed(p)))
            .collect();
        Ok(Explainer {
            mg: space.mg,
            by_name,
            damping: params.damping,
        })
    }

    /// Words for a metapath: the verbs and node types along it.
    pub fn reading(&self, g: &Graph, steps: &[usize]) -> String {
        steps
            .iter()
            .map(|&s| {
                let st = &self.mg.steps[s];
                let verb = &g.relation(st.rel).verb;
                let verb = if st.inn && !st.out {
                    format!("{verb} (by)")
                } else {
                    verb.clone()
                };
                format!("{verb} {}", g.type_display(st.to).to_lowercase())
            })
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serenqa_graph::{GraphBuilder, GraphMeta, RelationType};

    #[test]
    fn hub_paths_weigh_less() {
        // c —binds→ g1 (specific) —assoc— d, and c —binds→ hub —assoc— d, hub bound by 9 others.
        let mut b = GraphBuilder::new(GraphMeta::default());
        let (tc, td, tg) = (
            b.node_type("Compound", "Compound"),
            b.node_type("Disease", "Disease"),
            b.node_type("Gene", "Gene"),
        );
        let r = |b: &mut GraphBuilder, n: &str, a: &str, s, t| {
            b.relation(RelationType {
                name: n.into(),
                verb: n.into(),
                abbrev: a.into(),
                source_type: Some(s),
                target_type: Some(t),
                directed: false,
            })
            .unwrap()
        };
        let cbg = r(&mut b, "BINDS_CbG", "CbG", tc, tg);
        let dag = r(&mut b, "ASSOCIATES_DaG", "DaG", td, tg);
        let ctd = r(&mut b, "TREATS_CtD", "CtD", tc, td);
        let c = b.add_node(tc, "c", "c");
        let d = b.add_node(td, "d", "d");
        let g1 = b.add_node(tg, "g1", "g1");
        let hub = b.add_node(tg, "hub", "hub");
        b.add_edge(c, cbg, g1, None);
        b.add_edge(c, cbg, hub, None);
        b.add_edge(d, dag, g1, None);
        b.add_edge(d, dag, hub, None);
        for i in 0..9 {
            let o = b.add_node(tc, &format!("o{i}"), "o");
            b.add_edge(o, cbg, hub, None);
        }
        b.add_edge(c, ctd, d, None);
        let g = b.build();
        let mg = Metagraph::of(&g, &[ctd]);
        let cbg_s = mg
            .steps
            .iter()
            .position(|s| s.rel == cbg && s.from == tc)
            .unwrap();
        let gad_s = mg
            .steps
            .iter()
            .position(|s| s.rel == dag && s.from == tg)
            .unwrap();
        let ps = paths(&g, &mg, &[cbg_s, gad_s], c, d, 0.4, 10, 1000);
        assert_eq!(ps.found, 2);
        assert_eq!(ps.paths[0].nodes, vec![c, g1, d]);
        assert!(ps.paths[0].weight > ps.paths[1].weight);
        // g1: (2·1)^-0.4 · (1·2)^-0.4 ; hub: (2·10)^-0.4 · (1·2)^-0.4
        assert!((ps.paths[1].weight - (20.0f64 * 2.0).powf(-0.4)).abs() < 1e-12);
    }
}
