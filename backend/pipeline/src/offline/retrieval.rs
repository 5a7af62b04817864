//! Offline knowledge retrieval: a small grammar for drug-repurposing questions → Cypher.
//!
//! 1. **Lexicon** (built once per graph): entity names (lower-cased token sequences), type
//!    nouns singular and plural, and relation phrases read from either end with the subject
//!    and object types they require (the same phrase tables the benchmark writes questions
//!    with — the vocabulary of the graph, not the answers).
//! 2. **Grammar** (top-down, all parses up to a budget): a question is a lead word
//!    (`which`, `what`, `list the`, `find the`) with the answer's type noun and a list of verb
//!    phrases about it; a verb phrase is a relation phrase and an object; an object is an
//!    entity mention, a relative clause (`a gene that …`, `any compound which both …`), or
//!    a back-reference (`that same disease`, `… as well`); coordination (`,`, `and`,
//!    `and also`) may attach to any open variable. Also `E <verb> which <type>?`.
//! 3. **Entity linking** against node names with the type the relation requires, mention
//!    decorations (`the … gene`, `… (biological process)`) checked against the type.
//! 4. **Execution-guided choice**: each parse becomes Cypher; the first one (in grammar order)
//!    that runs and returns rows wins; else the first parse.
//!
//! The agent sees only the question text and the graph — never the record's Cypher, graph
//! query or answers.

use serenqa_benchmark::phrasing::{relation_phrase, type_noun};
use serenqa_benchmark::query::symmetric;
use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use crate::offline::strtable::{Builder, StrTable};

/// Parses explored per question at most.
const STATE_BUDGET: usize = 20_000;
/// Parses turned into Cypher and tried at most.
const MAX_TRIED: usize = 6;

#[derive(Clone, Debug)]
struct Phrase {
    tokens: Vec<String>,
    rel: RelId,
    subject_is_source: bool,
    subject: Option<TypeId>,
    object: Option<TypeId>,
}

/// What the grammar knows about a graph.
pub struct Lexicon {
    /// A name's tokens joined by spaces → its nodes, best connected first.
    names: StrTable<NodeId>,
    /// First token of a name → the most tokens of a name starting with it.
    longest: StrTable<u32>,
    /// Type noun tokens (singular and plural) → type.
    nouns: Vec<(Vec<String>, TypeId)>,
    phrases: Vec<Phrase>,
}

/// Lower-cases and splits off punctuation that ends a word (`,` `?` `.` `(` `)` `;`).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split_whitespace() {
        let mut w = raw.to_lowercase();
        let mut lead = Vec::new();
        while w.starts_with('(') {
            lead.push("(".to_string());
            w.remove(0);
        }
        let mut trail = Vec::new();
        while let Some(c) = w
            .chars()
            .last()
            .filter(|c| matches!(c, ',' | '?' | '.' | ')' | ';' | '!' | ':'))
        {
            // Keep a period inside abbreviations like "e.g." only when more letters precede it.
            trail.push(c.to_string());
            w.pop();
        }
        out.extend(lead);
        if !w.is_empty() {
            out.push(w);
        }
        out.extend(trail.into_iter().rev());
    }
    out
}

