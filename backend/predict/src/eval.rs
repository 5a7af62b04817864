//! Cross-validation without leakage, for both labels (CtD treats, CpD palliates).
//!
//! Every compound–disease pair gets a fold ([`assign_folds`]). **Edge folds**: the CtD pairs
//! are shuffled (seeded) and dealt round-robin into k folds, then the CpD-only pairs are dealt
//! on, the other pairs get a seeded hash fold. **Disease folds** (the harder, "new disease"
//! variant): the diseases are shuffled and dealt into k folds, and a pair takes its disease's
//! fold — every treatment of those diseases is hidden at once.
//!
//! For fold k, the treatment edges (every direct compound–disease relation, CtD and CpD) of
//! its labelled pairs — for disease folds, of all its diseases — go into an [`EdgeMask`]
//! ([`fold_mask`]); the whole feature table (DWPC, degrees, metapath selection) is recomputed
//! on the graph without them; each head (treats, palliates) is fitted on the pairs of the other
//! folds and scores the pairs of fold k — the treats head as served, logistic regression and
//! gradient-boosted trees combined ([`crate::model::fit_served`]). So no fold's features or models ever read one of its
//! held-out edges of either label (`tests/no_leakage.rs` checks the features against a graph
//! rebuilt without the edges, and that every held-out CpD edge is in its fold's mask).
//!
//! The table reports, per label, per fold and pooled: AUROC, AUPRC, P@100, P@10 per disease,
//! the top of each list ([`TopMetrics`]: precision and recall at 10 and 20 per disease and per
//! compound, the share of the positives among the best 3,980 pairs — within a fold, among that
//! fold's scored pairs only, so the pooled line is the one to compare),
//! the fit's iterations and final gradient, the label's degree prior alone, the other head's
//! AUROC on this label, and the calibration of the pooled out-of-fold logits checked on the
//! 100 and 1,000 best pairs. The figures themselves are [`crate::metrics`].
//!
//! [`cross_validate_learners`] (`predict eval --learners`) also scores, on the same folds, rows
//! and feature tables, the logistic head alone, the trees of a fixed grid alone, and their
//! combinations ([`crate::ensemble`]), so learners are compared on identical splits.

use std::time::Instant;

use serde::Serialize;
use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::Graph;

use crate::calibrate::Calibration;
use crate::ensemble::{combine, Combine};
use crate::features::Space;
pub use crate::folds::{assign_folds, fold_mask, FoldKind};
use crate::gbdt::GbdtParams;
pub use crate::metrics::{auprc, auroc, precision_at, Metrics, TopMetrics, TOP_BUDGET};
use crate::metrics::{metrics, ranked};
use crate::model::{fit_gbdt_on, fit_served, PredictParams};
use crate::PredictError;

#[derive(Clone, Debug, Serialize)]
pub struct FoldResult {
    pub fold: usize,
    pub masked_edges: usize,
    pub features: usize,
    pub metrics: Metrics,
    pub seconds: f64,
    /// Iterations of the head's L-BFGS fit in this fold, its largest final gradient component
    /// and whether it reached the tolerance.
    pub iterations: usize,
    pub grad_max: f64,
    pub converged: bool,
}

/// One label's cross-validation.
#[derive(Clone, Debug, Serialize)]
pub struct LabelReport {
    /// The label relation's abbreviation (`CtD`, `CpD`) and what it means.
    pub relation: String,
    pub meaning: String,
    pub folds: Vec<FoldResult>,
    /// Pooled out-of-fold scores.
    pub overall: Metrics,
    /// AUROC of this label's compound-degree × disease-degree prior alone, on the same
    /// folds (degrees on each fold's masked graph, own edges left out).
    pub prior_auroc: f64,
    /// AUROC on this label of the *other* head's out-of-fold scores (does a head of its own
    /// add anything over the other label's model?).
    pub other_head_auroc: Option<f64>,
    /// The calibration ([`crate::calibrate`]) fitted on the pooled out-of-fold logits, and
    /// Platt scaling alone for comparison.
    pub calibration: Option<Calibration>,
    pub platt: Option<Calibration>,
    /// The check of both: for the 100 and the 1,000 best pairs (pooled out-of-fold), the
    /// observed precision, the mean calibrated score, and Platt's mean score.
    pub calibration_check: Vec<CalibrationCheck>,
    /// The learners compared on this label's folds ([`cross_validate_learners`]; the first
    /// label only): the logistic head itself first, then gradient-boosted trees and the
    /// combinations of both.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub learners: Vec<LearnerReport>,
}

