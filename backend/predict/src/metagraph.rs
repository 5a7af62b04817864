//! The metagraph (node types joined by relation types, with direction) and the metapaths
//! between the compound and the disease type.
//!
//! A *step* is one way of crossing a relation type between two node types: an undirected
//! relation between two different types gives two steps (one per orientation, same letters),
//! an undirected relation within one type gives one symmetric step, a directed relation gives
//! a forward and a backward step (`Gr>G` and `G<rG`). Metaedges are read off the edges
//! themselves, so a relation that joins several type pairs (as in the CKG) gives one metaedge
//! per pair.
//!
//! Metapaths are enumerated from the disease side (the smaller type on Hetionet: 137 rows
//! instead of 1552), lengths 2..=`max_len`, with **at most one treatment step** (a step over a
//! relation that is itself a treatment label such as `CtD` or `CpD`). The length-1 treatment
//! metapaths are never features: they *are* the label. See [`crate`] for why one treatment
//! step is the limit (the pair's own edge can then be removed from its walks exactly).

use std::collections::{BTreeMap, BTreeSet};

use serenqa_graph::{Direction, Graph, RelId, TypeId};

/// One way of crossing a relation type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub rel: RelId,
    pub from: TypeId,
    pub to: TypeId,
    /// Follow stored out-edges (`from` is the stored source) …
    pub out: bool,
    /// … stored in-edges (`from` is the stored target) …
    pub inn: bool,
    /// Letters between the node abbreviations when read `from` → `to` (`b`, `r>`, `<r`).
    pub letters: String,
    /// Index of the step that crosses the same metaedge the other way (itself when symmetric).
    pub reverse: usize,
    /// Whether this relation is a treatment label (then at most one per metapath).
    pub treatment: bool,
}

#[derive(Clone, Debug)]
pub struct Metagraph {
    pub steps: Vec<Step>,
    /// Abbreviation per node type (`C`, `D`, `BP`, `SE`, …).
    pub type_abbrev: Vec<String>,
}

/// Uppercase initials of a type label (`Biological Process` → `BP`, `Side_effect` → `S`).
fn initials(label: &str) -> String {
    let s: String = label.chars().filter(|c| c.is_uppercase()).collect();
    if s.is_empty() {
        label.chars().take(2).collect()
    } else {
        s
    }
}

/// Splits a Hetionet-style abbreviation `CbG` / `Gr>G` / `PCiC` into (source, letters, target):
/// one to three capitals, one or two lower-case letters (with an optional `>`/`<`), one to
/// three capitals. Anything else (a CKG relation name such as `IS_A_DRUG_PARENT`) is not an
/// abbreviation.
fn split_abbrev(a: &str) -> Option<(String, String, String)> {
    let chars: Vec<char> = a.chars().collect();
    let i = chars.iter().position(|c| !c.is_ascii_uppercase())?;
    let j = chars.iter().rposition(|c| !c.is_ascii_uppercase())? + 1;
    if i == 0 || j >= chars.len() || i >= j || i > 3 || chars.len() - j > 3 {
        return None;
    }
    let mid = &chars[i..j];
    let lower = mid.iter().filter(|c| c.is_ascii_lowercase()).count();
    if !(1..=2).contains(&lower)
        || mid
            .iter()
            .any(|c| !(c.is_ascii_lowercase() || *c == '>' || *c == '<'))
    {
        return None;
    }
    Some((
        chars[..i].iter().collect(),
        mid.iter().collect(),
        chars[j..].iter().collect(),
    ))
}

impl Metagraph {
    /// Reads the metagraph off `g`'s edges; `treatment` says which relations are labels.
    pub fn of(g: &Graph, treatment: &[RelId]) -> Metagraph {
        // (rel, source type, target type) triples present in the graph.
        let mut triples: BTreeSet<(RelId, TypeId, TypeId)> = BTreeSet::new();
        for v in 0..g.node_count() as u32 {
            let (tg, rels) = g.out_neighbors(v);
            let st = g.node_type(v);
            let mut last: Option<(RelId, TypeId)> = None;
            for (&t, &r) in tg.iter().zip(rels) {
                let key = (r, g.node_type(t));
                if last != Some(key) {
                    triples.insert((r, st, key.1));
                    last = Some(key);
                }
            }
        }
        let mut type_abbrev: Vec<String> = (0..g.type_count())
            .map(|t| initials(g.type_label(t as TypeId)))
            .collect();
        let mut letters_of: BTreeMap<RelId, String> = BTreeMap::new();
        for &(r, s, t) in &triples {
            let rel = g.relation(r);
            if let Some((sa, l, ta)) = split_abbrev(&rel.abbrev) {
                type_abbrev[s as usize] = sa;
                type_abbrev[t as usize] = ta;
                letters_of.insert(r, l.replace(['>', '<'], ""));
            }
        }
        // Types whose abbreviation is not read off a relation's: initials unless two types share
        // them (a CKG's `Drug` and `Disease`), then the label itself.
        let from_rel: BTreeSet<TypeId> = triples
            .iter()
            .filter(|(r, _, _)| letters_of.contains_key(r))
            .flat_map(|&(_, s, t)| [s, t])
            .collect();
        let taken: Vec<String> = type_abbrev.clone();
        for (t, a) in type_abbrev.iter_mut().enumerate() {
            if from_rel.contains(&(t as TypeId)) {
                continue;
            }
            if taken.iter().filter(|x| *x == a).count() > 1 {
                *a = g.type_label(t as TypeId).to_string();
            }
        }
        let mut steps = Vec::new();
        for &(r, s, t) in &triples {
            let rel = g.relation(r);
            let l = letters_of
                .get(&r)
                .cloned()
                .unwrap_or_else(|| format!("-{}-", rel.name));
            let is_t = treatment.contains(&r);
            if s == t && !rel.directed {
                let i = steps.len();
                steps.push(Step {
                    rel: r,
                    from: s,
                    to: t,
                    out: true,
                    inn: true,
                    letters: l,
                    reverse: i,
                    treatment: is_t,
                });
            } else {
                let (fw, bw) = if rel.directed {
                    (format!("{l}>"), format!("<{l}"))
                } else {
                    (l.clone(), l)
                };
                let i = steps.len();
                steps.push(Step {
                    rel: r,
                    from: s,
                    to: t,
                    out: true,
                    inn: false,
                    letters: fw,
                    reverse: i + 1,
                    treatment: is_t,
                });
                steps.push(Step {
                    rel: r,
                    from: t,
                    to: s,
                    out: false,
                    inn: true,
                    letters: bw,
                    reverse: i,
                    treatment: is_t,
                });
            }
        }
        Metagraph { steps, type_abbrev }
    }

