//! Ranking of name searches (the search box, `/api/find`): exact names, then prefixes, then
//! fuzzy hits a caller supplies (misspellings and names containing the words, from the
//! question understander's name index); within a class diseases and drugs first, then
//! better-connected nodes, then by name, then by id (deterministic).

use crate::{Graph, NodeId, TypeId};

/// How a search hit matched, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HitClass {
    Exact = 0,
    Prefix = 1,
    /// Misspelt or contained.
    Fuzzy = 2,
}

/// The `limit` best nodes for `text`, optionally of type `kind`. Names are compared after
/// `fold_word` per whitespace-separated word; `extra` adds hits found elsewhere (a node found
/// twice keeps its best class).
pub fn rank_search(
    g: &Graph,
    text: &str,
    kind: Option<TypeId>,
    limit: usize,
    fold_word: &dyn Fn(&str) -> String,
    extra: impl IntoIterator<Item = (NodeId, HitClass)>,
) -> Vec<NodeId> {
    let folded = |x: &str| {
        x.split_whitespace()
            .map(fold_word)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let want = folded(text);
    let fits = |n: NodeId| kind.is_none_or(|k| g.node_type(n) == k);
    let mut found: Vec<(HitClass, NodeId)> = Vec::new();
    let push = |class: HitClass, n: NodeId, found: &mut Vec<(HitClass, NodeId)>| {
        if !fits(n) {
            return;
        }
        match found.iter_mut().find(|(_, m)| *m == n) {
            Some(e) => e.0 = e.0.min(class),
            None => found.push((class, n)),
        }
    };
    // Scan more than `limit` so the ranking and the type filter see enough.
    for n in g.search_prefix(text, if kind.is_some() { 20_000 } else { 2_000 }) {
        let class = if folded(g.name(n)) == want {
            HitClass::Exact
        } else {
            HitClass::Prefix
        };
        push(class, n, &mut found);
    }
    for (n, class) in extra {
        push(class, n, &mut found);
    }
    // Clinicians search for diseases and drugs.
    let preferred = |n: NodeId| -> u8 {
        match g.type_label(g.node_type(n)) {
            "Disease" | "Compound" => 0,
            _ => 1,
        }
    };
    found.sort_by(|a, b| {
        (a.0, preferred(a.1))
            .cmp(&(b.0, preferred(b.1)))
            .then(g.degree(b.1).cmp(&g.degree(a.1)))
            .then(g.name(a.1).cmp(g.name(b.1)))
            .then(a.1.cmp(&b.1))
    });
    found.into_iter().take(limit).map(|(_, n)| n).collect()
}
