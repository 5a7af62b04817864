//! T1 knowledge retrieval: question → Cypher (LLM with the graph schema, or the offline
//! grammar agent) → our executor → answer ids → Hit, F1, Executability (Table 2). The
//! retrieval agents are [`crate::agents::Retriever`]s: [`OfflineRetriever`] here, the LLM one
//! in `crate::agents`.
//!
//! Scoring as the paper does: a reply with no Cypher, a query that fails to parse or run, or
//! one over its budget is non-executable and scores Hit = F1 = 0. Answers are read from every
//! result cell: nodes, `{id: …}` maps and strings that are node identifiers.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serenqa_cypher::{execute, Budget, Options, Out};
use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::{Graph, TypeId};

use crate::metrics;
use crate::offline::retrieval::{
    retrieve as offline_retrieve, to_cypher, Except, Lexicon, PNode, Parse,
};
use crate::offline::understand::{Match, Understander};
use serenqa_graph::view::node_view;
use serenqa_shared::api::{DidYouMean, LinkedEntity, Understood};

/// Questions of the kinds the offline retriever understands (shown when one is not).
pub const EXAMPLE_QUESTIONS: [&str; 3] = [
    "Which drugs treat multiple sclerosis?",
    "What genes does metformin bind?",
    "Which drugs bind genes associated with asthma?",
];

/// The offline retriever: the benchmark grammar first (its own sentence shapes, exact), then
/// the question-understanding stage for everyday phrasing ([`Understander`]). Both are
/// execution-guided: the first reading whose query returns rows is kept.
pub struct OfflineRetriever {
    pub grammar: Lexicon,
    /// Err only if the compiled-in lexicon failed to load (tested never to).
    pub understander: Result<Understander, String>,
}

impl OfflineRetriever {
    /// Without the Disease Ontology's names (see [`OfflineRetriever::from_data`]).
    pub fn new(g: &Graph) -> OfflineRetriever {
        OfflineRetriever::with_ontology(g, None)
    }

    /// With the Disease Ontology's disease names, when given: synonyms of the graph's
    /// diseases, and the diseases it lacks ([`Understander::with_disease_ontology`]).
    pub fn with_ontology(g: &Graph, d: Option<&DiseaseOntology>) -> OfflineRetriever {
        OfflineRetriever {
            grammar: Lexicon::new(g),
            understander: Understander::new(g).map(|u| match d {
                Some(d) => u.with_disease_ontology(g, d),
                None => u,
            }),
        }
    }

    /// With the Disease Ontology files of the data directory (`disease-ontology/`) when
    /// they are there; a file that fails to read is reported on stderr in one line and
    /// left out.
    pub fn from_data(g: &Graph) -> OfflineRetriever {
        let d = match DiseaseOntology::find() {
            Some(Ok(d)) => Some(d),
            Some(Err(e)) => {
                eprintln!("question understanding without the Disease Ontology's names: {e}");
                None
            }
            None => None,
        };
        OfflineRetriever::with_ontology(g, d.as_ref())
    }

    fn grammar_entities(g: &Graph, p: &Parse) -> Vec<LinkedEntity> {
        p.nodes
            .iter()
            .filter_map(|n| match n {
                PNode::Entity(e) => Some(LinkedEntity {
                    mention: g.name(*e).to_string(),
                    node: node_view(g, *e),
                    matched: "exact".into(),
                    left_out: false,
                }),
                PNode::Var(_) => None,
            })
            .collect()
    }
}

fn replace_ci(text: &str, mention: &str, with: &str) -> String {
    let lower = text.to_lowercase();
    match lower.find(&mention.to_lowercase()) {
        Some(i)
            if text.is_char_boundary(i)
                && text.is_char_boundary(i + mention.len())
                && lower.len() == text.len() =>
        {
            format!("{}{}{}", &text[..i], with, &text[i + mention.len()..])
        }
        _ => text.to_string(),
    }
}

