//! The per-item executor of an evaluation run: what one work item is ([`Item`]: T1 of a
//! question, or T2+T3 of a question under one partition and summary mode), the shared inputs
//! of all items of a run ([`Ctx`], with G = Gc − R per partition as a [`PartitionView`]), and
//! running one item into its trace line ([`run_item`], [`error_item`]).
//!
//! Both executors call [`run_item`]: the local one ([`crate::run::run_eval`]) and the queue
//! workers ([`crate::queue`]), so a queue run's traces equal a local run's. The records it
//! produces are [`crate::trace`]'s; nothing here reads or writes the runs directory.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serenqa_benchmark::query::EdgeMask;
use serenqa_graph::{Graph, NodeId};
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;

use crate::agents::Agents;
use crate::bench::{self, path_ends, resolve_ids, Benchmark};
use crate::explore::{self, path_line, Env, ExploreConfig, TypeStats};
use crate::failures::{t1_failure, t3_failure, FailedItem};
use crate::llm::Roles;
use crate::metrics;
use crate::reasoning;
use crate::retrieval::OfflineRetriever;
use crate::retrieval::{self, Retrieved};
use crate::trace::{T1Record, T2Scores, T3Record, T3Scores, TraceKind};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaskKind {
    T1,
    T2,
    T3,
}

/// Parses `t1,t2,t3`.
pub fn parse_tasks(s: &str) -> Result<BTreeSet<TaskKind>, String> {
    let mut out = BTreeSet::new();
    for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        out.insert(match t.to_ascii_lowercase().as_str() {
            "t1" => TaskKind::T1,
            "t2" => TaskKind::T2,
            "t3" => TaskKind::T3,
            _ => return Err(format!("unknown task {t:?} (tasks: t1, t2, t3)")),
        });
    }
    if out.is_empty() {
        return Err("no task given".into());
    }
    Ok(out)
}

/// Shared, immutable inputs of all work items of one run: what [`run_item`] reads. Built
/// once per run by [`crate::run::run_eval`] (local) or per run spec by a queue worker ([`crate::queue`]).
pub struct Ctx {
    g: Arc<Graph>,
    model: Option<Arc<Model>>,
    bench: Arc<Benchmark>,
    stats: Arc<TypeStats>,
    blocks: Arc<BlockCache>,
    /// A remote edge store for T3 (None: the in-memory graph).
    remote_edges: Option<Arc<dyn serenqa_edges::EdgeSource>>,
    /// The agents of the run, chosen once from the roles.
    agents: Agents,
    explore: ExploreConfig,
    t1_example: String,
    examples: BTreeMap<String, String>,
    want_t2: bool,
    want_t3: bool,
    /// qid → index into `bench.kgqa`.
    by_qid: BTreeMap<u32, usize>,
    /// Per partition with a removed set: what its explorations compute on (G = Gc − R).
    views: BTreeMap<String, PartitionView>,
}

/// G = Gc − R of one partition as a graph of its own (same node ids), with the model, the
/// type statistics and the P3 block cache computed on it: what T3 may read, so that no number
/// an explorer sees comes from the removed edges. Built once per run (Hetionet: ~3 s each).
pub struct PartitionView {
    pub g: Arc<Graph>,
    pub model: Option<Arc<Model>>,
    pub stats: Arc<TypeStats>,
    pub blocks: Arc<BlockCache>,
}

impl PartitionView {
    pub fn new(gc: &Graph, removed: &EdgeMask, model: Option<&Model>) -> PartitionView {
        let g = serenqa_graph::filter::without_edges(gc, &|e| removed.contains(e));
        let model = model.map(|m| Arc::new(Model::compute(&g, &m.params.config(), false)));
        PartitionView {
            stats: Arc::new(TypeStats::new(&g)),
            blocks: Arc::new(BlockCache::new(256)),
            g: Arc::new(g),
            model,
        }
    }
}