impl Lexicon {
    pub fn new(g: &Graph) -> Lexicon {
        let mut names = Builder::new();
        let mut longest = Builder::new();
        for n in 0..g.node_count() as NodeId {
            let name = g.name(n).trim();
            let toks = tokenize(if name.is_empty() { g.ident(n) } else { name });
            if let Some(first) = toks.first() {
                longest.push(first, toks.len() as u32);
                names.push(&toks.join(" "), n);
            }
        }
        // A name shared by two nodes is more often meant as the well-known one.
        let mut names = names.finish();
        names.sort_dedup(|a, b| g.degree(*b).cmp(&g.degree(*a)).then(a.cmp(b)));
        let mut longest = longest.finish();
        longest.sort_dedup(|a, b| b.cmp(a));
        let mut nouns = Vec::new();
        for t in 0..g.type_count() as TypeId {
            for pl in [true, false] {
                nouns.push((tokenize(&type_noun(g, t, pl)), t));
            }
            // The display name too ("anatomy"), for questions written by people.
            nouns.push((tokenize(g.type_display(t)), t));
        }
        nouns.sort_by_key(|n| std::cmp::Reverse(n.0.len()));
        let mut phrases = Vec::new();
        for r in 0..g.relation_count() as RelId {
            let rt = g.relation(r);
            for subject_is_source in [true, false] {
                let v = relation_phrase(g, r, subject_is_source);
                let (subject, object) = if subject_is_source {
                    (rt.source_type, rt.target_type)
                } else {
                    (rt.target_type, rt.source_type)
                };
                for form in [&v.sg, &v.pl] {
                    let tokens = tokenize(form);
                    if !phrases.iter().any(|p: &Phrase| {
                        p.tokens == tokens && p.rel == r && p.subject_is_source == subject_is_source
                    }) {
                        phrases.push(Phrase {
                            tokens,
                            rel: r,
                            subject_is_source,
                            subject,
                            object,
                        });
                    }
                }
                if symmetric(g, r) {
                    break;
                }
            }
        }
        Lexicon {
            names,
            longest,
            nouns,
            phrases,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum PNode {
    Var(TypeId),
    Entity(NodeId),
}

/// A parse: node 0 is the answer variable; edges are (source node, relation, target node);
/// `except` leaves answers out ("… besides diabetes"); `only` keeps one answer, the node a
/// yes/no question asks about ("does metformin treat PCOS?": PCOS if the graph says so).
#[derive(Clone, Debug, PartialEq)]
pub struct Parse {
    pub nodes: Vec<PNode>,
    pub edges: Vec<(usize, RelId, usize)>,
    pub except: Vec<Except>,
    pub only: Option<NodeId>,
    /// Entity nodes that stand for a group named by a name stem ("statins": the drugs named
    /// *-vastatin*): (the node in `nodes`, the group's name, its members). The query matches
    /// any member.
    pub groups: Vec<(NodeId, String, Vec<NodeId>)>,
}

/// An answer the question leaves out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Except {
    /// This node ("drugs for epilepsy other than valproic acid").
    Node(NodeId),
    /// Every answer joined to this node by this relation, a node of another type than the
    /// answer's ("drugs for asthma other than corticosteroids": not in that class).
    LinkedTo(RelId, NodeId),
}

#[derive(Clone)]
struct State {
    pos: usize,
    nodes: Vec<PNode>,
    edges: Vec<(usize, RelId, usize)>,
    /// Open variables, outermost first.
    stack: Vec<usize>,
}

struct Parser<'a> {
    g: &'a Graph,
    lex: &'a Lexicon,
    toks: Vec<String>,
    budget: usize,
    out: Vec<Parse>,
}

fn node_type(g: &Graph, n: &PNode) -> TypeId {
    match n {
        PNode::Var(t) => *t,
        PNode::Entity(e) => g.node_type(*e),
    }
}

impl<'a> Parser<'a> {
    fn at(&self, pos: usize, words: &[&str]) -> bool {
        words
            .iter()
            .enumerate()
            .all(|(i, w)| self.toks.get(pos + i).is_some_and(|t| t == w))
    }

    fn is_end(&self, pos: usize) -> bool {
        self.toks[pos..]
            .iter()
            .all(|t| t == "?" || t == "." || t == "!")
    }

    /// Type nouns at `pos`: (type, next position).
    fn nouns_at(&self, pos: usize) -> Vec<(TypeId, usize)> {
        let mut v = Vec::new();
        for (toks, t) in &self.lex.nouns {
            if self.toks.len() >= pos + toks.len()
                && self.toks[pos..pos + toks.len()] == toks[..]
                && !v.iter().any(|(x, _)| x == t)
            {
                v.push((*t, pos + toks.len()));
            }
        }
        v
    }

