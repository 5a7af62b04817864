//! Question understanding for everyday clinical phrasing: free text → a structured query over
//! the graph's metaedges → Cypher, with what was understood said in plain words.
//!
//! 1. **Lexicon** ([`LexiconFile`], a data file: `lexicon/hetionet.tsv`, compiled in, or any
//!    path): type nouns, relation phrases → metaedges (in preference order), the default
//!    relation of a type pair, the words the interpretation line uses, and stop words. Errors
//!    name the file line.
//! 2. **Folding**: lower case, apostrophes and punctuation dropped, a plural or possessive
//!    `s` dropped per word (`Parkinson's` = `parkinsons` = `parkinson`). Names are folded the
//!    same way once per graph.
//! 3. **Tagging**: multi-word exact names first (longest first, `idiopathic pulmonary
//!    fibrosis`), then relation phrases, type nouns and stop words (longest first), then the
//!    remaining words are linked to node names: exact, then a whole-word prefix of a name
//!    (`alzheimers` → `Alzheimer's disease`), then fuzzy (Damerau–Levenshtein through
//!    `strsim`, over names of about the same length with the same first letter), then a name
//!    that contains the words (`diabetes` → the two diabetes mellitus types, a "did you
//!    mean").
//! 4. **Assembly**: the first type noun is the answer; relation phrases connect it to
//!    entities (either order: `which drugs treat X`, `what genes does X bind`, `what is X used
//!    for`), a relation phrase followed by a type noun opens a chain (`drugs that bind genes
//!    associated with X`), and further entities after one relation share it (intersection:
//!    `genes associated with X and Y`). Each entity's candidate is chosen by match kind, then
//!    by fitting the relation's types, then by degree; a phrase's metaedge by the types at its
//!    ends; no phrase between two types means the lexicon's `pair` relation.
//!    More readings of the same kind: a name followed by a noun of its own type is that type
//!    ("heart tissue", "fever as a symptom"); a name followed by another type's noun
//!    qualifies it ("interact with obesity genes"); a second type noun right after the
//!    answer's opens a chain by the pair relation ("pathways of genes …"); the same name
//!    twice closes a cycle ("drugs for X that bind genes associated with X"); when no sense
//!    of a phrase fits, the edge is bridged through the type it wants, joined by the pair
//!    relation ("side effects of benzodiazepines" = of the drugs in that class); a name
//!    before its verb is the verb's subject (same-type relations read from it:
//!    "which genes does TP53 regulate"). Lexicon `alias` lines give abbreviations and lay
//!    terms (COPD, lupus, hair loss). `SERENQA_DEBUG_UNDERSTAND=1` prints the tagged items.
//! 5. **Alternatives**: the first reading, then the other metaedges of ambiguous phrases;
//!    the retriever runs them in order and keeps the first that returns rows.

use std::collections::{HashMap, HashSet};

use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use super::retrieval::{PNode, Parse};

/// The Hetionet lexicon, compiled in.
pub const HETIONET_LEXICON: &str = include_str!("../../lexicon/hetionet.tsv");

/// Readings tried at most per question.
pub const MAX_READINGS: usize = 6;
/// Candidates kept per mention.
const MAX_CANDIDATES: usize = 8;
/// Longest name span looked up, in words.
const MAX_SPAN: usize = 8;

