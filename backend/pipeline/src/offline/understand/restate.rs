//! Words beside a name that restate it rather than ask for more: a type noun that says the
//! name's type ("the protein encoded by APOE", "heart tissue"), and a description written
//! beside the name it describes (an apposition: "the transcription factor TGIF2LY", "GLUL,
//! the glutamine synthetase gene"). Applied to the tagged items before assembly
//! ([`Understander::apposed_and_typed`]).

use serenqa_graph::Graph;

use super::linking::{Item, Mention, Understander};

impl Understander {
    /// Appositions and type nouns, until neither changes the items: a noun that restates a
    /// name can stand between a description and the name it describes ("WW domain binding
    /// protein 1 (WBP1)").
    pub(super) fn apposed_and_typed(
        &self,
        g: &Graph,
        folded: &[String],
        spans: &[(usize, usize, usize)],
        items: &mut Vec<Item>,
        mentions: &mut [Mention],
    ) {
        Self::encoded(items);
        loop {
            let n = items.len();
            self.appositions(g, folded, spans, items, mentions);
            self.type_nouns(g, items, mentions);
            if items.len() == n {
                break;
            }
        }
    }

    /// A gene and what it makes, joined by "encoded by", "encoding", "which encodes": the
    /// gene is the name meant; the words for its product on the other side describe it and
    /// leave the items ("the exosome component encoded by EXOSC3" is EXOSC3; "PIGV, which
    /// encodes a GPI mannosyltransferase" is PIGV; "SERPINA5, the gene encoding protein C
    /// inhibitor" is SERPINA5). The description runs from the joining words to the nearest
    /// relation phrase, exception marker or end, and never takes the answer's noun. With no
    /// name on the gene's side ("the gene encoding the ARMC12 protein") the product's name is
    /// the gene's own, and nothing is dropped. The joining words leave the items either way.
    fn encoded(items: &mut Vec<Item>) {
        let is_desc = |x: &Item| matches!(x, Item::Ent(_) | Item::Noun(_));
        let mut k = 0;
        while k < items.len() {
            let Item::Encodes(gene_after) = items[k] else {
                k += 1;
                continue;
            };
            // The answer's noun: the first noun of the question.
            let answer = items.iter().position(|x| matches!(x, Item::Noun(_)));
            if gene_after {
                // "<description> encoded by <gene>".
                if matches!(items.get(k + 1), Some(Item::Ent(_))) {
                    let mut a = k;
                    while a > 0 && is_desc(&items[a - 1]) && Some(a - 1) != answer {
                        a -= 1;
                    }
                    items.drain(a..=k);
                    k = a;
                } else {
                    items.remove(k);
                }
            } else {
                // "<gene> [the gene] encoding <description>".
                let mut a = k;
                while a > 0 && matches!(items[a - 1], Item::Noun(_)) && Some(a - 1) != answer {
                    a -= 1;
                }
                let gene_before = a > 0 && matches!(items[a - 1], Item::Ent(_));
                if gene_before {
                    let mut b = k + 1;
                    while b < items.len() && is_desc(&items[b]) {
                        b += 1;
                    }
                    items.drain(a..b);
                    k = a;
                } else {
                    items.remove(k);
                }
            }
        }
    }