impl OfflineRetriever {
    /// Question → Cypher → answers, with what was understood (the offline
    /// [`crate::agents::Retriever`]).
    pub fn retrieve(&self, g: &Graph, question: &str) -> (Retrieved, Understood) {
        let mut last: Option<Retrieved> = None;
        let chosen = offline_retrieve(g, &self.grammar, question, |c| {
            let r = run_query(g, Some(c.to_string()));
            let rows = r.executable.then_some(r.rows);
            last = Some(r);
            rows
        });
        let grammar_hit = match (&chosen.cypher, &last) {
            (Some(c), Some(l)) if l.cypher.as_deref() == Some(c.as_str()) && l.rows > 0 => {
                Some(l.clone())
            }
            (Some(c), _) => Some(run_query(g, Some(c.clone()))).filter(|r| r.rows > 0),
            _ => None,
        };
        let und = match &self.understander {
            Ok(u) => u,
            Err(e) => {
                let r = grammar_hit.unwrap_or_else(|| run_query(g, chosen.cypher.clone()));
                return (
                    r,
                    Understood {
                        not_understood: Some(format!("question understanding unavailable: {e}")),
                        ..Default::default()
                    },
                );
            }
        };
        if let (Some(r), Some(p)) = (grammar_hit, &chosen.parse) {
            let u = Understood {
                interpretation: Some(und.describe(g, p)),
                entities: Self::grammar_entities(g, p),
                ..Default::default()
            };
            return (r, u);
        }
        let x = und.understand(g, question);
        // A repurposing question with no reading of its own ("new uses for metformin") is
        // read as the treatment question about the disease or drug it names; either way the
        // reply names that entity, whose Discover list answers it.
        if x.repurpose && x.readings.is_empty() && x.absent.is_none() {
            if let Some((n, as_question)) = repurpose_fallback(g, &x) {
                let (r, mut u) = self.retrieve(g, &as_question);
                u.repurpose = Some(node_view(g, n));
                return (r, u);
            }
        }
        let mut u = Understood {
            unknown_words: x.unknown.clone(),
            ..Default::default()
        };
        if x.readings.is_empty() {
            let found: Vec<String> = x.mentions.iter().map(|m| format!("'{}'", m.text)).collect();
            let msg = match (found.is_empty(), x.unknown.is_empty()) {
                (true, false) => format!("No name of the graph was recognised (unknown words: {}).", x.unknown.join(", ")),
                (true, true) => "No name of the graph was recognised in the question.".to_string(),
                (false, _) => format!("Recognised {} but not what to find about it: name what you want (drugs, genes, diseases, side effects …) and how it relates (treats, binds, associated with …).", found.join(", ")),
            };
            u.examples = EXAMPLE_QUESTIONS
                .iter()
                .map(std::string::ToString::to_string)
                .collect();
            // A name the graph knows, asked for a link it never holds: say so, and offer
            // the question it can answer about that name first.
            let msg = match (&x.absent, &x.never) {
                // A disease the graph does not hold: said plainly, with the question it can
                // answer about the graph disease that subsumes it.
                (Some(a), _) => {
                    let (m, instead) = und.absent_message(g, a, question);
                    if let Some(q) = instead {
                        u.examples.insert(0, q);
                    }
                    m
                }
                (None, Some(n)) => {
                    let (m, instead) = und.never_message(g, n, &x.mentions[n.mention].text);
                    if let Some(q) = instead {
                        u.examples.insert(0, q);
                    }
                    m
                }
                (None, None) => msg,
            };
            u.not_understood = Some(msg);
            let r = Retrieved {
                error: Some(if x.absent.is_some() {
                    "the question names a disease the graph does not hold".into()
                } else if x.never.is_some() {
                    "the question asks for a link the graph does not hold".into()
                } else {
                    "the question was not understood".into()
                }),
                ..Default::default()
            };
            return (r, u);
        }
        // Execution-guided: the first reading with rows, else the first.
        let mut pick = 0;
        let mut result = None;
        for (i, p) in x.readings.iter().enumerate() {
            let r = run_query(g, Some(to_cypher(g, p)));
            if r.executable && r.rows > 0 {
                pick = i;
                result = Some(r);
                break;
            }
            if result.is_none() {
                result = Some(r);
            }
        }
        let mut r = result.unwrap_or_default();
        // A yes/no question is answered on its first reading (the verb's own sense): "does
        // prednisone treat migraine" is "no" even though it palliates it — which is said.
        let mut instead = None;
        if x.readings[0].only.is_some() && pick != 0 {
            instead = Some(und.answers_phrase(g, &x.readings[pick]));
            pick = 0;
            r = run_query(g, Some(to_cypher(g, &x.readings[0])));
        }
        let p = &x.readings[pick];
        if x.repurpose {
            u.repurpose = repurpose_entity(g, p).map(|n| node_view(g, n));
        }
        let said = und.describe(g, p);
        u.interpretation = Some(match p.only {
            None => said,
            Some(_) if r.rows > 0 => format!("{said} Yes."),
            Some(n) => {
                let mut no = format!("{said} No: the graph holds no such link.");
                if let Some(other) = instead {
                    no.push_str(&format!(" But {} is among the {other}.", g.name(n)));
                }
                no
            }
        });
        for &(m, node) in &x.chosen[pick] {
            let mention = &x.mentions[m];
            // A name-stem group is said in the interpretation; its stand-in member is no
            // linked entity of the question.
            if mention.group.is_some() {
                continue;
            }
            let how = mention
                .candidates
                .iter()
                .find(|c| c.node == node)
                .map(|c| c.how)
                .unwrap_or(Match::Exact);
            let left_out = p.except.iter().any(|x| match *x {
                Except::Node(n) | Except::LinkedTo(_, n) => n == node,
            });
            u.entities.push(LinkedEntity {
                mention: mention.text.clone(),
                node: node_view(g, node),
                matched: how.label().into(),
                left_out,
            });
            // A name left out with all the nodes it contains ("besides diabetes") offers no
            // alternatives: they are left out too.
            if x.chosen[pick].iter().filter(|c| c.0 == m).count() > 1 {
                continue;
            }
            // Uncertain: not an exact name, or several nodes of the chosen type share the match.
            let t = g.node_type(node);
            let same_kind: Vec<_> = mention
                .candidates
                .iter()
                .filter(|c| c.node != node && c.how == how && g.node_type(c.node) == t)
                .collect();
            if how != Match::Exact || !same_kind.is_empty() {
                let alts = mention
                    .candidates
                    .iter()
                    .filter(|c| c.node != node && g.node_type(c.node) == t)
                    .take(3);
                for c in alts {
                    u.did_you_mean.push(DidYouMean {
                        mention: mention.text.clone(),
                        node: node_view(g, c.node),
                        question: replace_ci(question, &mention.text, g.name(c.node)),
                    });
                }
            }
        }
        (r, u)
    }
}

