//! Edge removal (paper §4.2): one set R of edges per partition strategy such that on
//! G = Gc − R every question's query still returns all of Ae and none of As.
//!
//! How R is found, globally:
//! 1. For each serendipity answer a of each question, enumerate its witnesses on Gc. For each
//!    query edge k, the graph edges k used in some witness form a *cut*: removing all of them
//!    kills every witness of a, hence a itself. Each query edge gives one candidate cut.
//! 2. An edge is *critical* for a question when one of its existing answers uses it in every
//!    witness (for some query edge): removing it would lose that answer.
//! 3. Questions are admitted greedily (in the best of three orders, see [`resolve`]). A question is admitted when none of its
//!    critical edges is already removed and each serendipity answer has a cut (the smallest;
//!    ties by query edge order) avoiding the critical edges of every admitted question and
//!    its own; its cuts join R, its critical edges become protected. Otherwise it is dropped.
//!    So a conflict costs one of the two questions, never both.
//! 4. Every admitted question is verified on G. An existing answer with several witnesses
//!    can still be lost to a combination of cuts; then the removed edges its Gc witnesses
//!    used are protected from the start and step 3 runs again. After a few rounds, questions
//!    still failing are dropped and R is rebuilt from the others' cuts, then verified again.
//!
//! Only R is stored (an [`EdgeMask`]); G is a [`View`] of Gc.

use std::collections::{BTreeSet, HashMap};

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
        .map(
            |&a| match t.query.witnesses(full, a, MAX_WITNESSES, REMOVAL_BUDGET) {
                Ok(Some(w)) if w.count > 0 => Ok(w.edges),
                Ok(Some(_)) => Err(format!(
                    "serendipity answer {} has no witness on Gc",
                    g.key(a)
                )),
                Ok(None) => Err(format!(
                    "serendipity answer {} has more than {MAX_WITNESSES} witnesses",
                    g.key(a)
                )),
                Err(e) => Err(e.to_string()),
            },
        )
        .collect();
    Prepared {
        cuts,
        critical,
        used_by_existing: used,
    }
}

/// Whether the question holds on `view`: the answers are exactly Ae.
pub fn verify(view: View<'_>, t: &Task<'_>) -> Result<(), String> {
    let got = t
        .query
        .answers(view, REMOVAL_BUDGET)
        .map_err(|e| e.to_string())?;
    let lost: Vec<NodeId> = t
        .existing
        .iter()
        .copied()
        .filter(|x| got.binary_search(x).is_err())
        .collect();
    let leaked: Vec<NodeId> = t
        .serendipity
        .iter()
        .copied()
        .filter(|x| got.binary_search(x).is_ok())
        .collect();
    if !lost.is_empty() || !leaked.is_empty() {
        return Err(format!(
            "lost {} existing and kept {} serendipity answers",
            lost.len(),
            leaked.len()
        ));
    }
    if got.len() != t.existing.len() {
        return Err("answers outside Ac appeared".into());
    }
    Ok(())
}

/// The cut to take: none of its edges protected; fewest edges that are critical for other
/// questions (so later questions are not needlessly lost), then fewest edges, then the
/// earliest query edge.
fn choose(
    cuts: &Cuts,
    protected: &BTreeSet<EdgeId>,
    critical_for: &HashMap<EdgeId, u32>,
) -> Option<usize> {
    (0..cuts.len())
        .filter(|&k| !cuts[k].is_empty() && cuts[k].iter().all(|e| !protected.contains(e)))
        .min_by_key(|&k| {
            (
                cuts[k]
                    .iter()
                    .map(|e| critical_for.get(e).copied().unwrap_or(0))
                    .sum::<u32>(),
                cuts[k].len(),
                k,
            )
        })
}

