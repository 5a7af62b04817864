//! T2 subgraph reasoning: the hop summaries Σ written during exploration, judged for
//! Faithfulness and Comprehensiveness (1–5, an LLM judge's `Score: N`, unparsable → 1; or the
//! offline proxies), and SerenCov computed in code (share of ground-truth serendipity paths
//! whose two end ids both appear in the summaries). T3's Relevance judge lives here too.

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId};

use crate::explore::{CallTrace, Exploration};
use crate::llm::{Message, RoleModel};
use crate::metrics;
use crate::offline::judge as proxy;
use crate::prompts;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub score: f64,
    /// Model name, or `proxy` for the offline code-based proxy.
    pub judge: String,
    pub unparsable: bool,
}

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

async fn judge_call(
    m: &RoleModel,
    template: &str,
    vars: &[(&str, String)],
    calls: &mut Vec<CallTrace>,
) -> Judged {
    let prompt: Vec<Message> = prompts::render(template, vars)
        .unwrap_or_else(|e| vec![Message::system(format!("prompt error: {e}"))]);
    let mut t = CallTrace {
        role: template.into(),
        model: m.name.clone(),
        ..Default::default()
    };
    let score = match m.client.chat(&m.name, &prompt).await {
        Ok(r) => {
            t.latency_ms = r.latency_ms;
            t.cached = r.cached;
            let s = metrics::parse_score(&r.text);
            t.reply = Some(r.text);
            s
        }
        Err(e) => {
            t.error = Some(e.to_string());
            None
        }
    };
    if score.is_none() {
        t.issues
            .push("no `Score: N` (1-5) in reply: scored 1".into());
    }
    t.prompt = prompt;
    calls.push(t);
    Judged {
        score: f64::from(score.unwrap_or(1)),
        judge: m.name.clone(),
        unparsable: score.is_none(),
    }
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

pub async fn faithfulness(
    g: &Graph,
    judge: Option<&RoleModel>,
    question: &str,
    ex: &Exploration,
    calls: &mut Vec<CallTrace>,
) -> Judged {
    match judge {
        None => Judged {
            score: proxy::faithfulness(g, &ex.summaries, &ex.nodes()),
            judge: "proxy".into(),
            unparsable: false,
        },
        Some(m) => {
            judge_call(
                m,
                "judge_faithfulness",
                &summary_vars(g, question, ex),
                calls,
            )
            .await
        }
    }
}

pub async fn comprehensiveness(
    g: &Graph,
    judge: Option<&RoleModel>,
    question: &str,
    ex: &Exploration,
    calls: &mut Vec<CallTrace>,
) -> Judged {
    match judge {
        None => {
            let explored = ex
                .nodes()
                .into_iter()
                .filter(|n| !ex.roots.contains(n))
                .collect();
            Judged {
                score: proxy::comprehensiveness(g, &ex.summaries, &explored),
                judge: "proxy".into(),
                unparsable: false,
            }
        }
        Some(m) => {
            judge_call(
                m,
                "judge_comprehensiveness",
                &summary_vars(g, question, ex),
                calls,
            )
            .await
        }
    }
}

pub async fn relevance(
    g: &Graph,
    judge: Option<&RoleModel>,
    question: &str,
    ex: &Exploration,
    predicted: &[NodeId],
    gold: &[NodeId],
    calls: &mut Vec<CallTrace>,
) -> Judged {
    match judge {
        None => Judged {
            score: proxy::relevance(g, predicted, gold),
            judge: "proxy".into(),
            unparsable: false,
        },
        Some(m) => {
            let vars = vec![
                ("question", question.to_string()),
                ("gold", typed_ids(g, gold)),
                ("predicted", typed_ids(g, predicted)),
                ("roots", typed_ids(g, &ex.roots)),
                ("summary_1", summary_n(ex, 0)),
                ("summary_2", summary_n(ex, 1)),
                ("summary_3", summary_n(ex, 2)),
            ];
            judge_call(m, "judge_relevance", &vars, calls).await
        }
    }
}

/// SerenCov of the summaries against ground-truth path ends.
pub fn seren_cov(ex: &Exploration, path_ends: &[(String, String)]) -> f64 {
    metrics::seren_cov(&ex.summaries.join("\n"), path_ends)
}