/// Folds one word: lower case, letters and digits only, plural/possessive `s` dropped.
pub fn fold_word(w: &str) -> String {
    let mut s: String = w
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect();
    if s.len() > 4 && s.ends_with("ies") {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.len() > 4 && s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if s.len() > 3
        && s.ends_with('s')
        && !s.ends_with("ss")
        && !s.ends_with("us")
        && !s.ends_with("is")
    {
        s.pop();
    }
    s
}

/// Splits text into words (at whitespace and punctuation; a possessive `'s` stays with its
/// word), returning (original word, folded word) pairs.
pub fn words(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<(String, String)>| {
        if !cur.is_empty() {
            let f = fold_word(cur);
            if !f.is_empty() {
                out.push((cur.clone(), f));
            }
            cur.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '\'' || c == '’' {
            cur.push(c);
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn fold_text(text: &str) -> Vec<String> {
    words(text).into_iter().map(|(_, f)| f).collect()
}

/// One metaedge a phrase may mean; `reversed` reads a same-type directed relation backwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sense {
    pub rel: RelId,
    pub reversed: bool,
}

/// A lexicon, read from its text and checked against a graph.
#[derive(Clone, Debug, Default)]
pub struct LexiconFile {
    /// Type noun words → type; first noun of a type is its display word.
    pub nouns: Vec<(Vec<String>, TypeId)>,
    pub display: HashMap<TypeId, String>,
    pub phrases: Vec<(Vec<String>, Vec<Sense>)>,
    pub pairs: HashMap<(TypeId, TypeId), RelId>,
    /// Written forms of names (abbreviations, lay terms): (folded form, type, folded graph
    /// name, file line).
    pub aliases: Vec<(Vec<String>, TypeId, Vec<String>, usize)>,
    /// `pair` relations in file order (earlier = preferred when a question names no verb).
    pub pair_order: Vec<RelId>,
    /// Relation → (said from its source, said from its target).
    pub verbs: HashMap<RelId, (String, String)>,
    pub stops: Vec<Vec<String>>,
}

fn norm_label(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl LexiconFile {
    /// Reads a lexicon (`origin` names it in errors: `lexicon.tsv line 12: …`).
    pub fn parse(text: &str, origin: &str, g: &Graph) -> Result<LexiconFile, String> {
        let types: HashMap<String, TypeId> = (0..g.type_count() as TypeId)
            .flat_map(|t| {
                [
                    (norm_label(g.type_label(t)), t),
                    (norm_label(g.type_display(t)), t),
                ]
            })
            .collect();
        let rels: HashMap<String, RelId> = (0..g.relation_count() as RelId)
            .flat_map(|r| {
                [
                    (g.relation(r).abbrev.clone(), r),
                    (g.relation(r).name.clone(), r),
                ]
            })
            .collect();
        let mut lx = LexiconFile::default();
        for (i, line) in text.lines().enumerate() {
            let err = |m: String| format!("{origin} line {}: {m}", i + 1);
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
            let want = |n: usize| -> Result<(), String> {
                if cols.len() != n {
                    Err(err(format!(
                        "'{}' takes {} tab-separated columns, found {}",
                        cols[0],
                        n,
                        cols.len()
                    )))
                } else if cols.iter().any(|c| c.is_empty()) {
                    Err(err("empty column".into()))
                } else {
                    Ok(())
                }
            };
            let ty = |s: &str| {
                types
                    .get(&norm_label(s))
                    .copied()
                    .ok_or_else(|| err(format!("unknown node type '{s}'")))
            };
            let rel = |s: &str| {
                rels.get(s)
                    .copied()
                    .ok_or_else(|| err(format!("unknown metaedge '{s}'")))
            };
            let phrase = |s: &str| -> Result<Vec<String>, String> {
                let w = fold_text(s);
                if w.is_empty() {
                    Err(err(format!("'{s}' has no words")))
                } else {
                    Ok(w)
                }
            };
            match cols[0] {
                "type" => {
                    want(3)?;
                    let t = ty(cols[1])?;
                    lx.display.entry(t).or_insert_with(|| cols[2].to_string());
                    lx.nouns.push((phrase(cols[2])?, t));
                }
                "rel" => {
                    want(3)?;
                    let mut senses = Vec::new();
                    // '*': the two types' pair relation ("share", "in common with").
                    for m in cols[1].split(',').filter(|m| m.trim() != "*") {
                        let m = m.trim();
                        let (m, reversed) = match m.strip_suffix('^') {
                            Some(x) => (x, true),
                            None => (m, false),
                        };
                        senses.push(Sense {
                            rel: rel(m)?,
                            reversed,
                        });
                    }
                    let p = phrase(cols[2])?;
                    match lx.phrases.iter_mut().find(|(q, _)| *q == p) {
                        Some((_, s)) => s.extend(
                            senses
                                .into_iter()
                                .filter(|x| !s.contains(x))
                                .collect::<Vec<_>>(),
                        ),
                        None => lx.phrases.push((p, senses)),
                    }
                }
                "alias" => {
                    want(4)?;
                    let t = ty(cols[1])?;
                    lx.aliases
                        .push((phrase(cols[2])?, t, phrase(cols[3])?, i + 1));
                }
                "pair" => {
                    want(2)?;
                    let r = rel(cols[1])?;
                    let rt = g.relation(r);
                    let (Some(a), Some(b)) = (rt.source_type, rt.target_type) else {
                        return Err(err(format!(
                            "metaedge '{}' has no fixed end types",
                            cols[1]
                        )));
                    };
                    lx.pairs.insert((a, b), r);
                    lx.pairs.insert((b, a), r);
                    lx.pair_order.push(r);
                }
                "verb" => {
                    want(3)?;
                    let r = rel(cols[1])?;
                    let Some((f, b)) = cols[2].split_once('|') else {
                        return Err(err("verb needs '<from source> | <from target>'".into()));
                    };
                    lx.verbs
                        .insert(r, (f.trim().to_string(), b.trim().to_string()));
                }
                "stop" => {
                    want(2)?;
                    lx.stops.push(phrase(cols[1])?);
                }
                other => {
                    return Err(err(format!(
                        "unknown entry kind '{other}' (type, rel, pair, verb or stop)"
                    )))
                }
            }
        }
        if lx.nouns.is_empty() || lx.phrases.is_empty() {
            return Err(format!("{origin}: no type nouns or no relation phrases"));
        }
        Ok(lx)
    }

    /// Reads a lexicon file from disk.
    pub fn load(path: &std::path::Path, g: &Graph) -> Result<LexiconFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        LexiconFile::parse(&text, &path.display().to_string(), g)
    }
}

/// How a mention was linked to a node name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    Exact,
    Prefix,
    Fuzzy,
    Contains,
}

impl Match {
    pub fn label(self) -> &'static str {
        match self {
            Match::Exact => "exact",
            Match::Prefix => "prefix",
            Match::Fuzzy => "fuzzy",
            Match::Contains => "contains",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Candidate {
    pub node: NodeId,
    pub how: Match,
    /// Edit distance for fuzzy matches, extra words for prefix / containment.
    pub distance: usize,
}

/// A span of the question linked to nodes.
#[derive(Clone, Debug)]
pub struct Mention {
    pub text: String,
    pub candidates: Vec<Candidate>,
}

#[derive(Clone, Debug)]
enum Item {
    Noun(TypeId),
    Rel(usize),
    Ent(usize),
}

/// The understanding of one question.
#[derive(Clone, Debug, Default)]
pub struct Understanding {
    /// Readings, best first.
    pub readings: Vec<Parse>,
    pub mentions: Vec<Mention>,
    /// Per reading: the chosen candidate of each mention used (mention index, node).
    pub chosen: Vec<Vec<(usize, NodeId)>>,
    /// Words that were neither vocabulary nor names.
    pub unknown: Vec<String>,
}

struct NameIndex {
    /// Folded name → nodes, best connected first.
    exact: HashMap<String, Vec<NodeId>>,
    /// Sorted folded names, for whole-word prefix search.
    sorted: Vec<(String, NodeId)>,
    /// (first char, char count) → folded names (and first-words prefixes of longer names).
    buckets: HashMap<(char, usize), Vec<(String, NodeId, usize)>>,
    /// Folded word → nodes whose name contains it.
    by_word: HashMap<String, Vec<NodeId>>,
}

/// Question understanding over one graph: the lexicon and a folded-name index.
pub struct Understander {
    pub lex: LexiconFile,
    names: NameIndex,
    /// Every vocabulary word (phrases, nouns, stops), never linked on its own.
    vocab: HashSet<String>,
    /// Lexicon entries that do not apply to this graph (aliases of absent names).
    pub warnings: Vec<String>,
}

fn max_distance(chars: usize) -> usize {
    match chars {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    }
}

impl Understander {
    /// With the compiled-in Hetionet lexicon.
    pub fn new(g: &Graph) -> Result<Understander, String> {
        Understander::with_lexicon(
            g,
            LexiconFile::parse(HETIONET_LEXICON, "lexicon/hetionet.tsv", g)?,
        )
    }

    pub fn with_lexicon(g: &Graph, lex: LexiconFile) -> Result<Understander, String> {
        let mut exact: HashMap<String, Vec<NodeId>> = HashMap::new();
        let mut by_word: HashMap<String, Vec<NodeId>> = HashMap::new();
        let mut buckets: HashMap<(char, usize), Vec<(String, NodeId, usize)>> = HashMap::new();
        for n in 0..g.node_count() as NodeId {
            let name = g.name(n).trim();
            let w = fold_text(if name.is_empty() { g.ident(n) } else { name });
            if w.is_empty() {
                continue;
            }
            let key = w.join(" ");
            exact.entry(key.clone()).or_default().push(n);
            for x in &w {
                by_word.entry(x.clone()).or_default().push(n);
            }
            // Fuzzy targets: the whole name, and its first words (a misspelt "parkinsns").
            for k in 1..=w.len() {
                let part = w[..k].join(" ");
                if let Some(c) = part.chars().next() {
                    buckets.entry((c, part.chars().count())).or_default().push((
                        part,
                        n,
                        w.len() - k,
                    ));
                }
            }
        }
        for v in exact.values_mut().chain(by_word.values_mut()) {
            v.sort_by(|a, b| g.degree(*b).cmp(&g.degree(*a)).then(a.cmp(b)));
            v.dedup();
        }
        // Aliases link exactly, ahead of any node that happens to bear the written form, and
        // are fuzzy targets too ("asprin" → the alias "aspirin"). One whose name is not in
        // this graph (a subset, another release) is skipped with a warning.
        let mut warnings = Vec::new();
        for (form, t, target, line) in &lex.aliases {
            let nodes: Vec<NodeId> = exact
                .get(&target.join(" "))
                .map(|v| {
                    v.iter()
                        .copied()
                        .filter(|&n| g.node_type(n) == *t)
                        .collect()
                })
                .unwrap_or_default();
            if nodes.is_empty() {
                warnings.push(format!(
                    "lexicon line {line}: alias '{}': no {} named '{}' in the graph; skipped",
                    form.join(" "),
                    g.type_display(*t),
                    target.join(" ")
                ));
                continue;
            }
            let key = form.join(" ");
            if let Some(c) = key.chars().next() {
                for &n in &nodes {
                    buckets
                        .entry((c, key.chars().count()))
                        .or_default()
                        .push((key.clone(), n, 0));
                }
            }
            let e = exact.entry(key).or_default();
            for n in nodes.into_iter().rev() {
                e.retain(|x| *x != n);
                e.insert(0, n);
            }
        }
        let mut sorted: Vec<(String, NodeId)> = exact
            .iter()
            .flat_map(|(k, v)| v.iter().map(move |n| (k.clone(), *n)))
            .collect();
        sorted.sort();
        let mut vocab = HashSet::new();
        for p in lex
            .phrases
            .iter()
            .map(|p| &p.0)
            .chain(lex.nouns.iter().map(|n| &n.0))
            .chain(lex.stops.iter())
        {
            vocab.extend(p.iter().cloned());
        }
        Ok(Understander {
            lex,
            names: NameIndex {
                exact,
                sorted,
                buckets,
                by_word,
            },
            vocab,
            warnings,
        })
    }

    fn link(&self, g: &Graph, span: &[String], how: Match) -> Vec<Candidate> {
        let key = span.join(" ");
        let mut out: Vec<Candidate> = Vec::new();
        match how {
            Match::Exact => {
                if let Some(v) = self.names.exact.get(&key) {
                    out.extend(v.iter().map(|&n| Candidate {
                        node: n,
                        how,
                        distance: 0,
                    }));
                }
            }
            Match::Prefix => {
                let p = format!("{key} ");
                let start = self
                    .names
                    .sorted
                    .partition_point(|(k, _)| k.as_str() < p.as_str());
                for (k, n) in self.names.sorted[start..]
                    .iter()
                    .take_while(|(k, _)| k.starts_with(&p))
                    .take(2000)
                {
                    out.push(Candidate {
                        node: *n,
                        how,
                        distance: k.split(' ').count() - span.len(),
                    });
                }
            }
            Match::Fuzzy => {
                let len = key.chars().count();
                let maxd = max_distance(len);
                let Some(first) = key.chars().next() else {
                    return out;
                };
                if maxd == 0 {
                    return out;
                }
                for l in len.saturating_sub(maxd)..=len + maxd {
                    let Some(b) = self.names.buckets.get(&(first, l)) else {
                        continue;
                    };
                    for (name, n, extra) in b {
                        let d = strsim::damerau_levenshtein(&key, name);
                        if d <= maxd && d > 0 {
                            out.push(Candidate {
                                node: *n,
                                how,
                                distance: d * 10 + extra,
                            });
                        }
                    }
                }
            }
            Match::Contains => {
                let mut sets = span.iter().map(|w| self.names.by_word.get(w));
                let Some(Some(first)) = sets.next() else {
                    return out;
                };
                let rest: Vec<&Vec<NodeId>> = match sets.collect::<Option<Vec<_>>>() {
                    Some(r) => r,
                    None => return out,
                };
                for &n in first.iter().take(5000) {
                    if rest.iter().all(|s| s.contains(&n)) {
                        // Ranked by degree alone: the well-known name containing the words.
                        out.push(Candidate {
                            node: n,
                            how,
                            distance: 0,
                        });
                    }
                }
            }
        }
        out.sort_by(|a, b| {
            a.distance
                .cmp(&b.distance)
                .then(g.degree(b.node).cmp(&g.degree(a.node)))
                .then(a.node.cmp(&b.node))
        });
        out.truncate(if how == Match::Exact {
            16
        } else {
            MAX_CANDIDATES
        });
        out
    }

    /// Nodes a search box should offer for `text`, best first: exact names (aliases
    /// included), whole-word prefixes ("alzheimers" → "Alzheimer's disease"), misspellings
    /// (edit distance), then names containing every word. Folding is the question folding
    /// (case, apostrophes, punctuation, plural/possessive `s`).
    pub fn suggest(&self, g: &Graph, text: &str, limit: usize) -> Vec<(NodeId, Match)> {
        let span = fold_text(text);
        let mut out: Vec<(NodeId, Match)> = Vec::new();
        if span.is_empty() || span.len() > MAX_SPAN {
            return out;
        }
        for how in [Match::Exact, Match::Prefix, Match::Fuzzy, Match::Contains] {
            if how != Match::Exact && span.len() == 1 && span[0].chars().count() < 3 {
                break;
            }
            for c in self.link(g, &span, how) {
                if out.len() >= limit {
                    return out;
                }
                if !out.iter().any(|(n, _)| *n == c.node) {
                    out.push((c.node, how));
                }
            }
        }
        out
    }

    /// Understands a question.
    pub fn understand(&self, g: &Graph, question: &str) -> Understanding {
        let ws = words(question);
        // A misspelt vocabulary word ("medicatons", "desease") that is no name's word is
        // read as the vocabulary word.
        let folded: Vec<String> = ws.iter().map(|w| self.correct_vocab(&w.1)).collect();
        let corrected: Vec<bool> = ws.iter().zip(&folded).map(|(w, f)| w.1 != *f).collect();
        // A name reached through a corrected word was not typed exactly: say so.
        let demote = |c: &mut Vec<Candidate>, span: std::ops::Range<usize>| {
            if corrected[span].iter().any(|x| *x) {
                for x in c.iter_mut().filter(|x| x.how == Match::Exact) {
                    x.how = Match::Fuzzy;
                    x.distance = 10;
                }
            }
        };
        let n = folded.len();
        let mut tags: Vec<Option<(usize, Item)>> = vec![None; n]; // (span start, item) at span start; covered words marked
        let mut covered = vec![false; n];
        let mut mentions: Vec<Mention> = Vec::new();
        let is_vocab_span = |s: &[String]| s.iter().all(|w| self.vocab.contains(w));
        // 1. Multi-word exact names, longest first.
        for len in (2..=MAX_SPAN.min(n)).rev() {
            for i in 0..=n - len {
                if covered[i..i + len].iter().any(|c| *c) || is_vocab_span(&folded[i..i + len]) {
                    continue;
                }
                let mut c = self.link(g, &folded[i..i + len], Match::Exact);
                demote(&mut c, i..i + len);
                if !c.is_empty() {
                    mentions.push(Mention {
                        text: ws[i..i + len]
                            .iter()
                            .map(|w| w.0.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                        candidates: c,
                    });
                    tags[i] = Some((len, Item::Ent(mentions.len() - 1)));
                    covered[i..i + len].iter_mut().for_each(|c| *c = true);
                }
            }
        }
        // 2. Vocabulary, longest first at each position.
        let mut i = 0;
        while i < n {
            if covered[i] {
                i += 1;
                continue;
            }
            let fits = |p: &[String]| {
                p.len() <= n - i
                    && folded[i..i + p.len()] == p[..]
                    && !covered[i..i + p.len()].iter().any(|c| *c)
            };
            let mut best: Option<(usize, Option<Item>)> = None;
            for (k, (p, _)) in self.lex.phrases.iter().enumerate() {
                if fits(p) && best.as_ref().is_none_or(|b| p.len() > b.0) {
                    best = Some((p.len(), Some(Item::Rel(k))));
                }
            }
            for (p, t) in &self.lex.nouns {
                if fits(p) && best.as_ref().is_none_or(|b| p.len() > b.0) {
                    best = Some((p.len(), Some(Item::Noun(*t))));
                }
            }
            for p in &self.lex.stops {
                if fits(p) && best.as_ref().is_none_or(|b| p.len() > b.0) {
                    best = Some((p.len(), None));
                }
            }
            match best {
                Some((len, item)) => {
                    if let Some(it) = item {
                        tags[i] = Some((len, it));
                    }
                    covered[i..i + len].iter_mut().for_each(|c| *c = true);
                    i += len;
                }
                None => i += 1,
            }
        }
        // 3. The remaining runs of words: names (exact, prefix, fuzzy, containment).
        let mut unknown = Vec::new();
        let mut i = 0;
        while i < n {
            if covered[i] {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < n && !covered[j] {
                j += 1;
            }
            let before = mentions.len();
            self.link_run(
                g,
                &ws,
                &folded,
                i,
                j,
                &mut tags,
                &mut covered,
                &mut mentions,
                &mut unknown,
            );
            // Spans of the new mentions: demote those reached through corrected words.
            for (k, t) in tags.iter().enumerate().take(j).skip(i) {
                if let Some((len, Item::Ent(m))) = t {
                    if *m >= before {
                        demote(&mut mentions[*m].candidates, k..k + len);
                    }
                }
            }
            i = j;
        }
        let mut items: Vec<Item> = tags.into_iter().flatten().map(|(_, it)| it).collect();
        // A name followed by a noun of one of its own types is that type ("heart tissue",
        // "RNA cap binding activity", "fever as a symptom", "the protein kinase inhibitor
        // class"): keep the candidates of that type and drop the noun. The first noun (the
        // answer's) is never dropped.
        let mut k = 0;
        while k + 1 < items.len() {
            if let (&Item::Ent(m), &Item::Noun(t)) = (&items[k], &items[k + 1]) {
                let is_answer = !items[..k].iter().any(|x| matches!(x, Item::Noun(_)));
                if !is_answer
                    && mentions[m]
                        .candidates
                        .iter()
                        .any(|c| g.node_type(c.node) == t)
                {
                    mentions[m].candidates.retain(|c| g.node_type(c.node) == t);
                    items.remove(k + 1);
                }
            }
            k += 1;
        }
        let (readings, chosen) = self.assemble(g, &items, &mentions);
        if std::env::var_os("SERENQA_DEBUG_UNDERSTAND").is_some() {
            let show: Vec<String> = items
                .iter()
                .map(|it| match it {
                    Item::Ent(m) => format!("E({})", mentions[*m].text),
                    Item::Rel(r) => format!("R({})", self.lex.phrases[*r].0.join(" ")),
                    Item::Noun(t) => format!("N({})", g.type_display(*t)),
                })
                .collect();
            eprintln!("items: {}\nreadings: {}", show.join(" "), readings.len());
        }
        Understanding {
            readings,
            mentions,
            chosen,
            unknown,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn link_run(
        &self,
        g: &Graph,
        ws: &[(String, String)],
        folded: &[String],
        a: usize,
        b: usize,
        tags: &mut [Option<(usize, Item)>],
        covered: &mut [bool],
        mentions: &mut Vec<Mention>,
        unknown: &mut Vec<String>,
    ) {
        const KINDS: [Match; 4] = [Match::Exact, Match::Prefix, Match::Fuzzy, Match::Contains];
        // Longest span first; per span exact, prefix, fuzzy; containment only when nothing else.
        for pass in [&KINDS[..3], &KINDS[3..]] {
            for len in (1..=MAX_SPAN.min(b - a)).rev() {
                for i in a..=b - len {
                    if covered[i..i + len].iter().any(|c| *c) {
                        continue;
                    }
                    let span = &folded[i..i + len];
                    // Candidates of every kind from the first kind that matches on: the relation
                    // may fit a weaker match better (a prefix side effect vs a contained disease).
                    let mut c: Vec<Candidate> = Vec::new();
                    for &how in pass {
                        // Single short words are too often a gene symbol by accident.
                        if how != Match::Exact && len == 1 && span[0].chars().count() < 4 {
                            continue;
                        }
                        let found = self.link(g, span, how);
                        if c.is_empty() && found.is_empty() {
                            continue;
                        }
                        c.extend(
                            found
                                .into_iter()
                                .filter(|x| !c.iter().any(|y| y.node == x.node))
                                .collect::<Vec<_>>(),
                        );
                    }
                    if !c.is_empty() && pass.len() == 3 && c.iter().all(|x| x.how != Match::Exact) {
                        let more = self.link(g, span, Match::Contains);
                        c.extend(
                            more.into_iter()
                                .filter(|x| !c.iter().any(|y| y.node == x.node))
                                .collect::<Vec<_>>(),
                        );
                    }
                    if c.is_empty() {
                        continue;
                    }
                    mentions.push(Mention {
                        text: ws[i..i + len]
                            .iter()
                            .map(|w| w.0.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                        candidates: c,
                    });
                    tags[i] = Some((len, Item::Ent(mentions.len() - 1)));
                    covered[i..i + len].iter_mut().for_each(|c| *c = true);
                }
            }
        }
        for i in a..b {
            if !covered[i] {
                unknown.push(ws[i].0.clone());
            }
        }
    }

    fn correct_vocab(&self, w: &str) -> String {
        if self.vocab.contains(w) || self.names.by_word.contains_key(w) {
            return w.to_string();
        }
        let maxd = max_distance(w.chars().count());
        if maxd == 0 {
            return w.to_string();
        }
        let best = self
            .vocab
            .iter()
            .filter(|v| v.chars().count() >= 5)
            .map(|v| (strsim::damerau_levenshtein(w, v), v))
            .filter(|(d, _)| *d <= maxd)
            .min();
        match best {
            Some((_, v)) => v.clone(),
            None => w.to_string(),
        }
    }

    fn rel_fits(&self, g: &Graph, s: Sense, a: Option<TypeId>, b: Option<TypeId>) -> bool {
        let rt = g.relation(s.rel);
        let ok = |want: Option<TypeId>, have: Option<TypeId>| {
            want.is_none() || have.is_none() || want == have
        };
        (ok(a, rt.source_type) && ok(b, rt.target_type))
            || (ok(a, rt.target_type) && ok(b, rt.source_type))
    }

    /// Builds readings from the tagged items; the first is the main one.
    fn assemble(
        &self,
        g: &Graph,
        items: &[Item],
        mentions: &[Mention],
    ) -> (Vec<Parse>, Vec<Vec<(usize, NodeId)>>) {
        // Alternative k takes the k-th fitting sense of every ambiguous phrase (the first that exists).
        let mut readings = Vec::new();
        let mut chosen = Vec::new();
        for alt in 0..MAX_READINGS {
            let Some((p, c)) = self.assemble_one(g, items, mentions, alt) else {
                continue;
            };
            if !p.edges.is_empty() && !readings.contains(&p) {
                readings.push(p);
                chosen.push(c);
            }
        }
        (readings, chosen)
    }

    fn assemble_one(
        &self,
        g: &Graph,
        items: &[Item],
        mentions: &[Mention],
        alt: usize,
    ) -> Option<(Parse, Vec<(usize, NodeId)>)> {
        // Variables: types (None until a relation fixes it); node 0 is the answer.
        // The answer is the first type noun, unless a relation phrase comes first ("side
        // effects of drugs that …" is a phrase; its answer type follows from the relation).
        let answer_at = items
            .iter()
            .position(|it| matches!(it, Item::Noun(_)))
            .filter(|&i| {
                !(matches!(items.first(), Some(Item::Rel(_)))
                    && !items[..i].iter().any(|x| matches!(x, Item::Ent(_))))
            });
        let mut vars: Vec<Option<TypeId>> = vec![answer_at.and_then(|i| {
            if let Item::Noun(t) = items[i] {
                Some(t)
            } else {
                None
            }
        })];
        #[derive(Clone, Copy)]
        enum End {
            Var(usize),
            Ent(usize),
        }
        // Pending edges: (subject var, phrase or None, object).
        let mut edges: Vec<(usize, Option<usize>, End, bool)> = Vec::new();
        let mut cur = 0usize;
        let mut pending_rel: Option<usize> = None;
        let mut pending_ents: Vec<usize> = Vec::new();
        let mut pending_vars: Vec<usize> = Vec::new();
        let mut last_rel: Option<(usize, Option<usize>)> = None;
        let mut skip_noun = false;
        for (k, it) in items.iter().enumerate() {
            if Some(k) == answer_at {
                continue;
            }
            if skip_noun && matches!(it, Item::Noun(_)) {
                skip_noun = false;
                continue;
            }
            match *it {
                Item::Ent(m) => {
                    if let (Some(r), Some(Item::Noun(t))) = (pending_rel, items.get(k + 1)) {
                        // "… interact with obesity genes": the name qualifies the noun after
                        // it; the verb's object is a variable of that type, joined to the name
                        // by the pair relation.
                        if Some(k + 1) != answer_at {
                            pending_rel = None;
                            vars.push(Some(*t));
                            let v = vars.len() - 1;
                            edges.push((v, None, End::Ent(m), false));
                            edges.push((cur, Some(r), End::Var(v), false));
                            last_rel = None;
                            skip_noun = true;
                            continue;
                        }
                    }
                    if let Some(r) = pending_rel.take() {
                        edges.push((cur, Some(r), End::Ent(m), false));
                        last_rel = Some((cur, Some(r)));
                    } else if let Some((v, r)) = last_rel {
                        edges.push((v, r, End::Ent(m), false));
                    } else {
                        pending_ents.push(m);
                    }
                }
                Item::Rel(r) if !pending_vars.is_empty() => {
                    for v in pending_vars.drain(..) {
                        edges.push((cur, Some(r), End::Var(v), false));
                    }
                    last_rel = Some((cur, Some(r)));
                }
                Item::Rel(r) => {
                    // Names before a verb that has its own object ("drugs for X that cause
                    // Y") join the answer without a verb; else the verb is theirs ("what
                    // genes does X bind").
                    // A verb followed by a type noun opens a chain ("drugs for X that bind
                    // genes …"): the names before it are not its object either.
                    let has_object = matches!(items.get(k + 1), Some(Item::Ent(_) | Item::Noun(_)))
                        && answer_at.is_some_and(|a| a < k);
                    if has_object && !pending_ents.is_empty() {
                        for m in pending_ents.drain(..) {
                            edges.push((cur, None, End::Ent(m), false));
                        }
                    }
                    if !pending_ents.is_empty() {
                        // The names are the verb's subject ("which genes does TP53
                        // regulate"): a same-type relation reads from them to the answer.
                        for m in pending_ents.drain(..) {
                            edges.push((cur, Some(r), End::Ent(m), true));
                        }
                        last_rel = Some((cur, Some(r)));
                    } else {
                        pending_rel = Some(r);
                    }
                }
                Item::Noun(t) => {
                    if let Some(r) = pending_rel.take() {
                        vars.push(Some(t));
                        let v = vars.len() - 1;
                        edges.push((cur, Some(r), End::Var(v), false));
                        cur = v;
                        last_rel = None;
                    } else if !pending_ents.is_empty() {
                        // "hypertension drugs": a variable of that type joined to the names
                        // before it by the pair relation, waiting for the verb that joins it
                        // to the answer.
                        vars.push(Some(t));
                        let v = vars.len() - 1;
                        for m in pending_ents.drain(..) {
                            edges.push((v, None, End::Ent(m), false));
                        }
                        pending_vars.push(v);
                    } else if answer_at.is_some_and(|a| a < k)
                        && matches!(items.get(k - 1), Some(Item::Noun(_)))
                    {
                        // "pathways of genes associated with X": a second type noun right after
                        // the first opens a chain joined by the pair relation of the two types.
                        vars.push(Some(t));
                        let v = vars.len() - 1;
                        edges.push((cur, None, End::Var(v), false));
                        cur = v;
                        last_rel = None;
                    }
                }
            }
        }
        for m in pending_ents.drain(..) {
            edges.push((cur, None, End::Ent(m), false));
        }
        for v in pending_vars.drain(..) {
            edges.push((cur, None, End::Var(v), false));
        }
        if edges.is_empty() {
            return None;
        }
        // Resolve: per edge, the entity's candidate and the relation sense.
        let mut nodes: Vec<PNode> = Vec::new();
        let mut index_of_var: Vec<Option<usize>> = vec![None; vars.len()];
        let mut out_edges = Vec::new();
        let mut chosen = Vec::new();
        let mut used_alt = alt == 0;
        // Answer var first.
        nodes.push(PNode::Var(vars[0].unwrap_or(0)));
        index_of_var[0] = Some(0);
        let mut queue: std::collections::VecDeque<(usize, Option<usize>, End, bool)> = edges.into();
        let mut bridges = 0usize;
        while let Some((subj, rel, obj, flip)) = queue.pop_front() {
            let st = vars[subj];
            let senses: Vec<Sense> = match rel {
                Some(r) => self.lex.phrases[r].1.clone(),
                None => Vec::new(),
            };
            // Object candidates: an entity's candidates or the variable's type.
            let obj_options: Vec<(Option<NodeId>, Option<TypeId>, Match)> = match obj {
                End::Var(v) => vec![(None, vars[v], Match::Exact)],
                End::Ent(m) => mentions[m]
                    .candidates
                    .iter()
                    .map(|c| (Some(c.node), Some(g.node_type(c.node)), c.how))
                    .collect(),
            };
            // Score every (candidate, sense) pair: match kind, then fit, then candidate order.
            let mut best: Option<(
                (u8, usize, u8, usize),
                Option<NodeId>,
                Option<TypeId>,
                Sense,
            )> = None;
            let mut fitting_senses: Vec<Sense> = Vec::new();
            for (ci, (node, ot, how)) in obj_options.iter().enumerate() {
                let fit: Vec<Sense> = if senses.is_empty() {
                    match (st, *ot) {
                        (Some(a), Some(b)) => self
                            .lex
                            .pairs
                            .get(&(a, b))
                            .map(|&r| {
                                vec![Sense {
                                    rel: r,
                                    reversed: false,
                                }]
                            })
                            .unwrap_or_default(),
                        (None, Some(b)) => self.default_from(g, b),
                        _ => Vec::new(),
                    }
                } else {
                    let f: Vec<Sense> = senses
                        .iter()
                        .copied()
                        .filter(|s| self.rel_fits(g, *s, st, *ot))
                        .collect();
                    if f.is_empty() {
                        // The phrase fits nothing here: the pair's own relation.
                        match (st, *ot) {
                            (Some(a), Some(b)) => self
                                .lex
                                .pairs
                                .get(&(a, b))
                                .map(|&r| {
                                    vec![Sense {
                                        rel: r,
                                        reversed: false,
                                    }]
                                })
                                .unwrap_or_default(),
                            _ => Vec::new(),
                        }
                    } else {
                        f
                    }
                };
                if fit.is_empty() {
                    continue;
                }
                let pick = fit[0];
                let phrase_fit = senses.is_empty() || senses.contains(&pick);
                // With no verb, the lexicon's pair order decides between types ("migraine
                // medicines": the disease, not the side effect of the same name).
                let pair = if senses.is_empty() {
                    self.pair_rank(pick.rel)
                } else {
                    0
                };
                let key = (u8::from(!phrase_fit), pair, *how as u8, ci);
                if best.as_ref().is_none_or(|b| key < b.0) {
                    best = Some((key, *node, *ot, pick));
                    fitting_senses = fit;
                }
            }
            let Some((_, node, ot, mut sense)) = best else {
                // Nothing fits: bridge through the type the relation wants, joined by the
                // lexicon's pair relation ("side effects of benzodiazepines": of the drugs in
                // that class; "drug classes that treat epilepsy": classes of drugs that do).
                let obj_types: Vec<TypeId> = obj_options.iter().filter_map(|o| o.1).collect();
                let bridge = (bridges < 3)
                    .then(|| self.bridge(g, &senses, st, &obj_types))
                    .flatten();
                let Some((want, on_subject)) = bridge else {
                    return None;
                };
                bridges += 1;
                vars.push(Some(want));
                index_of_var.push(None);
                let w = vars.len() - 1;
                if on_subject {
                    queue.push_front((w, rel, obj, flip));
                    queue.push_front((subj, None, End::Var(w), false));
                } else {
                    queue.push_front((w, None, obj, false));
                    queue.push_front((subj, rel, End::Var(w), flip));
                }
                continue;
            };
            if alt > 0 && alt < fitting_senses.len() {
                sense = fitting_senses[alt];
                used_alt = true;
            }
            // Fix the subject's type from the relation if it was open.
            let rt = g.relation(sense.rel);
            let st = st.or_else(|| {
                let (a, b) = (rt.source_type, rt.target_type);
                if ot == a {
                    b
                } else {
                    a
                }
            });
            vars[subj] = st;
            let si = match index_of_var[subj] {
                Some(i) => {
                    if let (PNode::Var(_), Some(t)) = (&nodes[i], st) {
                        nodes[i] = PNode::Var(t);
                    }
                    i
                }
                None => {
                    nodes.push(PNode::Var(st?));
                    index_of_var[subj] = Some(nodes.len() - 1);
                    nodes.len() - 1
                }
            };
            let oi = match (obj, node) {
                (End::Ent(m), Some(n)) => {
                    chosen.push((m, n));
                    match nodes.iter().position(|x| *x == PNode::Entity(n)) {
                        Some(i) => i,
                        None => {
                            nodes.push(PNode::Entity(n));
                            nodes.len() - 1
                        }
                    }
                }
                (End::Var(v), _) => match index_of_var[v] {
                    Some(i) => i,
                    None => {
                        nodes.push(PNode::Var(vars[v]?));
                        index_of_var[v] = Some(nodes.len() - 1);
                        nodes.len() - 1
                    }
                },
                _ => return None,
            };
            // Orientation: the relation's source type is the source; same-type relations read
            // subject → object unless the sense is reversed.
            let st_t = st;
            let forward = if rt.source_type == rt.target_type {
                sense.reversed == flip
            } else {
                rt.source_type == st_t
            };
            out_edges.push(if forward {
                (si, sense.rel, oi)
            } else {
                (oi, sense.rel, si)
            });
        }
        if !used_alt {
            return None;
        }
        if matches!(nodes[0], PNode::Var(_)) && vars[0].is_none() {
            return None;
        }
        Some((
            Parse {
                nodes,
                edges: out_edges,
            },
            chosen,
        ))
    }

    /// A type to bridge an edge through when no sense of its phrase fits the subject type `st`
    /// and the object types: `(type, true)` puts the bridge on the subject side (the
    /// relation joins the bridge and the object; the pair relation joins subject and bridge),
    /// `(type, false)` on the object side. The first sense in the phrase's order that allows
    /// one wins.
    fn bridge(
        &self,
        g: &Graph,
        senses: &[Sense],
        st: Option<TypeId>,
        obj_types: &[TypeId],
    ) -> Option<(TypeId, bool)> {
        for s in senses {
            let rt = g.relation(s.rel);
            let (Some(a), Some(b)) = (rt.source_type, rt.target_type) else {
                continue;
            };
            for &e in obj_types {
                // Object side: the subject fits one end, the object pairs with the other.
                for (mine, other) in [(a, b), (b, a)] {
                    if st.is_none_or(|t| t == mine)
                        && e != other
                        && self.lex.pairs.contains_key(&(other, e))
                    {
                        return Some((other, false));
                    }
                }
                // Subject side: the object fits one end, the subject pairs with the other.
                for (theirs, other) in [(a, b), (b, a)] {
                    if e == theirs {
                        if let Some(t) = st {
                            if t != other && self.lex.pairs.contains_key(&(t, other)) {
                                return Some((other, true));
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// With no answer type and no verb: the first `pair` relation touching type `b`.
    fn default_from(&self, g: &Graph, b: TypeId) -> Vec<Sense> {
        let touches =
            |r: RelId| g.relation(r).source_type == Some(b) || g.relation(r).target_type == Some(b);
        self.lex
            .pair_order
            .iter()
            .copied()
            .filter(|&r| touches(r))
            .map(|rel| Sense {
                rel,
                reversed: false,
            })
            .collect()
    }

    fn pair_rank(&self, r: RelId) -> usize {
        self.lex
            .pair_order
            .iter()
            .position(|&x| x == r)
            .unwrap_or(usize::MAX)
    }

    /// Plural display word of a type ("drugs", "side effects").
    pub fn plural(&self, g: &Graph, t: TypeId) -> String {
        let w = self
            .lex
            .display
            .get(&t)
            .cloned()
            .unwrap_or_else(|| g.type_display(t).to_lowercase());
        if w.ends_with('s') || w.ends_with("sh") || w.ends_with("ch") {
            format!("{w}es")
        } else if w.ends_with('y') && !w.ends_with("ay") && !w.ends_with("ey") {
            format!("{}ies", &w[..w.len() - 1])
        } else {
            format!("{w}s")
        }
    }

    /// The plain-words interpretation of a reading: "Drugs that treat multiple sclerosis".
    pub fn describe(&self, g: &Graph, p: &Parse) -> String {
        let mut seen = vec![false; p.nodes.len()];
        let s = self.describe_var(g, p, 0, &mut seen);
        let mut c = s.chars();
        match c.next() {
            Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
            None => s,
        }
    }

    fn describe_var(&self, g: &Graph, p: &Parse, i: usize, seen: &mut Vec<bool>) -> String {
        seen[i] = true;
        let head = match p.nodes[i] {
            PNode::Var(t) => self.plural(g, t),
            PNode::Entity(e) => return g.name(e).to_string(),
        };
        let mut clauses = Vec::new();
        for &(a, r, b) in &p.edges {
            let (other, from_source) = if a == i && !seen[b] {
                (b, true)
            } else if b == i && !seen[a] {
                (a, false)
            } else {
                continue;
            };
            let (f, bk) = self.lex.verbs.get(&r).cloned().unwrap_or_else(|| {
                (
                    g.relation(r).verb.clone(),
                    format!("are linked by {} to", g.relation(r).verb),
                )
            });
            let verb = if from_source { f } else { bk };
            let obj = self.describe_var(g, p, other, seen);
            clauses.push((verb, obj));
        }
        // Entities sharing one verb are joined: "associated with asthma and eczema".
        let mut text = Vec::new();
        let mut k = 0;
        while k < clauses.len() {
            let verb = clauses[k].0.clone();
            let mut objs = vec![clauses[k].1.clone()];
            while k + 1 < clauses.len() && clauses[k + 1].0 == verb {
                k += 1;
                objs.push(clauses[k].1.clone());
            }
            let joined = if objs.len() > 1 {
                format!("both {}", objs.join(" and "))
            } else {
                objs.remove(0)
            };
            text.push(format!("{verb} {joined}"));
            k += 1;
        }
        if text.is_empty() {
            head
        } else {
            format!("{head} that {}", text.join(" and "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_drops_plural_and_possessive() {
        assert_eq!(fold_word("Parkinson's"), "parkinson");
        assert_eq!(fold_word("parkinsons"), "parkinson");
        assert_eq!(fold_word("Drugs"), "drug");
        assert_eq!(fold_word("sclerosis"), "sclerosis");
        assert_eq!(fold_word("therapies"), "therapy");
        assert_eq!(fold_word("processes"), "process");
        let w: Vec<String> = words("Which drugs treat Alzheimer's disease?")
            .into_iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(w, vec!["which", "drug", "treat", "alzheimer", "disease"]);
    }
}
