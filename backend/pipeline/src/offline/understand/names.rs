//! The folded-name index of a graph: names (and the synonyms a graph holds) → nodes, the
//! fuzzy targets, and the words and head words of names.
//!
//! Every table is a [`StrTable`]: its distinct keys sorted and concatenated in one string,
//! its values in one flat array. A name costs its bytes plus a few fixed-size entries, never
//! an allocation of its own. On a CKG-sized graph (15.4M nodes) the hash maps of owned strings
//! this replaces took 7.4 GiB per process; `bench/README.md` has the figures.
//!
//! Keys changed after the build (the lexicon's aliases, the Disease Ontology's names) are few:
//! they live in small ordinary maps beside the tables and take precedence over them.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use serenqa_graph::{Graph, NodeId, PropValue, TypeId};

use super::lexicon::fold_text;
use crate::offline::strtable::{Builder, StrTable};

/// Node properties that hold other names of a node (each a string, `|`- or `;`-separated,
/// or a list of strings).
pub const SYNONYM_KEYS: [&str; 6] = [
    "synonyms",
    "synonym",
    "aliases",
    "alias",
    "alternative_names",
    "exact_synonyms",
];

/// Nodes of one type past which its names are linked exactly only (no misspelling, prefix,
/// head-word or containment guesses): Hetionet's largest type has 20,945 nodes; a CKG's
/// variants number millions, and guessing among them answers no question a person asks.
pub(super) const GUESS_TYPE_MAX: usize = 1_000_000;

pub(super) struct NameIndex {
    /// Folded name (or a synonym the graph holds) → nodes, best connected first.
    exact: StrTable<NodeId>,
    /// Keys whose node list changed after the build (aliases): the whole list, in place of
    /// `exact`'s.
    later: BTreeMap<String, Vec<NodeId>>,
    /// Fuzzy targets of the names of guessable types: each distinct folded name and
    /// first-words prefix of one → (node, how many of the name's words the prefix leaves out).
    prefixes: StrTable<(NodeId, u32)>,
    /// (first char, char count) → indices into `prefixes`.
    buckets: HashMap<(char, usize), Vec<u32>>,
    /// Fuzzy targets added after the build (aliases), by (first char, char count).
    later_buckets: HashMap<(char, usize), Vec<(String, NodeId)>>,
    /// Folded word → nodes whose name contains it, best connected first.
    by_word: StrTable<NodeId>,
    /// Folded last word of a name (its head noun) → nodes, best connected first.
    by_head: StrTable<NodeId>,
    /// Per type: too large for guesses (see [`GUESS_TYPE_MAX`]).
    big: Vec<bool>,
}