/// The entity of a repurposing question's reading: the one disease or drug it names, when
/// the reading asks about treatment (treats or palliates) — "what could be repurposed for
/// ALS" — and nothing else.
fn repurpose_entity(g: &Graph, p: &Parse) -> Option<serenqa_graph::NodeId> {
    let treat = [g.relation_id("TREATS_CtD"), g.relation_id("PALLIATES_CpD")];
    if p.edges.is_empty() || !p.edges.iter().all(|e| treat.contains(&Some(e.1))) {
        return None;
    }
    let mut named = p.nodes.iter().filter_map(|n| match n {
        PNode::Entity(e) => Some(*e),
        PNode::Var(_) => None,
    });
    let e = named.next()?;
    named.next().is_none().then_some(e)
}

/// A repurposing question without a reading: its first name that is best read as a disease
/// or a drug, and the treatment question about it ("which drugs treat X" / "which diseases
/// does X treat").
fn repurpose_fallback(
    g: &Graph,
    x: &crate::offline::understand::Understanding,
) -> Option<(serenqa_graph::NodeId, String)> {
    let (disease, compound) = (g.type_id("Disease"), g.type_id("Compound"));
    x.mentions.iter().find_map(|m| {
        let c = m.candidates.first()?;
        let t = Some(g.node_type(c.node));
        if t == disease {
            Some((c.node, format!("which drugs treat {}", g.name(c.node))))
        } else if t == compound {
            Some((
                c.node,
                format!("which diseases does {} treat", g.name(c.node)),
            ))
        } else {
            None
        }
    })
}