    /// Entity mentions at `pos` of type `want` (any type if None): (node, next position).
    fn entities_at(&self, pos: usize, want: Option<TypeId>) -> Vec<(NodeId, usize)> {
        let mut out = Vec::new();
        let mut starts = vec![(pos, false)];
        if self.at(pos, &["the"]) {
            starts.push((pos + 1, true));
        }
        for (mut p, _the) in starts {
            if self.at(p, &["pharmacologic", "class"]) {
                p += 2;
            }
            let Some(first) = self.toks.get(p) else {
                continue;
            };
            // Longest names first (tokens never hold a space, so the joined window is the key).
            let most = self.lex.longest.get(first).first().copied().unwrap_or(0) as usize;
            let cands = (1..=most.min(self.toks.len() - p)).rev().flat_map(|len| {
                let key = self.toks[p..p + len].join(" ");
                self.lex
                    .names
                    .get(&key)
                    .iter()
                    .map(move |n| (len, n))
                    .collect::<Vec<_>>()
            });
            for (len, n) in cands {
                let t = self.g.node_type(*n);
                if want.is_some_and(|w| w != t) {
                    continue;
                }
                let mut end = p + len;
                // Decorations naming the type: "the X gene", "the Y pathway", "Z (biological process)".
                let disp = type_noun(self.g, t, false);
                let dt = tokenize(&disp);
                if self.toks.len() >= end + dt.len() && self.toks[end..end + dt.len()] == dt[..] {
                    end += dt.len();
                } else if self.at(end, &["("])
                    && self.toks.len() >= end + 1 + dt.len()
                    && self.toks[end + 1..end + 1 + dt.len()] == dt[..]
                    && self.at(end + 1 + dt.len(), &[")"])
                {
                    end += dt.len() + 2;
                } else if self.at(end, &["pathway"]) {
                    end += 1;
                }
                if !out.iter().any(|(m, e)| *m == *n && *e == end) {
                    out.push((*n, end));
                }
                if out.len() >= 8 {
                    return out;
                }
            }
        }
        out
    }

    fn phrases_at(&self, pos: usize, subject: TypeId) -> Vec<(&'a Phrase, usize)> {
        let lex: &'a Lexicon = self.lex;
        lex.phrases
            .iter()
            .filter(|p| p.subject.is_none_or(|s| s == subject))
            .filter(|p| {
                self.toks.len() >= pos + p.tokens.len()
                    && self.toks[pos..pos + p.tokens.len()] == p.tokens[..]
            })
            .map(|p| (p, pos + p.tokens.len()))
            .collect()
    }

    fn add_edge(st: &mut State, subj: usize, ph: &Phrase, obj: usize) {
        if ph.subject_is_source {
            st.edges.push((subj, ph.rel, obj));
        } else {
            st.edges.push((obj, ph.rel, subj));
        }
    }

    /// After an object: the end, or a coordinator and another verb phrase on an open variable.
    fn after_object(&mut self, st: State) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        if self.is_end(st.pos) {
            self.out.push(Parse {
                nodes: st.nodes,
                edges: st.edges,
                except: Vec::new(),
                only: None,
                groups: Vec::new(),
            });
            return;
        }
        let p = st.pos;
        let mut next = Vec::new();
        for sep in [
            &[",", "and", "also"][..],
            &[",", "and"],
            &["and", "also"],
            &["and"],
            &[","],
            &["as", "well", "as"],
        ] {
            if self.at(p, sep) {
                next.push(p + sep.len());
            }
        }
        // "… E as well" closes a back-reference.
        if self.at(p, &["as", "well"]) {
            let mut s2 = st.clone();
            s2.pos = p + 2;
            self.after_object(s2);
        }
        for q in next {
            // Innermost variable first (the usual reading), then outer ones.
            for depth in (0..st.stack.len()).rev() {
                let mut s2 = st.clone();
                s2.stack.truncate(depth + 1);
                s2.pos = q;
                let subj = s2.stack[depth];
                self.verb_phrase(s2, subj);
            }
        }
    }

