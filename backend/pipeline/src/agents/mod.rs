//! The pipeline's agents behind traits: [`Retriever`] (T1 / Ask: question → Cypher →
//! answers), [`Explorer`] (T3 beam guidance: relations, nodes, continue), [`Summarizer`] (T2
//! hop summaries) and [`Judge`] (T2/T3 scores). Each has an offline implementation (no
//! model: [`OfflineRetriever`], [`OfflineExplorer`],
//! [`OfflineSummarizer`], [`ProxyJudge`]) and an LLM one ([`LlmRetriever`], [`LlmExplorer`],
//! [`LlmSummarizer`], [`LlmJudge`]) that holds a [`RoleModel`] (an `Arc<dyn ChatModel>` and
//! a model name).
//!
//! Which implementation plays each role is decided once, when [`Agents`] is built from the
//! run's [`Roles`] ([`Agents::from_roles`], or [`Agents::offline`] / [`Agents::llm`]); the
//! per-step code (`explore`, the run's item executor, Ask) only calls trait methods.
//!
//! # Layout
//! - `traits` — the four traits and what they exchange ([`LevelView`], [`LevelDecision`],
//!   [`Judgement`], [`JudgeInput`], [`Judged`]).
//! - `offline` — the offline implementations (adapters over [`crate::offline`]).
//! - `llm_retrieval`, `llm_explore`, `llm_judge` — the LLM implementations: prompts and reply
//!   parsing.
//!
//! Where to add a new agent: a type implementing the trait; a new role: a [`Role`] variant,
//! a field in [`Roles`] and [`Agents`], and a prompt template.

mod llm_explore;
mod llm_judge;
mod llm_retrieval;
mod offline;
mod traits;

use std::sync::Arc;

pub use crate::llm::{Role, RoleModel, Roles};
pub use llm_explore::{parse_continue, split_list, LlmExplorer, LlmSummarizer};
pub use llm_judge::LlmJudge;
pub use llm_retrieval::LlmRetriever;
pub use offline::{OfflineExplorer, OfflineSummarizer, ProxyJudge};
pub use traits::{
    Explorer, Judge, JudgeInput, Judged, Judgement, LevelDecision, LevelView, Retrieval, Retriever,
    Summarizer,
};

use crate::retrieval::OfflineRetriever;

/// The agents of an exploration: one per decision (the models file maps `relations`, `nodes`
/// and `continue` separately) and the summariser. The default is all offline.
#[derive(Clone)]
pub struct ExploreAgents {
    pub relations: Arc<dyn Explorer>,
    pub nodes: Arc<dyn Explorer>,
    pub cont: Arc<dyn Explorer>,
    pub summary: Arc<dyn Summarizer>,
}

impl Default for ExploreAgents {
    fn default() -> Self {
        ExploreAgents::offline()
    }
}

fn explorer(m: Option<&RoleModel>) -> Arc<dyn Explorer> {
    match m {
        Some(m) => Arc::new(LlmExplorer { model: m.clone() }),
        None => Arc::new(OfflineExplorer),
    }
}

impl ExploreAgents {
    pub fn offline() -> ExploreAgents {
        ExploreAgents {
            relations: Arc::new(OfflineExplorer),
            nodes: Arc::new(OfflineExplorer),
            cont: Arc::new(OfflineExplorer),
            summary: Arc::new(OfflineSummarizer),
        }
    }

    /// The model or offline agent of each exploration role of `roles`.
    pub fn from_roles(roles: &Roles) -> ExploreAgents {
        ExploreAgents {
            relations: explorer(roles.relations.as_ref()),
            nodes: explorer(roles.nodes.as_ref()),
            cont: explorer(roles.cont.as_ref()),
            summary: match &roles.summary {
                Some(m) => Arc::new(LlmSummarizer { model: m.clone() }),
                None => Arc::new(OfflineSummarizer),
            },
        }
    }

    /// Whether any decision reads the level descriptions (the offline explorer ignores them,
    /// so with and without summaries coincide).
    pub fn uses_context(&self) -> bool {
        self.relations.model().is_some()
            || self.nodes.model().is_some()
            || self.cont.model().is_some()
    }
}

/// Every agent of a run or an Ask, chosen once from the run settings.
#[derive(Clone)]
pub struct Agents {
    pub retriever: Arc<dyn Retriever>,
    pub explore: ExploreAgents,
    pub judge: Arc<dyn Judge>,
}

impl Agents {
    /// No model anywhere: `offline` retrieves (grammar, then question understanding).
    pub fn offline(offline: Arc<OfflineRetriever>) -> Agents {
        Agents::from_roles(&Roles::offline(), offline)
    }

    /// `model` plays every role.
    pub fn llm(model: RoleModel, offline: Arc<OfflineRetriever>) -> Agents {
        let some = Some(model);
        let roles = Roles {
            retrieval: some.clone(),
            relations: some.clone(),
            nodes: some.clone(),
            cont: some.clone(),
            summary: some.clone(),
            judge: some,
        };
        Agents::from_roles(&roles, offline)
    }

    /// The model of each role of `roles`, the offline agent where it has none; `offline`
    /// retrieves when no model does.
    pub fn from_roles(roles: &Roles, offline: Arc<OfflineRetriever>) -> Agents {
        Agents {
            retriever: match &roles.retrieval {
                Some(m) => Arc::new(LlmRetriever { model: m.clone() }),
                None => offline,
            },
            explore: ExploreAgents::from_roles(roles),
            judge: match &roles.judge {
                Some(m) => Arc::new(LlmJudge { model: m.clone() }),
                None => Arc::new(ProxyJudge),
            },
        }
    }
}