impl NameIndex {
    /// The index of `g`'s names and the synonyms its nodes hold.
    pub(super) fn build(g: &Graph) -> NameIndex {
        let big: Vec<bool> = (0..g.type_count())
            .map(|t| g.nodes_of_type(t as TypeId).len() > GUESS_TYPE_MAX)
            .collect();
        let mut exact = Builder::new();
        let mut words = Builder::new();
        let mut heads = Builder::new();
        let mut prefixes = Builder::new();
        for n in 0..g.node_count() as NodeId {
            let name = g.name(n).trim();
            let w = fold_text(if name.is_empty() { g.ident(n) } else { name });
            if w.is_empty() {
                continue;
            }
            let key = w.join(" ");
            if big[g.node_type(n) as usize] {
                exact.push(&key, n);
                continue;
            }
            for x in &w {
                words.push(x, n);
            }
            if let Some(last) = w.last() {
                heads.push(last, n);
            }
            // Fuzzy targets: the whole name, and its first words (a misspelt "parkinsns").
            let mut end = 0usize;
            for (k, x) in w.iter().enumerate() {
                end += x.len() + usize::from(k > 0);
                prefixes.push(&key[..end], (n, (w.len() - k - 1) as u32));
            }
            exact.push(&key, n);
        }
        // Synonyms the graph holds (a `synonyms` property, as a CKG import has) link exactly.
        for key in SYNONYM_KEYS {
            for (n, v) in g.node_props().column(key) {
                if (*n as usize) >= g.node_count() {
                    continue;
                }
                let forms: Vec<&str> = match v {
                    PropValue::Str(s) => s.split(['|', ';']).collect(),
                    PropValue::List(xs) => xs
                        .iter()
                        .filter_map(|x| match x {
                            PropValue::Str(s) => Some(s.as_str()),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                for f in forms {
                    let w = fold_text(f);
                    if !w.is_empty() {
                        exact.push(&w.join(" "), *n);
                    }
                }
            }
        }
        let best_first = |a: &NodeId, b: &NodeId| g.degree(*b).cmp(&g.degree(*a)).then(a.cmp(b));
        let mut exact = exact.finish();
        exact.sort_dedup(best_first);
        let mut by_word = words.finish();
        by_word.sort_dedup(best_first);
        let mut by_head = heads.finish();
        by_head.sort_dedup(best_first);
        let prefixes = prefixes.finish();
        let mut buckets: HashMap<(char, usize), Vec<u32>> = HashMap::new();
        for i in 0..prefixes.len() {
            let k = prefixes.key(i);
            if let Some(c) = k.chars().next() {
                buckets
                    .entry((c, k.chars().count()))
                    .or_default()
                    .push(i as u32);
            }
        }
        NameIndex {
            exact,
            later: BTreeMap::new(),
            prefixes,
            buckets,
            later_buckets: HashMap::new(),
            by_word,
            by_head,
            big,
        }
    }

    /// Whether guesses (prefix, misspelling, containment) may link to `n`.
    pub(super) fn guessable(&self, g: &Graph, n: NodeId) -> bool {
        !self.big[g.node_type(n) as usize]
    }

    /// The nodes named `key` exactly (aliases first), best connected first.
    pub(super) fn exact(&self, key: &str) -> &[NodeId] {
        match self.later.get(key) {
            Some(v) => v,
            None => self.exact.get(key),
        }
    }

    pub(super) fn has_exact(&self, key: &str) -> bool {
        !self.exact(key).is_empty()
    }

    /// Nodes whose name holds the folded word `w`, best connected first.
    pub(super) fn word(&self, w: &str) -> &[NodeId] {
        self.by_word.get(w)
    }

    pub(super) fn has_word(&self, w: &str) -> bool {
        !self.word(w).is_empty()
    }

    /// Nodes whose name ends with the folded word `w`, best connected first.
    pub(super) fn head(&self, w: &str) -> &[NodeId] {
        self.by_head.get(w)
    }

    /// Links `key` exactly to `nodes`, in front of any node already spelt so (the lexicon's
    /// aliases), and makes it a fuzzy target for them.
    pub(super) fn alias_first(&mut self, key: &str, nodes: &[NodeId]) {
        let e = self
            .later
            .entry(key.to_string())
            .or_insert_with(|| self.exact.get(key).to_vec());
        for &n in nodes.iter().rev() {
            e.retain(|x| *x != n);
            e.insert(0, n);
        }
        if let Some(c) = key.chars().next() {
            let b = self
                .later_buckets
                .entry((c, key.chars().count()))
                .or_default();
            b.extend(nodes.iter().map(|&n| (key.to_string(), n)));
        }
    }

    /// Links `key` exactly to `n` (in front of other nodes spelt the same when `first`).
    pub(super) fn add_alias(&mut self, key: &str, n: NodeId, first: bool) {
        if key.is_empty() {
            return;
        }
        let e = self
            .later
            .entry(key.to_string())
            .or_insert_with(|| self.exact.get(key).to_vec());
        if e.contains(&n) {
            return;
        }
        if first {
            e.insert(0, n);
        } else {
            e.push(n);
        }
        if let Some(c) = key.chars().next() {
            self.later_buckets
                .entry((c, key.chars().count()))
                .or_default()
                .push((key.to_string(), n));
        }
    }

    /// (name, node) for names starting with `p`, in name order then node order, guessable
    /// nodes only, at most `limit`.
    pub(super) fn prefixed(&self, g: &Graph, p: &str, limit: usize) -> Vec<(&str, NodeId)> {
        let mut out = Vec::new();
        let mut i = self.exact.lower_bound(p);
        let mut later = self
            .later
            .range::<str, _>((Bound::Included(p), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(p))
            .peekable();
        loop {
            let base = (i < self.exact.len())
                .then(|| self.exact.key(i))
                .filter(|k| k.starts_with(p));
            let over = later.peek().map(|(k, _)| k.as_str());
            let (key, list): (&str, &[NodeId]) = match (base, over) {
                (None, None) => break,
                (Some(b), Some(o)) if o <= b => {
                    if o == b {
                        i += 1;
                    }
                    match later.next() {
                        Some((k, v)) => (k.as_str(), v.as_slice()),
                        None => break,
                    }
                }
                (Some(b), _) => {
                    i += 1;
                    (b, self.exact.values(i - 1))
                }
                (None, Some(_)) => match later.next() {
                    Some((k, v)) => (k.as_str(), v.as_slice()),
                    None => break,
                },
            };
            let mut ids: Vec<NodeId> = list
                .iter()
                .copied()
                .filter(|&n| self.guessable(g, n))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            for n in ids {
                if out.len() >= limit {
                    return out;
                }
                out.push((key, n));
            }
        }
        out
    }

    /// Fuzzy targets of `len` chars starting with `first`: each target's text with its
    /// (node, words the target leaves out of the name) pairs.
    pub(super) fn fuzzy_targets(
        &self,
        first: char,
        len: usize,
        mut f: impl FnMut(&str, &mut dyn Iterator<Item = (NodeId, usize)>),
    ) {
        for &i in self.buckets.get(&(first, len)).into_iter().flatten() {
            let i = i as usize;
            f(
                self.prefixes.key(i),
                &mut self
                    .prefixes
                    .values(i)
                    .iter()
                    .map(|&(n, extra)| (n, extra as usize)),
            );
        }
        for (text, n) in self.later_buckets.get(&(first, len)).into_iter().flatten() {
            f(text, &mut std::iter::once((*n, 0)));
        }
    }
}
