//! Entity linking: the lookup of a span of words in the folded-name index ([`super::names`]):
//! exact, exact through word synonyms, whole-word prefix, fuzzy, containment; with the
//! [`Understander`] that holds the index and the lexicon.

use std::collections::{HashMap, HashSet};

use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use super::lexicon::{fold_text, LexiconFile};
use super::names::NameIndex;
use super::schema::{lexicon_for, Metagraph};
use crate::offline::retrieval::Parse;

/// Readings tried at most per question.
pub const MAX_READINGS: usize = 6;
/// Candidates kept per mention.
const MAX_CANDIDATES: usize = 8;
/// Longest name span looked up, in words.
pub(super) const MAX_SPAN: usize = 12;
/// How a mention was linked to a node name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    Exact,
    /// Exact once words are swapped for their lexicon synonyms ("kidney failure" → "Renal
    /// failure").
    Synonym,
    Prefix,
    Fuzzy,
    Contains,
}

impl Match {
    pub fn label(self) -> &'static str {
        match self {
            Match::Exact => "exact",
            Match::Synonym => "synonym",
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
    /// A group named by a name stem ("statins"): its name and members; the one candidate is
    /// its best-connected member, standing for all of them.
    pub group: Option<(String, Vec<NodeId>)>,
}

#[derive(Clone, Debug)]
pub(super) enum Item {
    Noun(TypeId),
    Rel(usize),
    Ent(usize),
    /// An exception marker ("besides", "other than"): the names right after it are left out
    /// of the answers rather than joined to them.
    Except,
    /// Words joining a gene to what it makes, with the gene's side (`true`: after them);
    /// resolved before assembly ([`Understander::apposed_and_typed`]).
    Encodes(bool),
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
    /// With no reading: the question asked for a link the graph never holds for a name it
    /// does know (a lexicon `never` line, or no relation at all between the two types), the
    /// reason a refusal gives.
    pub never: Option<NeverHeld>,
    /// With no reading: the question names a disease the graph does not hold (a Disease
    /// Ontology name), said plainly rather than answered about fragments of its name.
    pub absent: Option<AbsentName>,
    /// The question asks what could be repurposed (a lexicon `repurpose` phrase): the named
    /// disease's or drug's Discover list answers it as well.
    pub repurpose: bool,
}

/// A Disease Ontology disease the graph does not hold.
#[derive(Clone, Debug, PartialEq)]
pub struct AbsentDisease {
    /// `DOID:…`.
    pub doid: String,
    /// Its DO name.
    pub name: String,
    /// The graph's diseases that subsume it in DO, nearest first.
    pub within: Vec<NodeId>,
}

/// A question's words that name an [`AbsentDisease`].
#[derive(Clone, Debug, PartialEq)]
pub struct AbsentName {
    /// The words as written.
    pub text: String,
    pub disease: AbsentDisease,
}

/// Folded DO names of diseases absent from the graph.
#[derive(Default)]
pub(super) struct AbsentIndex {
    pub(super) names: HashMap<String, usize>,
    pub(super) diseases: Vec<AbsentDisease>,
    /// Longest name, in words.
    pub(super) longest: usize,
}

/// A question refused because it asks for a link the graph never holds: "which drugs treat
/// tuberculosis" when tuberculosis is only a side effect (a `never` line), "genes associated
/// with heart failure" when genes and side effects share no relation.
#[derive(Clone, Debug)]
pub struct NeverHeld {
    /// The mention (index into [`Understanding::mentions`]).
    pub mention: usize,
    /// Its node (the best candidate).
    pub node: NodeId,
    /// The types the mention's candidates have, none of which holds the link.
    pub types: Vec<TypeId>,
    /// What was asked: the relations of the phrase (or of the bare juxtaposition); empty when
    /// no relation joins the two types at all.
    pub asked: Vec<RelId>,
    /// The type asked for (the answer's noun, else the asked relation's source).
    pub asking: Option<TypeId>,
}

/// Question understanding over one graph: the lexicon and a folded-name index.
pub struct Understander {
    pub lex: LexiconFile,
    /// Every relation's end types and edge counts (read off the edges where the loader did
    /// not fix them).
    pub meta: Metagraph,
    pub(super) names: NameIndex,
    /// Every vocabulary word (phrases, nouns, stops, exception markers), never linked on its
    /// own.
    pub(super) vocab: HashSet<String>,
    /// Lexicon entries that do not apply to this graph (aliases of absent names).
    pub warnings: Vec<String>,
    /// Names of the Disease Ontology's diseases this graph lacks (empty without the DO
    /// files: [`Understander::with_disease_ontology`]).
    pub(super) absent: AbsentIndex,
    /// Group names by name stem (lexicon `stem` lines): folded name → (name, members, best
    /// connected first).
    pub(super) groups: HashMap<String, (String, Vec<NodeId>)>,
}

pub(super) fn max_distance(chars: usize) -> usize {
    match chars {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    }
}

impl Understander {
    /// With the lexicon of the graph's own schema and the compiled-in Hetionet lexicon as an
    /// overlay ([`lexicon_for`]): exactly the Hetionet lexicon on Hetionet, and a lexicon
    /// derived from the node types, relation names and names on any other graph. `Err` only
    /// if the compiled-in lexicon is malformed (tested never to be).
    pub fn new(g: &Graph) -> Result<Understander, String> {
        let meta = Metagraph::of(g);
        let (lex, _) = lexicon_for(g, &meta)?;
        Ok(Understander::with_parts(g, lex, meta))
    }

    /// With a given lexicon (no schema-derived entries).
    pub fn with_lexicon(g: &Graph, lex: LexiconFile) -> Result<Understander, String> {
        Ok(Understander::with_parts(g, lex, Metagraph::of(g)))
    }