impl Ctx {
    /// The context of a run over `bench` with `roles` playing the agents.
    pub fn new(
        g: Arc<Graph>,
        model: Option<Arc<Model>>,
        bench: Arc<Benchmark>,
        roles: Roles,
        explore: ExploreConfig,
        partitions: &[String],
        tasks: &BTreeSet<TaskKind>,
    ) -> Ctx {
        let examples: BTreeMap<String, String> = partitions
            .iter()
            .map(|p| (p.clone(), example_text(&bench, p)))
            .collect();
        let t1_example = bench
            .kgqa
            .iter()
            .find(|r| r.partition == "train")
            .map(|r| format!("Question: {}\n```cypher\n{}\n```", r.question, r.cypher))
            .unwrap_or_default();
        let explores = tasks.contains(&TaskKind::T2) || tasks.contains(&TaskKind::T3);
        let views = if explores {
            partitions
                .iter()
                .filter_map(|p| {
                    bench
                        .removed
                        .get(p)
                        .map(|r| (p.clone(), PartitionView::new(&g, r, model.as_deref())))
                })
                .collect()
        } else {
            BTreeMap::new()
        };
        Ctx {
            agents: Agents::from_roles(&roles, Arc::new(OfflineRetriever::from_data(&g))),
            stats: Arc::new(TypeStats::new(&g)),
            blocks: Arc::new(BlockCache::new(256)),
            by_qid: bench
                .kgqa
                .iter()
                .enumerate()
                .map(|(i, r)| (r.qid, i))
                .collect(),
            g,
            model,
            bench,
            explore,
            t1_example,
            examples,
            want_t2: tasks.contains(&TaskKind::T2),
            want_t3: tasks.contains(&TaskKind::T3),
            remote_edges: None,
            views,
        }
    }

    pub fn bench(&self) -> &Benchmark {
        &self.bench
    }

    /// T3 reads edges from `edges` (a Redis edge store) instead of the in-memory graph.
    pub fn with_edges(mut self, edges: Option<Arc<dyn serenqa_edges::EdgeSource>>) -> Ctx {
        self.remote_edges = edges;
        self
    }
}

/// One work item: T1 of a question, or T2+T3 of a (question, partition, summary mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// Index into `bench.kgqa`.
    T1(usize),
    T3 {
        rec: usize,
        partition: String,
        with_summaries: bool,
    },
}

impl Item {
    /// The item's trace key: `t1:<qid>` or `t3:<qid>:<partition>:<with|without>`.
    pub fn key(&self, b: &Benchmark) -> String {
        match self {
            Item::T1(i) => format!("t1:{}", b.kgqa[*i].qid),
            Item::T3 {
                rec,
                partition,
                with_summaries,
            } => format!(
                "t3:{}:{partition}:{}",
                b.kgqa[*rec].qid,
                if *with_summaries { "with" } else { "without" }
            ),
        }
    }

    /// The item of a trace key in this run's benchmark.
    pub fn parse(key: &str, ctx: &Ctx) -> Result<Item, String> {
        let bad = || format!("bad work item key {key:?}");
        let parts: Vec<&str> = key.split(':').collect();
        let qid: u32 = parts.get(1).and_then(|q| q.parse().ok()).ok_or_else(bad)?;
        let rec = *ctx
            .by_qid
            .get(&qid)
            .ok_or_else(|| format!("work item {key:?}: question {qid} is not in the benchmark"))?;
        match parts.as_slice() {
            ["t1", _] => Ok(Item::T1(rec)),
            ["t3", _, p, m]
                if bench::PARTITIONS.iter().any(|(k, _)| k == p)
                    && (*m == "with" || *m == "without") =>
            {
                Ok(Item::T3 {
                    rec,
                    partition: p.to_string(),
                    with_summaries: *m == "with",
                })
            }
            _ => Err(bad()),
        }
    }
}

/// A finished work item: its trace line (one JSON object, no newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemResult {
    pub kind: TraceKind,
    pub key: String,
    pub line: String,
    /// Some when one of the item's model calls failed: then `line` is not a result (the local
    /// executor writes this to `failed.jsonl` instead of the trace, see [`crate::failures`]).
    pub failed: Option<FailedItem>,
}

/// Why [`run_item`] produced no record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemError {
    /// The edge store failed (Redis down): not a result; the item is to be redone.
    Unavailable(String),
    /// The record could not be serialised.
    Record(String),
}

impl std::fmt::Display for ItemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemError::Unavailable(m) | ItemError::Record(m) => f.write_str(m),
        }
    }
}

/// Runs one work item. Every problem of the question or the model's answer is inside the
/// record (`error`, `issues`), as in the paper; a failed model call also sets the result's
/// `failed` (not a result: see [`crate::failures`]); `Err` is for what is not a result
/// either (see [`ItemError`]).
pub async fn run_item(ctx: &Ctx, item: &Item) -> Result<ItemResult, ItemError> {
    match item {
        Item::T1(i) => {
            let rec = run_t1(ctx, *i).await;
            Ok(ItemResult {
                kind: TraceKind::T1,
                line: serde_json::to_string(&rec).map_err(|e| ItemError::Record(e.to_string()))?,
                failed: t1_failure(&rec),
                key: rec.key,
            })
        }
        Item::T3 {
            rec,
            partition,
            with_summaries,
        } => {
            let r = run_t3(ctx, *rec, partition, *with_summaries)
                .await
                .map_err(ItemError::Unavailable)?;
            Ok(ItemResult {
                kind: TraceKind::T3,
                line: serde_json::to_string(&r).map_err(|e| ItemError::Record(e.to_string()))?,
                failed: t3_failure(&r),
                key: r.key,
            })
        }
    }
}

