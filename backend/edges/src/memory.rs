//! The in-memory edge source: the graph's own CSR arrays.

use serenqa_graph::{Direction, Graph, NodeId};

use crate::{BoxFuture, EdgeResult, EdgeSource, Incident};

/// Edges straight from a [`Graph`] in this process.
pub struct MemoryEdges<'g> {
    g: &'g Graph,
}

impl<'g> MemoryEdges<'g> {
    pub fn new(g: &'g Graph) -> Self {
        MemoryEdges { g }
    }

    /// The incident edges of one node, in CSR order (synchronous; the trait wraps this).
    pub fn incident(&self, u: NodeId) -> Vec<Incident> {
        let g = self.g;
        g.edges(u, Direction::Both)
            .map(|e| {
                let forward = e.source == u;
                let other = if forward { e.target } else { e.source };
                Incident {
                    edge: e.id,
                    rel: e.rel,
                    other,
                    forward,
                    score: g.edge_score(e.id),
                    other_degree: g.degree(other) as u32,
                }
            })
            .collect()
    }
}

impl EdgeSource for MemoryEdges<'_> {
    fn incident_many<'a>(
        &'a self,
        nodes: &'a [NodeId],
    ) -> BoxFuture<'a, EdgeResult<Vec<Vec<Incident>>>> {
        let out = nodes.iter().map(|&u| self.incident(u)).collect();
        Box::pin(std::future::ready(Ok(out)))
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}
