//! Algorithm 3's loop: frontier → relations → scored candidate edges → beam → continue
//! decision → summaries. Decisions are the agents' ([`ExploreAgents`]); this loop only scores
//! and samples edges, extends the paths and records the levels.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serenqa_graph::{NodeId, RelId, TypeId};

use super::env::{graph_score, normalise_per_relation, Env, Hop};
use super::types::{node_label, Exploration, ExploreConfig, LevelTrace, Step, Task};
use crate::agents::{ExploreAgents, LevelView};

/// What every decision of one exploration sees, whatever the level.
struct Walk<'a> {
    env: &'a Env<'a>,
    task: &'a Task<'a>,
    cfg: &'a ExploreConfig,
    targets: &'a BTreeSet<TypeId>,
    roots: &'a str,
}

impl<'a> Walk<'a> {
    fn view(&'a self, ex: &'a Exploration, level: usize, context: &'a str) -> LevelView<'a> {
        LevelView {
            env: self.env,
            task: self.task,
            cfg: self.cfg,
            ex,
            targets: self.targets,
            level,
            remaining: self.cfg.depth - level,
            context,
            roots: self.roots,
        }
    }
}

/// Runs Algorithm 3. Fails only when the edge store does (an infrastructure error: the caller
/// retries or reports it; it is not a result).
pub async fn explore(
    env: &Env<'_>,
    agents: &ExploreAgents,
    cfg: &ExploreConfig,
    task: &Task<'_>,
) -> Result<Exploration, String> {
    let g = env.g;
    let mut ex = Exploration {
        roots: task.roots.clone(),
        named: task.named.clone(),
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
    let walk = Walk {
        env,
        task,
        cfg,
        targets: &targets,
        roots: &root_list,
    };
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
            let (chosen, call) = agents
                .relations
                .relations(&walk.view(&ex, level, &ctx_text), u, &rels)
                .await;
            ex.calls.extend(call);
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
            }
            edges.truncate(cfg.nodes_per_node);
            cands.extend(edges);
        }
        lt.candidates = cands.len();
        if cands.is_empty() {
            ex.levels.push(lt);
            break;
        }
        let (selected, call) = agents
            .nodes
            .nodes(&walk.view(&ex, level, &ctx_text), &cands)
            .await;
        ex.calls.extend(call);
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
        let (decision, call) = agents
            .cont
            .decide(&walk.view(&ex, level, &ctx_text), &next)
            .await;
        ex.calls.extend(call);
        lt.description = decision.description;
        let go_on = decision.go_on;
        lt.go_on = go_on;
        // Algorithm 3 stops *before* summarising a level whose continue decision is NO: its
        // paths left any plausible route. A level that ends the walk only because the depth
        // is reached is summarised (the offline agent answers "no" there for lack of depth,
        // which is not a decision about the paths).
        let stopped_by_decision = !go_on && decision.no_is_decision;
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
        let ctx_text = String::new();
        for level in 1..=reached {
            let (text, call) = agents
                .summary
                .summarize(&walk.view(&ex, level, &ctx_text))
                .await;
            ex.calls.extend(call);
            ex.summaries.push(text);
        }
    }
    Ok(ex)
}
