//! T3 serendipity exploration: Algorithm 3 (LLM-enhanced beam search), with any mix of LLM
//! and offline agents per decision.
//!
//! Per level: for each frontier node u, the relation agent picks ≤ m relation types among
//! those at u; the edges of u over them (to unvisited nodes) are scored — edge confidence
//! where the graph has one (with `graph_score` on, else the graph score [`graph_score`]),
//! min-max normalised per relation ([`normalise_per_relation`]) — and the best k per frontier
//! node are kept (a uniform seeded sample when no edge at the node has a score, as on
//! Hetionet, which has no edge confidences); the node agent picks ≤ n
//! (beam width) targets; paths Π are extended; the continue agent writes the level's
//! description (context for later prompts, "with summary" mode only) and decides whether to
//! go on. Afterwards the summariser writes one summary per level reached (Σ), except a level
//! whose continue decision was NO: the walk stops there before summarising it.
//!
//! Exploration starts from all of Ae at once (one beam, Π[r] = [] for every root): the
//! paper's single root r0 generalised to an answer set. It runs on G = Gc − R of the
//! partition (removed edges are invisible). Predicted serendipity set = the leaves of Π
//! (explored nodes with no explored child).
//!
//! Edges come from an [`EdgeSource`] (the in-memory graph or the Redis edge store), one
//! batched lookup per level for the whole frontier; node labels, types and the model always
//! come from the in-memory graph. Both edge stores give identical explorations.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serenqa_benchmark::query::EdgeMask;
use serenqa_edges::{EdgeSource, Incident};
use serenqa_graph::{EdgeId, Graph, NodeId, RelId, TypeId};
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;

use crate::llm::{Message, RoleModel};
use crate::offline;
use crate::prompts;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreConfig {
    /// n: nodes kept per level (beam width).
    pub beam_width: usize,
    /// h: levels at most.
    pub depth: usize,
    /// m: relation types per frontier node.
    pub relations_per_node: usize,
    /// k: candidate edges per frontier node after scoring.
    pub nodes_per_node: usize,
    /// Feed level descriptions to later prompts ("with summary").
    pub use_summaries: bool,
    /// Score edges that have no confidence with the graph score ([`graph_score`]). Off by
    /// default, as in the paper's D.3: a frontier node none of whose edges has a confidence
    /// (all of Hetionet) keeps a uniform seeded sample of k edges.
    pub graph_score: bool,
    pub seed: u64,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            beam_width: 30,
            depth: 3,
            relations_per_node: 3,
            nodes_per_node: 10,
            use_summaries: true,
            graph_score: false,
            seed: 7,
        }
    }
}

/// One hop of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: NodeId,
    pub rel: RelId,
    pub to: NodeId,
    /// Walked in the stored direction.
    pub forward: bool,
    pub edge: EdgeId,
}

/// One LLM call as recorded in traces.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallTrace {
    pub role: String,
    pub model: String,
    pub prompt: Vec<Message>,
    pub reply: Option<String>,
    pub error: Option<String>,
    pub latency_ms: f64,
    pub cached: bool,
    /// What was wrong with the reply (hallucinated ids, unparsable…), if anything.
    pub issues: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelTrace {
    pub level: usize,
    pub frontier: usize,
    /// `frontier id → chosen relation names`.
    pub relations: BTreeMap<String, Vec<String>>,
    pub candidates: usize,
    pub uniform_sampled: bool,
    pub selected: Vec<String>,
    pub description: String,
    pub go_on: bool,
}

/// The result of one exploration.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    pub roots: Vec<NodeId>,
    /// Π: explored node → path from a root (roots map to []).
    pub paths: BTreeMap<NodeId, Vec<Step>>,
    /// Explored nodes in order of discovery (roots first).
    pub order: Vec<NodeId>,
    pub levels: Vec<LevelTrace>,
    /// Σ: one summary per level reached.
    pub summaries: Vec<String>,
    pub calls: Vec<CallTrace>,
}

