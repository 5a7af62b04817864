//! A question written from a loaded graph's own schema, asked end to end and checked against
//! the graph's edges: what `serenqa perf ckg` (or any caller) uses to show that Ask answers on
//! a non-Hetionet graph ([`check_schema_question`]).
//!
//! The question is "which <answer type plural> <relation's verb> <name>", for the relations
//! with most edges between two different types first; the name is the node of the other type
//! with most edges of that relation among its first 100,000 nodes (its identifier after its
//! type noun when its name is not unique). The check passes when the offline retriever's
//! answers equal the nodes of the answer type that relation joins to the node.

use std::collections::BTreeSet;
use std::time::Instant;

use serenqa_graph::{Direction, Graph, NodeId, RelId, TypeId};

use crate::retrieval::OfflineRetriever;

/// The outcome of [`check_schema_question`].
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaCheck {
    pub question: String,
    pub cypher: Option<String>,
    /// Answers the graph's edges give.
    pub expected: usize,
    /// Answers the retriever returned.
    pub answered: usize,
    /// Whether the two answer sets are equal (and not empty).
    pub ok: bool,
    /// Time of the retrieval (understanding and the query), in microseconds.
    pub micros: u128,
}

/// Relations tried at most before giving up.
const TRIES: usize = 5;
/// Nodes of the named type looked at for the best-connected one.
const SCAN: usize = 100_000;

/// Asks a schema-derived question and checks its answers. `Err` when the understanding is
/// unavailable or the graph has no relation between two different types with edges; an
/// `Ok` with `ok == false` names the last question tried and what came back.
pub fn check_schema_question(g: &Graph, r: &OfflineRetriever) -> Result<SchemaCheck, String> {
    let u = r.understander.as_ref().map_err(Clone::clone)?;
    // (edges, relation, answer type, named type), most edges first.
    let mut cands: Vec<(u64, RelId, TypeId, TypeId)> = Vec::new();
    for rel in 0..g.relation_count() as RelId {
        for &(s, t, c) in u.meta.ends(rel) {
            if let (Some(s), Some(t)) = (s, t) {
                if s != t && c > 0 && u.lex.verbs.contains_key(&rel) {
                    cands.push((c, rel, s, t));
                }
            }
        }
    }
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut last = None;
    for &(_, rel, answer, named) in cands.iter().take(TRIES) {
        let Some(node) = busiest(g, named, rel) else {
            continue;
        };
        let expected: BTreeSet<String> = g
            .edges(node, Direction::Both)
            .filter(|e| e.rel == rel)
            .map(|e| if e.source == node { e.target } else { e.source })
            .filter(|&x| g.node_type(x) == answer)
            .map(|x| g.ident(x).to_string())
            .collect();
        let name = g.name(node);
        let mention = if g.find_by_name(name).len() == 1 && !name.trim().is_empty() {
            name.to_string()
        } else {
            format!(
                "{} {}",
                u.plural(g, named).trim_end_matches('s'),
                g.ident(node)
            )
        };
        let verb = u
            .lex
            .verbs
            .get(&rel)
            .map(|v| v.0.clone())
            .unwrap_or_default();
        let question = format!("which {} {verb} {mention}", u.plural(g, answer));
        let t0 = Instant::now();
        let (res, _) = r.retrieve(g, &question);
        let micros = t0.elapsed().as_micros();
        let got: BTreeSet<String> = res.answers.iter().cloned().collect();
        let check = SchemaCheck {
            ok: !expected.is_empty() && got == expected,
            question,
            cypher: res.cypher,
            expected: expected.len(),
            answered: got.len(),
            micros,
        };
        if check.ok {
            return Ok(check);
        }
        last = Some(check);
    }
    last.ok_or_else(|| "no relation joins two different node types".to_string())
}

/// The node of type `t` (among its first [`SCAN`]) with most edges of relation `rel`.
fn busiest(g: &Graph, t: TypeId, rel: RelId) -> Option<NodeId> {
    g.nodes_of_type(t)
        .iter()
        .take(SCAN)
        .map(|&n| {
            (
                g.out_range_rel(n, rel).len() + g.in_range_rel(n, rel).len(),
                n,
            )
        })
        .filter(|x| x.0 > 0)
        .max_by_key(|x| (x.0, std::cmp::Reverse(x.1)))
        .map(|x| x.1)
}