    fn with_parts(g: &Graph, lex: LexiconFile, meta: Metagraph) -> Understander {
        let mut names = NameIndex::build(g);
        // Aliases link exactly, ahead of any node that happens to bear the written form, and
        // are fuzzy targets too ("asprin" → the alias "aspirin"). One whose name is not in
        // this graph (a subset, another release) is skipped with a warning.
        let mut warnings = Vec::new();
        for (form, t, target, line) in &lex.aliases {
            let nodes: Vec<NodeId> = names
                .exact(&target.join(" "))
                .iter()
                .copied()
                .filter(|&n| g.node_type(n) == *t)
                .collect();
            if nodes.is_empty() {
                warnings.push(format!(
                    "lexicon line {line}: alias '{}': no {} named '{}' in the graph; skipped",
                    form.join(" "),
                    g.type_display(*t),
                    target.join(" ")
                ));
                continue;
            }
            names.alias_first(&form.join(" "), &nodes);
        }
        // Name stems: the nodes of the type whose last name word ends with the stem
        // ("Atorvastatin" for -vastatin), when there are at least two and the group name is
        // no graph name itself.
        let mut groups: HashMap<String, (String, Vec<NodeId>)> = HashMap::new();
        for (form, t, stem, line) in &lex.stems {
            let key = form.join(" ");
            if names.has_exact(&key) {
                continue;
            }
            let mut members: Vec<NodeId> = g
                .nodes_of_type(*t)
                .iter()
                .copied()
                .filter(|&n| {
                    fold_text(g.name(n))
                        .last()
                        .is_some_and(|w| w.ends_with(stem.as_str()) && w != stem)
                })
                .collect();
            if members.len() < 2 {
                warnings.push(format!(
                    "lexicon line {line}: stem '-{stem}' names {} {} in the graph; '{key}' skipped",
                    members.len(),
                    g.type_display(*t)
                ));
                continue;
            }
            members.sort_by(|a, b| g.degree(*b).cmp(&g.degree(*a)).then(a.cmp(b)));
            let what = if g.type_label(*t) == "Compound" {
                "drugs".to_string()
            } else {
                g.type_display(*t).to_lowercase()
            };
            let name = format!("{key}s (the {} {what} named -{stem})", members.len());
            groups.insert(key, (name, members));
        }
        let mut vocab = HashSet::new();
        for p in lex
            .phrases
            .iter()
            .map(|p| &p.0)
            .chain(lex.nouns.iter().map(|n| &n.0))
            .chain(lex.stops.iter())
            .chain(lex.excepts.iter())
            .chain(lex.encodes.iter().map(|e| &e.0))
        {
            vocab.extend(p.iter().cloned());
        }
        Understander {
            lex,
            meta,
            names,
            vocab,
            warnings,
            absent: Default::default(),
            groups,
        }
    }

    pub(super) fn link(&self, g: &Graph, span: &[String], how: Match) -> Vec<Candidate> {
        let key = span.join(" ");
        let mut out: Vec<Candidate> = Vec::new();
        match how {
            Match::Exact => {
                out.extend(self.names.exact(&key).iter().map(|&n| Candidate {
                    node: n,
                    how,
                    distance: 0,
                }));
            }
            Match::Prefix => {
                let p = format!("{key} ");
                for (k, n) in self.names.prefixed(g, &p, 2000) {
                    out.push(Candidate {
                        node: n,
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
                    self.names.fuzzy_targets(first, l, |name, nodes| {
                        let d = strsim::damerau_levenshtein(&key, name);
                        if d <= maxd && d > 0 {
                            out.extend(nodes.map(|(n, extra)| Candidate {
                                node: n,
                                how,
                                distance: d * 10 + extra,
                            }));
                        }
                    });
                }
            }
            Match::Synonym => {
                for v in self.lex.synonym_variants(span) {
                    out.extend(self.names.exact(&v.join(" ")).iter().map(|&n| Candidate {
                        node: n,
                        how,
                        distance: 0,
                    }));
                }
            }
            Match::Contains => {
                // The words as written, or with their synonyms ("congestive heart failure" is
                // in "Cardiac failure congestive").
                let mut seen = HashSet::new();
                for v in std::iter::once(span.to_vec()).chain(self.lex.synonym_variants(span)) {
                    for n in self.containing(&v) {
                        if seen.insert(n) {
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

    /// Nodes whose name holds every word of `span` (at most 5,000 looked at).
    fn containing(&self, span: &[String]) -> Vec<NodeId> {
        let Some((first, rest)) = span.split_first() else {
            return Vec::new();
        };
        let rest: Vec<&[NodeId]> = rest.iter().map(|w| self.names.word(w)).collect();
        self.names
            .word(first)
            .iter()
            .take(5000)
            .copied()
            .filter(|n| rest.iter().all(|s| s.contains(n)))
            .collect()
    }

    /// Nodes a search box should offer for `text`, best first: exact names (aliases
    /// included), names through word synonyms ("kidney failure" → "Renal failure"), whole-word prefixes ("alzheimers" → "Alzheimer's disease"), misspellings
    /// (edit distance), then names containing every word. Folding is the question folding
    /// (case, apostrophes, punctuation, plural/possessive `s`).
    pub fn suggest(&self, g: &Graph, text: &str, limit: usize) -> Vec<(NodeId, Match)> {
        let span = fold_text(text);
        let mut out: Vec<(NodeId, Match)> = Vec::new();
        if span.is_empty() || span.len() > MAX_SPAN {
            return out;
        }
        for how in [
            Match::Exact,
            Match::Synonym,
            Match::Prefix,
            Match::Fuzzy,
            Match::Contains,
        ] {
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
}