impl Exploration {
    /// Explored nodes without an explored child, in discovery order, roots excluded.
    pub fn leaves(&self) -> Vec<NodeId> {
        let parents: HashSet<NodeId> = self
            .paths
            .values()
            .filter_map(|p| p.last().map(|s| s.from))
            .collect();
        self.order
            .iter()
            .copied()
            .filter(|n| !self.roots.contains(n) && !parents.contains(n))
            .collect()
    }

    /// Paths of exactly `hops` hops, in discovery order.
    pub fn paths_of_depth(&self, hops: usize) -> Vec<&Vec<Step>> {
        self.order
            .iter()
            .filter_map(|n| self.paths.get(n))
            .filter(|p| p.len() == hops)
            .collect()
    }

    /// Every edge of Π once.
    pub fn edges(&self) -> Vec<Step> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for n in &self.order {
            for s in self.paths.get(n).into_iter().flatten() {
                if seen.insert(s.edge) {
                    out.push(*s);
                }
            }
        }
        out
    }

    /// Nodes of the explored subgraph (roots included).
    pub fn nodes(&self) -> BTreeSet<NodeId> {
        self.paths.keys().copied().collect()
    }
}

/// Type-level walk statistics: how likely a walk from a type reaches the target types.
pub struct TypeStats {
    /// W[a][b]: share of a's edge ends that lead to type b.
    walk: Vec<Vec<f64>>,
    /// Edges per relation (rarity).
    pub rel_counts: Vec<u64>,
}

impl TypeStats {
    pub fn new(g: &Graph) -> TypeStats {
        let nt = g.type_count();
        let mut c = vec![vec![0f64; nt]; nt];
        let mut rel_counts = vec![0u64; g.relation_count()];
        for (r, n) in g.relation_counts() {
            rel_counts[r as usize] = n;
        }
        // Type pairs per relation from the schema when known, else by scanning the edges.
        let (off, tgt, rel) = g.out_csr();
        for u in 0..g.node_count() {
            let tu = g.node_type(u as NodeId) as usize;
            for i in off[u] as usize..off[u + 1] as usize {
                let tv = g.node_type(tgt[i]) as usize;
                let _ = rel[i];
                c[tu][tv] += 1.0;
                c[tv][tu] += 1.0;
            }
        }
        let walk = c
            .into_iter()
            .map(|row| {
                let s: f64 = row.iter().sum();
                row.into_iter()
                    .map(|x| if s > 0.0 { x / s } else { 0.0 })
                    .collect()
            })
            .collect();
        TypeStats { walk, rel_counts }
    }

    /// f_h(a): probability-like reach of `targets` from type a within h more hops
    /// (1 when a is already a target type).
    pub fn reach(&self, a: TypeId, targets: &BTreeSet<TypeId>, hops: usize) -> f64 {
        if targets.contains(&a) {
            return 1.0;
        }
        if hops == 0 {
            return 0.0;
        }
        let row = &self.walk[a as usize];
        row.iter()
            .enumerate()
            .filter(|(_, &w)| w > 0.0)
            .map(|(b, w)| w * self.reach(b as TypeId, targets, hops - 1))
            .sum()
    }
}

/// What an exploration reads.
///
/// In a benchmark run the explorer must see only G = Gc − R of its partition, never the
/// removed edges that hide the serendipity set. So `g` (with `removed` masking the edges the
/// store returns) gives only labels, types and edge ids, while everything *computed* from the
/// graph — degrees of far ends (the graph score shown to models), the model's marginals and
/// embeddings, P3 slices and their cache, type-level walk statistics — comes from `walk`, G
/// built as a graph of its own with the same node ids, and a model computed on it.
pub struct Env<'a> {
    /// Node labels and types, and the edge ids the edge store speaks in (Gc).
    pub g: &'a Graph,
    pub edges: &'a dyn EdgeSource,
    /// R of the partition (None = Gc).
    pub removed: Option<&'a EdgeMask>,
    /// The graph degrees, slices and statistics are computed on: G (`g` itself outside a
    /// benchmark partition). Same node ids as `g`.
    pub walk: &'a Graph,
    /// The model of `walk`.
    pub model: Option<&'a Model>,
    pub blocks: &'a BlockCache,
    /// Type statistics of `walk`.
    pub stats: &'a TypeStats,
    /// RNS weights for ranking candidates (the weights in force: shipped or calibrated).
    pub weights: serenqa_shared::rns::Weights,
}

