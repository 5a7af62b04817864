//! The template summariser: per level, the facts of the explored paths in plain sentences,
//! every entity named with its id, nothing that is not in the subgraph.

use std::collections::BTreeMap;

use serenqa_graph::Graph;
use serenqa_shared::phrases::passive;

use crate::explore::{Exploration, Step};

/// Paths listed per summary at most (the rest is counted).
const MAX_FACTS: usize = 25;

fn ent(g: &Graph, n: u32) -> String {
    format!("{} ({})", g.name(n), g.ident(n))
}

fn verb(g: &Graph, s: &Step) -> String {
    let r = g.relation(s.rel);
    let v = if r.verb.is_empty() {
        r.name.to_lowercase().replace('_', " ")
    } else {
        r.verb.clone()
    };
    if s.forward {
        v
    } else {
        passive(&v)
    }
}

/// One sentence for a path: "A (id) treats B (id), which binds C (id)."
pub fn path_sentence(g: &Graph, p: &[Step]) -> String {
    let Some(first) = p.first() else {
        return String::new();
    };
    let mut s = ent(g, first.from);
    for (i, st) in p.iter().enumerate() {
        if i > 0 {
            s.push_str(", which");
        }
        s.push(' ');
        s.push_str(&verb(g, st));
        s.push(' ');
        s.push_str(&ent(g, st.to));
    }
    s.push('.');
    s
}

fn type_counts(g: &Graph, ex: &Exploration, level: usize) -> String {
    let mut c: BTreeMap<String, usize> = BTreeMap::new();
    for p in ex.paths_of_depth(level) {
        if let Some(s) = p.last() {
            *c.entry(g.type_display(g.node_type(s.to)).to_string())
                .or_default() += 1;
        }
    }
    c.iter()
        .map(|(t, n)| format!("{n} {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The short description of a level (context for later decisions).
pub fn describe_level(g: &Graph, ex: &Exploration, level: usize) -> String {
    let paths = ex.paths_of_depth(level);
    let mut rels: BTreeMap<String, usize> = BTreeMap::new();
    for p in &paths {
        if let Some(s) = p.last() {
            *rels.entry(g.relation(s.rel).name.clone()).or_default() += 1;
        }
    }
    format!(
        "{} entities reached at hop {level} ({}), over {}.",
        paths.len(),
        type_counts(g, ex, level),
        rels.iter()
            .map(|(r, n)| format!("{r} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The summary of one hop level.
pub fn summarize_level(g: &Graph, ex: &Exploration, level: usize) -> String {
    let paths = ex.paths_of_depth(level);
    if paths.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "At hop {level} the exploration reached {} entities: {}. ",
        paths.len(),
        type_counts(g, ex, level)
    );
    for p in paths.iter().take(MAX_FACTS) {
        s.push_str(&path_sentence(g, p));
        s.push(' ');
    }
    if paths.len() > MAX_FACTS {
        s.push_str(&format!(
            "{} further paths of this length are not listed.",
            paths.len() - MAX_FACTS
        ));
    }
    s.trim_end().to_string()
}
