//! One question of an evaluation run as a reviewer reads it (`GET /api/runs/{id}/trace/{qid}`):
//! [`QuestionTrace`] and its parts. Built by `serenqa_pipeline::trace::question_view`.

use serde::{Deserialize, Serialize};

/// An entity named in a question trace (an answer, a gold answer, a root or a leaf), with
/// whether it counts: a predicted answer that is gold, or a gold answer that was found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceEntity {
    /// Source identifier as the run recorded it (`DB00945`).
    pub id: String,
    /// Name in the server's graph; empty when the id is not in it (another graph).
    pub name: String,
    /// Node type (`Compound`); empty when unknown.
    pub kind: String,
    /// Predicted and gold (in a predicted list), or gold and found (in a gold list).
    pub hit: bool,
}

/// One metric of one question, on its own scale.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceMetric {
    /// `hit`, `f1`, `exe`, `faithfulness`, `comprehensiveness`, `seren_cov`, `relevance`,
    /// `type_match`, `seren_hit`.
    pub key: String,
    /// As the leaderboard heads it (`SerenHit`).
    pub label: String,
    pub value: f64,
    /// The best value the metric can take (1 for shares and 0/1 metrics, 5 for judge scores).
    pub max: f64,
    /// Who scored it: a model name, `proxy` (the offline code-based judge) or empty (computed).
    pub judge: String,
    /// What it measures, in one sentence.
    pub meaning: String,
}

/// One message of a prompt sent to a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// One model call of a question as the run recorded it: what was sent and what came back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceCall {
    /// The pipeline role (`retrieval`, `relations`, `nodes`, `continue`, `summary`, `judge`).
    pub role: String,
    pub model: String,
    pub prompt: Vec<TraceMessage>,
    /// The reply's text; none when the call failed.
    pub reply: Option<String>,
    /// Why the call failed (`connect`, `timeout`, `http`, `malformed`) and what was said, with
    /// endpoint URLs reduced to their host.
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub latency_ms: f64,
    /// Answered from the run's response cache.
    pub cached: bool,
    /// What was wrong with the reply (hallucinated ids, unparsable …).
    pub issues: Vec<String>,
}

/// T1 (knowledge retrieval) of one question: the query the agent wrote and what it returned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RetrievalTrace {
    /// Model name or `offline`.
    pub agent: String,
    pub cypher: Option<String>,
    pub executable: bool,
    pub error: Option<String>,
    /// Rows the query returned.
    pub rows: usize,
    /// Answers of the query, gold ones marked.
    pub predicted: Vec<TraceEntity>,
    /// The benchmark's answers, found ones marked.
    pub gold: Vec<TraceEntity>,
    pub metrics: Vec<TraceMetric>,
    /// Model latency of the call (0 offline or cached).
    pub latency_ms: f64,
    /// The model call's prompt and reply (none offline).
    #[serde(default)]
    pub model_calls: Vec<TraceCall>,
}

/// A node of the beam's exploration tree, in depth-first order (`parent` indexes this list).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceTreeNode {
    pub entity: TraceEntity,
    /// Index of the parent in the same list; none for a root.
    pub parent: Option<usize>,
    pub depth: usize,
    /// The relation from the parent (`TREATS_CtD`); empty for a root.
    pub relation: String,
    /// The edge points parent → this node (else this node → parent).
    pub forward: bool,
}

/// One beam level: how wide the frontier was and what the explorer kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceLevel {
    pub level: usize,
    pub frontier: usize,
    pub candidates: usize,
    pub selected: usize,
    /// No edge had a score: the explorer sampled uniformly.
    pub uniform_sampled: bool,
    /// The continue decision after this level.
    pub go_on: bool,
}

/// T2/T3 of one question under one partition and summary mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplorationTrace {
    /// The trace line's key (`t3:204:llm:with`), for the raw record.
    pub key: String,
    /// Partition key (`llm`, `expert`, `sscore`) and its title.
    pub partition: String,
    pub partition_title: String,
    /// Level summaries were passed on as context.
    pub with_summaries: bool,
    /// Where the beam started (the question's explicit answers).
    pub roots: Vec<TraceEntity>,
    /// Where it ended, gold ones marked.
    pub leaves: Vec<TraceEntity>,
    /// The partition's serendipity set, reached ones marked.
    pub gold: Vec<TraceEntity>,
    pub metrics: Vec<TraceMetric>,
    pub tree: Vec<TraceTreeNode>,
    pub levels: Vec<TraceLevel>,
    pub summaries: Vec<String>,
    /// Model calls of this exploration (explorer and judges).
    pub calls: usize,
    /// Those calls' prompts and replies, in the order they were made.
    #[serde(default)]
    pub model_calls: Vec<TraceCall>,
    pub error: Option<String>,
}

/// A work item of the question whose model call failed: not a result, not scored; resuming
/// the run retries it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceFailure {
    /// The item's trace key (`t1:204`, `t3:204:llm:with`).
    pub key: String,
    /// The table cell it would have counted in (`Knowledge retrieval (T1)`, `LLM Ensemble ·
    /// with summaries`).
    pub cell: String,
    /// `connect`, `timeout`, `http` or `malformed`.
    pub error_kind: String,
    /// What the failed call said, endpoint URLs reduced to their host.
    pub error: String,
    /// The role of the first failed call.
    pub role: String,
    pub failed_calls: usize,
    pub calls: usize,
}

/// `GET /api/runs/{id}/trace/{qid}`: one question of a run as a reviewer reads it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuestionTrace {
    pub run_id: String,
    /// The run's settings (the leaderboard's label).
    pub settings: crate::results::RunSettings,
    pub qid: u32,
    pub pattern: String,
    pub question: String,
    pub retrieval: Option<RetrievalTrace>,
    pub explorations: Vec<ExplorationTrace>,
    /// The question's items whose model call failed (not scored).
    #[serde(default)]
    pub failed: Vec<TraceFailure>,
    /// The run's neighbouring questions, for stepping through it.
    pub prev_qid: Option<u32>,
    pub next_qid: Option<u32>,
    /// The run's trace graph differs from the server's: names may be missing.
    pub other_graph: bool,
}
