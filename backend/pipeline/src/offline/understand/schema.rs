//! The lexicon of any graph, derived from its own schema, with the Hetionet lexicon as an
//! overlay ([`lexicon_for`]).
//!
//! - **Metagraph** ([`Metagraph`]): the (source type, target type, edge count) triples of every
//!   relation. A relation whose end types the loader fixed (Hetionet, `serenqa synth`) costs one
//!   pass over the edges' relation ids; a relation without them (a Neo4j CSV import such as the
//!   CKG) is read off its edges in the same single pass.
//! - **Type nouns**: a node type's label in words (`Biological_process` → "biological
//!   process", `GWAS_study` → "gwas study", CamelCase split), folded as questions are, so
//!   plurals read too; its head noun alone ("variant") when no other type's noun is that word
//!   and the type is the only one with that head, or has at least twice the nodes of each other.
//! - **Relation phrases**: a relation's name in words, without the words that name its end
//!   types (`VARIANT_FOUND_IN_GENE` → "found in", `ASSOCIATED_WITH_BP` → "associated with":
//!   an end type's words, initials or a prefix of them), without a qualifier before its verb
//!   (`COMPILED_TARGETS` → "target"); then its readings: "is X of" also "are X of", "X of";
//!   "has X" also "have X", "with X" and "X of" (read backwards); a verb also in the passive
//!   ("targeted by", read backwards). A phrase that holds a type noun is left to the noun. A
//!   name with no word left after stripping keeps all its words: every relation is reachable.
//! - **Pairs**: the relation meant when a question joins two types without a verb — the only
//!   relation between them, or one with at least twice the edges of each other.
//! - **Overlay**: the Hetionet lexicon's lines that apply to this graph (its types and
//!   metaedges by name; stop words, exception markers and word synonyms always). The overlay
//!   owns what it names — a type with overlay nouns, a relation with overlay phrases, a type
//!   pair with an overlay `pair` — and the schema fills in everything else; where both give the
//!   same words, the schema's noun wins and phrases join their senses. On Hetionet the overlay
//!   names everything, so the lexicon is exactly the Hetionet lexicon.

use std::collections::{HashMap, HashSet};

use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use super::lexicon::{fold_text, fold_word, LexiconFile, Sense, HETIONET_LEXICON};

/// One relation's observed end types: (source type, target type, edges).
pub type Ends = Vec<(Option<TypeId>, Option<TypeId>, u64)>;

/// The end types of every relation, with edge counts.
#[derive(Clone, Debug, Default)]
pub struct Metagraph {
    ends: Vec<Ends>,
}

impl Metagraph {
    /// One pass over the edges: relation ids only when every relation has fixed end types,
    /// else (relation, source type, target type) per edge.
    pub fn of(g: &Graph) -> Metagraph {
        let rels = g.relations();
        let loose = rels
            .iter()
            .any(|r| r.source_type.is_none() || r.target_type.is_none());
        let ends = if !loose {
            let counts = g.relation_counts();
            rels.iter()
                .zip(counts)
                .map(|(r, (_, c))| vec![(r.source_type, r.target_type, c)])
                .collect()
        } else {
            let mut seen: Vec<HashMap<(TypeId, TypeId), u64>> = vec![HashMap::new(); rels.len()];
            let (offsets, targets, rel_of) = g.out_csr();
            for n in 0..g.node_count() {
                let (Some(&a), Some(&b)) = (offsets.get(n), offsets.get(n + 1)) else {
                    break;
                };
                let s = g.node_type(n as NodeId);
                for e in a as usize..b as usize {
                    let (Some(&r), Some(&t)) = (rel_of.get(e), targets.get(e)) else {
                        continue;
                    };
                    if let Some(m) = seen.get_mut(r as usize) {
                        *m.entry((s, g.node_type(t))).or_default() += 1;
                    }
                }
            }
            seen.into_iter()
                .map(|m| {
                    let mut v: Ends = m
                        .into_iter()
                        .map(|((s, t), c)| (Some(s), Some(t), c))
                        .collect();
                    v.sort_by(|x, y| y.2.cmp(&x.2).then(x.0.cmp(&y.0)).then(x.1.cmp(&y.1)));
                    if v.is_empty() {
                        v.push((None, None, 0));
                    }
                    v
                })
                .collect()
        };
        Metagraph { ends }
    }

