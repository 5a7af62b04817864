//! The subgraph filter: drops configured node and edge types before anything else sees the
//! graph, and reports what it dropped (the paper removed CKG types related to users, units,
//! experiments, projects, transcripts and publications).

use crate::{Graph, GraphBuilder, NodeId, RelationType};

/// Which types to drop. A pattern matches a type label or relation name that has it as a
/// word, ignoring case and a plural `s` (`publication` matches `Publication` and
/// `MENTIONED_IN_PUBLICATION`; `unit` matches `Units` but not `Immunity`).
#[derive(Clone, Debug, PartialEq)]
pub struct FilterSpec {
    pub drop_node_types: Vec<String>,
    pub drop_relations: Vec<String>,
}

/// The paper's list (Appendix A.1).
pub const PAPER_DROPPED: &[&str] = &[
    "user",
    "unit",
    "experiment",
    "project",
    "transcript",
    "publication",
];

impl Default for FilterSpec {
    fn default() -> Self {
        let list: Vec<String> = PAPER_DROPPED
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        FilterSpec {
            drop_node_types: list.clone(),
            drop_relations: list,
        }
    }
}

impl FilterSpec {
    pub fn none() -> Self {
        FilterSpec {
            drop_node_types: Vec::new(),
            drop_relations: Vec::new(),
        }
    }
    fn matches(patterns: &[String], name: &str) -> bool {
        let words = words(name);
        patterns.iter().any(|p| {
            let p = p.to_lowercase();
            !p.is_empty()
                && words
                    .iter()
                    .any(|w| *w == p || w.strip_suffix('s') == Some(p.as_str()))
        })
    }
}

/// Lower-case words of a label: split at non-alphanumerics and camel-case boundaries.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if (!c.is_alphanumeric() || (c.is_uppercase() && prev_lower)) && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// What the filter removed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FilterReport {
    /// (node type label, nodes dropped)
    pub node_types: Vec<(String, u64)>,
    /// (relation name, edges dropped because of their type)
    pub relations: Vec<(String, u64)>,
    /// Edges dropped because an endpoint was dropped.
    pub dangling_edges: u64,
}

impl FilterReport {
    pub fn is_empty(&self) -> bool {
        self.node_types.is_empty() && self.relations.is_empty() && self.dangling_edges == 0
    }
}

/// Returns the filtered graph (unchanged if nothing matches) and the report.
pub fn apply(g: Graph, spec: &FilterSpec) -> (Graph, FilterReport) {
    let drop_type: Vec<bool> = (0..g.type_count())
        .map(|t| FilterSpec::matches(&spec.drop_node_types, g.type_label(t as u16)))
        .collect();
    let drop_rel: Vec<bool> = g
        .relations()
        .iter()
        .map(|r| FilterSpec::matches(&spec.drop_relations, &r.name))
        .collect();
    if !drop_type.iter().any(|&d| d) && !drop_rel.iter().any(|&d| d) {
        return (g, FilterReport::default());
    }
    let mut report = FilterReport::default();
    for (t, &d) in drop_type.iter().enumerate() {
        if d {
            report.node_types.push((
                g.type_label(t as u16).to_string(),
                g.nodes_of_type(t as u16).len() as u64,
            ));
        }
    }

    let mut b = GraphBuilder::new(g.meta().clone());
    // Keep type and relation ids stable-ordered; dropped types simply end up with no nodes.
    let mut type_map = vec![None; g.type_count()];
    for t in 0..g.type_count() {
        if !drop_type[t] {
            type_map[t] = Some(b.node_type(g.type_label(t as u16), g.type_display(t as u16)));
        }
    }
    let mut rel_map = vec![None; g.relation_count()];
    for (r, rel) in g.relations().iter().enumerate() {
        if drop_rel[r] {
            continue;
        }
        let remap = |t: Option<u16>| t.and_then(|t| type_map[t as usize]);
        let src_dropped = rel.source_type.is_some_and(|t| drop_type[t as usize]);
        let dst_dropped = rel.target_type.is_some_and(|t| drop_type[t as usize]);
        if src_dropped || dst_dropped {
            continue; // every edge of it would dangle
        }
        let new = RelationType {
            source_type: remap(rel.source_type),
            target_type: remap(rel.target_type),
            ..rel.clone()
        };
        rel_map[r] = b.relation(new).ok();
    }
    let mut node_map: Vec<Option<NodeId>> = vec![None; g.node_count()];
    for v in 0..g.node_count() as NodeId {
        if let Some(t) = type_map[g.node_type(v) as usize] {
            let n = b.add_node(t, g.ident(v), g.name(v));
            node_map[v as usize] = Some(n);
        }
    }
    let mut rel_dropped = vec![0u64; g.relation_count()];
    for v in 0..g.node_count() as NodeId {
        for e in g.edges(v, crate::Direction::Out) {
            if drop_rel[e.rel as usize] {
                rel_dropped[e.rel as usize] += 1;
                continue;
            }
            match (
                node_map[e.source as usize],
                node_map[e.target as usize],
                rel_map[e.rel as usize],
            ) {
                (Some(s), Some(t), Some(r)) => {
                    let i = b.add_edge(s, r, t, g.edge_score(e.id));
                    for (k, val) in g.edge_props().of(e.id) {
                        b.set_edge_prop(i, k, val.clone());
                    }
                }
                _ => report.dangling_edges += 1,
            }
        }
    }
    for (r, &c) in rel_dropped.iter().enumerate() {
        if drop_rel[r] {
            report
                .relations
                .push((g.relation(r as u16).name.clone(), c));
        }
    }
    for v in 0..g.node_count() as NodeId {
        if let Some(n) = node_map[v as usize] {
            for (k, val) in g.node_props().of(v) {
                b.set_node_prop(n, k, val.clone());
            }
        }
    }
    let meta = b.meta_mut();
    for (name, c) in report.node_types.iter().chain(&report.relations) {
        meta.dropped.push((name.clone(), *c));
    }
    if report.dangling_edges > 0 {
        meta.dropped
            .push(("(edges to dropped nodes)".into(), report.dangling_edges));
    }
    (b.build(), report)
}

/// `g` without the edges `drop` selects: same types, relations and node ids (nodes are
/// re-added in id order), the remaining edges with their scores and properties. This is how
/// the benchmark's G = Gc − R becomes a graph of its own when something must be *computed* on
/// G (a random-walk model, degrees) rather than merely viewed through a mask.
pub fn without_edges(g: &Graph, drop: &dyn Fn(crate::EdgeId) -> bool) -> Graph {
    let mut b = GraphBuilder::new(g.meta().clone());
    for t in 0..g.type_count() {
        b.node_type(g.type_label(t as u16), g.type_display(t as u16));
    }
    for rel in g.relations() {
        // Same relation list in the same order, so relation ids are kept.
        let _ = b.relation(rel.clone());
    }
    for v in 0..g.node_count() as NodeId {
        let n = b.add_node(g.node_type(v), g.ident(v), g.name(v));
        debug_assert_eq!(n, v);
        for (k, val) in g.node_props().of(v) {
            b.set_node_prop(n, k, val.clone());
        }
    }
    for v in 0..g.node_count() as NodeId {
        for e in g.edges(v, crate::Direction::Out) {
            if drop(e.id) {
                continue;
            }
            let i = b.add_edge(e.source, e.rel, e.target, g.edge_score(e.id));
            for (k, val) in g.edge_props().of(e.id) {
                b.set_edge_prop(i, k, val.clone());
            }
        }
    }
    b.build()
}