/// One learner's out-of-fold figures on the same folds and feature tables as the heads'.
#[derive(Clone, Debug, Serialize)]
pub struct LearnerReport {
    pub name: String,
    pub folds: Vec<Metrics>,
    pub overall: Metrics,
    /// Fitting time over all folds (the trees' fits; 0 for the logistic head and the
    /// combinations, whose parts are timed elsewhere).
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CalibrationCheck {
    pub top: usize,
    pub observed: f64,
    pub calibrated: f64,
    pub platt: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    pub kind: FoldKind,
    /// One per label: treats (CtD) first, then the second label (CpD) if the graph has one.
    pub labels: Vec<LabelReport>,
}

/// Runs k-fold cross-validation of every head; `progress` gets one line per fold and label.
/// `ontology` (optional) adds identifier matches to the contradiction features.
pub fn cross_validate(
    g: &Graph,
    params: &PredictParams,
    ontology: Option<&DiseaseOntology>,
    k: usize,
    kind: FoldKind,
    progress: &mut dyn FnMut(&str, &FoldResult),
) -> Result<EvalReport, PredictError> {
    cross_validate_learners(g, params, ontology, k, kind, &[], progress)
}

/// Names of the learners [`cross_validate_learners`] compares for a grid of trees.
pub fn learner_names(grid: &[GbdtParams]) -> Vec<String> {
    let mut names = vec!["logistic".to_string()];
    for gp in grid {
        names.push(gbdt_name(gp));
    }
    for gp in grid {
        for c in Combine::ALL {
            names.push(format!("logistic + {} ({})", gbdt_name(gp), c.name()));
        }
    }
    if let Some(gp) = grid.first() {
        for w in WEIGHTS {
            names.push(format!(
                "{w}·logistic + {}·{} ({})",
                1.0 - w,
                gbdt_name(gp),
                Combine::MeanZ.name()
            ));
        }
    }
    names
}

/// The other logistic weights [`cross_validate_learners`] tries for the first trees of its
/// grid, standardised logits (the equal weight is among the combinations already).
pub const WEIGHTS: [f64; 2] = [0.25, 0.75];

fn gbdt_name(gp: &GbdtParams) -> String {
    format!(
        "GBDT depth {} lr {} × {}",
        gp.depth, gp.learning_rate, gp.rounds
    )
}

/// [`cross_validate`], and on the first label also gradient-boosted trees of each of `grid`
/// fitted on the same rows of the same fold's feature table as the logistic head, alone and
/// combined with it (each [`Combine`], equal weights) — reported in `LabelReport::learners`.
pub fn cross_validate_learners(
    g: &Graph,
    params: &PredictParams,
    ontology: Option<&DiseaseOntology>,
    k: usize,
    kind: FoldKind,
    grid: &[GbdtParams],
    progress: &mut dyn FnMut(&str, &FoldResult),
) -> Result<EvalReport, PredictError> {
    if !(2..=20).contains(&k) {
        return Err(PredictError::Task(format!(
            "folds must be between 2 and 20, not {k}"
        )));
    }
    let space = Space::with_ontology(g, &params.features, ontology)?;
    let task = &space.task;
    let (nc, nd) = (task.compounds.len(), task.diseases.len());
    let npairs = nc * nd;
    let treat_edges = task.edges_of(g, &space.li, &task.treatment);
    let rels = task.labels();
    let all_positives = task.positives(g, &space.li);
    // A label with fewer positives than folds cannot be cross-validated: it is left out.
    let heads: Vec<usize> = (0..rels.len())
        .filter(|&h| h == 0 || all_positives[h].iter().filter(|&&b| b).count() >= k)
        .collect();
    let positives: Vec<Vec<bool>> = heads.iter().map(|&h| all_positives[h].clone()).collect();
    let npos = positives[0].iter().filter(|&&b| b).count();
    if npos < k {
        return Err(PredictError::Task(format!(
            "{npos} treatment pairs: too few for {k} folds"
        )));
    }
    let fold = assign_folds(&positives, nd, k, kind, params.seed);
    let nh = heads.len();
    let mut oof = vec![vec![0f64; npairs]; nh];
    let mut prior = vec![vec![0f64; npairs]; nh];
    let mut folds: Vec<Vec<FoldResult>> = vec![Vec::new(); nh];
    let abbrev = |h: usize| g.relation(rels[heads[h]]).abbrev.clone();
    let names = if grid.is_empty() {
        Vec::new()
    } else {
        learner_names(grid)
    };
    let mut learner_oof = vec![vec![0f64; npairs]; names.len()];
    let mut learner_folds: Vec<Vec<Metrics>> = vec![Vec::new(); names.len()];
    let mut learner_seconds = vec![0f64; names.len()];
    for f in 0..k {
        let t = Instant::now();
        let mask = fold_mask(g, &treat_edges, &positives, &fold, f, kind);
        let feats = space.features(&mask, &params.features);
        let test: Vec<usize> = (0..npairs).filter(|&p| fold[p] == f).collect();
        for h in 0..nh {
            let th = Instant::now();
            // The treats head as served (with its trees when `params.trees`), the others
            // logistic.
            let served = fit_served(
                &feats,
                &positives[h],
                &|p| fold[p] != f,
                params,
                None,
                if h == 0 { params.trees.as_ref() } else { None },
            );
            let scores: Vec<f64> = test.iter().map(|&p| served.logits[p]).collect();
            let labels: Vec<bool> = test.iter().map(|&p| positives[h][p]).collect();
            // The degree prior: the two label degrees on the masked graph (own edges out).
            let (ci, di) = feats.label_degree[heads[h]];
            for (i, &p) in test.iter().enumerate() {
                oof[h][p] = scores[i];
                prior[h][p] = match (ci, di) {
                    (Some(a), Some(b)) => {
                        (feats.cols[a][p] as f64).sinh().ln_1p()
                            + (feats.cols[b][p] as f64).sinh().ln_1p()
                    }
                    _ => 0.0,
                };
            }
            // The feature table is shared by the heads: its time goes to the first.
            let seconds = if h == 0 {
                t.elapsed().as_secs_f64()
            } else {
                th.elapsed().as_secs_f64()
            };
            let m = &served.fitted.model;
            let r = FoldResult {
                fold: f,
                masked_edges: mask.len(),
                features: feats.cols.len(),
                metrics: metrics(&test, &scores, &labels, nd),
                seconds,
                iterations: m.iterations,
                grad_max: m.grad_max,
                converged: m.converged,
            };
            progress(&abbrev(h), &r);
            folds[h].push(r);
            if h == 0 && !grid.is_empty() {
                let lr = &served.logistic;
                let mut all: Vec<Vec<f64>> = vec![lr.clone()];
                for (i, gp) in grid.iter().enumerate() {
                    // The served trees are not fitted twice.
                    if let (Some(z), true) =
                        (&served.trees_logits, params.trees.as_ref() == Some(gp))
                    {
                        learner_seconds[1 + i] += served.seconds_trees;
                        all.push(z.clone());
                        continue;
                    }
                    let tg = Instant::now();
                    let gb = fit_gbdt_on(&feats, &positives[0], &|p| fold[p] != f, params, gp);
                    all.push(gb.logits_all(&feats));
                    learner_seconds[1 + i] += tg.elapsed().as_secs_f64();
                }
                for i in 0..grid.len() {
                    for c in Combine::ALL {
                        all.push(combine(lr, &all[1 + i], c, 0.5));
                    }
                }
                for w in WEIGHTS {
                    all.push(combine(lr, &all[1], Combine::MeanZ, w));
                }
                for (v, z) in all.iter().enumerate() {
                    let sc: Vec<f64> = test.iter().map(|&p| z[p]).collect();
                    for &p in &test {
                        learner_oof[v][p] = z[p];
                    }
                    learner_folds[v].push(metrics(&test, &sc, &labels, nd));
                }
            }
        }
    }
    let all: Vec<usize> = (0..npairs).collect();
    let labels = (0..nh)
        .map(|h| {
            let calibration = Calibration::fit(&oof[h], &positives[h]);
            let platt = Calibration::fit_platt(&oof[h], &positives[h]);
            let order = ranked(&oof[h]);
            let mean_of = |top: &[usize], c: Option<Calibration>| {
                c.map_or(f64::NAN, |c| {
                    top.iter().map(|&p| c.apply(oof[h][p])).sum::<f64>() / top.len().max(1) as f64
                })
            };
            let calibration_check = [100, 1000]
                .iter()
                .map(|&t| {
                    let top = &order[..order.len().min(t)];
                    CalibrationCheck {
                        top: t,
                        observed: top.iter().filter(|&&p| positives[h][p]).count() as f64
                            / top.len().max(1) as f64,
                        calibrated: mean_of(top, calibration),
                        platt: mean_of(top, platt),
                    }
                })
                .collect();
            LabelReport {
                relation: abbrev(h),
                meaning: g.relation(rels[heads[h]]).verb.clone(),
                folds: std::mem::take(&mut folds[h]),
                overall: metrics(&all, &oof[h], &positives[h], nd),
                prior_auroc: auroc(&prior[h], &positives[h]),
                other_head_auroc: (nh > 1)
                    .then(|| auroc(&oof[if h == 0 { 1 } else { 0 }], &positives[h])),
                calibration,
                platt,
                calibration_check,
                learners: if h == 0 {
                    names
                        .iter()
                        .enumerate()
                        .map(|(v, name)| LearnerReport {
                            name: name.clone(),
                            folds: std::mem::take(&mut learner_folds[v]),
                            overall: metrics(&all, &learner_oof[v], &positives[0], nd),
                            seconds: learner_seconds[v],
                        })
                        .collect()
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    Ok(EvalReport { kind, labels })
}

impl EvalReport {
    /// The label's report by relation abbreviation (`CtD`, `CpD`).
    pub fn label(&self, abbrev: &str) -> Option<&LabelReport> {
        self.labels.iter().find(|l| l.relation == abbrev)
    }

    /// The tables `serenqa predict eval` prints: one per label.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for l in &self.labels {
            s += &format!(
                "{} ({}) — {} folds, {}:\nfold  masked  features  positives  negatives   AUROC   AUPRC   P@100  P@10/disease  L-BFGS it.  max |grad|  seconds\n",
                l.relation,
                l.meaning,
                l.folds.len(),
                match self.kind {
                    FoldKind::Edges => "treatment edges held out (CtD and CpD of the fold's pairs)",
                    FoldKind::Diseases => "diseases held out: all their treatments hidden",
                }
            );
            for f in &l.folds {
                let m = &f.metrics;
                s += &format!(
                    "{:>4}  {:>6}  {:>8}  {:>9}  {:>9}  {:.4}  {:.4}  {:.3}  {:>12.3}  {:>10}  {:>10.1e}  {:>7.1}\n",
                    f.fold,
                    f.masked_edges,
                    f.features,
                    m.positives,
                    m.negatives,
                    m.auroc,
                    m.auprc,
                    m.p_at_100,
                    m.p_at_10_per_disease,
                    format!("{}{}", f.iterations, if f.converged { "" } else { "*" }),
                    f.grad_max,
                    f.seconds
                );
            }
            let m = &l.overall;
            s += &format!(
                " all  {:>6}  {:>8}  {:>9}  {:>9}  {:.4}  {:.4}  {:.3}  {:>12.3}  {:>10}  {:>10}  {:>7.1}\n",
                "",
                "",
                m.positives,
                m.negatives,
                m.auroc,
                m.auprc,
                m.p_at_100,
                m.p_at_10_per_disease,
                "",
                "",
                l.folds.iter().map(|f| f.seconds).sum::<f64>()
            );
            s += &format!(
                "{} degree prior alone (same folds): AUROC {:.4}\n",
                l.relation, l.prior_auroc
            );
            if let Some(a) = l.other_head_auroc {
                s += &format!(
                    "the other label's model ranking {}: AUROC {:.4}\n",
                    l.relation, a
                );
            }
            s += &format!(
                "top of the lists (mean over entities with a held-out positive; in top {TOP_BUDGET} = share of all positives among the best {TOP_BUDGET} pairs):\nfold   P@10/dis  P@20/dis  R@10/dis  R@20/dis   P@10/cpd  P@20/cpd  R@10/cpd  R@20/cpd   in top {TOP_BUDGET}\n"
            );
            let top_row = |name: &str, t: &TopMetrics| {
                format!(
                    "{name:>4}   {:>8.3}  {:>8.3}  {:>8.3}  {:>8.3}   {:>8.3}  {:>8.3}  {:>8.3}  {:>8.3}   {:>8.3}\n",
                    t.p_at_10_disease,
                    t.p_at_20_disease,
                    t.r_at_10_disease,
                    t.r_at_20_disease,
                    t.p_at_10_compound,
                    t.p_at_20_compound,
                    t.r_at_10_compound,
                    t.r_at_20_compound,
                    t.in_top_budget
                )
            };
            for f in &l.folds {
                s += &top_row(&f.fold.to_string(), &f.metrics.top);
            }
            s += &top_row("all", &l.overall.top);
            if let Some(c) = l.calibration {
                s += &format!("calibration on the pooled out-of-fold logits: c = {:.4}, slope below 0 = {:.4}, above 0 = {:.4}", c.c, c.low, c.high);
                if let Some(p) = l.platt {
                    s += &format!(" (Platt alone: a = {:.4}, b = {:.4})", p.high, p.c);
                }
                s += "\n";
                for k in &l.calibration_check {
                    s += &format!("  best {:>5}: observed precision {:.3}, mean calibrated score {:.3}, Platt's {:.3}\n", k.top, k.observed, k.calibrated, k.platt);
                }
            }
            if !l.learners.is_empty() {
                s += &format!("learners on the same folds (pooled out-of-fold):\n{:<48}  P@10/dis  P@20/dis  R@10/dis  in top {TOP_BUDGET}   AUROC   AUPRC  seconds\n", "learner");
                for r in &l.learners {
                    let (m, t) = (&r.overall, &r.overall.top);
                    s += &format!(
                        "{:<48}  {:>8.3}  {:>8.3}  {:>8.3}  {:>12.3}  {:.4}  {:.4}  {:>7.1}\n",
                        r.name,
                        t.p_at_10_disease,
                        t.p_at_20_disease,
                        t.r_at_10_disease,
                        t.in_top_budget,
                        m.auroc,
                        m.auprc,
                        r.seconds
                    );
                }
            }
            if l.folds.iter().any(|f| !f.converged) {
                s += "* = the fit stopped at its iteration cap before the gradient tolerance\n";
            }
            s += "\n";
        }
        s
    }
}

/// The treats head's logits of **every** pair under each fold's model, for evaluating what is
/// built on the scores (Discover's first screen ranks all of a disease's compounds by one
/// fold's model). Folds, masks and fits are exactly those of [`cross_validate`].
pub struct FoldScores {
    pub kind: FoldKind,
    pub k: usize,
    /// The fold of every pair (pair `p` = compound `p / diseases` × disease `p % diseases`).
    pub fold: Vec<usize>,
    /// Per label (treats, then palliates when it has at least `k` positives): positive pairs.
    pub positives: Vec<Vec<bool>>,
    /// Per fold: the treats head's logit of every pair.
    pub logits: Vec<Vec<f64>>,
    /// Calibration fitted on the out-of-fold logits (each pair under the fold that hid it).
    pub calibration: Option<Calibration>,
    pub compounds: Vec<u32>,
    pub diseases: Vec<u32>,
}

impl FoldScores {
    /// Is pair `p` hidden in fold `f` (its treatment edges masked, its label unknown there)?
    pub fn held_out(&self, p: usize, f: usize) -> bool {
        self.fold[p] == f
            && match self.kind {
                FoldKind::Edges => self.positives.iter().any(|l| l[p]),
                FoldKind::Diseases => true,
            }
    }
}

/// Computes [`FoldScores`]; `progress` gets (fold, seconds) after each fold.
pub fn fold_scores(
    g: &Graph,
    params: &PredictParams,
    ontology: Option<&DiseaseOntology>,
    k: usize,
    kind: FoldKind,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<FoldScores, PredictError> {
    if !(2..=20).contains(&k) {
        return Err(PredictError::Task(format!(
            "folds must be between 2 and 20, not {k}"
        )));
    }
    let space = Space::with_ontology(g, &params.features, ontology)?;
    let task = &space.task;
    let nd = task.diseases.len();
    let treat_edges = task.edges_of(g, &space.li, &task.treatment);
    let all_positives = task.positives(g, &space.li);
    let positives: Vec<Vec<bool>> = all_positives
        .iter()
        .enumerate()
        .filter(|(h, l)| *h == 0 || l.iter().filter(|&&b| b).count() >= k)
        .map(|(_, l)| l.clone())
        .collect();
    if positives[0].iter().filter(|&&b| b).count() < k {
        return Err(PredictError::Task(format!(
            "too few treatment pairs for {k} folds"
        )));
    }
    let fold = assign_folds(&positives, nd, k, kind, params.seed);
    let npairs = fold.len();
    let mut logits = Vec::with_capacity(k);
    let mut oof = vec![0f64; npairs];
    for f in 0..k {
        let t = Instant::now();
        let mask = fold_mask(g, &treat_edges, &positives, &fold, f, kind);
        let feats = space.features(&mask, &params.features);
        let z = fit_served(
            &feats,
            &positives[0],
            &|p| fold[p] != f,
            params,
            None,
            params.trees.as_ref(),
        )
        .logits;
        for p in 0..npairs {
            if fold[p] == f {
                oof[p] = z[p];
            }
        }
        logits.push(z);
        progress(f, t.elapsed().as_secs_f64());
    }
    let calibration = Calibration::fit(&oof, &positives[0]);
    Ok(FoldScores {
        kind,
        k,
        fold,
        positives,
        logits,
        calibration,
        compounds: task.compounds.clone(),
        diseases: task.diseases.clone(),
    })
}
