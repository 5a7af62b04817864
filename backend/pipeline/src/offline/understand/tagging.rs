//! Tagging a question: multi-word names, relation phrases, type nouns and stop words, then
//! the remaining words linked to names; the tagged items go to assembly
//! ([`Understander::understand`]).

use serenqa_graph::{Graph, NodeId, RelId};

use crate::offline::retrieval::{PNode, Parse};

/// A disease name of at most this many words may be linked by any one of its words; other
/// names only by their last word.
const SHORT_NAME: usize = 4;
/// Candidates kept for a word linked as a name's head.
const MAX_HEAD: usize = 8;

/// Readings and, per reading, the chosen candidate of each mention used.
type Readings = (Vec<Parse>, Vec<Vec<(usize, NodeId)>>);

use super::lexicon::{fold_text, span_text, words};
use super::linking::{
    max_distance, Candidate, Item, Match, Mention, Understander, Understanding, MAX_SPAN,
};
use super::restate::pronouns;

impl Understander {
    /// Understands a question as written (the whole text: [`Understander::understand`]).
    pub(super) fn understand_text(&self, g: &Graph, question: &str) -> Understanding {
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
        // 0. A quoted name is that name, however long and whatever words it holds ("the
        // pathway 'GTP hydrolysis and joining of the 60S ribosomal subunit'").
        for (i, len) in quoted_spans(question) {
            if i + len > n || len == 0 || covered[i..i + len].iter().any(|c| *c) {
                continue;
            }
            let span = &folded[i..i + len];
            let mut c = self.link(g, span, Match::Exact);
            if c.is_empty() {
                c = self.link(g, span, Match::Synonym);
            }
            if c.is_empty() {
                continue;
            }
            mentions.push(Mention {
                text: span_text(&ws, i, len),
                candidates: c,
                group: None,
            });
            tags[i] = Some((len, Item::Ent(mentions.len() - 1)));
            covered[i..i + len].iter_mut().for_each(|c| *c = true);
        }
        // 1. Multi-word exact names, longest first.
        for len in (2..=MAX_SPAN.min(n)).rev() {
            for i in 0..=n - len {
                if covered[i..i + len].iter().any(|c| *c) || is_vocab_span(&folded[i..i + len]) {
                    continue;
                }
                let span = &folded[i..i + len];
                let mut c = self.link(g, span, Match::Exact);
                let exact = !c.is_empty();
                // The name with a word's synonym ("chronic obstructive lung disease"), after
                // any exact one: the relation may fit it better ("genes associated with renal
                // cancer" — a side effect by that name, the disease "kidney cancer").
                // A name reached through a synonym alone is taken here only when the span
                // holds a vocabulary word ("disease"); otherwise the run is linked below,
                // where words that all sit in one longer name come first ("congestive heart
                // failure" is "Cardiac failure congestive", not "heart failure" and a
                // cardiomyopathy).
                let has_vocab = span.iter().any(|w| self.vocab.contains(w));
                let mut more = if exact || has_vocab {
                    self.link(g, span, Match::Synonym)
                } else {
                    Vec::new()
                };
                if !exact && !more.is_empty() {
                    // As for any inexact match, the names holding the words as written
                    // ("kidney failure": Renal failure, and chronic kidney failure).
                    more.extend(self.link(g, span, Match::Contains));
                }
                for x in more {
                    if !c.iter().any(|y| y.node == x.node) {
                        c.push(x);
                    }
                }
                demote(&mut c, i..i + len);
                if !c.is_empty() {
                    mentions.push(Mention {
                        text: span_text(&ws, i, len),
                        candidates: c,
                        group: None,
                    });
                    tags[i] = Some((len, Item::Ent(mentions.len() - 1)));
                    covered[i..i + len].iter_mut().for_each(|c| *c = true);
                }
            }
        }
        // 1a. Node identifiers no name covers ("DOID:9352", "disease 101663" by its id).
        let (t, c, m) = (&mut tags, &mut covered, &mut mentions);
        self.link_identifiers(g, question, &ws, &folded, t, c, m);
        // 1b. Group names by name stem ("statins", "beta blockers"), before their words are
        // read as vocabulary ("blocker") or linked to other names ("Statin Pathway").
        for len in (1..=MAX_SPAN.min(n)).rev() {
            for i in 0..=n - len {
                if covered[i..i + len].iter().any(|c| *c) {
                    continue;
                }
                let Some((name, members)) = self.groups.get(&folded[i..i + len].join(" ")) else {
                    continue;
                };
                mentions.push(Mention {
                    text: span_text(&ws, i, len),
                    candidates: vec![Candidate {
                        node: members[0],
                        how: Match::Exact,
                        distance: 0,
                    }],
                    group: Some((name.clone(), members.clone())),
                });
                tags[i] = Some((len, Item::Ent(mentions.len() - 1)));
                covered[i..i + len].iter_mut().for_each(|c| *c = true);
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
            for p in &self.lex.excepts {
                if fits(p) && best.as_ref().is_none_or(|b| p.len() > b.0) {
                    best = Some((p.len(), Some(Item::Except)));
                }
            }
            for (p, after) in &self.lex.encodes {
                if fits(p) && best.as_ref().is_none_or(|b| p.len() > b.0) {
                    best = Some((p.len(), Some(Item::Encodes(*after))));
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
        pronouns(&folded, &mut tags, &mut mentions);
        // Each mention's words (first, count, mention), for the absent-disease check.
        let spans: Vec<(usize, usize, usize)> = tags
            .iter()
            .enumerate()
            .filter_map(|(k, t)| match t {
                Some((len, Item::Ent(m))) => Some((k, *len, *m)),
                _ => None,
            })
            .collect();
        let mut items: Vec<Item> = tags.into_iter().flatten().map(|(_, it)| it).collect();
        // "have" or "show" right before another relation phrase is an auxiliary ("have been
        // associated with", "has been shown to bind", "show downregulation of").
        let mut k = 0;
        while k + 1 < items.len() {
            let word = match items[k] {
                Item::Rel(r) => match self.lex.phrases[r].0.as_slice() {
                    [w] => w.as_str(),
                    _ => "",
                },
                _ => "",
            };
            let aux = ["have", "has", "had", "show", "display", "exhibit"].contains(&word);
            // "which tissues show DMRT2 upregulated": a name and a closing participle after
            // "show" say what is shown (not "which diseases show fever and are treated by X").
            // A type noun may stand beside the name ("show the gene DMRT2 upregulated").
            let shown_state = ["show", "display", "exhibit"].contains(&word)
                && matches!(items.last(), Some(Item::Rel(_)))
                && matches!(
                    &items[k + 1..items.len() - 1],
                    [Item::Ent(_)] | [Item::Noun(_), Item::Ent(_)] | [Item::Ent(_), Item::Noun(_)]
                );
            if aux && (matches!(items[k + 1], Item::Rel(_)) || shown_state) {
                items.remove(k);
            } else {
                k += 1;
            }
        }
        self.apposed_and_typed(g, &folded, &spans, &mut items, &mut mentions);
        // "… besides X and Y", "… that do not cause X": the names right after an exception
        // marker (and a relation phrase between them) are left out of the answers, not joined
        // to them; the marker, its phrase and its names leave the items.
        let mut excepted: Vec<(usize, Option<usize>)> = Vec::new();
        let mut kept = Vec::with_capacity(items.len());
        let mut k = 0;
        while k < items.len() {
            if !matches!(items[k], Item::Except) {
                kept.push(items[k].clone());
                k += 1;
                continue;
            }
            let mut j = k + 1;
            let rel = match (items.get(j), items.get(j + 1)) {
                (Some(&Item::Rel(r)), Some(Item::Ent(_))) => {
                    j += 1;
                    Some(r)
                }
                _ => None,
            };
            let before = excepted.len();
            while let Some(&Item::Ent(m)) = items.get(j) {
                excepted.push((m, rel));
                j += 1;
            }
            // A marker with no name after it ("not yet") is dropped alone.
            k = if excepted.len() > before { j } else { k + 1 };
        }
        let mut items = kept;
        // Two nouns of one type in a row name one thing ("the anatomy where …", "tissues
        // where …").
        items.dedup_by(|b, a| matches!((a, b), (Item::Noun(x), Item::Noun(y)) if x == y));
        // A relation word before the answer's noun qualifies it as a participle does
        // ("overexpressed genes in melanoma", "upregulated genes with digoxin"): it is read
        // after the noun, as "genes overexpressed in melanoma".
        let participle = |r: usize| {
            self.lex.phrases[r]
                .0
                .last()
                .is_some_and(|w| w.ends_with("ed") || w.ends_with("ing"))
        };
        if items.len() >= 3
            && matches!(items[0], Item::Rel(r) if participle(r))
            && matches!(items[1], Item::Noun(_))
            && items[2..].iter().all(|x| matches!(x, Item::Ent(_)))
        {
            items.swap(0, 1);
        }
        let items = items;
        let read = |items: &[Item], mentions: &[Mention]| match self
            .yes_no(g, &folded, items, mentions, &excepted)
        {
            Some(x) => x,
            None => self.assemble(g, items, mentions, &excepted),
        };
        let (mut readings, mut chosen) = read(&items, &mentions);
        // A word linked only as a guess at a name (misspelt, a prefix or a part of one:
        // "decreased" → Depressed mood, "expression" → Expressive language disorder) is left
        // out when the question cannot be read with it, rather than refused over.
        let weak: Vec<bool> = mentions
            .iter()
            .map(|m| {
                m.group.is_none()
                    && m.candidates
                        .iter()
                        .all(|c| matches!(c.how, Match::Prefix | Match::Fuzzy | Match::Contains))
            })
            .collect();
        let mut items = items;
        if readings.is_empty() {
            let mut strong: Vec<Item> = items
                .iter()
                .filter(|it| !matches!(it, Item::Ent(m) if weak[*m]))
                .cloned()
                .collect();
            if strong.len() < items.len() && strong.iter().any(|it| matches!(it, Item::Ent(_))) {
                for it in &items {
                    if let Item::Ent(m) = it {
                        if weak[*m] {
                            unknown.push(mentions[*m].text.clone());
                        }
                    }
                }
                // With the guesses gone, names and nouns that now stand side by side are read
                // together as above.
                self.apposed_and_typed(g, &folded, &spans, &mut strong, &mut mentions);
                (readings, chosen) = read(&strong, &mentions);
                items = strong;
            }
        }
        let items = items;
        // A group's node stands for all its members.
        for (p, ch) in readings.iter_mut().zip(&chosen) {
            for &(m, node) in ch {
                if let Some((name, members)) = &mentions[m].group {
                    if !p.groups.iter().any(|x| x.0 == node) {
                        p.groups.push((node, name.clone(), members.clone()));
                    }
                }
            }
        }
        if std::env::var_os("SERENQA_DEBUG_UNDERSTAND").is_some() {
            let show: Vec<String> = items
                .iter()
                .map(|it| match it {
                    Item::Ent(m) => format!("E({})", mentions[*m].text),
                    Item::Rel(r) => format!("R({})", self.lex.phrases[*r].0.join(" ")),
                    Item::Noun(t) => format!("N({})", g.type_display(*t)),
                    Item::Except => "X".to_string(),
                    Item::Encodes(after) => format!("Enc({})", if *after { "→" } else { "←" }),
                })
                .collect();
            let out: Vec<&str> = excepted
                .iter()
                .map(|m| mentions[m.0].text.as_str())
                .collect();
            eprintln!(
                "items: {}\nexcept: {}\nreadings: {}",
                show.join(" "),
                out.join(", "),
                readings.len()
            );
        }
        // A disease the graph does not hold is said so, whatever the fragments of its name
        // would have given.
        let absent = self.absent_named(&ws, &folded, &spans, &mentions);
        let (readings, chosen) = if absent.is_some() {
            (Vec::new(), Vec::new())
        } else {
            (readings, chosen)
        };
        let never = if readings.is_empty() && absent.is_none() {
            self.never_held(g, &items, &mentions)
        } else {
            None
        };
        let repurpose = self
            .lex
            .repurpose
            .iter()
            .any(|p| !p.is_empty() && folded.windows(p.len()).any(|w| w == &p[..]));
        Understanding {
            readings,
            mentions,
            chosen,
            unknown,
            never,
            absent,
            repurpose,
        }
    }

    /// A yes/no question ("does metformin treat PCOS?", "is APOE linked to Alzheimer's?"):
    /// it opens with an auxiliary verb, names no answer type and ends with a name after a
    /// relation. It is read as "which <type of the last name> does <the rest> …" keeping only
    /// that name: the answer is the name when the graph says so, else nothing. The last
    /// name's candidate types are tried in their order; the first that gives a reading wins.
    fn yes_no(
        &self,
        g: &Graph,
        folded: &[String],
        items: &[Item],
        mentions: &[Mention],
        excepted: &[(usize, Option<usize>)],
    ) -> Option<Readings> {
        const AUX: [&str; 16] = [
            "does", "do", "did", "is", "are", "was", "were", "can", "could", "may", "might",
            "will", "would", "has", "have", "should",
        ];
        let first = folded.first()?;
        if !AUX.iter().any(|a| super::lexicon::fold_word(a) == *first) {
            return None;
        }
        let Some((&Item::Ent(y), rest)) = items.split_last() else {
            return None;
        };
        if items.iter().any(|i| matches!(i, Item::Noun(_)))
            || !rest.iter().any(|i| matches!(i, Item::Ent(_)))
            || !rest.iter().any(|i| matches!(i, Item::Rel(_)))
        {
            return None;
        }
        // A type that a sense of the question's own verb fits comes first ("does prednisone
        // treat migraine": the disease, not the side effect of the same name, which only the
        // pair relation would join).
        let senses: Vec<RelId> = rest
            .iter()
            .filter_map(|i| match i {
                Item::Rel(r) => Some(self.lex.phrases[*r].1.iter().map(|s| s.rel)),
                _ => None,
            })
            .flatten()
            .collect();
        let mut tried = Vec::new();
        let verb_fits = |p: &Parse| p.edges.iter().any(|e| senses.contains(&e.1));
        for (c, strict) in mentions[y]
            .candidates
            .iter()
            .map(|c| (c, true))
            .chain(mentions[y].candidates.iter().map(|c| (c, false)))
        {
            let t = g.node_type(c.node);
            if tried.contains(&(t, strict)) {
                continue;
            }
            tried.push((t, strict));
            let mut asked = vec![Item::Noun(t)];
            asked.extend(rest.iter().cloned());
            let (readings, chosen) = self.assemble(g, &asked, mentions, excepted);
            let (readings, chosen): (Vec<_>, Vec<_>) = readings
                .into_iter()
                .zip(chosen)
                .filter(|(p, _)| {
                    matches!(p.nodes.first(), Some(PNode::Var(v)) if *v == t)
                        && (!strict || verb_fits(p))
                })
                .map(|(mut p, mut ch)| {
                    p.only = Some(c.node);
                    ch.push((y, c.node));
                    (p, ch)
                })
                .unzip();
            if !readings.is_empty() {
                return Some((readings, chosen));
            }
        }
        None
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
        const KINDS: [Match; 5] = [
            Match::Exact,
            Match::Synonym,
            Match::Prefix,
            Match::Fuzzy,
            Match::Contains,
        ];
        // Longest span first; per span exact, synonym, prefix, fuzzy; containment only when
        // nothing else — except that words that all sit in one name are that name before
        // they are split into several ("congestive heart failure" is "Cardiac failure
        // congestive", not congestive cardiomyopathy and a heart attack).
        for (first, pass) in [(true, &KINDS[..4]), (false, &KINDS[4..])] {
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
                        // One word inside a long name is that name only as its head (last)
                        // word: "arthritis" in "rheumatoid arthritis", not "human" in "NOTCH1
                        // regulation of human endothelial cell calcification".
                        let found = if how == Match::Contains && len == 1 && !first {
                            self.link_head(g, span)
                        } else {
                            self.link(g, span, how)
                        };
                        // One word as the first word of a longer name is that name only
                        // when the rest of the name is vocabulary ("alzheimers" → Alzheimer's
                        // disease) or words the question has ("breast, ovarian and prostate
                        // cancer"), not when it is an ordinary word that opens a name
                        // ("found" → Found dead, "products" → Product taste abnormal).
                        let found: Vec<Candidate> = if how == Match::Prefix && len == 1 {
                            found
                                .into_iter()
                                .filter(|x| {
                                    fold_text(g.name(x.node))
                                        .iter()
                                        .skip(1)
                                        .all(|w| self.vocab.contains(w) || folded.contains(w))
                                })
                                .collect()
                        } else {
                            found
                        };
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
                    if first && c.is_empty() && len > 1 {
                        c = self.link(g, span, Match::Contains);
                    }
                    if !c.is_empty() && first && c.iter().all(|x| x.how != Match::Exact) {
                        let more = if len == 1 {
                            self.link_head(g, span)
                        } else {
                            self.link(g, span, Match::Contains)
                        };
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
                        text: span_text(ws, i, len),
                        candidates: c,
                        group: None,
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
        if self.vocab.contains(w) || self.names.has_word(w) {
            return w.to_string();
        }
        // An inflection of a vocabulary word ("covarying", "covaried" → covary; "targeting"
        // → target; "regulating" → regulate), before any spelling correction.
        if let Some(v) = self.uninflect(w) {
            return v;
        }
        let len = w.chars().count();
        // A four-letter word may be a five-letter vocabulary word missing one letter ("tret"
        // → treat); names' words never reach here.
        let maxd = if len == 4 { 1 } else { max_distance(len) };
        if maxd == 0 {
            return w.to_string();
        }
        let best = self
            .vocab
            .iter()
            .filter(|v| {
                let n = v.chars().count();
                n >= 5 && (len != 4 || n == 5)
            })
            .map(|v| (strsim::damerau_levenshtein(w, v), v))
            .filter(|(d, _)| *d <= maxd)
            .min();
        match best {
            Some((_, v)) => v.clone(),
            None => w.to_string(),
        }
    }
    /// The vocabulary word `w` inflects (-ing, -ed, -es, -s; a dropped final e; a y turned
    /// into i), when it is a vocabulary word itself; `None` otherwise.
    fn uninflect(&self, w: &str) -> Option<String> {
        let mut stems: Vec<String> = Vec::new();
        for suf in ["ing", "ed", "es", "s"] {
            if let Some(stem) = w.strip_suffix(suf) {
                if stem.chars().count() < 3 {
                    continue;
                }
                stems.push(stem.to_string());
                stems.push(format!("{stem}e"));
                if let Some(s) = stem.strip_suffix('i') {
                    stems.push(format!("{s}y"));
                }
                // A doubled final consonant ("targetted", "mapping").
                let cs: Vec<char> = stem.chars().collect();
                if cs.len() > 3 && cs[cs.len() - 1] == cs[cs.len() - 2] {
                    stems.push(cs[..cs.len() - 1].iter().collect());
                }
            }
        }
        stems.into_iter().find(|s| self.vocab.contains(s))
    }

    /// Nodes whose name holds the one word of `span` as its head noun (last word), or
    /// diseases with short names (at most [`SHORT_NAME`] words: "diabetes" in "type 2
    /// diabetes mellitus"; people shorten disease names so), best connected first.
    fn link_head(&self, g: &Graph, span: &[String]) -> Vec<Candidate> {
        let short_disease = |n: NodeId| {
            g.type_label(g.node_type(n)) == "Disease" && fold_text(g.name(n)).len() <= SHORT_NAME
        };
        let mut out: Vec<Candidate> = self
            .link(g, span, Match::Contains)
            .into_iter()
            .filter(|c| fold_text(g.name(c.node)).last() == span.last() || short_disease(c.node))
            .collect();
        if out.is_empty() {
            // The best connected holders of the word may all hold it inside a long name.
            out = self
                .names
                .head(&span[0])
                .iter()
                .take(MAX_HEAD)
                .map(|&n| Candidate {
                    node: n,
                    how: Match::Contains,
                    distance: 0,
                })
                .collect();
        }
        out
    }
}

/// The quoted parts of a question, as (first word, word count): a quote opens after a space,
/// a bracket or the start, and closes before a space, punctuation or the end.
fn quoted_spans(q: &str) -> Vec<(usize, usize)> {
    const OPEN: [char; 4] = ['"', '\'', '\u{201c}', '\u{2018}'];
    const CLOSE: [char; 4] = ['"', '\'', '\u{201d}', '\u{2019}'];
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = q.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (p, c) = chars[k];
        let opens = OPEN.contains(&c)
            && (k == 0 || chars[k - 1].1.is_whitespace() || "([{:".contains(chars[k - 1].1));
        if !opens {
            k += 1;
            continue;
        }
        let close = (k + 1..chars.len()).find(|&e| {
            CLOSE.contains(&chars[e].1)
                && chars
                    .get(e + 1)
                    .is_none_or(|x| x.1.is_whitespace() || ".,;:?!)]}".contains(x.1))
        });
        let Some(e) = close else {
            break;
        };
        let inner = &q[p + c.len_utf8()..chars[e].0];
        out.push((words(&q[..p]).len(), words(inner).len()));
        k = e + 1;
    }
    out
}