/// The record of an item that could not be run (e.g. a task that crashed every worker it was
/// given to): the question's fields and `error`; it counts as non-executable (T1) or is left
/// out of the means like any T3 record with an error.
pub fn error_item(ctx: &Ctx, item: &Item, msg: &str) -> Result<ItemResult, String> {
    let key = item.key(&ctx.bench);
    match item {
        Item::T1(i) => {
            let r = &ctx.bench.kgqa[*i];
            let rec = T1Record {
                key: key.clone(),
                qid: r.qid,
                pattern: r.pattern_type.clone(),
                group: bench::pattern_group(&r.pattern_type).to_string(),
                question: r.question.clone(),
                agent: ctx.agents.retriever.model().unwrap_or("offline").into(),
                gold: r.answer.iter().map(|a| a.answer_argument.clone()).collect(),
                retrieved: Retrieved {
                    error: Some(msg.to_string()),
                    ..Default::default()
                },
                ..Default::default()
            };
            Ok(ItemResult {
                kind: TraceKind::T1,
                key,
                line: serde_json::to_string(&rec).map_err(|e| e.to_string())?,
                failed: None,
            })
        }
        Item::T3 {
            rec,
            partition,
            with_summaries,
        } => {
            let r = &ctx.bench.kgqa[*rec];
            let t = T3Record {
                key: key.clone(),
                qid: r.qid,
                pattern: r.pattern_type.clone(),
                partition: partition.clone(),
                mode: if *with_summaries { "with" } else { "without" }.into(),
                question: r.question.clone(),
                error: Some(msg.to_string()),
                ..Default::default()
            };
            Ok(ItemResult {
                kind: TraceKind::T3,
                key,
                line: serde_json::to_string(&t).map_err(|e| e.to_string())?,
                failed: None,
            })
        }
    }
}

