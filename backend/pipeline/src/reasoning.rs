//! T2 subgraph reasoning: the hop summaries Σ written during exploration, judged for
//! Faithfulness and Comprehensiveness (1–5, an LLM judge's `Score: N`, unparsable → 1; or the
//! offline proxies), and SerenCov computed in code (share of ground-truth serendipity paths
//! whose two end ids both appear in the summaries). T3's Relevance judge lives here too.
//!
//! The judge is a [`Judge`] chosen once per run (`crate::agents`); these functions append its
//! model call, if any, to the item's calls.

use serenqa_graph::{Graph, NodeId};

pub use crate::agents::Judged;
use crate::agents::{Judge, JudgeInput, Judgement};
use crate::explore::{CallTrace, Exploration};
use crate::metrics;

async fn judge_with(
    judge: &dyn Judge,
    what: Judgement,
    input: &JudgeInput<'_>,
    calls: &mut Vec<CallTrace>,
) -> Judged {
    let (j, call) = judge.judge(what, input).await;
    calls.extend(call);
    j
}

pub async fn faithfulness(
    g: &Graph,
    judge: &dyn Judge,
    question: &str,
    ex: &Exploration,
    calls: &mut Vec<CallTrace>,
) -> Judged {
    let input = JudgeInput {
        g,
        question,
        ex,
        predicted: &[],
        gold: &[],
    };
    judge_with(judge, Judgement::Faithfulness, &input, calls).await
}

pub async fn comprehensiveness(
    g: &Graph,
    judge: &dyn Judge,
    question: &str,
    ex: &Exploration,
    calls: &mut Vec<CallTrace>,
) -> Judged {
    let input = JudgeInput {
        g,
        question,
        ex,
        predicted: &[],
        gold: &[],
    };
    judge_with(judge, Judgement::Comprehensiveness, &input, calls).await
}

pub async fn relevance(
    g: &Graph,
    judge: &dyn Judge,
    question: &str,
    ex: &Exploration,
    predicted: &[NodeId],
    gold: &[NodeId],
    calls: &mut Vec<CallTrace>,
) -> Judged {
    let input = JudgeInput {
        g,
        question,
        ex,
        predicted,
        gold,
    };
    judge_with(judge, Judgement::Relevance, &input, calls).await
}

/// SerenCov of the summaries against ground-truth path ends.
pub fn seren_cov(ex: &Exploration, path_ends: &[(String, String)]) -> f64 {
    metrics::seren_cov(&ex.summaries.join("\n"), path_ends)
}