    fn verb_phrase(&mut self, mut st: State, subj: usize) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        if self.at(st.pos, &["both"]) || self.at(st.pos, &["also"]) {
            st.pos += 1;
        }
        let subj_t = node_type(self.g, &st.nodes[subj]);
        for (ph, q) in self.phrases_at(st.pos, subj_t) {
            let mut s2 = st.clone();
            s2.pos = q;
            self.object(s2, subj, ph);
        }
    }

    fn object(&mut self, st: State, subj: usize, ph: &'a Phrase) {
        let p = st.pos;
        // Back-reference: "that same <noun>".
        if self.at(p, &["that", "same"]) {
            for (t, q) in self.nouns_at(p + 2) {
                if ph.object.is_some_and(|o| o != t) {
                    continue;
                }
                if let Some(i) = st
                    .nodes
                    .iter()
                    .position(|n| matches!(n, PNode::Entity(e) if self.g.node_type(*e) == t))
                {
                    let mut s2 = st.clone();
                    Self::add_edge(&mut s2, subj, ph, i);
                    s2.pos = q;
                    self.after_object(s2);
                }
            }
        }
        // Entity mention (an entity named twice is one node).
        for (n, q) in self.entities_at(p, ph.object) {
            let mut s2 = st.clone();
            let i = match s2.nodes.iter().position(|x| *x == PNode::Entity(n)) {
                Some(i) => i,
                None => {
                    s2.nodes.push(PNode::Entity(n));
                    s2.nodes.len() - 1
                }
            };
            Self::add_edge(&mut s2, subj, ph, i);
            s2.pos = q;
            self.after_object(s2);
        }
        // Relative clause: DET? noun (that|which) VP-list.
        let mut det_ends = vec![p];
        for det in [
            &["at", "least", "one"][..],
            &["a"],
            &["an"],
            &["any"],
            &["some"],
            &["the"],
        ] {
            if self.at(p, det) {
                det_ends.push(p + det.len());
            }
        }
        for d in det_ends {
            for (t, q) in self.nouns_at(d) {
                if ph.object.is_some_and(|o| o != t) {
                    continue;
                }
                if !(self.at(q, &["that"]) || self.at(q, &["which"])) {
                    continue;
                }
                let mut s2 = st.clone();
                s2.nodes.push(PNode::Var(t));
                let v = s2.nodes.len() - 1;
                Self::add_edge(&mut s2, subj, ph, v);
                s2.stack.push(v);
                s2.pos = q + 1;
                self.verb_phrase(s2, v);
            }
        }
    }

    fn question(&mut self) {
        // Lead + answer type noun (+ "that").
        let mut leads = Vec::new();
        for lead in [
            &["which"][..],
            &["what"],
            &["list", "the"],
            &["list", "all"],
            &["find", "the"],
            &["find", "all"],
            &["name", "the"],
            &["list"],
            &["find"],
        ] {
            if self.at(0, lead) {
                leads.push(lead.len());
            }
        }
        for l in leads {
            for (t, q) in self.nouns_at(l) {
                let mut p = q;
                if self.at(p, &["that"]) || self.at(p, &["which"]) {
                    p += 1;
                }
                let st = State {
                    pos: p,
                    nodes: vec![PNode::Var(t)],
                    edges: vec![],
                    stack: vec![0],
                };
                self.verb_phrase(st, 0);
            }
        }
        // "<Entity> <verb> which <noun>?"
        for (n, q) in self.entities_at(0, None) {
            let et = self.g.node_type(n);
            for (ph, r) in self.phrases_at(q, et) {
                if !self.at(r, &["which"]) && !self.at(r, &["what"]) {
                    continue;
                }
                for (t, s) in self.nouns_at(r + 1) {
                    if ph.object.is_some_and(|o| o != t) || !self.is_end(s) {
                        continue;
                    }
                    let mut st = State {
                        pos: s,
                        nodes: vec![PNode::Var(t), PNode::Entity(n)],
                        edges: vec![],
                        stack: vec![0],
                    };
                    Self::add_edge(&mut st, 1, ph, 0);
                    self.out.push(Parse {
                        nodes: st.nodes,
                        edges: st.edges,
                        except: Vec::new(),
                        only: None,
                        groups: Vec::new(),
                    });
                }
            }
        }
    }
}

