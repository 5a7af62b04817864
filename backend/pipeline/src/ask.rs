//! Ask one question: retrieval (question → Cypher → existing answers), serendipity
//! exploration from those answers on the full graph, hop summaries, and the serendipitous
//! candidates (explored entities of the answers' type that are not answers) ranked by
//! RNS(Ae, {c}) with R, N, S and their explanation paths. The CLI (`serenqa ask`) and the web
//! app (`POST /api/ask`, and `GET /api/ask/stream`, which sends each stage as it completes) call
//! [`ask`] / [`ask_with_progress`]; stage timings are reported with the result.
//!
//! Dropping the future of [`ask`] / [`ask_with_progress`] cancels the Ask at its next
//! await point (between stages, between model calls, or during one, whose HTTP request is
//! dropped with it). The server drops them at its Ask deadline and when the client goes away;
//! it also applies [`redact`] so that clients never read endpoint URLs or provider replies.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serenqa_edges::{EdgeSource, MemoryEdges};
use serenqa_graph::view::node_view;
use serenqa_graph::{Graph, NodeId};
use serenqa_model::discover::{known_for, KNOWN_FOR_SHOWN};
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;
use serenqa_shared::api::PathView;

use crate::agents::Agents;
use crate::explore::{self, Env, ExploreConfig, Step, TypeStats};
use crate::llm::{self, ChatModel, ModelsFile, Roles};
use crate::offline::explorer::rns_gains_terms;
use crate::retrieval::OfflineRetriever;
use serenqa_shared::rns::WeightsInForce;

/// Everything `ask` needs, built once (the server keeps one).
#[derive(Clone)]
pub struct AskContext {
    pub g: Arc<Graph>,
    pub model: Option<Arc<Model>>,
    /// The offline retriever (benchmark grammar, then question understanding).
    pub lex: Arc<OfflineRetriever>,
    pub stats: Arc<TypeStats>,
    pub blocks: Arc<BlockCache>,
    pub models: ModelsFile,
    pub client: Option<Arc<dyn ChatModel>>,
    /// Where exploration reads edges: `None` is the in-memory graph; a Redis edge store
    /// (`serenqa edges export`) gives identical results (serenqa-edges' invariant).
    pub edges: Option<Arc<dyn EdgeSource>>,
    /// RNS weights exploration ranks candidates with (default: the shipped fitted weights);
    /// recorded in every reply.
    pub weights: WeightsInForce,
}

impl AskContext {
    pub fn new(
        g: Arc<Graph>,
        model: Option<Arc<Model>>,
        models: ModelsFile,
        cache: Option<PathBuf>,
    ) -> Result<AskContext, String> {
        let client = llm::connect(&models, cache)?;
        Ok(AskContext {
            lex: Arc::new(OfflineRetriever::from_data(&g)),
            stats: Arc::new(TypeStats::new(&g)),
            blocks: Arc::new(BlockCache::new(64)),
            g,
            model,
            models,
            client,
            edges: None,
            weights: serenqa_model::weights::shipped(),
        })
    }

    /// Rank candidates with these weights (e.g. an expert calibration in force).
    pub fn with_weights(mut self, weights: WeightsInForce) -> AskContext {
        self.weights = weights;
        self
    }

    /// Explore on this edge store instead of the in-memory graph.
    pub fn with_edges(mut self, edges: Option<Arc<dyn EdgeSource>>) -> AskContext {
        self.edges = edges;
        self
    }
}

// The request and reply shapes are shared with the browser (serenqa_shared::api).
pub use serenqa_shared::api::{AskCandidate as Candidate, AskRequest, AskResponse, Stage};

/// A walked path as the API shows it (the one rule: `serenqa_graph::view::path_view`).
fn path_view(g: &Graph, p: &[Step]) -> PathView {
    use serenqa_graph::paths::{Path, Step as PathStep};
    let path = Path {
        nodes: p
            .first()
            .map(|f| f.from)
            .into_iter()
            .chain(p.iter().map(|s| s.to))
            .collect(),
        steps: p
            .iter()
            .map(|s| PathStep {
                edge: s.edge,
                rel: s.rel,
                forward: s.forward,
            })
            .collect(),
    };
    serenqa_graph::view::path_view(g, &path)
}