    /// Directions in which step `s` reads the graph at its `from` node.
    pub fn directions(&self, s: usize) -> Vec<Direction> {
        let st = &self.steps[s];
        let mut d = Vec::new();
        if st.out {
            d.push(Direction::Out);
        }
        if st.inn {
            d.push(Direction::In);
        }
        d
    }

    /// All metapaths from `from` to `to` of length `min_len..=max_len` with at most one
    /// treatment step (crossed from `from` to `to`), as step sequences, in a fixed (lexicographic by step index) order.
    pub fn metapaths(
        &self,
        from: TypeId,
        to: TypeId,
        min_len: usize,
        max_len: usize,
    ) -> Vec<Vec<usize>> {
        // Steps needed from each type to reach `to` (BFS backwards), to prune dead ends.
        let nt = self.type_abbrev.len();
        let mut dist = vec![usize::MAX; nt];
        dist[to as usize] = 0;
        for _ in 0..nt {
            for st in &self.steps {
                let d = dist[st.to as usize];
                if d != usize::MAX && d + 1 < dist[st.from as usize] {
                    dist[st.from as usize] = d + 1;
                }
            }
        }
        let mut out = Vec::new();
        let mut cur = Vec::new();
        self.extend(
            (from, to),
            from,
            min_len,
            max_len,
            &dist,
            &mut cur,
            0,
            &mut out,
        );
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn extend(
        &self,
        ends: (TypeId, TypeId),
        at: TypeId,
        min_len: usize,
        max_len: usize,
        dist: &[usize],
        cur: &mut Vec<usize>,
        treat: usize,
        out: &mut Vec<Vec<usize>>,
    ) {
        let to = ends.1;
        if at == to && cur.len() >= min_len {
            out.push(cur.clone());
        }
        if cur.len() == max_len {
            return;
        }
        for (i, st) in self.steps.iter().enumerate() {
            // A treatment step only from the start type to the end type, and only one: then
            // the walks over the pair's own edge have the closed form `crate::dwpc` removes.
            if st.from != at
                || (st.treatment && (treat >= 1 || st.from != ends.0 || st.to != ends.1))
            {
                continue;
            }
            let d = dist[st.to as usize];
            if d == usize::MAX || cur.len() + 1 + d > max_len {
                continue;
            }
            cur.push(i);
            self.extend(
                ends,
                st.to,
                min_len,
                max_len,
                dist,
                cur,
                treat + st.treatment as usize,
                out,
            );
            cur.pop();
        }
    }

    /// Abbreviation of a metapath read along its steps (`DaGbC`).
    pub fn abbrev(&self, path: &[usize]) -> String {
        let mut s = match path.first() {
            Some(&f) => self.type_abbrev[self.steps[f].from as usize].clone(),
            None => String::new(),
        };
        for &i in path {
            let st = &self.steps[i];
            s.push_str(&st.letters);
            s.push_str(&self.type_abbrev[st.to as usize]);
        }
        s
    }

    /// The same metapath read the other way (steps reversed, each crossed backwards).
    pub fn reversed(&self, path: &[usize]) -> Vec<usize> {
        path.iter().rev().map(|&i| self.steps[i].reverse).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_hetionet_abbreviations() {
        assert_eq!(
            split_abbrev("CbG"),
            Some(("C".into(), "b".into(), "G".into()))
        );
        assert_eq!(
            split_abbrev("Gr>G"),
            Some(("G".into(), "r>".into(), "G".into()))
        );
        assert_eq!(
            split_abbrev("PCiC"),
            Some(("PC".into(), "i".into(), "C".into()))
        );
        assert_eq!(
            split_abbrev("CcSE"),
            Some(("C".into(), "c".into(), "SE".into()))
        );
        assert_eq!(split_abbrev("TREATS"), None);
        // CKG relation names are not abbreviations.
        assert_eq!(split_abbrev("IS_A_DRUG_PARENT"), None);
        assert_eq!(split_abbrev("IS_INDICATED_FOR"), None);
        assert_eq!(split_abbrev("HAS_PARENT"), None);
        assert_eq!(initials("Biological Process"), "BP");
    }
}
