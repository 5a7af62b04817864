//! Edge removal (paper §4.2): one set R of edges per partition strategy such that on
//! G = Gc − R every question's query still returns all of Ae and none of As.
//!
//! How R is found, globally:
//! 1. For each serendipity answer a of each question, enumerate its witnesses on Gc. For each
//!    query edge k, the graph edges k used in some witness form a *cut*: removing all of them
//!    kills every witness of a, hence a itself. Each query edge gives one candidate cut.
//! 2. *Protected* edges are those some existing answer (of any question) cannot lose: an
//!    edge that every witness of that answer uses for some query edge.
//! 3. Each (question, a) takes its smallest cut avoiding protected edges (ties: query edge
//!    order); a question whose answer has no such cut is dropped.
//! 4. R = union of the chosen cuts. Every question is verified on G; where an existing answer
//!    was lost, the removed edges its Gc witnesses used become protected and the affected
//!    cuts are chosen again. After a few rounds, questions still failing are dropped, R is
//!    rebuilt from the kept questions' cuts and everything is verified once more.
//!
//! Only R is stored (an [`EdgeMask`]); G is a [`View`] of Gc.

use std::collections::BTreeSet;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serenqa_graph::{EdgeId, Graph, NodeId};

use crate::query::{EdgeMask, Query, View};

/// Edge visits allowed per evaluation during removal and verification.
pub const REMOVAL_BUDGET: u64 = 5_000_000;
/// Witnesses enumerated per answer before the answer counts as impossible to cut cleanly.
pub const MAX_WITNESSES: usize = 20_000;
const ROUNDS: usize = 8;

/// One question of one strategy.
pub struct Task<'a> {
    pub query: &'a Query,
    /// Ac, sorted.
    pub candidates: &'a [NodeId],
    pub existing: &'a [NodeId],
    pub serendipity: &'a [NodeId],
}