impl Env<'_> {
    fn visible(&self, e: EdgeId) -> bool {
        !self.removed.is_some_and(|m| m.contains(e))
    }

    /// Visible edges at each frontier node (self-loops dropped), in one batched lookup.
    pub async fn incident_many(&self, frontier: &[NodeId]) -> Result<Vec<Vec<Hop>>, String> {
        let lists = self
            .edges
            .incident_many(frontier)
            .await
            .map_err(|e| e.to_string())?;
        Ok(frontier
            .iter()
            .zip(lists)
            .map(|(&u, list)| {
                list.into_iter()
                    .filter(|i: &Incident| self.visible(i.edge) && i.other != u)
                    // The far end's degree in G: the store's count includes removed edges.
                    .map(|i| Hop {
                        step: Step { from: u, rel: i.rel, to: i.other, forward: i.forward, edge: i.edge },
                        score: i.score,
                        far_degree: if std::ptr::eq(self.walk, self.g) { i.other_degree } else { self.walk.degree(i.other) as u32 },
                    })
                    .collect()
            })
            .collect())
    }
}

/// A visible edge at a frontier node with what scoring it needs.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub step: Step,
    /// Edge confidence, where the graph has one.
    pub score: Option<f32>,
    /// Degree of the far end.
    pub far_degree: u32,
}

/// The documented graph score of an edge without confidence: the Adamic–Adar weight of its
/// far end, 1 / ln(e + degree): specific entities carry more information than hubs.
pub fn graph_score(far_degree: u32) -> f64 {
    1.0 / (std::f64::consts::E + f64::from(far_degree)).ln()
}

/// D.3's neighbour scores made comparable: within each relation, the scores that exist are
/// min-max normalised to [0, 1] (all equal → 1), so one relation's raw confidences and
/// another's graph scores rank on the same scale before the top k are kept. Edges without a
/// score get −1 (ranked last; when no edge at a frontier node has one, the caller samples
/// uniformly).
pub fn normalise_per_relation(edges: Vec<(Step, Option<f64>)>) -> Vec<(Step, f64)> {
    let mut range: BTreeMap<RelId, (f64, f64)> = BTreeMap::new();
    for (s, sc) in &edges {
        if let Some(x) = sc.filter(|x| x.is_finite()) {
            let e = range.entry(s.rel).or_insert((x, x));
            e.0 = e.0.min(x);
            e.1 = e.1.max(x);
        }
    }
    edges
        .into_iter()
        .map(|(s, sc)| {
            let v = match (sc.filter(|x| x.is_finite()), range.get(&s.rel)) {
                (Some(x), Some(&(lo, hi))) if hi > lo => (x - lo) / (hi - lo),
                (Some(_), Some(_)) => 1.0,
                _ => -1.0,
            };
            (s, v)
        })
        .collect()
}

/// Inputs of one exploration.
pub struct Task<'a> {
    pub question: &'a str,
    pub roots: Vec<NodeId>,
    /// One-shot guidance: a training question with its ground-truth paths (prompt text).
    pub example: String,
}

/// Which model makes each decision (None = offline agent).
#[derive(Clone, Default)]
pub struct Agents {
    pub relations: Option<RoleModel>,
    pub nodes: Option<RoleModel>,
    pub cont: Option<RoleModel>,
    pub summary: Option<RoleModel>,
}

