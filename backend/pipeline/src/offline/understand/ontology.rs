//! Disease names from the Disease Ontology (`<data>/disease-ontology/`, CC BY 3.0): the
//! names and exact synonyms of the graph's own diseases link to them exactly ("Lou Gehrig's
//! disease", "breast carcinoma"), and the names of DO diseases the graph does not hold
//! ("cystic fibrosis") are recognised as such, so that a question about one is refused
//! plainly — with the graph's diseases that subsume it, when there are any — instead of being
//! answered about fragments of its name ("fibrosis", "cystic").

use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::{Graph, NodeId};

use super::lexicon::{fold_text, span_text};
use super::linking::{AbsentDisease, AbsentIndex, AbsentName, Match, Mention, Understander};

impl Understander {
    /// Adds the Disease Ontology's names: exact synonyms of the graph's diseases link to them
    /// (after any graph name spelt the same), and names of the DO diseases the graph lacks are
    /// recognised as absent. A name that is already a graph name is never marked absent.
    pub fn with_disease_ontology(mut self, g: &Graph, d: &DiseaseOntology) -> Understander {
        let Some(disease) = g.type_id("Disease") else {
            return self;
        };
        let node_of = |doid: &str| {
            g.find_by_ident(doid)
                .iter()
                .copied()
                .find(|&n| g.node_type(n) == disease)
        };
        let mut absent = AbsentIndex::default();
        for (doid, names) in &d.terms {
            let Some(first) = names.first() else { continue };
            match node_of(doid) {
                Some(n) => {
                    for name in names {
                        self.names.add_alias(&fold_text(name).join(" "), n, false);
                    }
                }
                None => {
                    let within: Vec<NodeId> = d
                        .within
                        .get(doid)
                        .into_iter()
                        .flatten()
                        .filter_map(|s| node_of(s))
                        .collect();
                    let k = absent.diseases.len();
                    let mut used = false;
                    for name in names {
                        let key = fold_text(name);
                        // Not a graph name, and not vocabulary alone (DO's "disease").
                        if key.is_empty()
                            || self.names.has_exact(&key.join(" "))
                            || key.iter().all(|w| self.vocab.contains(w))
                        {
                            continue;
                        }
                        absent.longest = absent.longest.max(key.len());
                        absent.names.entry(key.join(" ")).or_insert(k);
                        used = true;
                    }
                    if used {
                        absent.diseases.push(AbsentDisease {
                            doid: doid.clone(),
                            name: first.clone(),
                            within,
                        });
                    }
                }
            }
        }
        self.absent = absent;
        self
    }

    /// The absent disease a question names, when the words of an absent DO name were not
    /// found as one graph name: they were split over several mentions or left unknown
    /// ("cystic fibrosis" → 'fibrosis', 'cystic'; a type noun beside one name is not a split:
    /// "brain diseases"), or one mention holds them only by
    /// containment while DO files the disease under a graph disease. A graph name that holds
    /// the words exactly, by prefix or as a close misspelling ("anemia" → Anaemia) keeps its
    /// reading, and so does a general term contained in graph names ("cancer").
    /// `spans` are the mentions' (first word, word count, mention index).
    pub(super) fn absent_named(
        &self,
        ws: &[(String, String)],
        folded: &[String],
        spans: &[(usize, usize, usize)],
        mentions: &[Mention],
    ) -> Option<AbsentName> {
        if self.absent.names.is_empty() {
            return None;
        }
        let n = folded.len();
        for len in (1..=self.absent.longest.min(n)).rev() {
            for i in 0..=n - len {
                let Some(&k) = self.absent.names.get(&folded[i..i + len].join(" ")) else {
                    continue;
                };
                // The mentions overlapping the words, and how well each was matched.
                let over: Vec<&(usize, usize, usize)> = spans
                    .iter()
                    .filter(|(s, l, _)| *s < i + len && i < s + l)
                    .collect();
                let d = &self.absent.diseases[k];
                // One mention, the other words vocabulary: a name qualified by a type noun
                // ("brain diseases" are diseases of the brain) is not an absent name.
                let rest_vocab = over.len() == 1
                    && (i..i + len)
                        .filter(|&w| w < over[0].0 || w >= over[0].0 + over[0].1)
                        .all(|w| self.vocab.contains(&folded[w]));
                let whole = rest_vocab
                    && mentions[over[0].2].candidates.iter().any(|c| {
                        // Only containment: a kind of a graph disease is absent ("Hodgkin
                        // lymphoma"), a general term is not ("cancer": the graph's cancers).
                        c.how != Match::Contains || d.within.is_empty()
                    });
                if whole {
                    continue;
                }
                return Some(AbsentName {
                    text: span_text(ws, i, len),
                    disease: d.clone(),
                });
            }
        }
        None
    }

    /// The refusal for a question about an absent disease, and the question the graph can
    /// answer instead (about the nearest graph disease that subsumes it), if any.
    pub fn absent_message(
        &self,
        g: &Graph,
        a: &AbsentName,
        question: &str,
    ) -> (String, Option<String>) {
        let d = &a.disease;
        let mut msg = format!(
            "The graph does not hold the disease '{}' (Disease Ontology {}, {}): Hetionet has {} diseases.",
            a.text,
            d.doid,
            d.name,
            g.type_id("Disease")
                .map(|t| g.nodes_of_type(t).len())
                .unwrap_or(0)
        );
        let instead = d.within.first().map(|&w| {
            let names: Vec<&str> = d.within.iter().take(3).map(|&x| g.name(x)).collect();
            msg.push_str(&format!(
                " It is a kind of {}, which the graph holds.",
                names.join(", ")
            ));
            replace_words(question, &a.text, g.name(w))
        });
        // Nothing subsumes it: the nearest names are the graph's diseases named with its
        // words ("cystic fibrosis" → idiopathic pulmonary fibrosis), best connected first.
        let instead = instead.or_else(|| {
            let disease = g.type_id("Disease")?;
            let mut near: Vec<NodeId> = Vec::new();
            for w in fold_text(&a.text) {
                if self.vocab.contains(&w) {
                    continue;
                }
                for &n in self.names.word(&w) {
                    if g.node_type(n) == disease && !near.contains(&n) {
                        near.push(n);
                    }
                }
            }
            near.sort_by(|x, y| g.degree(*y).cmp(&g.degree(*x)).then(x.cmp(y)));
            let first = *near.first()?;
            let names: Vec<&str> = near.iter().take(3).map(|&x| g.name(x)).collect();
            msg.push_str(&format!(
                " Nothing the graph holds subsumes it; the graph's diseases named with its words: {}.",
                names.join(", ")
            ));
            Some(replace_words(question, &a.text, g.name(first)))
        });
        if instead.is_none() {
            msg.push_str(" Nothing the graph holds subsumes it.");
        }
        (msg, instead)
    }
}

/// `question` with `words` (case-insensitive) replaced by `with`.
fn replace_words(question: &str, words: &str, with: &str) -> String {
    let lower = question.to_lowercase();
    match lower.find(&words.to_lowercase()) {
        Some(i)
            if lower.len() == question.len()
                && question.is_char_boundary(i)
                && question.is_char_boundary(i + words.len()) =>
        {
            format!("{}{}{}", &question[..i], with, &question[i + words.len()..])
        }
        _ => format!("{question} ({with})"),
    }
}