/// Why [`ask`] gave no result.
#[derive(Debug, Clone, PartialEq)]
pub enum AskError {
    /// The request itself: empty or overlong question, unknown model.
    BadQuestion(String),
    /// Something the server depends on: the edge store (Redis down, store of another graph).
    Unavailable(String),
}

impl AskError {
    pub fn code(&self) -> &'static str {
        match self {
            AskError::BadQuestion(_) => "bad_question",
            AskError::Unavailable(_) => "edge_store_unavailable",
        }
    }
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::BadQuestion(m) | AskError::Unavailable(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for AskError {}

/// Runs the pipeline for one free-text question.
pub async fn ask(ctx: &AskContext, req: &AskRequest) -> Result<AskResponse, AskError> {
    ask_with_progress(ctx, req, |_| {}).await
}

/// [`ask`], calling `on_stage` as each stage completes (the web app streams these).
pub async fn ask_with_progress(
    ctx: &AskContext,
    req: &AskRequest,
    mut on_stage: impl FnMut(&Stage) + Send,
) -> Result<AskResponse, AskError> {
    let question = req.question.trim();
    if question.is_empty() {
        return Err(AskError::BadQuestion("empty question".into()));
    }
    if question.chars().count() > 2000 {
        return Err(AskError::BadQuestion(
            "question longer than 2000 characters".into(),
        ));
    }
    let models = match &req.model {
        Some(m) => ctx.models.all_roles(m).map_err(AskError::BadQuestion)?,
        None => ctx.models.clone(),
    };
    let roles = Roles::with_model(&models, ctx.client.clone());
    // The agents of this Ask, chosen once: the per-stage code below only calls them.
    let agents = Agents::from_roles(&roles, ctx.lex.clone());
    let g = &*ctx.g;
    // The weights in force, on every reply (also one that stops before ranking anything).
    let mut out = AskResponse {
        question: question.to_string(),
        agents: roles.labels(),
        weights: ctx.weights.clone(),
        ..Default::default()
    };
    let mut clock = Instant::now();
    let mut lap = |name: &str, stages: &mut Vec<Stage>| {
        let stage = Stage {
            name: name.into(),
            ms: clock.elapsed().as_secs_f64() * 1000.0,
        };
        on_stage(&stage);
        stages.push(stage);
        clock = Instant::now();
    };

    let (r, call, understood) = agents.retriever.retrieve(g, question, "").await;
    out.understood = understood;
    if let Some(c) = &call {
        if let Some(e) = &c.error {
            out.notes.push(format!("retrieval{MODEL_NOTE}{e}"));
        }
    }
    out.cypher = r.cypher.clone();
    out.executable = r.executable;
    out.error = r.error.clone();
    let answers: Vec<NodeId> = r
        .answers
        .iter()
        .filter_map(|id| g.find_by_ident(id).first().copied())
        .collect();
    out.answers = answers.iter().map(|&n| node_view(g, n)).collect();
    lap("retrieval", &mut out.stages);
    if answers.is_empty() {
        if let Some(m) = &out.understood.not_understood {
            out.notes.push(m.clone());
        }
        if out.cypher.is_some() {
            out.notes
                .push("no existing answers, so nothing to explore from".into());
        }
        return Ok(out);
    }
    // Large answer sets: explore from the best-connected ones (the slice limit bounds RNS).
    let mut roots = answers.clone();
    roots.sort_by_key(|&n| std::cmp::Reverse(g.degree(n)));
    roots.truncate(50);
    if answers.len() > roots.len() {
        out.notes.push(format!(
            "exploring from {} of {} answers",
            roots.len(),
            answers.len()
        ));
    }

    let memory = MemoryEdges::new(g);
    let edges: &dyn EdgeSource = match &ctx.edges {
        Some(e) => e.as_ref(),
        None => &memory,
    };
    out.edge_source = edges.describe();
    let env = Env {
        g,
        edges,
        removed: None,
        walk: g,
        model: ctx.model.as_deref(),
        blocks: &ctx.blocks,
        stats: &ctx.stats,
        weights: ctx.weights.weights,
    };
    let cfg = ExploreConfig::default();
    // The entities the question was understood to name: known to the asker, so anchors in
    // Ae wherever candidates are scored (docs/RNS.md "What Ae holds").
    let named: Vec<NodeId> = out
        .understood
        .entities
        .iter()
        .filter_map(|e| {
            g.find_by_ident(&e.node.id)
                .iter()
                .copied()
                .find(|&n| g.type_display(g.node_type(n)) == e.node.kind)
        })
        .collect();
    let task = explore::Task {
        question,
        roots: roots.clone(),
        named: named.clone(),
        example: String::new(),
    };
    let ex = explore::explore(&env, &agents.explore, &cfg, &task)
        .await
        .map_err(AskError::Unavailable)?;
    for c in &ex.calls {
        if let Some(e) = &c.error {
            out.notes.push(format!("{}{MODEL_NOTE}{e}", c.role));
        }
    }
    lap("exploration", &mut out.stages);
    out.summaries = ex.summaries.clone();

    let answer_types: std::collections::BTreeSet<_> =
        answers.iter().map(|&n| g.node_type(n)).collect();
    // Ae for scoring = the answers explored from + the entities the question names (the
    // rule the shipped weights were fitted with, docs/RNS.md "What Ae holds"); the explorer
    // scored its candidates against the same set.
    let ae = task.known();
    let cands: Vec<NodeId> = ex
        .order
        .iter()
        .copied()
        .filter(|n| {
            !answers.contains(n) && !named.contains(n) && answer_types.contains(&g.node_type(*n))
        })
        .collect();
    let mut terms = rns_gains_terms(&env, &ae, &cands);
    // One known entity and one candidate: S cannot tell candidates apart (docs/RNS.md).
    if !serenqa_shared::rns::surprise_informative(ae.len(), 1) {
        out.s_hidden = true;
        for t in terms.values_mut() {
            *t = t.without_s(&env.weights);
        }
    }
    if ctx.model.is_none() {
        out.notes.push(
            "no precomputed model (run `serenqa precompute`): candidates are unscored".into(),
        );
    }
    let mut list: Vec<Candidate> = cands
        .iter()
        .map(|&c| {
            let (known, known_total) = known_for(g, c, KNOWN_FOR_SHOWN);
            Candidate {
                node: node_view(g, c),
                terms: terms.get(&c).copied(),
                paths: ex
                    .paths
                    .get(&c)
                    .map(|p| vec![path_view(g, p)])
                    .unwrap_or_default(),
                known_for: known.iter().map(|&x| node_view(g, x)).collect(),
                known_for_total: known_total,
            }
        })
        .collect();
    list.sort_by(|a, b| {
        let ra = a.terms.map(|t| t.rns).unwrap_or(f64::NEG_INFINITY);
        let rb = b.terms.map(|t| t.rns).unwrap_or(f64::NEG_INFINITY);
        rb.total_cmp(&ra).then(a.node.index.cmp(&b.node.index))
    });
    list.truncate(req.limit.unwrap_or(20).clamp(1, 200));
    out.candidates = list;
    lap("scoring", &mut out.stages);
    Ok(out)
}

/// How a note about a failed model call is written: `<role> model: <error>`.
const MODEL_NOTE: &str = " model: ";

/// What replaces a model call's error for clients that must not see it.
pub const REDACTED_MODEL_ERROR: &str = "the model call failed (the details are in the server log)";

/// Replaces the details of failed model calls in `r` (endpoint URLs, provider replies, as in
/// its notes and the retrieval error) by [`REDACTED_MODEL_ERROR`]; returns the original notes
/// for the server's log. The server applies it to every Ask it answers; the CLI shows all.
pub fn redact(r: &mut AskResponse) -> Vec<String> {
    let mut details = Vec::new();
    for n in &mut r.notes {
        let Some((role, detail)) = n.split_once(MODEL_NOTE) else {
            continue;
        };
        if role.is_empty() || !role.chars().all(|c| c.is_ascii_lowercase()) {
            continue;
        }
        if r.error.as_deref() == Some(detail) {
            r.error = Some(REDACTED_MODEL_ERROR.to_string());
        }
        details.push(n.clone());
        *n = format!("{role}{MODEL_NOTE}{REDACTED_MODEL_ERROR}");
    }
    details
}

/// Plain-text rendering for the CLI.
pub fn render_text(r: &AskResponse) -> String {
    let mut s = format!("Question: {}\n", r.question);
    let u = &r.understood;
    if let Some(i) = &u.interpretation {
        s.push_str(&format!("Understood as: {i}\n"));
    }
    for e in &u.entities {
        s.push_str(&format!(
            "  \"{}\" → {} ({}, {}; {} match)\n",
            e.mention, e.node.name, e.node.kind, e.node.id, e.matched
        ));
    }
    if !u.did_you_mean.is_empty() {
        s.push_str(&format!(
            "Did you mean: {}?\n",
            u.did_you_mean
                .iter()
                .map(|d| format!("{} ({})", d.node.name, d.node.kind))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(m) = &u.not_understood {
        s.push_str(&format!("Not understood: {m}\n"));
        for q in &u.examples {
            s.push_str(&format!("  try: {q}\n"));
        }
    }
    s.push_str(&format!(
        "\nCypher:\n  {}\n",
        r.cypher.as_deref().unwrap_or("(none)")
    ));
    if let Some(e) = &r.error {
        s.push_str(&format!("  error: {e}\n"));
    }
    s.push_str(&format!("\nExisting answers ({}):\n", r.answers.len()));
    for a in &r.answers {
        s.push_str(&format!("  {} {} ({})\n", a.id, a.name, a.kind));
    }
    s.push_str(&format!(
        "\nSerendipitous candidates ({}):\n",
        r.candidates.len()
    ));
    for c in &r.candidates {
        match c.terms {
            Some(t) => s.push_str(&format!(
                "  {} {} ({})  R {:.4}  N {:.4}  S {:.4}  RNS {:.4}\n",
                c.node.id, c.node.name, c.node.kind, t.r, t.n, t.s, t.rns
            )),
            None => s.push_str(&format!(
                "  {} {} ({})\n",
                c.node.id, c.node.name, c.node.kind
            )),
        }
        for p in &c.paths {
            let mut line = p.nodes.first().map(|n| n.name.clone()).unwrap_or_default();
            for (st, n) in p.steps.iter().zip(p.nodes.iter().skip(1)) {
                line.push_str(&format!(" —{}→ {}", st.verb, n.name));
            }
            s.push_str(&format!("      {line}\n"));
        }
    }
    if !r.summaries.is_empty() {
        s.push_str("\nSummaries:\n");
        for (i, x) in r.summaries.iter().enumerate() {
            s.push_str(&format!("  [{}] {x}\n", i + 1));
        }
    }
    s.push_str("\nStages: ");
    s.push_str(
        &r.stages
            .iter()
            .map(|st| format!("{} {:.0} ms", st.name, st.ms))
            .collect::<Vec<_>>()
            .join(", "),
    );
    if !r.edge_source.is_empty() {
        s.push_str(&format!("\nEdges: {}", r.edge_source));
    }
    s.push_str(&format!(
        "\nAgents: {}\n",
        r.agents
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for n in &r.notes {
        s.push_str(&format!("Note: {n}\n"));
    }
    s.push_str("Suggestions are research hypotheses, not clinical advice.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_model_call_details() {
        let detail = "HTTP 500 from llama: {\"error\":\"upstream http://10.0.0.7:8000 down\"}";
        let mut r = AskResponse {
            notes: vec![
                format!("retrieval{MODEL_NOTE}{detail}"),
                format!("relations{MODEL_NOTE}llama: connection failed: http://10.0.0.7"),
                "exploring from 50 of 60 answers".into(),
            ],
            error: Some(detail.into()),
            ..Default::default()
        };
        let logged = redact(&mut r);
        assert_eq!(logged.len(), 2);
        assert!(logged[0].contains("10.0.0.7"));
        assert_eq!(
            r.notes[0],
            format!("retrieval model: {REDACTED_MODEL_ERROR}")
        );
        assert_eq!(r.notes[2], "exploring from 50 of 60 answers");
        assert_eq!(r.error.as_deref(), Some(REDACTED_MODEL_ERROR));
        assert!(!serde_json::to_string(&r).unwrap().contains("10.0.0.7"));
    }
}