/// One-shot guidance text for a partition: a training question and its paths.
fn example_text(b: &Benchmark, partition: &str) -> String {
    match b.one_shot(partition) {
        Some((r, e)) => format!(
            "Question: {}\nRoots: {}\nSerendipity set: {}\nPaths:\n{}",
            r.question,
            e.exact_matches.list.join(", "),
            e.serendipity_set.list.join(", "),
            e.explore_queries
                .paths
                .iter()
                .take(6)
                .map(|p| format!("- {p}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        None => "(no example available)".into(),
    }
}

async fn run_t1(ctx: &Ctx, i: usize) -> T1Record {
    let r = &ctx.bench.kgqa[i];
    let gold: Vec<String> = r.answer.iter().map(|a| a.answer_argument.clone()).collect();
    let (retrieved, call, _) = ctx
        .agents
        .retriever
        .retrieve(&ctx.g, &r.question, &ctx.t1_example)
        .await;
    let (hit, f1) = retrieval::score(&gold, &retrieved);
    T1Record {
        key: format!("t1:{}", r.qid),
        qid: r.qid,
        pattern: r.pattern_type.clone(),
        group: bench::pattern_group(&r.pattern_type).to_string(),
        question: r.question.clone(),
        agent: ctx.agents.retriever.model().unwrap_or("offline").into(),
        gold,
        retrieved,
        hit,
        f1,
        call,
    }
}

/// The entities a record's question names (its pattern's entity nodes), resolved in `g`: Ae's
/// anchors when the explorer scores candidates, as in the builder's RNS-guided partition.
fn named_entities(g: &Graph, r: &serenqa_benchmark::records::KgqaRecord) -> Vec<NodeId> {
    let mut out = Vec::new();
    for n in r
        .graph_query
        .nodes
        .iter()
        .filter(|n| n.node_type == "entity")
    {
        for x in resolve_ids(g, std::slice::from_ref(&n.id), Some(&n.class)) {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

/// The answer type label of a record (its question node's class).
fn answer_type(r: &serenqa_benchmark::records::KgqaRecord) -> Option<String> {
    r.graph_query
        .nodes
        .iter()
        .find(|n| n.question_node == 1)
        .map(|n| n.class.clone())
}

/// One exploration record. `Err` is an infrastructure failure (the edge store is unreachable):
/// not a result, the item stays to be redone.
async fn run_t3(
    ctx: &Ctx,
    i: usize,
    partition: &str,
    with_summaries: bool,
) -> Result<T3Record, String> {
    let g = &*ctx.g;
    let r = &ctx.bench.kgqa[i];
    let mode = if with_summaries { "with" } else { "without" };
    let mut rec = T3Record {
        key: format!("t3:{}:{partition}:{mode}", r.qid),
        qid: r.qid,
        pattern: r.pattern_type.clone(),
        partition: partition.to_string(),
        mode: mode.into(),
        question: r.question.clone(),
        ..Default::default()
    };
    let Some(entry) = ctx.bench.entry(r.qid, partition) else {
        rec.error = Some("no partition entry".into());
        return Ok(rec);
    };
    let ty = answer_type(r);
    let roots = resolve_ids(g, &entry.exact_matches.list, ty.as_deref());
    let gold = resolve_ids(g, &entry.serendipity_set.list, ty.as_deref());
    rec.roots = roots.iter().map(|&n| g.ident(n).to_string()).collect();
    rec.gold = gold.iter().map(|&n| g.ident(n).to_string()).collect();
    rec.gold_paths = entry.explore_queries.paths.clone();
    if roots.is_empty() || gold.is_empty() {
        rec.error = Some("roots or gold set do not resolve in this graph".into());
        return Ok(rec);
    }
    let memory = serenqa_edges::MemoryEdges::new(g);
    let edges: &dyn serenqa_edges::EdgeSource = match &ctx.remote_edges {
        Some(r) => r.as_ref(),
        None => &memory,
    };
    let weights = serenqa_model::weights::shipped().weights;
    let env = match ctx.views.get(partition) {
        Some(v) => Env {
            g,
            edges,
            removed: ctx.bench.removed.get(partition),
            walk: &v.g,
            model: v.model.as_deref(),
            blocks: &v.blocks,
            stats: &v.stats,
            weights,
        },
        None => Env {
            g,
            edges,
            removed: None,
            walk: g,
            model: ctx.model.as_deref(),
            blocks: &ctx.blocks,
            stats: &ctx.stats,
            weights,
        },
    };
    let mut cfg = ctx.explore.clone();
    cfg.use_summaries = with_summaries;
    let example = ctx.examples.get(partition).cloned().unwrap_or_default();
    let task = explore::Task {
        question: &r.question,
        roots,
        named: named_entities(g, r),
        example,
    };
    let ex = explore::explore(&env, &ctx.agents.explore, &cfg, &task).await?;
    let leaves = ex.leaves();
    let mut calls = ex.calls.clone();
    rec.levels = ex.levels.clone();
    rec.paths = ex
        .order
        .iter()
        .filter_map(|n| ex.paths.get(n))
        .filter(|p| !p.is_empty())
        .map(|p| path_line(g, p))
        .collect();
    rec.leaves = leaves.iter().map(|&n| g.ident(n).to_string()).collect();
    rec.leaf_types = leaves
        .iter()
        .map(|&n| g.type_label(g.node_type(n)).to_string())
        .collect();
    rec.summaries = ex.summaries.clone();
    let judge = ctx.agents.judge.as_ref();
    if with_summaries && ctx.want_t2 {
        let ends: Vec<(String, String)> =
            rec.gold_paths.iter().filter_map(|p| path_ends(p)).collect();
        let f = reasoning::faithfulness(g, judge, &r.question, &ex, &mut calls).await;
        let c = reasoning::comprehensiveness(g, judge, &r.question, &ex, &mut calls).await;
        rec.t2 = Some(T2Scores {
            faithfulness: f,
            comprehensiveness: c,
            seren_cov: reasoning::seren_cov(&ex, &ends),
        });
    }
    if ctx.want_t3 {
        let gold_types: BTreeSet<String> = gold
            .iter()
            .map(|&n| g.type_label(g.node_type(n)).to_string())
            .collect();
        let gold_ids: BTreeSet<String> = rec.gold.iter().cloned().collect();
        // The proxy judge reads the graph the explorer saw.
        let rel = reasoning::relevance(
            env.walk,
            judge,
            &r.question,
            &ex,
            &leaves,
            &gold,
            &mut calls,
        )
        .await;
        rec.t3 = Some(T3Scores {
            relevance: rel,
            type_match: metrics::type_match(&rec.leaf_types, &gold_types),
            seren_hit: metrics::seren_hit(&rec.leaves, &gold_ids),
        });
    }
    rec.calls = calls;
    Ok(rec)
}
