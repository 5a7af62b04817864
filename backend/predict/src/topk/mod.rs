//! Plausibility at any size: the best `k` compounds of every disease and the best `k` diseases
//! of every compound, without scoring every pair (issue 40 item 2).
//!
//! The all-pairs model ([`crate::model`]) keeps a row per pair: past
//! [`crate::task::MAX_PAIRS`] (a CKG-sized graph has 186,870 × 186,870 = 35 billion pairs)
//! it cannot run. This model keeps the same kind of features and learner on any graph with a
//! compound-like type, a disease-like type and a treats-like relation ([`Task::detect_any`]):
//! - **Features** of a pair: `asinh(DWPC / mean)` per metapath disease → compound (walks,
//!   damping `w`, degrees on the graph as masked, the pair's own treatment edge never in its
//!   walks: [`walk`]) and the degree prior (`asinh` of c's and d's degree in every step leaving
//!   their type, own edges left out) — the columns of [`crate::features`], computed per
//!   disease by sparse pushes instead of dense products.
//! - **Which metapaths**: lengths 2..=`max_len` over the graph's own metagraph; each one's
//!   cost (edge visits of a push from every disease) and support are estimated on a fixed
//!   sample of diseases, and metapaths are taken cheapest first (shorter first) while the
//!   estimated total stays within `budget`. So the work is bounded before it starts, and the
//!   run says what it left out.
//! - **Fit**: L2 logistic regression ([`crate::learn`]) on a uniform sample of diseases (all
//!   their treatments as positives, `neg_per_pos` random unknown pairs of the same diseases per
//!   positive), the negative subsampling undone in the intercept, so scores are on the scale
//!   of all pairs.
//! - **Top lists, exact for the disease side**: a pair no metapath reaches has all metapath
//!   features at zero, so its logit is a constant plus a compound term plus a disease term.
//!   A disease's list is therefore exact: its reached compounds are scored one by one, and
//!   the best unreached ones come from one global order of the compound term. A compound's
//!   list gets every reached pair, and every pair of the `k` diseases with the largest disease
//!   term; a list is *proved* exact when its `k`-th score beats the bound on any pair left out
//!   (the run counts the lists proved so).
//! - **A smoke test, not a validation**: one split of the sampled diseases, the held-out
//!   diseases' treatment edges masked before any feature, held-out treatments' ranks among all
//!   compounds ([`Holdout`]). On a synthetic graph its labels mean nothing.
//!
//! Known pairs (any treatment edge) are never in a list: the lists are suggestions.
//! Everything is deterministic: the samples are seeded, each disease is computed on its own in
//! a fixed order, and a list is the unique top `k` under (score, then node index).

pub mod walk;

mod lists;

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serenqa_graph::{Direction, Graph, NodeId, RelId};
use serenqa_shared::rng::SplitMix64;

use crate::dwpc::{EdgeMask, LocalIndex};
use crate::learn::{self, FitParams, LogReg};
use crate::metagraph::Metagraph;
use crate::task::Task;
use crate::PredictError;

pub use lists::{default_path, Lists, TopK, FORMAT};
use walk::{Scratch, Sparse, Walker};

/// Settings of a top-k run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopkParams {
    /// List length per disease and per compound.
    pub k: usize,
    pub max_len: usize,
    /// DWPC damping exponent w.
    pub damping: f64,
    /// Diseases sampled for the fit (all of them when the graph has fewer).
    pub train_diseases: usize,
    pub neg_per_pos: usize,
    pub seed: u64,
    /// Most work the scoring pass may take (edge visits plus entries scored), estimated
    /// before it starts.
    pub budget: f64,
    /// Diseases the cost and support estimates are read on.
    pub cost_sample: usize,
    /// A metapath is kept when at least this share of the sampled pairs has a walk of it.
    pub min_support: f64,
    /// Share of the sampled diseases held out in the smoke test (0: none).
    pub holdout: f64,
    pub fit: FitParams,
    /// Say each phase on stderr as it ends.
    #[serde(skip)]
    pub progress: bool,
}

