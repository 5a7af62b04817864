//! Cypher text for a [`Query`], in the schema of the loaded graph: labels are node type
//! labels, relationship types are relation names (`TREATS_CtD`), entities are matched by
//! their `id` property. One `MATCH` of comma-joined one-edge patterns, so relationship
//! uniqueness holds across the whole pattern exactly as [`Query::answers`] assumes; the
//! answers are returned as the paper's A.3 records do (`COLLECT(DISTINCT {id, name})`).

use serenqa_graph::Graph;

use crate::query::{symmetric, QNode, Query};

/// A Cypher string literal.
pub fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An identifier, back-quoted unless it is a plain word.
pub fn ident(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        s.to_string()
    } else {
        format!("`{}`", s.replace('`', "``"))
    }
}

/// The Cypher of a query; node i is `n{i}`, the question node `n0`.
pub fn render(g: &Graph, q: &Query) -> String {
    let mut declared = vec![false; q.nodes.len()];
    let node = |i: usize, declared: &mut Vec<bool>| -> String {
        if declared[i] {
            return format!("(n{i})");
        }
        declared[i] = true;
        match q.nodes[i] {
            QNode::Class(t) => format!("(n{i}:{})", ident(g.type_label(t))),
            QNode::Entity(e) => {
                format!(
                    "(n{i}:{} {{id: {}}})",
                    ident(g.type_label(g.node_type(e))),
                    string_literal(g.ident(e))
                )
            }
        }
    };
    let mut parts = Vec::new();
    for e in &q.edges {
        let a = node(e.start, &mut declared);
        let b = node(e.end, &mut declared);
        let rel = ident(&g.relation(e.rel).name);
        let arrow = if symmetric(g, e.rel) { "-" } else { "->" };
        parts.push(format!("{a}-[:{rel}]{arrow}{b}"));
    }
    let mut text = format!("MATCH {}", parts.join(",\n      "));
    // The question node never stands for an entity the question names (same-type only:
    // nodes of different types can never be equal).
    let t0 = match q.nodes.first() {
        Some(QNode::Class(t)) => Some(*t),
        _ => None,
    };
    let same: Vec<String> = q
        .entities()
        .filter(|&e| Some(g.node_type(e)) == t0)
        .map(|e| format!("n0.id <> {}", string_literal(g.ident(e))))
        .collect();
    if !same.is_empty() {
        text.push_str(&format!("\nWHERE {}", same.join(" AND ")));
    }
    text.push_str("\nRETURN COLLECT(DISTINCT {id: n0.id, name: n0.name}) AS n0_targets");
    text
}
