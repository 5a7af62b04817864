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

mod features;
mod info;
mod lists;

use std::time::Instant;

use rayon::prelude::*;
use serenqa_graph::{Direction, Graph};
use serenqa_shared::rng::SplitMix64;

use crate::dwpc::{EdgeMask, LocalIndex};
use crate::metagraph::Metagraph;
use crate::task::Task;
use crate::PredictError;

use features::{fit, positives_and_known, reached, sample, Layout, Space};
pub use info::{Holdout, PathEstimate, TopkInfo, TopkParams};
pub use lists::{default_path, Lists, TopK, FORMAT};
use walk::{Scratch, Sparse, Walker};

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
    let nd = sp.task.diseases.len();
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
    Ok(TopK {
        info,
        compounds: sp.task.compounds.clone(),
        diseases: sp.task.diseases.clone(),
        by_disease: built.by_disease,
        by_compound: built.by_compound,
    })
}
