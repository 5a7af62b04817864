//! The LLM judge: Faithfulness, Comprehensiveness (T2) and Relevance (T3) asked of a model
//! with the `judge_*` prompts; the reply's `Score: N` (1–5) is the score, a reply without one
//! scores 1 and is flagged.

use serenqa_graph::{Graph, NodeId};

use super::llm_explore::render_or_issue;
use super::traits::{Judge, JudgeInput, Judged, Judgement};
use crate::explore::Exploration;
use crate::llm::{BoxFuture, CallTrace, RoleModel};
use crate::metrics;

fn triples(g: &Graph, ex: &Exploration) -> String {
    ex.edges()
        .iter()
        .map(|s| {
            let (h, t) = if s.forward {
                (s.from, s.to)
            } else {
                (s.to, s.from)
            };
            format!(
                "{}({}),{},{}({})",
                g.ident(h),
                g.type_label(g.node_type(h)),
                g.relation(s.rel).name,
                g.ident(t),
                g.type_label(g.node_type(t))
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn typed_ids(g: &Graph, ns: &[NodeId]) -> String {
    ns.iter()
        .map(|&n| format!("{}({})", g.ident(n), g.type_label(g.node_type(n))))
        .collect::<Vec<_>>()
        .join(", ")
}

fn summary_n(ex: &Exploration, i: usize) -> String {
    ex.summaries.get(i).cloned().unwrap_or_default()
}

fn summary_vars(g: &Graph, question: &str, ex: &Exploration) -> Vec<(&'static str, String)> {
    vec![
        ("roots", typed_ids(g, &ex.roots)),
        ("question", question.to_string()),
        ("summary_1", summary_n(ex, 0)),
        ("summary_2", summary_n(ex, 1)),
        ("summary_3", summary_n(ex, 2)),
        ("leaves", typed_ids(g, &ex.leaves())),
        ("triples", triples(g, ex)),
    ]
}

fn vars(what: Judgement, i: &JudgeInput<'_>) -> Vec<(&'static str, String)> {
    match what {
        Judgement::Faithfulness | Judgement::Comprehensiveness => {
            summary_vars(i.g, i.question, i.ex)
        }
        Judgement::Relevance => vec![
            ("question", i.question.to_string()),
            ("gold", typed_ids(i.g, i.gold)),
            ("predicted", typed_ids(i.g, i.predicted)),
            ("roots", typed_ids(i.g, &i.ex.roots)),
            ("summary_1", summary_n(i.ex, 0)),
            ("summary_2", summary_n(i.ex, 1)),
            ("summary_3", summary_n(i.ex, 2)),
        ],
    }
}

/// A model judging.
#[derive(Clone)]
pub struct LlmJudge {
    pub model: RoleModel,
}

impl LlmJudge {
    async fn score(&self, what: Judgement, input: &JudgeInput<'_>) -> (Judged, Option<CallTrace>) {
        let template = what.template();
        let prompt = render_or_issue(template, &vars(what, input));
        let (mut t, _) = self.model.call(template, prompt).await;
        let score = t.reply.as_deref().and_then(metrics::parse_score);
        if score.is_none() {
            t.issues
                .push("no `Score: N` (1-5) in reply: scored 1".into());
        }
        let j = Judged {
            score: f64::from(score.unwrap_or(1)),
            judge: self.model.name.clone(),
            unparsable: score.is_none(),
        };
        (j, Some(t))
    }
}

impl Judge for LlmJudge {
    fn judge<'a>(
        &'a self,
        what: Judgement,
        input: &'a JudgeInput<'a>,
    ) -> BoxFuture<'a, (Judged, Option<CallTrace>)> {
        Box::pin(self.score(what, input))
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model.name)
    }
}