/// All parses of a question (grammar order, deduplicated), at most `STATE_BUDGET` steps.
pub fn parse(g: &Graph, lex: &Lexicon, question: &str) -> Vec<Parse> {
    let mut p = Parser {
        g,
        lex,
        toks: tokenize(question),
        budget: STATE_BUDGET,
        out: Vec::new(),
    };
    if p.toks.is_empty() {
        return Vec::new();
    }
    p.question();
    let mut out: Vec<Parse> = Vec::new();
    for x in p.out {
        if !x.edges.is_empty() && !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn cypher_string(s: &str) -> String {
    serenqa_benchmark::cypher::string_literal(s)
}

fn cypher_ident(s: &str) -> String {
    serenqa_benchmark::cypher::ident(s)
}

/// The Cypher of a parse: one MATCH of comma-joined edges, the answer never one of the named
/// entities of its type nor one the question leaves out, distinct ids and names returned.
pub fn to_cypher(g: &Graph, p: &Parse) -> String {
    let mut declared = vec![false; p.nodes.len()];
    let mut node = |i: usize| -> String {
        if declared[i] {
            return format!("(n{i})");
        }
        declared[i] = true;
        match p.nodes[i] {
            // The one answer a yes/no question asks about.
            PNode::Var(t) if i == 0 && p.only.is_some() => format!(
                "(n0:{} {{id: {}}})",
                cypher_ident(g.type_label(t)),
                cypher_string(p.only.map_or("", |e| g.ident(e)))
            ),
            PNode::Var(t) => format!("(n{i}:{})", cypher_ident(g.type_label(t))),
            // A group: any of its members (the condition goes to WHERE below).
            PNode::Entity(e) if p.groups.iter().any(|x| x.0 == e) => {
                format!("(n{i}:{})", cypher_ident(g.type_label(g.node_type(e))))
            }
            PNode::Entity(e) => format!(
                "(n{i}:{} {{id: {}}})",
                cypher_ident(g.type_label(g.node_type(e))),
                cypher_string(g.ident(e))
            ),
        }
    };
    let mut parts = Vec::new();
    for &(a, r, b) in &p.edges {
        let (sa, sb) = (node(a), node(b));
        let arrow = if symmetric(g, r) { "-" } else { "->" };
        parts.push(format!(
            "{sa}-[:{}]{arrow}{sb}",
            cypher_ident(&g.relation(r).name)
        ));
    }
    let mut text = format!("MATCH {}", parts.join(", "));
    let t0 = match p.nodes.first() {
        Some(PNode::Var(t)) => Some(*t),
        _ => None,
    };
    let mut excl: Vec<String> = Vec::new();
    for (i, n) in p.nodes.iter().enumerate() {
        if let PNode::Entity(e) = n {
            if let Some((_, _, members)) = p.groups.iter().find(|x| x.0 == *e) {
                let ids: Vec<String> = members.iter().map(|&m| cypher_string(g.ident(m))).collect();
                excl.push(format!("n{i}.id IN [{}]", ids.join(", ")));
            }
        }
    }
    let named = p.nodes.iter().filter_map(|n| match n {
        PNode::Entity(e) if Some(g.node_type(*e)) == t0 => Some(*e),
        _ => None,
    });
    let left_out = p.except.iter().filter_map(|x| match x {
        Except::Node(e) => Some(*e),
        Except::LinkedTo(..) => None,
    });
    for e in named.chain(left_out) {
        let c = format!("n0.id <> {}", cypher_string(g.ident(e)));
        if !excl.contains(&c) {
            excl.push(c);
        }
    }
    for x in &p.except {
        if let Except::LinkedTo(r, e) = *x {
            excl.push(format!(
                "NOT (n0)-[:{}]-(:{} {{id: {}}})",
                cypher_ident(&g.relation(r).name),
                cypher_ident(g.type_label(g.node_type(e))),
                cypher_string(g.ident(e))
            ));
        }
    }
    if !excl.is_empty() {
        text.push_str(&format!(" WHERE {}", excl.join(" AND ")));
    }
    text.push_str(" RETURN DISTINCT n0.id AS id, n0.name AS name");
    text
}

/// The offline agent's answer to one question.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct OfflineRetrieval {
    /// The chosen Cypher, if any parse was found.
    pub cypher: Option<String>,
    pub parses: usize,
    pub tried: usize,
    /// The chosen parse (not serialised).
    #[serde(skip)]
    pub parse: Option<Parse>,
}

/// Parses, renders and picks the first parse whose query returns rows (`run` executes).
pub fn retrieve(
    g: &Graph,
    lex: &Lexicon,
    question: &str,
    mut run: impl FnMut(&str) -> Option<usize>,
) -> OfflineRetrieval {
    let parses = parse(g, lex, question);
    let mut first = None;
    let mut tried = 0;
    for p in parses.iter().take(MAX_TRIED) {
        let c = to_cypher(g, p);
        tried += 1;
        if run(&c).is_some_and(|rows| rows > 0) {
            return OfflineRetrieval {
                cypher: Some(c),
                parses: parses.len(),
                tried,
                parse: Some(p.clone()),
            };
        }
        first.get_or_insert((c, p.clone()));
    }
    let (cypher, parse) = first
        .map(|(c, p)| (Some(c), Some(p)))
        .unwrap_or((None, None));
    OfflineRetrieval {
        cypher,
        parses: parses.len(),
        tried,
        parse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_splits_trailing_punctuation_only() {
        assert_eq!(
            tokenize("Which genes bind 2,4-DNP (biological process)?"),
            vec![
                "which",
                "genes",
                "bind",
                "2,4-dnp",
                "(",
                "biological",
                "process",
                ")",
                "?"
            ]
        );
        assert_eq!(tokenize("asthma, and"), vec!["asthma", ",", "and"]);
    }
}
