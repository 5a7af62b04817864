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

#[cfg(test)]
mod tests {
    use std::task::{Context, Poll, Waker};

    use super::*;
    use crate::explore::Exploration;
    use crate::llm::{BoxFuture, ChatModel, LlmError, Message, Reply, ROLES};

    /// A provider that is not the OpenAI-compatible client: one `impl ChatModel`. Replies
    /// `text`, or fails when it is empty.
    struct Canned(&'static str);

    impl ChatModel for Canned {
        fn complete<'a>(
            &'a self,
            model: &'a str,
            _messages: &'a [Message],
        ) -> BoxFuture<'a, Result<Reply, LlmError>> {
            let r = if self.0.is_empty() {
                Err(LlmError::Connect {
                    model: model.into(),
                    message: "down".into(),
                })
            } else {
                Ok(Reply {
                    text: self.0.into(),
                    cached: false,
                    prompt_tokens: 1,
                    completion_tokens: 1,
                    latency_ms: 2.0,
                    attempts: 1,
                    truncated: false,
                })
            };
            Box::pin(std::future::ready(r))
        }
    }

    /// Every future here is ready at once (no I/O): poll it once.
    fn now<T>(mut f: BoxFuture<'_, T>) -> T {
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(t) => t,
            Poll::Pending => panic!("the canned model never waits"),
        }
    }

    fn judge_with(reply: &'static str) -> LlmJudge {
        LlmJudge {
            model: RoleModel {
                client: Arc::new(Canned(reply)),
                name: "canned".into(),
            },
        }
    }

    #[test]
    fn any_chat_model_plays_the_judge_and_offline_is_the_proxy() {
        let g = serenqa_graph::GraphBuilder::default().build();
        let ex = Exploration::default();
        let input = JudgeInput {
            g: &g,
            question: "q",
            ex: &ex,
            predicted: &[],
            gold: &[],
        };
        let (j, call) = now(judge_with("Fine.\nScore: 4").judge(Judgement::Relevance, &input));
        assert_eq!(
            (j.score, j.judge.as_str(), j.unparsable),
            (4.0, "canned", false)
        );
        let call = call.expect("a model call is traced");
        assert_eq!(call.role, "judge_relevance");
        assert_eq!(call.reply.as_deref(), Some("Fine.\nScore: 4"));
        assert!(call.issues.is_empty());

        let (j, call) = now(judge_with("").judge(Judgement::Faithfulness, &input));
        assert_eq!((j.score, j.unparsable), (1.0, true));
        let call = call.expect("a failed call is traced too");
        assert!(call.error.is_some() && call.reply.is_none());
        assert_eq!(call.issues.len(), 1);

        let (j, call) = now(ProxyJudge.judge(Judgement::Comprehensiveness, &input));
        assert_eq!((j.judge.as_str(), call.is_none()), ("proxy", true));
        assert!(ProxyJudge.model().is_none());
        assert_eq!(judge_with("x").model(), Some("canned"));
    }

    #[test]
    fn roles_name_models_file_keys_and_templates() {
        let names: Vec<&str> = Role::MAPPED.iter().map(|r| r.as_str()).collect();
        assert_eq!(names, ROLES);
        for r in Role::MAPPED.iter().filter(|&&r| r != Role::Judge) {
            assert!(crate::prompts::template(r.template()).is_ok(), "{r}");
        }
        for j in [
            Judgement::Faithfulness,
            Judgement::Comprehensiveness,
            Judgement::Relevance,
        ] {
            assert!(crate::prompts::template(j.template()).is_ok());
        }
        assert!(crate::prompts::template(Role::Ensemble.template()).is_ok());
        let labels = Roles::offline().labels();
        assert_eq!(labels.len(), 6);
        assert!(labels.values().all(|v| v == "offline"));
        assert!(!ExploreAgents::offline().uses_context());
    }
}
