//! The offline agents behind the agent traits: thin adapters over the rules in
//! [`crate::offline`] (grammar / understanding retrieval, statistics and RNS explorer,
//! template summariser, code-based proxy judges). No model, no network.

use std::collections::{BTreeMap, BTreeSet};

use serenqa_graph::{Graph, NodeId, RelId};

use super::traits::{
    Explorer, Judge, JudgeInput, Judged, Judgement, LevelDecision, LevelView, Retrieval, Retriever,
    Summarizer,
};
use crate::explore::Step;
use crate::llm::{BoxFuture, CallTrace};
use crate::offline::{explorer, judge as proxy, summary};
use crate::retrieval::OfflineRetriever;

impl Retriever for OfflineRetriever {
    fn retrieve<'a>(
        &'a self,
        g: &'a Graph,
        question: &'a str,
        _example: &'a str,
    ) -> BoxFuture<'a, Retrieval> {
        let (r, u) = OfflineRetriever::retrieve(self, g, question);
        Box::pin(std::future::ready((r, None, u)))
    }

    fn model(&self) -> Option<&str> {
        None
    }
}

/// The offline explorer ([`crate::offline::explorer`]): reachability of the answer types,
/// rarity and marginal RNS gain. It ignores the level descriptions.
#[derive(Clone, Copy, Debug, Default)]
pub struct OfflineExplorer;

impl Explorer for OfflineExplorer {
    fn relations<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        u: NodeId,
        rels: &'a BTreeMap<RelId, usize>,
    ) -> BoxFuture<'a, (Vec<RelId>, Option<CallTrace>)> {
        let chosen = explorer::select_relations(
            v.env,
            v.targets,
            u,
            rels,
            v.cfg.relations_per_node,
            v.remaining,
        );
        Box::pin(std::future::ready((chosen, None)))
    }

    fn nodes<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        cands: &'a [(Step, f64)],
    ) -> BoxFuture<'a, (Vec<NodeId>, Option<CallTrace>)> {
        let chosen = explorer::select_nodes(
            v.env,
            v.targets,
            &v.task.known(),
            &v.task.named,
            cands,
            v.cfg.beam_width,
            v.remaining,
        );
        Box::pin(std::future::ready((chosen, None)))
    }

    fn decide<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        next: &'a [NodeId],
    ) -> BoxFuture<'a, (LevelDecision, Option<CallTrace>)> {
        let d = LevelDecision {
            description: summary::describe_level(v.env.g, v.ex, v.level),
            go_on: explorer::should_continue(v.env, v.targets, next, v.remaining),
            // At the last level the offline "no" is the depth limit, not a decision about
            // the paths: that level is summarised.
            no_is_decision: v.remaining > 0,
        };
        Box::pin(std::future::ready((d, None)))
    }

    fn model(&self) -> Option<&str> {
        None
    }
}

/// The template summariser ([`crate::offline::summary`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct OfflineSummarizer;

impl Summarizer for OfflineSummarizer {
    fn summarize<'a>(&'a self, v: &'a LevelView<'a>) -> BoxFuture<'a, (String, Option<CallTrace>)> {
        let s = summary::summarize_level(v.env.g, v.ex, v.level);
        Box::pin(std::future::ready((s, None)))
    }

    fn model(&self) -> Option<&str> {
        None
    }
}

/// The code-based proxy judges ([`crate::offline::judge`]), labelled `proxy`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProxyJudge;

impl Judge for ProxyJudge {
    fn judge<'a>(
        &'a self,
        what: Judgement,
        input: &'a JudgeInput<'a>,
    ) -> BoxFuture<'a, (Judged, Option<CallTrace>)> {
        let (g, ex) = (input.g, input.ex);
        let score = match what {
            Judgement::Faithfulness => proxy::faithfulness(g, &ex.summaries, &ex.nodes()),
            Judgement::Comprehensiveness => {
                let explored: BTreeSet<NodeId> = ex
                    .nodes()
                    .into_iter()
                    .filter(|n| !ex.roots.contains(n))
                    .collect();
                proxy::comprehensiveness(g, &ex.summaries, &explored)
            }
            Judgement::Relevance => proxy::relevance(g, input.predicted, input.gold),
        };
        let j = Judged {
            score,
            judge: "proxy".into(),
            unparsable: false,
        };
        Box::pin(std::future::ready((j, None)))
    }

    fn model(&self) -> Option<&str> {
        None
    }
}