impl Agents {
    /// Offline explorer ignores the level descriptions, so with/without summaries coincide.
    pub fn uses_context(&self) -> bool {
        self.relations.is_some() || self.nodes.is_some() || self.cont.is_some()
    }
}

pub fn node_label(g: &Graph, n: NodeId) -> String {
    format!(
        "{} ({}, {})",
        g.ident(n),
        g.name(n),
        g.type_label(g.node_type(n))
    )
}

/// A path as one line: `end: root -[REL]-> name (id, Type) -[REL]-> …`.
pub fn path_line(g: &Graph, p: &[Step]) -> String {
    let Some(first) = p.first() else {
        return String::new();
    };
    let mut s = format!(
        "{}: {}",
        g.ident(p[p.len() - 1].to),
        node_label(g, first.from)
    );
    for st in p {
        let rel = &g.relation(st.rel).name;
        if st.forward {
            s.push_str(&format!(" -[{rel}]-> "));
        } else {
            s.push_str(&format!(" <-[{rel}]- "));
        }
        s.push_str(&node_label(g, st.to));
    }
    s
}

async fn call(role: &str, m: &RoleModel, prompt: Vec<Message>) -> CallTrace {
    let mut t = CallTrace {
        role: role.into(),
        model: m.name.clone(),
        ..Default::default()
    };
    match m.client.chat(&m.name, &prompt).await {
        Ok(r) => {
            t.latency_ms = r.latency_ms;
            t.cached = r.cached;
            if r.truncated {
                t.issues.push("reply truncated (length limit)".into());
            }
            t.reply = Some(r.text);
        }
        Err(e) => t.error = Some(e.to_string()),
    }
    t.prompt = prompt;
    t
}

fn render_or_issue(name: &str, vars: &[(&str, String)]) -> Vec<Message> {
    // Templates are compiled in and tested, so a failure here is a programming error made
    // visible in the trace rather than a crash.
    prompts::render(name, vars)
        .unwrap_or_else(|e| vec![Message::system(format!("prompt error: {e}"))])
}

/// Comma/newline-separated items of a reply, stripped of quotes, bullets and code fences.
pub fn split_list(reply: &str) -> Vec<String> {
    reply
        .split([',', '\n', ';'])
        .map(|s| {
            s.trim_matches(|c: char| {
                c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '*' | '-' | '[' | ']')
            })
            .to_string()
        })
        .filter(|s| !s.is_empty() && s != "```")
        .collect()
}