impl Default for TopkParams {
    fn default() -> Self {
        TopkParams {
            k: 100,
            max_len: 3,
            damping: 0.4,
            train_diseases: 4000,
            neg_per_pos: 20,
            seed: 0,
            budget: 2e10,
            cost_sample: 256,
            min_support: 1e-4,
            holdout: 0.2,
            fit: FitParams::default(),
            progress: false,
        }
    }
}

/// One metapath's estimate on the cost sample.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PathEstimate {
    pub name: String,
    pub len: usize,
    /// Cost of a push from every disease: edge visits plus entries scored (sample mean ×
    /// diseases; infinite when the sample alone passed the budget).
    pub visits: f64,
    /// Share of pairs with a walk.
    pub support: f64,
    pub kept: bool,
}

/// The held-out check: treatments of held-out diseases, masked before any feature.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Holdout {
    pub train_diseases: usize,
    pub test_diseases: usize,
    /// Held-out treatments (positives) and random unknown pairs of the same diseases.
    pub positives: usize,
    pub negatives: usize,
    pub auroc: f64,
    /// Share of held-out treatments in their disease's top `k` (of all compounds).
    pub recall_at_k: f64,
    /// The same for 10.
    pub recall_at_10: f64,
    /// Median rank of a held-out treatment among all compounds of its disease.
    pub median_rank: f64,
    /// Compounds per disease (the rank's scale).
    pub compounds: usize,
}

/// What a run did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TopkInfo {
    pub graph_hash: String,
    pub params: TopkParams,
    pub compound_type: String,
    pub disease_type: String,
    pub label: String,
    pub estimates: Vec<PathEstimate>,
    /// Kept metapaths (compound → disease reading) with their coefficient (standardised).
    pub metapaths: Vec<(String, f64)>,
    pub degree_features: Vec<(String, f64)>,
    pub positives: usize,
    pub negatives: usize,
    pub fit_diseases: usize,
    pub iterations: usize,
    pub converged: bool,
    pub grad_max: f64,
    /// Edge visits the scoring pass took, and its estimate.
    pub visits: u64,
    pub estimated_visits: f64,
    /// Candidate pairs scored one by one (reached by a metapath).
    pub reached_pairs: u64,
    /// Compound lists proved exact (module docs), of all compounds.
    pub exact_compound_lists: usize,
    pub holdout: Option<Holdout>,
    /// Seconds per phase.
    pub timings: Vec<(String, f64)>,
}

impl PartialEq for TopkParams {
    fn eq(&self, o: &Self) -> bool {
        serde_json::to_string(self).ok() == serde_json::to_string(o).ok()
    }
}

/// Everything fixed for a graph: the task, metagraph, local indices.
struct Space<'g> {
    g: &'g Graph,
    task: Task,
    mg: Metagraph,
    li: LocalIndex,
}

/// The feature layout: kept metapaths, their means, the degree steps.
#[derive(Clone)]
struct Layout {
    paths: Vec<Vec<usize>>,
    means: Vec<f64>,
    /// (step, compound side?) of each degree feature.
    deg_steps: Vec<(usize, bool)>,
}

impl Layout {
    fn width(&self) -> usize {
        self.paths.len() + self.deg_steps.len()
    }
    /// The steps the metapaths walk, sorted.
    fn path_steps(&self) -> Vec<usize> {
        let mut s: Vec<usize> = self.paths.iter().flatten().copied().collect();
        s.sort_unstable();
        s.dedup();
        s
    }
    fn degree_steps(&self) -> Vec<usize> {
        self.deg_steps.iter().map(|x| x.0).collect()
    }
    /// A walker of these metapaths and degree features on `g` without `mask`.
    fn walker<'a>(&self, sp: &'a Space, mask: &'a EdgeMask, w: f64) -> Walker<'a> {
        Walker::with_degrees(
            sp.g,
            &sp.mg,
            &sp.li,
            mask,
            w,
            &self.path_steps(),
            &self.degree_steps(),
        )
    }
}