    /// The relation's (source type, target type, edges), most edges first; a relation with
    /// fixed end types has exactly one.
    pub fn ends(&self, r: RelId) -> &[(Option<TypeId>, Option<TypeId>, u64)] {
        self.ends.get(r as usize).map_or(&[], Vec::as_slice)
    }

    /// Edges of the relation between exactly these types (either way round).
    fn edges_between(&self, r: RelId, a: TypeId, b: TypeId) -> u64 {
        self.ends(r)
            .iter()
            .filter(|e| (e.0 == Some(a) && e.1 == Some(b)) || (e.0 == Some(b) && e.1 == Some(a)))
            .map(|e| e.2)
            .sum()
    }
}

/// The lexicon for a graph: the Hetionet lexicon's lines that apply to it, and the rest
/// derived from its schema. Never fails on an unknown schema; `Err` only if the compiled-in
/// lexicon is malformed. Also returns how many overlay lines did not apply.
pub fn lexicon_for(g: &Graph, meta: &Metagraph) -> Result<(LexiconFile, usize), String> {
    let (overlay, left_out) =
        LexiconFile::parse_overlay(HETIONET_LEXICON, "lexicon/hetionet.tsv", g)?;
    Ok((merge(g, meta, overlay), left_out))
}

/// Words that carry no meaning of their own in a relation name.
const FUNCTION: &[&str] = &[
    "is", "are", "be", "has", "have", "a", "an", "the", "of", "in", "to", "with", "by", "for",
    "on", "at", "from", "into", "as", "and", "or",
];