/// Runs Algorithm 3. Fails only when the edge store does (an infrastructure error: the caller
/// retries or reports it; it is not a result).
pub async fn explore(
    env: &Env<'_>,
    agents: &Agents,
    cfg: &ExploreConfig,
    task: &Task<'_>,
) -> Result<Exploration, String> {
    let g = env.g;
    let mut ex = Exploration {
        roots: task.roots.clone(),
        ..Default::default()
    };
    for &r in &task.roots {
        if ex.paths.insert(r, Vec::new()).is_none() {
            ex.order.push(r);
        }
    }
    let targets: BTreeSet<TypeId> = task.roots.iter().map(|&r| g.node_type(r)).collect();
    let mut frontier: Vec<NodeId> = ex.order.clone();
    let mut context: Vec<String> = Vec::new();
    let mut rng = serenqa_shared::rng::SplitMix64::new(
        cfg.seed ^ task.roots.first().map(|&r| r as u64).unwrap_or(0),
    );
    let root_list = task
        .roots
        .iter()
        .map(|&r| node_label(g, r))
        .collect::<Vec<_>>()
        .join("; ");
    let mut reached = 0;
    for level in 1..=cfg.depth {
        let remaining = cfg.depth - level;
        let ctx_text = if cfg.use_summaries && !context.is_empty() {
            context.join("\n")
        } else {
            "(none)".to_string()
        };
        let mut lt = LevelTrace {
            level,
            frontier: frontier.len(),
            ..Default::default()
        };
        let mut cands: Vec<(Step, f64)> = Vec::new();
        let mut any_scored = false;
        let incident = env.incident_many(&frontier).await?;
        for (&u, hops) in frontier.iter().zip(incident) {
            let inc: Vec<Hop> = hops
                .into_iter()
                .filter(|h| !ex.paths.contains_key(&h.step.to))
                .collect();
            if inc.is_empty() {
                continue;
            }
            // R: relation types at u with counts.
            let mut rels: BTreeMap<RelId, usize> = BTreeMap::new();
            for h in &inc {
                *rels.entry(h.step.rel).or_default() += 1;
            }
            let chosen: Vec<RelId> = match &agents.relations {
                None => offline::explorer::select_relations(
                    env,
                    &targets,
                    u,
                    &rels,
                    cfg.relations_per_node,
                    remaining,
                ),
                Some(m) => {
                    let offered: Vec<String> = rels
                        .iter()
                        .map(|(&r, &c)| format!("{} ({} edges)", g.relation(r).name, c))
                        .collect();
                    let prompt = render_or_issue(
                        "select_relations",
                        &[
                            (
                                "node_types",
                                (0..g.type_count() as TypeId)
                                    .map(|t| g.type_label(t).to_string())
                                    .collect::<Vec<_>>()
                                    .join(", "),
                            ),
                            ("example", task.example.clone()),
                            ("m", cfg.relations_per_node.to_string()),
                            ("question", task.question.to_string()),
                            ("frontier", node_label(g, u)),
                            ("level", level.to_string()),
                            ("context", ctx_text.clone()),
                            ("relations", offered.join("\n")),
                        ],
                    );
                    let mut t = call("relations", m, prompt).await;
                    let mut out = Vec::new();
                    if let Some(reply) = &t.reply {
                        for item in split_list(reply) {
                            let name = item.split_whitespace().next().unwrap_or("").to_string();
                            match g.relation_id(&name).filter(|r| rels.contains_key(r)) {
                                Some(r) if !out.contains(&r) => out.push(r),
                                Some(_) => {}
                                None => t.issues.push(format!("not an offered relation: {item:?}")),
                            }
                        }
                        if out.len() > cfg.relations_per_node {
                            t.issues.push(format!(
                                "{} relations chosen, {} allowed",
                                out.len(),
                                cfg.relations_per_node
                            ));
                            out.truncate(cfg.relations_per_node);
                        }
                    }
                    ex.calls.push(t);
                    out
                }
            };
            lt.relations.insert(
                g.ident(u).to_string(),
                chosen.iter().map(|&r| g.relation(r).name.clone()).collect(),
            );
            let raw: Vec<(Step, Option<f64>)> = inc
                .into_iter()
                .filter(|h| chosen.contains(&h.step.rel))
                .map(|h| {
                    (
                        h.step,
                        h.score
                            .map(f64::from)
                            .or_else(|| cfg.graph_score.then(|| graph_score(h.far_degree))),
                    )
                })
                .collect();
            let mut edges = normalise_per_relation(raw);
            // One candidate edge per target (the best one).
            edges.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.to.cmp(&b.0.to)));
            let mut seen = HashSet::new();
            edges.retain(|(s, _)| seen.insert(s.to));
            if edges.iter().all(|(_, sc)| *sc < 0.0) {
                lt.uniform_sampled = true;
                rng.shuffle(&mut edges);
            } else {
                any_scored = true;
            }
            edges.truncate(cfg.nodes_per_node);
            cands.extend(edges);
        }
        let _ = any_scored;
        lt.candidates = cands.len();
        if cands.is_empty() {
            ex.levels.push(lt);
            break;
        }
        let visited_now: HashSet<NodeId> = ex.paths.keys().copied().collect();
        let selected: Vec<NodeId> = match &agents.nodes {
            None => offline::explorer::select_nodes(
                env,
                &targets,
                &task.roots,
                &cands,
                cfg.beam_width,
                remaining,
            ),
            Some(m) => {
                let list: Vec<String> = cands
                    .iter()
                    .map(|(s, sc)| {
                        format!(
                            "{} | {} | {} | {} | {} | {:.3}",
                            g.ident(s.to),
                            g.name(s.to),
                            g.type_label(g.node_type(s.to)),
                            g.ident(s.from),
                            g.relation(s.rel).name,
                            sc
                        )
                    })
                    .collect();
                let visited: Vec<&str> = ex.order.iter().take(200).map(|&n| g.ident(n)).collect();
                let prompt = render_or_issue(
                    "select_nodes",
                    &[
                        ("n", cfg.beam_width.to_string()),
                        ("example", task.example.clone()),
                        ("question", task.question.to_string()),
                        ("level", level.to_string()),
                        ("context", ctx_text.clone()),
                        ("visited", visited.join(", ")),
                        ("candidates", list.join("\n")),
                    ],
                );
                let mut t = call("nodes", m, prompt).await;
                let mut out = Vec::new();
                if let Some(reply) = &t.reply {
                    let by_id: HashMap<&str, NodeId> =
                        cands.iter().map(|(s, _)| (g.ident(s.to), s.to)).collect();
                    for item in split_list(reply) {
                        let id = item.split([' ', '|']).next().unwrap_or("");
                        match by_id.get(id) {
                            Some(&n) if !out.contains(&n) && !visited_now.contains(&n) => {
                                out.push(n);
                            }
                            Some(_) => {}
                            None => t.issues.push(format!("not a candidate id: {item:?}")),
                        }
                    }
                    if out.len() > cfg.beam_width {
                        t.issues.push(format!(
                            "{} nodes chosen, beam width {}",
                            out.len(),
                            cfg.beam_width
                        ));
                        out.truncate(cfg.beam_width);
                    }
                }
                ex.calls.push(t);
                out
            }
        };
        let mut next = Vec::new();
        for (s, _) in &cands {
            if selected.contains(&s.to) && !ex.paths.contains_key(&s.to) {
                let mut p = ex.paths.get(&s.from).cloned().unwrap_or_default();
                p.push(*s);
                ex.paths.insert(s.to, p);
                ex.order.push(s.to);
                next.push(s.to);
            }
        }
        lt.selected = next.iter().map(|&n| g.ident(n).to_string()).collect();
        if next.is_empty() {
            ex.levels.push(lt);
            break;
        }
        // Describe the level and decide whether to go on.
        let level_paths: Vec<String> = next
            .iter()
            .filter_map(|n| ex.paths.get(n))
            .map(|p| path_line(g, p))
            .collect();
        let go_on = match &agents.cont {
            None => {
                lt.description = offline::summary::describe_level(g, &ex, level);
                offline::explorer::should_continue(env, &targets, &next, remaining)
            }
            Some(m) => {
                let prompt = render_or_issue(
                    "continue",
                    &[
                        ("question", task.question.to_string()),
                        ("roots", root_list.clone()),
                        ("paths", level_paths.join("\n")),
                    ],
                );
                let mut t = call("continue", m, prompt).await;
                let (desc, decision) = parse_continue(t.reply.as_deref().unwrap_or(""));
                if decision.is_none() && t.reply.is_some() {
                    t.issues
                        .push("no YES/NO line; continuing (the prompt's default)".into());
                }
                lt.description = desc;
                ex.calls.push(t);
                decision.unwrap_or(true)
            }
        };
        lt.go_on = go_on;
        // Algorithm 3 stops *before* summarising a level whose continue decision is NO: its
        // paths left any plausible route. A level that ends the walk only because the depth
        // is reached is summarised (the offline agent answers "no" there for lack of depth,
        // which is not a decision about the paths).
        let stopped_by_decision = !go_on && (remaining > 0 || agents.cont.is_some());
        if !stopped_by_decision {
            reached = level;
        }
        if cfg.use_summaries {
            context.push(format!("Level {level}: {}", lt.description));
        }
        ex.levels.push(lt);
        frontier = next;
        if !go_on || remaining == 0 {
            break;
        }
    }
    // Σ: one summary per level reached and not stopped by a NO (with-summary mode only).
    if cfg.use_summaries {
        for level in 1..=reached {
            let text = match &agents.summary {
                None => offline::summary::summarize_level(g, &ex, level),
                Some(m) => {
                    let lines: Vec<String> = ex
                        .paths_of_depth(level)
                        .iter()
                        .map(|p| path_line(g, p))
                        .collect();
                    let prompt = render_or_issue(
                        "summarize",
                        &[
                            ("roots", root_list.clone()),
                            ("question", task.question.to_string()),
                            ("level", level.to_string()),
                            ("paths", lines.join("\n")),
                        ],
                    );
                    let t = call("summary", m, prompt).await;
                    let s = t.reply.clone().unwrap_or_default();
                    ex.calls.push(t);
                    s
                }
            };
            ex.summaries.push(text);
        }
    }
    Ok(ex)
}

