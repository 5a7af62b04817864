//! Running a question's Cypher with the project's executor (`serenqa-cypher`), on Gc or on
//! G = Gc − R. [`MaskedGraph`] is the overlay: a [`Store`] that forwards to the graph and
//! hides removed relationships, so G is never materialised.

use std::collections::BTreeMap;

use serenqa_cypher::{Dir, RelRef};
use serenqa_cypher::{Options, Out, Store, Value};
use serenqa_graph::{Graph, NodeId};

use crate::query::{EdgeMask, QNode, Query, View};

/// The graph with some edges hidden (a read-only overlay).
pub struct MaskedGraph<'a> {
    pub graph: &'a Graph,
    pub removed: Option<&'a EdgeMask>,
}

impl<'a> MaskedGraph<'a> {
    pub fn new(view: View<'a>) -> Self {
        MaskedGraph {
            graph: view.graph,
            removed: view.removed,
        }
    }
}

impl Store for MaskedGraph<'_> {
    fn node_count(&self) -> usize {
        Store::node_count(self.graph)
    }
    fn label_id(&self, name: &str) -> Option<u32> {
        Store::label_id(self.graph, name)
    }
    fn label_name(&self, id: u32) -> &str {
        Store::label_name(self.graph, id)
    }
    fn rel_type_id(&self, name: &str) -> Option<u32> {
        Store::rel_type_id(self.graph, name)
    }
    fn rel_type_name(&self, id: u32) -> &str {
        Store::rel_type_name(self.graph, id)
    }
    fn node_labels(&self, n: NodeId) -> Vec<u32> {
        Store::node_labels(self.graph, n)
    }
    fn has_label(&self, n: NodeId, label: u32) -> bool {
        Store::has_label(self.graph, n, label)
    }
    fn nodes_with_label(&self, label: u32) -> Vec<NodeId> {
        Store::nodes_with_label(self.graph, label)
    }
    fn label_count(&self, label: u32) -> usize {
        Store::label_count(self.graph, label)
    }
    fn node_prop(&self, n: NodeId, key: &str) -> Value {
        Store::node_prop(self.graph, n, key)
    }
    fn node_props(&self, n: NodeId) -> BTreeMap<String, Value> {
        Store::node_props(self.graph, n)
    }
    fn rel_prop(&self, r: &RelRef, key: &str) -> Value {
        Store::rel_prop(self.graph, r, key)
    }
    fn rel_props(&self, r: &RelRef) -> BTreeMap<String, Value> {
        Store::rel_props(self.graph, r)
    }
    fn expand(&self, n: NodeId, dir: Dir, types: Option<&[u32]>, out: &mut Vec<(RelRef, NodeId)>) {
        let start = out.len();
        Store::expand(self.graph, n, dir, types, out);
        if let Some(m) = self.removed {
            let mut keep = start;
            for i in start..out.len() {
                if !u32::try_from(out[i].0.id).is_ok_and(|e| m.contains(e)) {
                    out.swap(keep, i);
                    keep += 1;
                }
            }
            out.truncate(keep);
        }
    }
    fn index_lookup(&self, key: &str, value: &Value) -> Option<Vec<NodeId>> {
        Store::index_lookup(self.graph, key, value)
    }
}

/// Runs a question's Cypher on `view` and maps the returned `{id, name}` maps back to node
/// ids of the question node's type. Sorted, distinct.
pub fn run_question_cypher(
    view: View<'_>,
    query: &Query,
    cypher: &str,
) -> Result<Vec<NodeId>, String> {
    let store = MaskedGraph::new(view);
    let res =
        serenqa_cypher::execute(&store, cypher, &Options::default()).map_err(|e| e.to_string())?;
    let t0 = match query.nodes.first() {
        Some(QNode::Class(t)) => *t,
        _ => return Err("the question node is not a class".into()),
    };
    let mut out = Vec::new();
    for row in &res.rows {
        let Some(Out::List(items)) = row.first() else {
            return Err("the query did not return a list of answers".into());
        };
        for it in items {
            let Out::Map(m) = it else {
                return Err("an answer is not a map".into());
            };
            let Some(Out::Str(id)) = m.get("id") else {
                return Err("an answer has no string id".into());
            };
            let n = view
                .graph
                .find_by_ident(id)
                .iter()
                .copied()
                .find(|&n| view.graph.node_type(n) == t0)
                .ok_or_else(|| format!("answer id {id} is not a node of the question type"))?;
            out.push(n);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