/// Finds R for one strategy (see the module docs). The greedy admission is run in three
/// deterministic orders — by qid; least harmful first (cuts that break the fewest other
/// questions' critical edges); least exposed first (fewest critical edges that other
/// questions' cuts contain) — and the result keeping the most questions wins (ties: the
/// earlier order).
pub fn resolve(g: &Graph, tasks: &[Task<'_>]) -> Removal {
    let prepared: Vec<Prepared> = tasks.par_iter().map(|t| prepare(g, t)).collect();
    // How many questions each edge is critical for, and how many cut options contain it.
    let mut critical_for: HashMap<EdgeId, u32> = HashMap::new();
    let mut in_cuts: HashMap<EdgeId, u32> = HashMap::new();
    for p in &prepared {
        let Ok(cuts) = &p.cuts else { continue };
        for &e in &p.critical {
            *critical_for.entry(e).or_insert(0) += 1;
        }
        for c in cuts.iter().flatten() {
            for &e in c {
                *in_cuts.entry(e).or_insert(0) += 1;
            }
        }
    }
    let harm = |p: &Prepared| -> u64 {
        let Ok(cuts) = &p.cuts else { return u64::MAX };
        cuts.iter()
            .map(|c| {
                c.iter()
                    .map(|opt| {
                        opt.iter()
                            .map(|e| u64::from(critical_for.get(e).copied().unwrap_or(0)))
                            .sum::<u64>()
                    })
                    .min()
                    .unwrap_or(0)
            })
            .sum()
    };
    let exposure = |p: &Prepared| -> u64 {
        p.critical
            .iter()
            .map(|e| u64::from(in_cuts.get(e).copied().unwrap_or(0)))
            .sum()
    };
    let n = prepared.len();
    let by_qid: Vec<usize> = (0..n).collect();
    let mut by_harm = by_qid.clone();
    by_harm.sort_by_key(|&i| (harm(&prepared[i]), i));
    let mut by_exposure = by_qid.clone();
    by_exposure.sort_by_key(|&i| (exposure(&prepared[i]), i));
    let mut best: Option<Removal> = None;
    for order in [by_qid, by_harm, by_exposure] {
        let r = run(g, tasks, &prepared, &critical_for, &order);
        let kept = |r: &Removal| r.dropped.iter().filter(|d| d.is_none()).count();
        if best.as_ref().is_none_or(|b| kept(&r) > kept(b)) {
            best = Some(r);
        }
    }
    best.unwrap_or(Removal {
        removed: EdgeMask::new(g.edge_count()),
        dropped: Vec::new(),
        rounds: 0,
    })
}

/// Greedy admission in `order`, verified, with learnt protections (module docs, steps 3–4).
fn run(
    g: &Graph,
    tasks: &[Task<'_>],
    prepared: &[Prepared],
    critical_for: &HashMap<EdgeId, u32>,
    order: &[usize],
) -> Removal {
    let mut forced: Vec<Option<String>> = prepared
        .iter()
        .map(|p| p.cuts.as_ref().err().cloned())
        .collect();
    // Edges protected from the start (learnt from failed verifications).
    let mut learnt: BTreeSet<EdgeId> = BTreeSet::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut dropped = forced.clone();
        let mut removed = EdgeMask::new(g.edge_count());
        let mut protected = learnt.clone();
        for &i in order {
            let p = &prepared[i];
            if dropped[i].is_some() {
                continue;
            }
            let Ok(cuts) = &p.cuts else { continue };
            if p.critical.iter().any(|&e| removed.contains(e)) {
                dropped[i] = Some(
                    "an edge its existing answers need was removed for an earlier question".into(),
                );
                continue;
            }
            let mut own = protected.clone();
            own.extend(p.critical.iter().copied());
            let chosen: Option<Vec<usize>> =
                cuts.iter().map(|c| choose(c, &own, critical_for)).collect();
            match chosen {
                Some(ks) => {
                    for (c, &k) in cuts.iter().zip(&ks) {
                        for &e in &c[k] {
                            removed.insert(e);
                        }
                    }
                    protected = own;
                }
                None => dropped[i] = Some(
                    "every cut of a serendipity answer removes an edge an existing answer needs"
                        .into(),
                ),
            }
        }
        let view = View::without(g, &removed);
        let failures: Vec<(usize, String)> = tasks
            .par_iter()
            .enumerate()
            .filter(|(i, _)| dropped[*i].is_none())
            .filter_map(|(i, t)| verify(view, t).err().map(|e| (i, e)))
            .collect();
        if failures.is_empty() {
            return Removal {
                removed,
                dropped,
                rounds,
            };
        }
        let mut grew = false;
        if rounds < ROUNDS {
            for (i, _) in &failures {
                for &e in &prepared[*i].used_by_existing {
                    if removed.contains(e) {
                        grew |= learnt.insert(e);
                    }
                }
            }
        }
        if !grew {
            // Give up on these; the next round rebuilds R without their cuts.
            for (i, e) in failures {
                forced[i] = Some(format!("unsatisfiable after {rounds} rounds: {e}"));
            }
        }
    }
}