    /// Type nouns beside a name that say its type rather than ask for more nodes.
    fn type_nouns(&self, g: &Graph, items: &mut Vec<Item>, mentions: &mut [Mention]) {
        // A name followed by a noun of one of its own types is that type ("heart tissue",
        // "RNA cap binding activity", "fever as a symptom", "the protein kinase inhibitor
        // class"): keep the candidates of that type and drop the noun. The first noun (the
        // answer's) is never dropped.
        let mut k = 0;
        while k + 1 < items.len() {
            if let (&Item::Ent(m), &Item::Noun(t)) = (&items[k], &items[k + 1]) {
                // The first noun is the answer's, unless a noun after it can be ("prostaglandins
                // I class - meds included?": the class says the name's type, meds are asked for).
                let is_answer = !items[..k].iter().any(|x| matches!(x, Item::Noun(_)))
                    && !items[k + 2..].iter().any(|x| matches!(x, Item::Noun(_)));
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
        // A noun right before a name of its own type restates that name's type, it does not
        // ask for more nodes ("the protein encoded by APOE", "the drug metformin", "the
        // disease lupus", "the protein made from the gene RND3"): keep the name's candidates
        // of that type and drop the noun. Working backwards lets a run of restating nouns
        // fold into the name. The answer's noun is never dropped.
        let mut k = items.len();
        while k >= 2 {
            k -= 1;
            let (Item::Noun(t), Item::Ent(m)) = (&items[k - 1], &items[k]) else {
                continue;
            };
            let (t, m) = (*t, *m);
            // The answer's noun opens the question; after a leading relation phrase ("side
            // effects of the drug lisinopril") the phrase names the answer instead.
            let is_answer = !items[..k - 1]
                .iter()
                .any(|x| matches!(x, Item::Noun(_) | Item::Rel(_)));
            // Only a name matched as well as any of its readings is restated ("diseases of
            // the liver": the organ is an exact name, liver cancer only contains the word).
            let c = &mentions[m].candidates;
            let best = c.iter().map(|x| x.how).min();
            if !is_answer
                && c.iter()
                    .any(|x| g.node_type(x.node) == t && Some(x.how) == best)
            {
                mentions[m].candidates.retain(|c| g.node_type(c.node) == t);
                items.remove(k - 1);
            }
        }
    }

    /// Names written side by side with no conjunction between them name one thing, one of
    /// them restating the other ("the transcription factor TGIF2LY", "the phenothiazine
    /// methotrimeprazine", "GLUL, the glutamine synthetase gene", "the nuclear receptor
    /// RXR-alpha encoded by RXRA"): the names that fit what the words around the run ask
    /// for — the noun before it, else the relation phrase next to it, else the noun after
    /// it — are kept, the best matched and then the last of them; the others leave the items.
    /// A run where every name fits, or none does, is left as it is (an intersection).
    fn appositions(
        &self,
        g: &Graph,
        folded: &[String],
        spans: &[(usize, usize, usize)],
        items: &mut Vec<Item>,
        mentions: &mut [Mention],
    ) {
        const JOINS: [&str; 7] = ["and", "or", "nor", "but", "plus", "versus", "v"];
        let at = |m: usize| spans.iter().find(|x| x.2 == m).map(|x| (x.0, x.1));
        let joined = |a: usize, b: usize| match (at(a), at(b)) {
            (Some((i, n)), Some((j, _))) if i + n <= j => folded[i + n..j]
                .iter()
                .any(|w| JOINS.contains(&w.as_str()) || w == "vs"),
            _ => true,
        };
        let answer = items.iter().find_map(|x| match x {
            Item::Noun(t) => Some(*t),
            _ => None,
        });
        let mut i = 0;
        while i < items.len() {
            let mut j = i;
            while j < items.len() && matches!(items[j], Item::Ent(_)) {
                if j > i {
                    let (Item::Ent(a), Item::Ent(b)) = (&items[j - 1], &items[j]) else {
                        break;
                    };
                    if joined(*a, *b) {
                        break;
                    }
                }
                j += 1;
            }
            if j - i < 2 {
                i = j.max(i + 1);
                continue;
            }
            let run: Vec<usize> = items[i..j]
                .iter()
                .filter_map(|x| match x {
                    Item::Ent(m) => Some(*m),
                    _ => None,
                })
                .collect();
            let fits = |m: usize, around: &Item| -> bool {
                mentions[m].candidates.iter().any(|c| {
                    let ct = g.node_type(c.node);
                    match around {
                        Item::Noun(t) => ct == *t,
                        Item::Rel(r) => self.lex.phrases[*r]
                            .1
                            .iter()
                            .any(|s| self.rel_fits(g, *s, answer, Some(ct))),
                        _ => false,
                    }
                })
            };
            let before = i.checked_sub(1).map(|k| &items[k]);
            let after = items.get(j);
            let context = [
                before.filter(|x| matches!(x, Item::Noun(_))),
                before.filter(|x| matches!(x, Item::Rel(_))),
                after.filter(|x| matches!(x, Item::Rel(_))),
                after.filter(|x| matches!(x, Item::Noun(_))),
            ];
            let mut keep: Option<usize> = None;
            for around in context.into_iter().flatten() {
                let ok: Vec<usize> = run.iter().copied().filter(|&m| fits(m, around)).collect();
                if ok.is_empty() || ok.len() == run.len() {
                    continue;
                }
                let best = |m: usize| {
                    mentions[m]
                        .candidates
                        .iter()
                        .filter(|c| match around {
                            Item::Noun(t) => g.node_type(c.node) == *t,
                            _ => true,
                        })
                        .map(|c| c.how)
                        .min()
                };
                keep = ok.iter().copied().rev().min_by_key(|&m| best(m));
                break;
            }
            let Some(keep) = keep else {
                i = j;
                continue;
            };
            items.splice(i..j, [Item::Ent(keep)]);
            i += 1;
        }
    }
}

/// "it" or "them" after a relation phrase, in a question naming one thing, is that thing
/// again ("genes associated with hematologic cancer and upregulated in it"); with more than
/// one thing named, nothing says which, and the word stays a stop word. Works on the tagged
/// words (`tags[k]`: the item starting at word k and its length).
pub(super) fn pronouns(
    folded: &[String],
    tags: &mut [Option<(usize, Item)>],
    mentions: &mut Vec<Mention>,
) {
    for p in 1..folded.len().min(tags.len()) {
        if !matches!(folded[p].as_str(), "it" | "them") || tags[p].is_some() {
            continue;
        }
        let prev = tags[..p].iter().rev().flatten().next();
        if !matches!(prev, Some((_, Item::Rel(_)))) {
            continue;
        }
        let named: Vec<usize> = tags[..p]
            .iter()
            .flatten()
            .filter_map(|t| match t.1 {
                Item::Ent(m) => Some(m),
                _ => None,
            })
            .collect();
        if let Some(&m) = named.first() {
            if named.iter().all(|&x| mentions[x].text == mentions[m].text) {
                mentions.push(mentions[m].clone());
                tags[p] = Some((1, Item::Ent(mentions.len() - 1)));
            }
        }
    }
}
