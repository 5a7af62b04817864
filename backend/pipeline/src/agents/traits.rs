//! The agent interfaces. Each has an offline implementation (no model) and an LLM one
//! (holding a [`crate::llm::RoleModel`], i.e. an `Arc<dyn ChatModel>`); which one plays a
//! role is decided once, when [`super::Agents`] is built, never per step.
//!
//! Methods that may call a model return a [`BoxFuture`] so the traits work as `dyn` objects;
//! offline implementations return a ready future. Each returns the [`CallTrace`] of its model
//! call, if it made one; the caller appends it to the item's trace.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId, RelId, TypeId};
use serenqa_shared::api::Understood;

use crate::explore::{Env, Exploration, ExploreConfig, Step, Task};
use crate::llm::{BoxFuture, CallTrace};
use crate::retrieval::Retrieved;

/// What a retrieval returns: the executed query with its answers, the model call (if a model
/// retrieved), and what was understood of the question (offline retriever only).
pub type Retrieval = (Retrieved, Option<CallTrace>, Understood);

/// T1 / Ask retrieval: question → Cypher → answers.
pub trait Retriever: Send + Sync {
    /// `example` is a one-shot example for a model's prompt (the offline retriever ignores it).
    fn retrieve<'a>(
        &'a self,
        g: &'a Graph,
        question: &'a str,
        example: &'a str,
    ) -> BoxFuture<'a, Retrieval>;

    /// The model that retrieves (`None`: offline).
    fn model(&self) -> Option<&str>;
}

/// What a decision of the exploration sees at one level.
pub struct LevelView<'a> {
    pub env: &'a Env<'a>,
    pub task: &'a Task<'a>,
    pub cfg: &'a ExploreConfig,
    /// The exploration so far (this level's nodes included once they are selected).
    pub ex: &'a Exploration,
    /// The answer types (types of the roots).
    pub targets: &'a BTreeSet<TypeId>,
    pub level: usize,
    /// Levels left after this one.
    pub remaining: usize,
    /// Earlier levels' descriptions, one per line, or `(none)`.
    pub context: &'a str,
    /// The roots as one line (`id (name, Type); …`).
    pub roots: &'a str,
}

/// The continue agent's output for a level.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelDecision {
    /// The level's description (context for later levels).
    pub description: String,
    /// Go one level deeper.
    pub go_on: bool,
    /// A NO is a decision about the level's paths (Algorithm 3 then stops before summarising
    /// the level), not only the depth limit being reached.
    pub no_is_decision: bool,
}

/// T3 beam guidance (Algorithm 3's relation, node and continue decisions). Each decision may
/// be played by a different agent ([`super::ExploreAgents`]).
pub trait Explorer: Send + Sync {
    /// ≤ m relation types among `rels` (relation → edge count) at frontier node `u`.
    fn relations<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        u: NodeId,
        rels: &'a BTreeMap<RelId, usize>,
    ) -> BoxFuture<'a, (Vec<RelId>, Option<CallTrace>)>;

    /// ≤ n (beam width) targets among the scored candidate edges; never an explored node.
    fn nodes<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        cands: &'a [(Step, f64)],
    ) -> BoxFuture<'a, (Vec<NodeId>, Option<CallTrace>)>;

    /// Describes the level whose new nodes are `next` and decides whether to go on.
    fn decide<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        next: &'a [NodeId],
    ) -> BoxFuture<'a, (LevelDecision, Option<CallTrace>)>;

    /// The model that decides (`None`: offline).
    fn model(&self) -> Option<&str>;
}

/// T2: the summary of one hop level of the explored subgraph (Σ).
pub trait Summarizer: Send + Sync {
    fn summarize<'a>(&'a self, v: &'a LevelView<'a>) -> BoxFuture<'a, (String, Option<CallTrace>)>;

    /// The model that summarises (`None`: offline).
    fn model(&self) -> Option<&str>;
}

/// What is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// T2: the summaries state only facts of the explored subgraph.
    Faithfulness,
    /// T2: the summaries cover the explored subgraph.
    Comprehensiveness,
    /// T3: the predicted entities are relevant serendipitous answers.
    Relevance,
}

impl Judgement {
    /// The LLM judge's prompt template (also the trace's role name of its call).
    pub const fn template(self) -> &'static str {
        match self {
            Judgement::Faithfulness => "judge_faithfulness",
            Judgement::Comprehensiveness => "judge_comprehensiveness",
            Judgement::Relevance => "judge_relevance",
        }
    }
}

/// A judge's score.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub score: f64,
    /// Model name, or `proxy` for the offline code-based proxy.
    pub judge: String,
    pub unparsable: bool,
}

/// What a judge reads.
pub struct JudgeInput<'a> {
    /// The graph the explorer saw (G = Gc − R in a benchmark partition).
    pub g: &'a Graph,
    pub question: &'a str,
    pub ex: &'a Exploration,
    /// Relevance only: the predicted serendipity set and the gold one.
    pub predicted: &'a [NodeId],
    pub gold: &'a [NodeId],
}

/// T2/T3 judge: an LLM (`Score: N`, 1–5) or the offline code-based proxies.
pub trait Judge: Send + Sync {
    fn judge<'a>(
        &'a self,
        what: Judgement,
        input: &'a JudgeInput<'a>,
    ) -> BoxFuture<'a, (Judged, Option<CallTrace>)>;

    /// The judging model (`None`: the offline proxy).
    fn model(&self) -> Option<&str>;
}
