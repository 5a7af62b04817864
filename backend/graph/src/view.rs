//! The graph as the API and the browser show it: a node as a [`NodeView`], a path as a
//! [`PathView`] (the one place a reversed edge gets its label: the passive of the relation's
//! verb). Used by the server's endpoints, the pipeline's answers and the model's slices.

use serenqa_shared::api::{NodeView, PathStep, PathView};
use serenqa_shared::phrases::passive;

use crate::paths::Path;
use crate::{Graph, NodeId, RelId};

pub fn node_view(g: &Graph, n: NodeId) -> NodeView {
    NodeView {
        index: n,
        id: g.ident(n).to_string(),
        name: g.name(n).to_string(),
        kind: g.type_display(g.node_type(n)).to_string(),
    }
}

/// The label of one step over relation `rel`: its verb when walked in the stored direction,
/// the verb's passive when reversed (`treats` / `is treated by`). A relation without a verb
/// reads as its name in lower case.
pub fn step_verb(g: &Graph, rel: RelId, forward: bool) -> String {
    let r = g.relation(rel);
    let verb = if r.verb.is_empty() {
        r.name.to_lowercase().replace('_', " ")
    } else {
        r.verb.clone()
    };
    if forward {
        verb
    } else {
        passive(&verb)
    }
}

/// A path with its nodes, step labels ([`step_verb`]) and SerenQA record string.
pub fn path_view(g: &Graph, p: &Path) -> PathView {
    PathView {
        nodes: p.nodes.iter().map(|&n| node_view(g, n)).collect(),
        steps: p
            .steps
            .iter()
            .map(|s| PathStep {
                relation: g.relation(s.rel).name.clone(),
                verb: step_verb(g, s.rel, s.forward),
                forward: s.forward,
            })
            .collect(),
        record: p.to_record_string(g),
    }
}
