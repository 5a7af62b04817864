//! The benchmark's LLM ensemble (the paper's B.1 scoring): a language model behind a
//! [`ChatModel`] (the pipeline's OpenAI-compatible client, or any other implementation) as a
//! `serenqa_benchmark::partition::Scorer` ([`Role::Ensemble`]).
//!
//! Each model is asked, per question, to score every correct answer 0–20 with the
//! `ensemble_score` prompt (`prompts/ensemble_score.txt`: the answers as one comma-separated
//! list, the reply as comma-separated integers in list order). The reply is validated by
//! `serenqa_benchmark::partition::parse_score_list` — exactly one integer per answer, each in
//! 0..=20, all distinct. An invalid reply (or a failed call) is retried up to
//! [`LlmScorer::retries`] times, each retry continuing the conversation with the model's
//! reply and what was wrong with it (so the retry is a new prompt, not a cache hit of the
//! old one); after that the model gives up on the question, and the builder drops it for that
//! question and records (question id, model, reason) in the benchmark manifest
//! (`ensemble_dropped`). The builder averages the remaining models and takes the top b.
//!
//! Lives here, not in the benchmark crate, because the pipeline depends on the benchmark (the
//! trait is the benchmark's; the client and prompts are the pipeline's).

use std::sync::Arc;

use serenqa_benchmark::partition::{parse_score_list, Scorer, ScoringRequest};

use crate::llm::{ChatModel, Message, ModelsFile, Role};
use crate::prompts;

/// One ensemble model.
pub struct LlmScorer {
    client: Arc<dyn ChatModel>,
    /// The declared model name (models file).
    model: String,
    /// The runtime the client's calls run on; `score` blocks on it, so it must be called from
    /// a thread outside that runtime (the builder's rayon workers are).
    rt: tokio::runtime::Handle,
    /// Further attempts after an invalid reply (default 2).
    pub retries: usize,
}

impl LlmScorer {
    pub fn new(client: Arc<dyn ChatModel>, model: &str, rt: tokio::runtime::Handle) -> LlmScorer {
        LlmScorer {
            client,
            model: model.to_string(),
            rt,
            retries: 2,
        }
    }
}

/// The answer list as the prompt shows it: names joined by ", " (a comma inside a name
/// becomes a space, so the list has exactly one item per answer).
pub fn answer_list(req: &ScoringRequest) -> String {
    req.candidates
        .iter()
        .map(|c| {
            if c.name.is_empty() {
                c.id.replace(',', " ")
            } else {
                c.name.replace(',', " ")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first messages of a scoring conversation.
pub fn scoring_messages(req: &ScoringRequest) -> Result<Vec<Message>, String> {
    prompts::render(
        Role::Ensemble.template(),
        &[
            ("question", req.question.clone()),
            ("answers", answer_list(req)),
        ],
    )
}

impl Scorer for LlmScorer {
    fn label(&self) -> String {
        format!("llm:{}", self.model)
    }
    fn is_llm(&self) -> bool {
        true
    }
    fn score(&self, req: &ScoringRequest) -> Result<Vec<f64>, String> {
        let n = req.candidates.len();
        let mut messages = scoring_messages(req)?;
        let attempts = self.retries + 1;
        let mut reason = String::new();
        for attempt in 1..=attempts {
            let (reply, why) = match self
                .rt
                .block_on(self.client.complete(&self.model, &messages))
            {
                Ok(r) => match parse_score_list(n, &r.text) {
                    Ok(v) => return Ok(v),
                    Err(e) => (r.text, e),
                },
                Err(e) => (String::new(), format!("the call failed: {e}")),
            };
            reason = why;
            if attempt < attempts {
                let shown: String = reply.chars().take(2000).collect();
                messages.push(Message {
                    role: "assistant".into(),
                    content: shown,
                });
                messages.push(Message::user(format!(
                    "That reply cannot be used: {reason}. Reply again with exactly {n} distinct integers from 0 to 20, separated by commas, one per answer in the order of the list, and nothing else."
                )));
            }
        }
        let shown: String = reason.chars().take(300).collect();
        Err(format!("{shown} (after {attempts} attempts)"))
    }
}

/// The ensemble of a models file: its `ensemble` list, else every declared model.
pub fn ensemble_models(file: &ModelsFile) -> Vec<String> {
    if file.ensemble.is_empty() {
        file.models.iter().map(|m| m.name.clone()).collect()
    } else {
        file.ensemble.clone()
    }
}

/// One scorer per ensemble model of `file`.
pub fn llm_scorers(
    file: &ModelsFile,
    client: Arc<dyn ChatModel>,
    rt: tokio::runtime::Handle,
) -> Vec<LlmScorer> {
    ensemble_models(file)
        .iter()
        .map(|m| LlmScorer::new(client.clone(), m, rt.clone()))
        .collect()
}