/// Per-query budget: generous for real queries, short enough that a runaway one cannot stall a run.
pub fn budget() -> Budget {
    Budget::with_time_rows(Duration::from_secs(5), 2_000_000)
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Retrieved {
    pub cypher: Option<String>,
    pub executable: bool,
    pub error: Option<String>,
    /// Answer ids, sorted.
    pub answers: Vec<String>,
    /// Rows returned.
    pub rows: usize,
}

/// The Cypher text in a model reply: a fenced block if there is one, else from the first
/// MATCH / OPTIONAL MATCH / UNWIND on.
pub fn extract_cypher(reply: &str) -> Option<String> {
    let text = reply.trim();
    if let Some(start) = text.find("```") {
        // A fenced block is the query as the model wrote it (write clauses included, so the
        // executor can refuse them as the paper's Neo4j would).
        let after = &text[start + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        let end = body.find("```").unwrap_or(body.len());
        let q = body[..end].trim().trim_end_matches(';').trim().to_string();
        return (!q.is_empty()).then_some(q);
    }
    // Prose: only keywords that start a read query; "with" or "call" in prose would start too early.
    let upper = text.to_ascii_uppercase();
    let pos = ["OPTIONAL MATCH", "MATCH", "UNWIND"]
        .iter()
        .filter_map(|k| upper.find(k))
        .min()?;
    let q = text[pos..].trim().trim_end_matches(';').trim().to_string();
    (!q.is_empty()).then_some(q)
}

fn collect_ids(g: &Graph, v: &Out, out: &mut BTreeSet<String>) {
    match v {
        Out::Node(n) => {
            if let Ok(id) = u32::try_from(n.id) {
                if (id as usize) < g.node_count() {
                    out.insert(g.ident(id).to_string());
                }
            }
        }
        Out::Map(m) => {
            if let Some(Out::Str(s)) = m.get("id") {
                if !g.find_by_ident(s).is_empty() {
                    out.insert(s.clone());
                }
            } else {
                for x in m.values() {
                    collect_ids(g, x, out);
                }
            }
        }
        Out::List(xs) => xs.iter().for_each(|x| collect_ids(g, x, out)),
        Out::Str(s) if !g.find_by_ident(s).is_empty() => {
            out.insert(s.clone());
        }
        Out::Int(i) => {
            // Entrez gene ids are numbers; a model may return them as integers.
            let s = i.to_string();
            if !g.find_by_ident(&s).is_empty() {
                out.insert(s);
            }
        }
        _ => {}
    }
}

/// Runs a query and reads its answers.
pub fn run_query(g: &Graph, cypher: Option<String>) -> Retrieved {
    let Some(q) = cypher else {
        return Retrieved {
            error: Some("no Cypher query in the reply".into()),
            ..Default::default()
        };
    };
    let opts = Options {
        budget: budget(),
        ..Default::default()
    };
    match execute(g, &q, &opts) {
        Ok(res) => {
            let mut ids = BTreeSet::new();
            for row in &res.rows {
                for cell in row {
                    collect_ids(g, cell, &mut ids);
                }
            }
            Retrieved {
                cypher: Some(q),
                executable: true,
                error: None,
                answers: ids.into_iter().collect(),
                rows: res.rows.len(),
            }
        }
        Err(e) => Retrieved {
            cypher: Some(q),
            executable: false,
            error: Some(e.to_string()),
            ..Default::default()
        },
    }
}

/// The graph schema as the retrieval prompt shows it.
pub fn schema_text(g: &Graph) -> (String, String) {
    let labels = (0..g.type_count() as TypeId)
        .map(|t| format!("- {}", g.type_label(t)))
        .collect::<Vec<_>>()
        .join("\n");
    let rels = g
        .relations()
        .iter()
        .map(|r| {
            let l = |t: Option<TypeId>| {
                t.map(|t| g.type_label(t).to_string())
                    .unwrap_or_else(|| "any".into())
            };
            format!(
                "- ({})-[{}]->({}){}",
                l(r.source_type),
                r.name,
                l(r.target_type),
                if r.directed { "" } else { " (undirected)" }
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    (labels, rels)
}

/// Hit and F1 of a retrieval against gold ids.
pub fn score(gold: &[String], r: &Retrieved) -> (f64, f64) {
    let gold: BTreeSet<String> = gold.iter().cloned().collect();
    let pred: BTreeSet<String> = r.answers.iter().cloned().collect();
    if !r.executable {
        return (0.0, 0.0);
    }
    (metrics::hit(&gold, &pred), metrics::f1(&gold, &pred))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cypher_extraction() {
        assert_eq!(
            extract_cypher("```cypher\nMATCH (n) RETURN n;\n```").as_deref(),
            Some("MATCH (n) RETURN n")
        );
        assert_eq!(
            extract_cypher("Sure! Here: MATCH (a)-->(b) RETURN b").as_deref(),
            Some("MATCH (a)-->(b) RETURN b")
        );
        assert_eq!(extract_cypher("I cannot answer that."), None);
        assert_eq!(extract_cypher(""), None);
        assert_eq!(
            extract_cypher("```\nCREATE (n)\n```").as_deref(),
            Some("CREATE (n)")
        );
        assert_eq!(extract_cypher("```cypher\n```"), None);
    }
}