/// Outcome for one strategy.
#[derive(Clone, Debug)]
pub struct Removal {
    pub removed: EdgeMask,
    /// `None` when kept, else why the question was dropped.
    pub dropped: Vec<Option<String>>,
    pub rounds: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovalStats {
    pub questions: usize,
    pub kept: usize,
    pub dropped: usize,
    pub removed_edges: usize,
    pub rounds: usize,
}

impl Removal {
    pub fn stats(&self) -> RemovalStats {
        let dropped = self.dropped.iter().filter(|d| d.is_some()).count();
        RemovalStats {
            questions: self.dropped.len(),
            kept: self.dropped.len() - dropped,
            dropped,
            removed_edges: self.removed.len(),
            rounds: self.rounds,
        }
    }
}

/// Candidate cuts of one serendipity answer, in query-edge order.
type Cuts = Vec<Vec<EdgeId>>;

/// Per task: the cuts of each serendipity answer, and the edges its existing answers need.
struct Prepared {
    cuts: Result<Vec<Cuts>, String>,
    critical: Vec<EdgeId>,
    /// Every Gc witness edge of the existing answers (to find who broke them).
    used_by_existing: Vec<EdgeId>,
}

fn prepare(g: &Graph, t: &Task<'_>) -> Prepared {
    let full = View::full(g);
    let mut critical = Vec::new();
    let mut used = Vec::new();
    for &e in t.existing {
        if let Ok(Some(w)) = t.query.witnesses(full, e, MAX_WITNESSES, REMOVAL_BUDGET) {
            for s in &w.edges {
                if s.len() == 1 {
                    critical.push(s[0]);
                }
                used.extend_from_slice(s);
            }
        }
    }
    critical.sort_unstable();
    critical.dedup();
    used.sort_unstable();
    used.dedup();
    let cuts = t
        .serendipity
        .iter()
        .map(|&a| match t.query.witnesses(full, a, MAX_WITNESSES, REMOVAL_BUDGET) {
            Ok(Some(w)) if w.count > 0 => Ok(w.edges),
            Ok(Some(_)) => Err(format!("serendipity answer {} has no witness on Gc", g.key(a))),
            Ok(None) => Err(format!("serendipity answer {} has more than {MAX_WITNESSES} witnesses", g.key(a))),
            Err(e) => Err(e.to_string()),
        })
        .collect();
    Prepared { cuts, critical, used_by_existing: used }
}

/// Whether the question holds on `view`: the answers are exactly Ae.
pub fn verify(view: View<'_>, t: &Task<'_>) -> Result<(), String> {
    let got = t.query.answers(view, REMOVAL_BUDGET).map_err(|e| e.to_string())?;
    let lost: Vec<NodeId> = t.existing.iter().copied().filter(|x| got.binary_search(x).is_err()).collect();
    let leaked: Vec<NodeId> = t.serendipity.iter().copied().filter(|x| got.binary_search(x).is_ok()).collect();
    if !lost.is_empty() || !leaked.is_empty() {
        return Err(format!("lost {} existing and kept {} serendipity answers", lost.len(), leaked.len()));
    }
    if got.len() != t.existing.len() {
        return Err("answers outside Ac appeared".into());
    }
    Ok(())
}

fn choose(cuts: &Cuts, protected: &BTreeSet<EdgeId>) -> Option<usize> {
    (0..cuts.len())
        .filter(|&k| !cuts[k].is_empty() && cuts[k].iter().all(|e| !protected.contains(e)))
        .min_by_key(|&k| (cuts[k].len(), k))
}

/// Finds R for one strategy (see the module docs). Deterministic.
pub fn resolve(g: &Graph, tasks: &[Task<'_>]) -> Removal {
    let prepared: Vec<Prepared> = tasks.par_iter().map(|t| prepare(g, t)).collect();
    let mut dropped: Vec<Option<String>> = prepared.iter().map(|p| p.cuts.as_ref().err().cloned()).collect();
    let mut protected: BTreeSet<EdgeId> = BTreeSet::new();
    for (p, d) in prepared.iter().zip(&dropped) {
        if d.is_none() {
            protected.extend(p.critical.iter().copied());
        }
    }
    let mut rounds = 0;
    let mut removed: EdgeMask;
    loop {
        rounds += 1;
        // Choose cuts for every kept question.
        removed = EdgeMask::new(g.edge_count());
        for (i, p) in prepared.iter().enumerate() {
            if dropped[i].is_some() {
                continue;
            }
            let Ok(cuts) = &p.cuts else { continue };
            let mut chosen = Vec::new();
            for c in cuts {
                match choose(c, &protected) {
                    Some(k) => chosen.push(k),
                    None => {
                        dropped[i] = Some("every cut of a serendipity answer removes an edge an existing answer needs".into());
                        break;
                    }
                }
            }
            if dropped[i].is_none() {
                for (c, &k) in cuts.iter().zip(&chosen) {
                    for &e in &c[k] {
                        removed.insert(e);
                    }
                }
            }
        }
        // Verify all kept questions.
        let view = View::without(g, &removed);
        let failures: Vec<(usize, String)> = tasks
            .par_iter()
            .enumerate()
            .filter(|(i, _)| dropped[*i].is_none())
            .filter_map(|(i, t)| verify(view, t).err().map(|e| (i, e)))
            .collect();
        if failures.is_empty() {
            break;
        }
        if rounds >= ROUNDS {
            for (i, e) in failures {
                dropped[i] = Some(format!("still failing after {ROUNDS} rounds: {e}"));
            }
            continue; // rebuild R from the kept questions and verify again
        }
        // Protect the removed edges the broken existing answers relied on.
        let mut grew = false;
        for (i, _) in &failures {
            for &e in &prepared[*i].used_by_existing {
                if removed.contains(e) {
                    grew |= protected.insert(e);
                }
            }
        }
        if !grew {
            for (i, e) in failures {
                dropped[i] = Some(format!("unsatisfiable: {e}"));
            }
        }
    }
    Removal { removed, dropped, rounds }
}