/// A label split into lower-case words: at `_`, spaces and punctuation, and at CamelCase
/// boundaries (`PharmacologicClass`, `HTTPServer`).
pub fn label_words(label: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = label.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The words that name a type in a relation name: its label's words, their initials
/// (`bp` for Biological_process) and a prefix of three letters or more of a word (`met`).
struct TypeWords {
    words: Vec<String>,
    initials: String,
}

impl TypeWords {
    fn new(g: &Graph, t: TypeId) -> TypeWords {
        let words = label_words(g.type_label(t));
        let initials = words.iter().filter_map(|w| w.chars().next()).collect();
        TypeWords { words, initials }
    }

    fn abbreviates(&self, w: &str) -> bool {
        (self.words.len() > 1 && w == self.initials)
            || (w.len() >= 3
                && self
                    .words
                    .iter()
                    .any(|x| x.len() > w.len() && x.starts_with(w)))
    }
}

fn has_content(ws: &[String]) -> bool {
    ws.iter().any(|w| !FUNCTION.contains(&w.as_str()))
}

/// A third-person verb form (`targets`, `acts`, `studies`), not `is` / `has`.
fn third_person(w: &str) -> bool {
    w.len() > 3
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
        && !FUNCTION.contains(&w)
}

/// Irregular past participles: (plain form, participle).
const IRREGULAR: &[(&str, &str)] = &[
    ("bind", "bound"),
    ("find", "found"),
    ("make", "made"),
    ("know", "known"),
    ("take", "taken"),
    ("give", "given"),
    ("hold", "held"),
    ("build", "built"),
    ("show", "shown"),
    ("see", "seen"),
];

/// Whether a word is a past participle (`associated`, `found`).
fn is_participle(w: &str) -> bool {
    w.ends_with("ed") || IRREGULAR.iter().any(|(_, p)| *p == w)
}

/// The past participle of a verb's plain form (approximate English rules).
fn participle(lemma: &str) -> String {
    if let Some((_, p)) = IRREGULAR.iter().find(|(l, _)| *l == lemma) {
        return (*p).to_string();
    }
    let cs: Vec<char> = lemma.chars().collect();
    let vowel = |c: char| "aeiou".contains(c);
    match cs.as_slice() {
        [.., 'e'] => format!("{lemma}d"),
        [.., p, 'y'] if !vowel(*p) => format!("{}ied", &lemma[..lemma.len() - 1]),
        [a, b, c] if !vowel(*a) && vowel(*b) && !vowel(*c) && !"wxy".contains(*c) => {
            format!("{lemma}{c}ed")
        }
        _ => format!("{lemma}ed"),
    }
}

/// The phrases a relation name gives: (words as written, read backwards).
fn relation_phrases(g: &Graph, name: &str, end_types: &[TypeId]) -> Vec<(Vec<String>, bool)> {
    let all = label_words(name);
    if all.is_empty() {
        return Vec::new();
    }
    let types: Vec<TypeWords> = end_types.iter().map(|&t| TypeWords::new(g, t)).collect();
    let mut w = all.clone();
    // A trailing abbreviation of an end type (`_BP`, `_SE`, `_MET`).
    if w.len() > 1
        && w.last()
            .is_some_and(|l| types.iter().any(|t| t.abbreviates(l)))
        && has_content(&w[..w.len() - 1])
    {
        w.pop();
    }
    // An end type's words anywhere, else its head word at either end, while a content word
    // remains.
    for t in &types {
        let tw = &t.words;
        let found = (tw.len() <= w.len())
            .then(|| (0..=w.len() - tw.len()).find(|&i| w[i..i + tw.len()] == tw[..]))
            .flatten();
        if let Some(at) = found.filter(|_| !tw.is_empty()) {
            let mut rest = w[..at].to_vec();
            rest.extend_from_slice(&w[at + tw.len()..]);
            if has_content(&rest) {
                w = rest;
            }
            continue;
        }
        let Some(head) = tw.last() else { continue };
        if w.len() > 1 && w.first() == Some(head) && has_content(&w[1..]) {
            w.remove(0);
        } else if w.len() > 1 && w.last() == Some(head) && has_content(&w[..w.len() - 1]) {
            w.pop();
        }
    }
    // A qualifier before the verb ("curated targets", "compiled interacts with").
    let mut cores = vec![w.clone()];
    if w.len() >= 2 && is_participle(&w[0]) && third_person(&w[1]) {
        cores.push(w[1..].to_vec());
    }
    let mut out: Vec<(Vec<String>, bool)> = Vec::new();
    let mut push = |p: Vec<String>, back: bool| {
        let p: Vec<String> = p.into_iter().filter(|x| !x.is_empty()).collect();
        if has_content(&p) && !out.iter().any(|x| x.0 == p) {
            out.push((p, back));
        }
    };
    let strip_article = |ws: &[String]| -> Vec<String> {
        match ws.first().map(String::as_str) {
            Some("a" | "an" | "the") => ws[1..].to_vec(),
            _ => ws.to_vec(),
        }
    };
    for c in cores {
        push(c.clone(), false);
        let rest = c[1..].to_vec();
        match c[0].as_str() {
            "is" | "are" => {
                push([vec!["are".to_string()], rest.clone()].concat(), false);
                push(strip_article(&rest), false);
                // "is a subunit of" → "has subunit" (read backwards).
                if rest.last().is_some_and(|x| x == "of") {
                    let noun = strip_article(&rest[..rest.len() - 1]);
                    push([vec!["has".into()], noun.clone()].concat(), true);
                    push([vec!["have".into()], noun].concat(), true);
                }
            }
            "has" | "have" => {
                push([vec!["has".to_string()], rest.clone()].concat(), false);
                push([vec!["have".to_string()], rest.clone()].concat(), false);
                push([vec!["with".to_string()], rest.clone()].concat(), false);
                if rest.first().is_some_and(|x| !is_participle(x)) {
                    push([rest, vec!["of".to_string()]].concat(), true);
                }
            }
            // The passive of a verb with no object word of its own ("targeted by", "acted on
            // by"; not "studied trait by").
            v if third_person(v) && !has_content(&rest) => {
                let lemma = fold_word(v);
                push(
                    [vec![participle(&lemma)], rest, vec!["by".to_string()]].concat(),
                    true,
                );
            }
            _ => {}
        }
    }
    if out.is_empty() {
        out.push((all, false));
    }
    out
}

/// How the interpretation line says a relation: (from its source, from its target), plural
/// subject.
fn relation_verbs(phrase: &[String]) -> (String, String) {
    let Some(first) = phrase.first() else {
        return (String::new(), String::new());
    };
    let rest = phrase[1..].join(" ");
    let join = |a: &str, b: &str| {
        if b.is_empty() {
            a.to_string()
        } else {
            format!("{a} {b}")
        }
    };
    let text = phrase.join(" ");
    match first.as_str() {
        "is" | "are" => {
            let s = join("are", &rest);
            (s.clone(), format!("are linked by '{s}' to"))
        }
        "has" | "have" => {
            let s = join("have", &rest);
            (s.clone(), format!("are linked by '{s}' to"))
        }
        v if third_person(v) && !has_content(&phrase[1..]) => {
            let lemma = fold_word(v);
            (
                join(&lemma, &rest),
                join(&join("are", &participle(&lemma)), &join(&rest, "by")),
            )
        }
        v if is_participle(v) => (join("are", &text), format!("are linked by '{text}' to")),
        _ => (text.clone(), format!("are linked by '{text}' to")),
    }
}

/// The overlay with the schema-derived entries for what it does not name.
fn merge(g: &Graph, meta: &Metagraph, mut lx: LexiconFile) -> LexiconFile {
    let stops: HashSet<Vec<String>> = lx.stops.iter().cloned().collect();
    // Type nouns of the types the overlay does not name.
    let covered: HashSet<TypeId> = lx.nouns.iter().map(|n| n.1).collect();
    let count = |t: TypeId| g.nodes_of_type(t).len();
    let full: Vec<(TypeId, Vec<String>)> = (0..g.type_count() as TypeId)
        .map(|t| (t, fold_text(&label_words(g.type_label(t)).join(" "))))
        .filter(|(_, w)| !w.is_empty())
        .collect();
    let mut nouns: Vec<(Vec<String>, TypeId)> = Vec::new();
    for (t, w) in &full {
        if covered.contains(t) {
            continue;
        }
        if !stops.contains(w) {
            nouns.push((w.clone(), *t));
            lx.display
                .entry(*t)
                .or_insert_with(|| label_words(g.type_label(*t)).join(" "));
        }
        let display = fold_text(g.type_display(*t));
        if !display.is_empty() && display != *w && !stops.contains(&display) {
            nouns.push((display, *t));
        }
        // The head noun alone, when it names this type and no other.
        let Some(head) = w.last().filter(|_| w.len() > 1) else {
            continue;
        };
        let head_v = vec![head.clone()];
        if head.len() < 3 || stops.contains(&head_v) || full.iter().any(|(_, x)| *x == head_v) {
            continue;
        }
        let rivals: Vec<TypeId> = full
            .iter()
            .filter(|(u, x)| u != t && x.last() == Some(head))
            .map(|x| x.0)
            .collect();
        if rivals.iter().all(|&u| count(*t) >= 2 * count(u).max(1)) {
            nouns.push((head_v, *t));
        }
    }
    // Relation phrases of the relations the overlay does not name.
    let named: HashSet<RelId> = lx
        .phrases
        .iter()
        .flat_map(|p| p.1.iter().map(|s| s.rel))
        .collect();
    let mut phrases: Vec<(Vec<String>, Vec<Sense>)> = Vec::new();
    let mut verbs: Vec<(RelId, (String, String))> = Vec::new();
    for (r, rt) in g.relations().iter().enumerate() {
        let r = r as RelId;
        if named.contains(&r) {
            continue;
        }
        let mut end_types: Vec<TypeId> = Vec::new();
        for e in meta.ends(r) {
            for t in [e.0, e.1].into_iter().flatten() {
                if !end_types.contains(&t) {
                    end_types.push(t);
                }
            }
        }
        let readings = relation_phrases(g, &rt.name, &end_types);
        if let Some((first, _)) = readings.first() {
            verbs.push((r, relation_verbs(first)));
        }
        for (words, back) in readings {
            let p = fold_text(&words.join(" "));
            // Read backwards: only a same-type edge's direction depends on it.
            let sense = Sense {
                rel: r,
                reversed: back,
            };
            match phrases.iter_mut().find(|x| x.0 == p) {
                Some(x) if !x.1.contains(&sense) => x.1.push(sense),
                Some(_) => {}
                None => phrases.push((p, vec![sense])),
            }
        }
    }
    // A schema noun wins over the overlay's noun of the same words; a phrase holding a noun
    // is left to the noun.
    let schema_nouns: HashSet<Vec<String>> = nouns.iter().map(|n| n.0.clone()).collect();
    lx.nouns.retain(|n| !schema_nouns.contains(&n.0));
    lx.nouns.extend(nouns);
    let holds_noun = |p: &[String]| {
        lx.nouns
            .iter()
            .any(|(n, _)| n.len() <= p.len() && p.windows(n.len()).any(|w| w == &n[..]))
    };
    // Senses of one phrase: the relation with most edges first.
    let edges = |r: RelId| -> u64 { meta.ends(r).iter().map(|e| e.2).sum() };
    let phrases: Vec<_> = phrases
        .into_iter()
        .filter(|p| !holds_noun(&p.0))
        .map(|(p, mut senses)| {
            senses.sort_by_key(|s| std::cmp::Reverse(edges(s.rel)));
            (p, senses)
        })
        .collect();
    for (p, senses) in phrases {
        match lx.phrases.iter_mut().find(|x| x.0 == p) {
            Some(x) => {
                for s in senses {
                    if !x.1.contains(&s) {
                        x.1.push(s);
                    }
                }
            }
            None => lx.phrases.push((p, senses)),
        }
    }
    for (r, v) in verbs {
        lx.verbs.entry(r).or_insert(v);
    }
    // Pairs for type pairs the overlay does not pair: the only relation, or the one with at
    // least twice the edges of each other; most edges first in the preference order.
    let mut between: HashMap<(TypeId, TypeId), Vec<(u64, RelId)>> = HashMap::new();
    for r in 0..g.relation_count() as RelId {
        for e in meta.ends(r) {
            if let (Some(a), Some(b)) = (e.0, e.1) {
                let key = (a.min(b), a.max(b));
                let v = between.entry(key).or_default();
                if !v.iter().any(|x| x.1 == r) {
                    v.push((meta.edges_between(r, a, b), r));
                }
            }
        }
    }
    let mut pairs: Vec<(u64, RelId, TypeId, TypeId)> = Vec::new();
    for ((a, b), mut v) in between {
        if lx.pairs.contains_key(&(a, b)) {
            continue;
        }
        v.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        let clear = match v.as_slice() {
            [only] => Some(only),
            [top, second, ..] if top.0 >= 2 * second.0.max(1) => Some(top),
            _ => None,
        };
        if let Some(&(c, r)) = clear {
            pairs.push((c, r, a, b));
        }
    }
    pairs.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    for (_, r, a, b) in pairs {
        lx.pairs.insert((a, b), r);
        lx.pairs.insert((b, a), r);
        if !lx.pair_order.contains(&r) {
            lx.pair_order.push(r);
        }
    }
    lx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn labels_split_into_words() {
        assert_eq!(
            label_words("Biological_process"),
            strs(&["biological", "process"])
        );
        assert_eq!(
            label_words("PharmacologicClass"),
            strs(&["pharmacologic", "class"])
        );
        assert_eq!(label_words("GWAS_study"), strs(&["gwas", "study"]));
        assert_eq!(label_words("HTTPServer"), strs(&["http", "server"]));
        assert_eq!(
            label_words("VARIANT_FOUND_IN_GENE"),
            strs(&["variant", "found", "in", "gene"])
        );
        assert!(label_words("__").is_empty());
    }

    #[test]
    fn participles_and_verbs() {
        assert_eq!(participle("target"), "targeted");
        assert_eq!(participle("regulate"), "regulated");
        assert_eq!(participle("study"), "studied");
        assert_eq!(participle("map"), "mapped");
        assert_eq!(participle("act"), "acted");
        assert_eq!(participle("bind"), "bound");
        let (f, b) = relation_verbs(&strs(&["acts", "on"]));
        assert_eq!((f.as_str(), b.as_str()), ("act on", "are acted on by"));
        let (f, _) = relation_verbs(&strs(&["found", "in"]));
        assert_eq!(f, "are found in");
    }
}
