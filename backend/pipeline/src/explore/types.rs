//! The data of an exploration: its settings, inputs, steps, per-level traces and result, and
//! the one-line path format shown to models and stored in traces.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use serenqa_graph::{EdgeId, Graph, NodeId, RelId};

use crate::llm::CallTrace;

/// The exploration settings (defined with the run manifest that records them).
pub use serenqa_shared::api::ExploreConfig;

/// One hop of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: NodeId,
    pub rel: RelId,
    pub to: NodeId,
    /// Walked in the stored direction.
    pub forward: bool,
    pub edge: EdgeId,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelTrace {
    pub level: usize,
    pub frontier: usize,
    /// `frontier id → chosen relation names`.
    pub relations: BTreeMap<String, Vec<String>>,
    pub candidates: usize,
    pub uniform_sampled: bool,
    pub selected: Vec<String>,
    pub description: String,
    pub go_on: bool,
}

/// The result of one exploration.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    pub roots: Vec<NodeId>,
    /// The entities the question names ([`Task::named`]): walked through, never leaves.
    pub named: Vec<NodeId>,
    /// Π: explored node → path from a root (roots map to []).
    pub paths: BTreeMap<NodeId, Vec<Step>>,
    /// Explored nodes in order of discovery (roots first).
    pub order: Vec<NodeId>,
    pub levels: Vec<LevelTrace>,
    /// Σ: one summary per level reached.
    pub summaries: Vec<String>,
    pub calls: Vec<CallTrace>,
}

impl Exploration {
    /// Explored nodes without an explored child, in discovery order, roots and the entities
    /// the question names excluded (they are known, so never a predicted answer).
    pub fn leaves(&self) -> Vec<NodeId> {
        let parents: HashSet<NodeId> = self
            .paths
            .values()
            .filter_map(|p| p.last().map(|s| s.from))
            .collect();
        self.order
            .iter()
            .copied()
            .filter(|n| !self.roots.contains(n) && !self.named.contains(n) && !parents.contains(n))
            .collect()
    }

    /// Paths of exactly `hops` hops, in discovery order.
    pub fn paths_of_depth(&self, hops: usize) -> Vec<&Vec<Step>> {
        self.order
            .iter()
            .filter_map(|n| self.paths.get(n))
            .filter(|p| p.len() == hops)
            .collect()
    }

    /// Every edge of Π once.
    pub fn edges(&self) -> Vec<Step> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for n in &self.order {
            for s in self.paths.get(n).into_iter().flatten() {
                if seen.insert(s.edge) {
                    out.push(*s);
                }
            }
        }
        out
    }

    /// Nodes of the explored subgraph (roots included).
    pub fn nodes(&self) -> BTreeSet<NodeId> {
        self.paths.keys().copied().collect()
    }
}

/// Inputs of one exploration.
pub struct Task<'a> {
    pub question: &'a str,
    /// Where the beam starts: the answers already known (Ae's candidates part).
    pub roots: Vec<NodeId>,
    /// The entities the question names. They are known to the asker, so candidates are scored
    /// with them in Ae (anchors: never candidates, never leaves; docs/RNS.md "What Ae
    /// holds"). The beam does not start from them.
    pub named: Vec<NodeId>,
    /// One-shot guidance: a training question with its ground-truth paths (prompt text).
    pub example: String,
}

impl Task<'_> {
    /// Ae for scoring candidates: the roots, then the named entities not among them.
    pub fn known(&self) -> Vec<NodeId> {
        let mut ae = self.roots.clone();
        for &x in &self.named {
            if !ae.contains(&x) {
                ae.push(x);
            }
        }
        ae
    }
}

/// A node as paths show it: `id (name, Type)`.
pub fn node_label(g: &Graph, n: NodeId) -> String {
    format!(
        "{} ({}, {})",
        g.ident(n),
        g.name(n),
        g.type_label(g.node_type(n))
    )
}

/// A path as one line: `end: root -[REL]-> name (id, Type) -[REL]-> …`.
pub fn path_line(g: &Graph, p: &[Step]) -> String {
    let Some(first) = p.first() else {
        return String::new();
    };
    let mut s = format!(
        "{}: {}",
        g.ident(p[p.len() - 1].to),
        node_label(g, first.from)
    );
    for st in p {
        let rel = &g.relation(st.rel).name;
        if st.forward {
            s.push_str(&format!(" -[{rel}]-> "));
        } else {
            s.push_str(&format!(" <-[{rel}]- "));
        }
        s.push_str(&node_label(g, st.to));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(from: NodeId, to: NodeId) -> Step {
        Step {
            from,
            rel: 0,
            to,
            forward: true,
            edge: to,
        }
    }

    #[test]
    fn named_entities_are_known_never_leaves() {
        // 1 is the root; the walk went 1 → 7 (a named entity) → 3 and 1 → 4.
        let mut ex = Exploration {
            roots: vec![1],
            named: vec![7],
            ..Default::default()
        };
        for (n, p) in [
            (1, vec![]),
            (7, vec![step(1, 7)]),
            (3, vec![step(1, 7), step(7, 3)]),
            (4, vec![step(1, 4)]),
        ] {
            ex.paths.insert(n, p);
            ex.order.push(n);
        }
        assert_eq!(ex.leaves(), vec![3, 4]);
        // A named entity reached last is still not a predicted answer.
        ex.paths.remove(&3);
        ex.order.retain(|&n| n != 3);
        assert_eq!(ex.leaves(), vec![4]);
        ex.named.clear();
        assert_eq!(ex.leaves(), vec![7, 4]);

        let task = Task {
            question: "q",
            roots: vec![1, 2],
            named: vec![2, 9],
            example: String::new(),
        };
        assert_eq!(task.known(), vec![1, 2, 9], "roots first, each entity once");
    }
}