/// Splits a continue reply into (description, decision): the decision is the last line that
/// is exactly YES or NO (markdown and punctuation ignored); the description is the text before it.
pub fn parse_continue(reply: &str) -> (String, Option<bool>) {
    let lines: Vec<&str> = reply.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let w = l
            .trim()
            .trim_matches(|c: char| !c.is_ascii_alphabetic())
            .to_ascii_uppercase();
        if w == "YES" || w == "NO" {
            let desc = lines[..i].join("\n").trim().to_string();
            return (desc, Some(w == "YES"));
        }
    }
    (reply.trim().to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_replies() {
        assert_eq!(
            parse_continue("The paths...\n\nYES\n\nBecause."),
            ("The paths...".to_string(), Some(true))
        );
        assert_eq!(parse_continue("Summary\n**NO**\nwhy").1, Some(false));
        assert_eq!(parse_continue("no decision here").1, None);
        assert_eq!(parse_continue("").1, None);
    }

    fn step(rel: RelId, to: NodeId) -> Step {
        Step {
            from: 0,
            rel,
            to,
            forward: true,
            edge: to,
        }
    }

    #[test]
    fn neighbour_scores_are_min_max_normalised_per_relation() {
        // Relation 1 has raw confidences 0.2..0.8, relation 2 graph-score-like values
        // 0.30..0.35: raw, relation 1's 0.5 would outrank all of relation 2.
        let out = normalise_per_relation(vec![
            (step(1, 10), Some(0.2)),
            (step(1, 11), Some(0.8)),
            (step(1, 12), Some(0.5)),
            (step(2, 20), Some(0.30)),
            (step(2, 21), Some(0.35)),
            (step(3, 30), Some(7.0)),
            (step(3, 31), None),
        ]);
        let v: Vec<f64> = out.iter().map(|x| x.1).collect();
        assert!(
            (v[0] - 0.0).abs() < 1e-12 && (v[1] - 1.0).abs() < 1e-12 && (v[2] - 0.5).abs() < 1e-12,
            "{v:?}"
        );
        assert!(
            (v[3] - 0.0).abs() < 1e-12 && (v[4] - 1.0).abs() < 1e-12,
            "{v:?}"
        );
        assert_eq!(
            v[5], 1.0,
            "a single scored edge of its relation is its maximum"
        );
        assert_eq!(v[6], -1.0, "no score: ranked last");
        assert!(
            normalise_per_relation(vec![(step(1, 1), None), (step(2, 2), Some(f64::NAN))])
                .iter()
                .all(|x| x.1 < 0.0)
        );
    }

    #[test]
    fn list_items() {
        assert_eq!(
            split_list("`TREATS_CtD`, BINDS_CbG\n- \"X\""),
            vec!["TREATS_CtD", "BINDS_CbG", "X"]
        );
        assert!(split_list("  \n").is_empty());
    }
}