/// Compounds joined to disease `d` (local) by an unmasked edge of one of `rels`: (local
/// compound, relation), sorted.
fn joined(sp: &Space, mask: &EdgeMask, d: usize, rels: &[RelId]) -> Vec<(u32, RelId)> {
    let g = sp.g;
    let dn = sp.task.diseases[d];
    let mut out: Vec<(u32, RelId)> = g
        .edges(dn, Direction::Both)
        .filter(|e| rels.contains(&e.rel) && !mask.contains(e.id))
        .filter_map(|e| {
            let other = if e.source == dn { e.target } else { e.source };
            (g.node_type(other) == sp.task.compound_type)
                .then(|| (sp.li.local[other as usize], e.rel))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The label's compounds of `d` (positives) and every treatment's compounds (known).
fn positives_and_known(sp: &Space, mask: &EdgeMask, d: usize) -> (Vec<u32>, Vec<u32>) {
    let all = joined(sp, mask, d, &sp.task.treatment);
    let mut pos: Vec<u32> = all
        .iter()
        .filter(|x| x.1 == sp.task.label)
        .map(|x| x.0)
        .collect();
    pos.dedup();
    let mut known: Vec<u32> = all.iter().map(|x| x.0).collect();
    known.dedup();
    (pos, known)
}

/// The raw feature row of (c, d) from d's pushes; `known`: remove the pair's own edges.
#[allow(clippy::too_many_arguments)]
fn row(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    vecs: &[Sparse],
    prefix: &[f64],
    d: u32,
    c: u32,
    known: bool,
    sc: &mut Scratch,
) -> Vec<f64> {
    let mut r = Vec::with_capacity(lay.width());
    for (j, p) in lay.paths.iter().enumerate() {
        let mut v = vecs[j].get_sorted(c);
        if known && v > 0.0 {
            v = (v - w.own_walks(p, prefix[j], d, c, sc)).max(0.0);
        }
        r.push(transform(v, lay.means[j]));
    }
    for &(s, side_c) in &lay.deg_steps {
        let st = &sp.mg.steps[s];
        let degs = w.deg[s].as_deref().unwrap_or(&[]);
        let (me, other) = if side_c { (c, d) } else { (d, c) };
        let mut deg = degs.get(me as usize).copied().unwrap_or(0);
        let reaches_other = if side_c {
            st.to == sp.task.disease_type
        } else {
            st.to == sp.task.compound_type
        };
        if known && st.treatment && reaches_other {
            deg = deg.saturating_sub(w.edges_between(s, me, other));
        }
        r.push((deg as f64).asinh());
    }
    r
}

/// The training rows of `diseases` on the masked graph: each disease's positives and a
/// seeded sample of its unknown pairs. Returns (rows, labels, sampling rate of negatives).
fn training_rows(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    diseases: &[u32],
    params: &TopkParams,
    salt: u64,
) -> (Vec<f64>, Vec<f64>, f64) {
    let nc = sp.task.compounds.len();
    let per: Vec<(Vec<u32>, Vec<u32>)> = diseases
        .par_iter()
        .map(|&d| positives_and_known(sp, w.mask, d as usize))
        .collect();
    let npos: usize = per.iter().map(|p| p.0.len()).sum();
    let unknown: usize = per.iter().map(|p| nc - p.1.len()).sum();
    let want = (npos * params.neg_per_pos).max(200).min(unknown);
    let mut rng = SplitMix64::new(params.seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut neg: Vec<Vec<u32>> = vec![Vec::new(); diseases.len()];
    let mut drawn = 0;
    let mut tries = 0usize;
    while drawn < want && tries < want * 50 {
        tries += 1;
        let i = rng.below(diseases.len());
        let c = rng.below(nc) as u32;
        if per[i].1.binary_search(&c).is_ok() {
            continue;
        }
        neg[i].push(c);
        drawn += 1;
    }
    let rate = if unknown == 0 {
        1.0
    } else {
        drawn as f64 / unknown as f64
    };
    let blocks: Vec<(Vec<f64>, Vec<f64>)> = diseases
        .par_iter()
        .enumerate()
        .map_init(Scratch::default, |sc, (i, &d)| {
            let (pos, _) = &per[i];
            if pos.is_empty() && neg[i].is_empty() {
                return (Vec::new(), Vec::new());
            }
            let (vecs, prefix) = w.from_disease(&lay.paths, d, sc);
            let vecs: Vec<Sparse> = vecs.iter().map(Sparse::sorted).collect();
            let mut x = Vec::new();
            let mut y = Vec::new();
            for &c in pos {
                x.extend(row(sp, w, lay, &vecs, &prefix, d, c, true, sc));
                y.push(1.0);
            }
            for &c in &neg[i] {
                x.extend(row(sp, w, lay, &vecs, &prefix, d, c, false, sc));
                y.push(0.0);
            }
            (x, y)
        })
        .collect();
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (bx, by) in blocks {
        x.extend(bx);
        y.extend(by);
    }
    (x, y, rate)
}

/// The fitted model as sums: logit(c, d) = base + paths(c, d) + gc[c] + hd[d].
struct Scorer {
    lr: LogReg,
    base: f64,
    /// Σ_j β_j z_j(0) over the metapaths: an unreached pair's metapath part.
    z0: f64,
    gc: Vec<f64>,
    hd: Vec<f64>,
}

impl Scorer {
    fn new(sp: &Space, w: &Walker, lay: &Layout, lr: LogReg, rate: f64) -> Scorer {
        let np = lay.paths.len();
        let z0 = (0..np).map(|j| lr.beta[j] * lr.z(j, 0.0)).sum();
        let side = |want_c: bool, n: usize| -> Vec<f64> {
            (0..n)
                .into_par_iter()
                .map(|i| {
                    lay.deg_steps
                        .iter()
                        .enumerate()
                        .filter(|(_, &(_, c))| c == want_c)
                        .map(|(k, &(s, _))| {
                            let deg = w.deg[s].as_ref().and_then(|x| x.get(i)).copied();
                            let v = (deg.unwrap_or(0) as f64).asinh();
                            lr.beta[np + k] * lr.z(np + k, v)
                        })
                        .sum()
                })
                .collect()
        };
        let gc = side(true, sp.task.compounds.len());
        let hd = side(false, sp.task.diseases.len());
        Scorer {
            base: lr.intercept + rate.ln(),
            lr,
            z0,
            gc,
            hd,
        }
    }

    /// β_j · z_j of metapath `j` at raw value `v`.
    fn path_term(&self, lay: &Layout, j: usize, v: f64) -> f64 {
        self.lr.beta[j] * self.lr.z(j, transform(v, lay.means[j]))
    }

    /// The logits of every compound `reach`ed from `d` (each once, any order), in one pass over
    /// the pushes' entries; `acc` is a zeroed buffer over the compounds, left zeroed.
    fn reached_all(
        &self,
        lay: &Layout,
        vecs: &[Sparse],
        reach: &[u32],
        d: u32,
        acc: &mut [f64],
    ) -> Vec<f64> {
        for (j, v) in vecs.iter().enumerate() {
            let zero = self.path_term(lay, j, 0.0);
            for (&c, &x) in v.idx.iter().zip(&v.val) {
                acc[c as usize] += self.path_term(lay, j, x) - zero;
            }
        }
        reach
            .iter()
            .map(|&c| {
                let z = std::mem::take(&mut acc[c as usize]);
                self.base + self.z0 + z + self.gc[c as usize] + self.hd[d as usize]
            })
            .collect()
    }

    fn unreached(&self, c: u32, d: u32) -> f64 {
        self.base + self.z0 + self.gc[c as usize] + self.hd[d as usize]
    }
}

/// A metapath feature: `asinh(v / mean)` for `v` ≥ 0, as `ln(x + √(x² + 1))` (the scoring
/// pass takes one per entry; libm's `asinh` guards ranges these values never reach).
fn transform(v: f64, mean: f64) -> f64 {
    let x = v / mean;
    (x + (x * x + 1.0).sqrt()).ln()
}

/// The compounds a disease's pushes reach, sorted.
fn reached(vecs: &[Sparse]) -> Vec<u32> {
    let mut r: Vec<u32> = vecs.iter().flat_map(|v| v.idx.iter().copied()).collect();
    r.sort_unstable();
    r.dedup();
    r
}

fn sample(n: usize, m: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut all: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut all);
    all.truncate(m.min(n));
    all
}

/// Estimates every candidate metapath on a fixed sample of diseases and keeps the cheapest
/// within the budget.
fn choose_paths(
    sp: &Space,
    params: &TopkParams,
    mask: &EdgeMask,
) -> (Layout, Vec<PathEstimate>, f64) {
    let (nc, nd) = (sp.task.compounds.len(), sp.task.diseases.len());
    let cands = sp.mg.metapaths(
        sp.task.disease_type,
        sp.task.compound_type,
        2,
        params.max_len.clamp(2, 4),
    );
    let mut deg_steps = Vec::new();
    for (s, st) in sp.mg.steps.iter().enumerate() {
        if st.from == sp.task.compound_type {
            deg_steps.push((s, true));
        } else if st.from == sp.task.disease_type {
            deg_steps.push((s, false));
        }
    }
    let path_steps: Vec<usize> = {
        let mut s: Vec<usize> = cands.iter().flatten().copied().collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let w = Walker::new(sp.g, &sp.mg, &sp.li, mask, params.damping, &path_steps);
    // A fixed, evenly spread sample of diseases.
    let m = params.cost_sample.clamp(1, nd.max(1));
    let probe: Vec<u32> = (0..m).map(|i| (i * nd / m) as u32).collect();
    // Per metapath: (cost, support, sum of values) over the probe, where the cost is the
    // edge visits plus the entries scored. A metapath whose probe cost alone passes its share
    // of the budget is dropped as soon as it does (so the estimate stays cheap on a big graph).
    let cap = (params.budget * m as f64 / nd.max(1) as f64).ceil() as u64;
    let per: Vec<(u64, u64, f64)> = cands
        .par_iter()
        .map_init(Scratch::default, |sc, p| {
            let (mut cost, mut support, mut sum) = (0u64, 0u64, 0.0);
            for &d in &probe {
                let v = w.along(p, Sparse::unit(d), sc);
                cost += sc.take_work() + v.idx.len() as u64;
                support += v.idx.len() as u64;
                sum += v.sum();
                if cost > cap {
                    return (u64::MAX, support, sum);
                }
            }
            (cost, support, sum)
        })
        .collect();
    let scale = nd as f64 / m as f64;
    let pairs = (m * nc).max(1) as f64;
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by(|&a, &b| {
        cands[a]
            .len()
            .cmp(&cands[b].len())
            .then(per[a].0.cmp(&per[b].0))
            .then(a.cmp(&b))
    });
    let mut kept = vec![false; cands.len()];
    let mut total = 0.0;
    for &i in &order {
        let (visits, support, sum) = per[i];
        if visits == u64::MAX {
            continue;
        }
        let est = visits as f64 * scale;
        if (support as f64) < params.min_support * pairs || sum <= 0.0 {
            continue;
        }
        if total + est > params.budget {
            continue;
        }
        total += est;
        kept[i] = true;
    }
    let estimates = cands
        .iter()
        .enumerate()
        .map(|(i, p)| PathEstimate {
            name: sp.mg.abbrev(&sp.mg.reversed(p)),
            len: p.len(),
            visits: if per[i].0 == u64::MAX {
                f64::INFINITY
            } else {
                per[i].0 as f64 * scale
            },
            support: per[i].1 as f64 / pairs,
            kept: kept[i],
        })
        .collect();
    let mut paths = Vec::new();
    let mut means = Vec::new();
    for (i, p) in cands.iter().enumerate() {
        if kept[i] {
            paths.push(p.clone());
            means.push(per[i].2 / pairs);
        }
    }
    (
        Layout {
            paths,
            means,
            deg_steps,
        },
        estimates,
        total,
    )
}

/// Fits on `fit_diseases` of the graph as masked.
fn fit(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    diseases: &[u32],
    params: &TopkParams,
    salt: u64,
) -> Result<(Scorer, usize, usize), PredictError> {
    let (x, y, rate) = training_rows(sp, w, lay, diseases, params, salt);
    let n = y.len();
    let npos = y.iter().filter(|&&v| v > 0.5).count();
    if npos == 0 || npos == n {
        return Err(PredictError::Task(format!(
            "the {} sampled diseases have {npos} known treatments among {n} pairs: nothing to fit",
            diseases.len()
        )));
    }
    let lr = learn::fit(&x, n, lay.width(), &y, params.fit);
    Ok((Scorer::new(sp, w, lay, lr, rate), npos, n - npos))
}

/// The held-out smoke test (module docs).
fn holdout(
    sp: &Space,
    lay: &Layout,
    train: &[u32],
    test: &[u32],
    params: &TopkParams,
) -> Result<Holdout, PredictError> {
    let g = sp.g;
    let mut mask = EdgeMask::empty(g.edge_count());
    let mut held: Vec<Vec<u32>> = Vec::with_capacity(test.len());
    let empty = EdgeMask::empty(0);
    for &d in test {
        let dn = sp.task.diseases[d as usize];
        for e in g.edges(dn, Direction::Both) {
            let other = if e.source == dn { e.target } else { e.source };
            if sp.task.treatment.contains(&e.rel) && g.node_type(other) == sp.task.compound_type {
                mask.insert(e.id);
            }
        }
        held.push(positives_and_known(sp, &empty, d as usize).0);
    }
    let w = lay.walker(sp, &mask, params.damping);
    let (sc_model, _, _) = fit(sp, &w, lay, train, params, 1)?;
    let nc = sp.task.compounds.len();
    let mut gc_sorted: Vec<f64> = sc_model.gc.clone();
    gc_sorted.sort_by(|a, b| b.total_cmp(a));
    let k = params.k;
    // Per test disease: (positive logits, sampled negative logits, ranks of the positives).
    let per: Vec<(Vec<f64>, Vec<f64>, Vec<usize>)> = test
        .par_iter()
        .enumerate()
        .map_init(
            || (Scratch::default(), vec![0.0f64; nc]),
            |(sc, acc), (i, &d)| {
                let pos = &held[i];
                if pos.is_empty() {
                    return (Vec::new(), Vec::new(), Vec::new());
                }
                let (vecs, _) = w.from_disease(&lay.paths, d, sc);
                let reach = reached(&vecs);
                let reach_logits = sc_model.reached_all(lay, &vecs, &reach, d, acc);
                let logit = |c: u32| match reach.binary_search(&c) {
                    Ok(k) => reach_logits[k],
                    Err(_) => sc_model.unreached(c, d),
                };
                let pl: Vec<f64> = pos.iter().map(|&c| logit(c)).collect();
                // Rank among all compounds: reached ones compared directly, unreached ones by
                // the sorted compound term (minus the reached ones it would count).
                let ranks = pl
                    .iter()
                    .map(|&x| {
                        let above_r = reach_logits.iter().filter(|&&y| y > x).count();
                        let t = x - (sc_model.base + sc_model.z0 + sc_model.hd[d as usize]);
                        let above_all = gc_sorted.partition_point(|&v| v > t);
                        let above_reached_closed = reach
                            .iter()
                            .filter(|&&c| sc_model.gc[c as usize] > t)
                            .count();
                        1 + above_r + above_all - above_reached_closed
                    })
                    .collect();
                let mut rng = SplitMix64::new(params.seed ^ (d as u64).wrapping_mul(0xA24B_AED4));
                let nl: Vec<f64> = (0..pos.len() * params.neg_per_pos.max(1))
                    .filter_map(|_| {
                        let c = rng.below(nc) as u32;
                        (pos.binary_search(&c).is_err()).then(|| logit(c))
                    })
                    .collect();
                (pl, nl, ranks)
            },
        )
        .collect();
    let (mut scores, mut labels, mut ranks) = (Vec::new(), Vec::new(), Vec::new());
    for (pl, nl, r) in per {
        labels.extend(std::iter::repeat_n(true, pl.len()));
        labels.extend(std::iter::repeat_n(false, nl.len()));
        scores.extend(pl);
        scores.extend(nl);
        ranks.extend(r);
    }
    let positives = ranks.len();
    ranks.sort_unstable();
    let share = |k: usize| {
        if positives == 0 {
            f64::NAN
        } else {
            ranks.iter().filter(|&&r| r <= k).count() as f64 / positives as f64
        }
    };
    let median_rank = if positives == 0 {
        f64::NAN
    } else if positives % 2 == 1 {
        ranks[positives / 2] as f64
    } else {
        (ranks[positives / 2 - 1] + ranks[positives / 2]) as f64 / 2.0
    };
    Ok(Holdout {
        train_diseases: train.len(),
        test_diseases: test.len(),
        positives,
        negatives: labels.len() - positives,
        auroc: crate::metrics::auroc(&scores, &labels),
        recall_at_k: share(k),
        recall_at_10: share(10),
        median_rank,
        compounds: nc,
    })
}

/// The top-k model of `g` (module docs).
pub fn top_k(g: &Graph, params: &TopkParams) -> Result<TopK, PredictError> {
    if params.k == 0 || params.k > 10_000 {
        return Err(PredictError::Task("k must be between 1 and 10000".into()));
    }
    let t_all = Instant::now();
    let mut timings = Vec::new();
    let mut lap = {
        let mut t = Instant::now();
        let progress = params.progress;
        move |what: &str, timings: &mut Vec<(String, f64)>| {
            if progress {
                eprintln!("top-k: {what} done in {:.1} s", t.elapsed().as_secs_f64());
            }
            timings.push((what.to_string(), t.elapsed().as_secs_f64()));
            t = Instant::now();
        }
    };
    let task = Task::detect_any(g)?;
    let mg = Metagraph::of(g, &task.treatment);
    let li = LocalIndex::of(g);
    let sp = Space { g, task, mg, li };
    let (nc, nd) = (sp.task.compounds.len(), sp.task.diseases.len());
    lap("metagraph", &mut timings);
    let none = EdgeMask::empty(0);
    let (lay, estimates, estimated_visits) = choose_paths(&sp, params, &none);
    if lay.paths.is_empty() {
        return Err(PredictError::Task(
            "no metapath from diseases to compounds fits the budget and the support minimum".into(),
        ));
    }
    lap("estimate", &mut timings);
    let mut rng = SplitMix64::new(params.seed);
    let sampled = sample(nd, params.train_diseases, &mut rng);
    let holdout = if params.holdout > 0.0 && sampled.len() >= 10 {
        let cut = ((sampled.len() as f64) * (1.0 - params.holdout.clamp(0.0, 0.9))) as usize;
        let h = holdout(&sp, &lay, &sampled[..cut], &sampled[cut..], params)?;
        lap("holdout", &mut timings);
        Some(h)
    } else {
        None
    };
    let w = lay.walker(&sp, &none, params.damping);
    let (scorer, positives, negatives) = fit(&sp, &w, &lay, &sampled, params, 0)?;
    lap("fit", &mut timings);
    let built = lists::build(&sp, &w, &lay, &scorer, params.k, params.progress);
    lap("lists", &mut timings);
    let np = lay.paths.len();
    let info = TopkInfo {
        graph_hash: g.content_hash(),
        params: params.clone(),
        compound_type: g.type_label(sp.task.compound_type).to_string(),
        disease_type: g.type_label(sp.task.disease_type).to_string(),
        label: g.relation(sp.task.label).name.clone(),
        estimates,
        metapaths: lay
            .paths
            .iter()
            .enumerate()
            .map(|(j, p)| (sp.mg.abbrev(&sp.mg.reversed(p)), scorer.lr.beta[j]))
            .collect(),
        degree_features: lay
            .deg_steps
            .iter()
            .enumerate()
            .map(|(k, &(s, side_c))| {
                let st = &sp.mg.steps[s];
                (
                    format!(
                        "degree of {} {}{}{}",
                        if side_c { "compound" } else { "disease" },
                        sp.mg.type_abbrev[st.from as usize],
                        st.letters,
                        sp.mg.type_abbrev[st.to as usize]
                    ),
                    scorer.lr.beta[np + k],
                )
            })
            .collect(),
        positives,
        negatives,
        fit_diseases: sampled.len(),
        iterations: scorer.lr.iterations,
        converged: scorer.lr.converged,
        grad_max: scorer.lr.grad_max,
        visits: built.visits,
        estimated_visits,
        reached_pairs: built.reached_pairs,
        exact_compound_lists: built.exact_compounds,
        holdout,
        timings: {
            timings.push(("total".into(), t_all.elapsed().as_secs_f64()));
            timings
        },
    };
    let _ = (nc, NodeId::default());
    Ok(TopK {
        info,
        compounds: sp.task.compounds.clone(),
        diseases: sp.task.diseases.clone(),
        by_disease: built.by_disease,
        by_compound: built.by_compound,
    })
}
