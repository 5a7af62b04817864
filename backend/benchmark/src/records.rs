//! The output records in the paper's A.3 shape, one JSON object per line:
//! - `kgqa.jsonl` — [`KgqaRecord`]: question, answers (Ac on Gc), `graph_query`, pattern
//!   type, category, Cypher, and the train/test `partition`.
//! - `serendipity.jsonl` — [`SerendipityRecord`]: per strategy (`llm` = ensemble, `sscore` =
//!   RNS-guided, `expert`) the serendipity set, ground-truth paths, `exact_matches` (= Ae)
//!   and the split; `null` where a strategy has no partition or dropped the question.
//! - `removed-<strategy>.tsv` — R: `source key \t relation \t target key`, sorted.
//! - `manifest.json` — [`Manifest`]: graph hash, seed, counts, removed edges per strategy.
//!
//! Everything is a pure function of (graph, seed, scorers, rankings): no timestamps, maps
//! are ordered, so two builds write byte-identical files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId};

use crate::generate::{GenReport, Question};
use crate::query::QNode;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerEntry {
    pub answer_type: String,
    pub answer_argument: String,
    pub entity_name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GqNode {
    pub nid: usize,
    /// "class" or "entity".
    pub node_type: String,
    /// The entity identifier, or the class label for a class node.
    pub id: String,
    pub class: String,
    pub friendly_name: String,
    pub question_node: u8,
    pub function: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GqEdge {
    pub start: usize,
    pub end: usize,
    /// "SourceType.TargetType".
    pub relation: String,
    /// The relationship type (`TREATS_CtD`).
    pub friendly_name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphQuery {
    pub nodes: Vec<GqNode>,
    pub edges: Vec<GqEdge>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KgqaRecord {
    pub qid: u32,
    pub question: String,
    pub answer: Vec<AnswerEntry>,
    pub function: String,
    /// How well known the answers are, 0–1: the mean over answers of
    /// ln(1 + degree) / ln(1 + largest degree of the answer's type).
    pub commonness: f64,
    pub num_node: usize,
    pub num_edge: usize,
    pub graph_query: GraphQuery,
    pub pattern_type: String,
    pub category: String,
    pub cypher: String,
    pub partition: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribedList {
    pub list: Vec<String>,
    pub description: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreQueries {
    pub paths: Vec<String>,
    pub questions: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlainList {
    pub list: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StrategyEntry {
    pub serendipity_set: DescribedList,
    pub explore_queries: ExploreQueries,
    pub partition: String,
    pub exact_matches: PlainList,
    /// RNS(Ae, As) on Gc, when the model was available.
    pub rns: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SerendipityRecord {
    pub qid: u32,
    pub question: String,
    pub llm: Option<StrategyEntry>,
    pub sscore: Option<StrategyEntry>,
    pub expert: Option<StrategyEntry>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphInfo {
    pub name: String,
    pub source: String,
    pub nodes: usize,
    pub edges: usize,
    /// xxh3 of the adjacency and the node identifiers, hex.
    pub hash: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StrategyManifest {
    /// Questions with a partition under this strategy.
    pub questions: usize,
    pub kept: usize,
    /// Questions whose Ae/As could not be separated by edge removal.
    pub dropped: usize,
    pub removed_edges: usize,
    pub removed_file: String,
    pub rounds: usize,
    pub mean_existing: f64,
    pub mean_serendipity: f64,
    pub mean_rns: Option<f64>,
    pub paths: usize,
    pub questions_without_path: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScorerInfo {
    pub label: String,
    pub llm: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub graph: GraphInfo,
    pub seed: u64,
    pub requested: usize,
    pub questions: usize,
    pub per_pattern: BTreeMap<String, usize>,
    pub mean_answers: f64,
    pub test_fraction: f64,
    pub test_questions: usize,
    pub scorers: Vec<ScorerInfo>,
    /// What the `llm` partition's scorers are: `llm`, `offline proxy` (graph statistics, not
    /// language models) or `mixed` (absent in manifests written before it was recorded).
    #[serde(default)]
    pub ensemble: String,
    /// LLM scorings left out after invalid replies: question id, model, reason.
    #[serde(default)]
    pub ensemble_dropped: Vec<crate::partition::DroppedScorer>,
    pub rns_weights: [f64; 3],
    /// Where `rns_weights` came from (absent in manifests written before it was recorded).
    #[serde(default)]
    pub rns_weights_source: Option<serenqa_shared::rns::WeightsSource>,
    pub model: Option<String>,
    pub strategies: BTreeMap<String, StrategyManifest>,
    pub generation: Vec<GenReport>,
    pub notes: Vec<String>,
}

pub const MANIFEST_FORMAT: &str = "serenqa-benchmark";

/// The graph's content hash (see [`Graph::content_hash`]).
pub fn graph_hash(g: &Graph) -> String {
    g.content_hash()
}

fn commonness(g: &Graph, answers: &[NodeId]) -> f64 {
    if answers.is_empty() {
        return 0.0;
    }
    let mut sum = 0.0;
    for &a in answers {
        let t = g.node_type(a);
        let max = g
            .nodes_of_type(t)
            .iter()
            .map(|&n| g.degree(n))
            .max()
            .unwrap_or(1)
            .max(1);
        sum += ((1 + g.degree(a)) as f64).ln() / ((1 + max) as f64).ln();
    }
    // Rounded so the text form is short and stable.
    (sum / answers.len() as f64 * 1e4).round() / 1e4
}

pub fn kgqa_record(g: &Graph, q: &Question, cypher: String, split: &str) -> KgqaRecord {
    let answer = q
        .answers
        .iter()
        .map(|&a| AnswerEntry {
            answer_type: "Entity".into(),
            answer_argument: g.ident(a).to_string(),
            entity_name: g.name(a).to_string(),
        })
        .collect();
    let nodes = q
        .query
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match *n {
            QNode::Class(t) => GqNode {
                nid: i,
                node_type: "class".into(),
                id: g.type_label(t).to_string(),
                class: g.type_label(t).to_string(),
                friendly_name: g.type_display(t).to_string(),
                question_node: (i == 0) as u8,
                function: "none".into(),
            },
            QNode::Entity(e) => GqNode {
                nid: i,
                node_type: "entity".into(),
                id: g.ident(e).to_string(),
                class: g.type_label(g.node_type(e)).to_string(),
                friendly_name: g.name(e).to_string(),
                question_node: 0,
                function: "none".into(),
            },
        })
        .collect();
    let type_of = |i: usize| match q.query.nodes[i] {
        QNode::Class(t) => g.type_label(t).to_string(),
        QNode::Entity(e) => g.type_label(g.node_type(e)).to_string(),
    };
    let edges = q
        .query
        .edges
        .iter()
        .map(|e| GqEdge {
            start: e.start,
            end: e.end,
            relation: format!("{}.{}", type_of(e.start), type_of(e.end)),
            friendly_name: g.relation(e.rel).name.clone(),
        })
        .collect();
    KgqaRecord {
        qid: q.qid,
        question: q.text.clone(),
        answer,
        function: "none".into(),
        commonness: commonness(g, &q.answers),
        num_node: q.query.nodes.len(),
        num_edge: q.query.edges.len(),
        graph_query: GraphQuery { nodes, edges },
        pattern_type: q.pattern.code().into(),
        category: q.category.clone(),
        cypher,
        partition: split.into(),
    }
}

/// One JSON object per line.
pub fn to_jsonl<T: Serialize>(items: &[T]) -> Result<String, serde_json::Error> {
    let mut s = String::new();
    for it in items {
        s.push_str(&serde_json::to_string(it)?);
        s.push('\n');
    }
    Ok(s)
}

/// Parses JSONL, naming the line of the first bad record.
pub fn from_jsonl<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<Vec<T>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{what} line {}: {e}", i + 1)))
        .collect()
}
