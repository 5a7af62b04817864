//! Fitting on a feature table and scoring every pair: the full run behind `serenqa predict`.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serenqa_graph::Graph;

use serenqa_graph::load::disease_ontology::DiseaseOntology;

use crate::calibrate::Calibration;
use crate::contra::{ContradictionFeature, ContradictionInfo, NAMES as CONTRADICTION_NAMES};
use crate::dwpc::EdgeMask;
use crate::ensemble::{combine, Combine};
use crate::features::{FeatureParams, Features, Space};
use crate::folds::unit;
use crate::gbdt::{Gbdt, GbdtParams};
use crate::learn::{fit_from, sigmoid, FitParams, LogReg};
use crate::PredictError;

/// Everything that decides a prediction run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PredictParams {
    pub features: FeatureParams,
    pub fit: FitParams,
    /// Negatives sampled per positive for training (all pairs are scored).
    pub negatives_per_positive: f64,
    pub seed: u64,
    /// Folds of the refits whose out-of-fold logits calibrate the served scores
    /// ([`crate::calibrate`]); 0 serves the uncalibrated model probability.
    pub calibration_folds: usize,
    /// Gradient tolerance of those refits: they only feed a two-parameter calibration, so a
    /// looser one than the served fit's is enough (the figures in the crate docs).
    pub calibration_tol: f64,
    /// Gradient-boosted trees ([`crate::gbdt`]) fitted on the treats head's rows next to its
    /// logistic regression, the served treats score combining both ([`Self::combine`]);
    /// `None`: the logistic regression alone. The palliation head is logistic only.
    #[serde(default)]
    pub trees: Option<GbdtParams>,
    /// How the treats head's two learners are combined, and the logistic part's weight.
    #[serde(default = "default_combine")]
    pub combine: Combine,
    #[serde(default = "default_weight")]
    pub logistic_weight: f64,
}

fn default_combine() -> Combine {
    Combine::MeanZ
}

fn default_weight() -> f64 {
    0.5
}

impl Default for PredictParams {
    fn default() -> Self {
        PredictParams {
            features: FeatureParams::default(),
            fit: FitParams::default(),
            negatives_per_positive: 20.0,
            seed: 0,
            calibration_folds: 5,
            calibration_tol: 1e-4,
            trees: Some(GbdtParams::default()),
            combine: default_combine(),
            logistic_weight: default_weight(),
        }
    }
}

/// A fitted model on one feature table.
#[derive(Clone, Debug)]
pub struct Fitted {
    pub model: LogReg,
    /// Added to the logit: undoes the negative subsampling (`ln rate`).
    pub offset: f64,
    pub train_pos: usize,
    pub train_neg: usize,
}

/// Fits on the pairs `train(p)` allows: positives where `positive[p]`, negatives subsampled.
pub fn fit_on(
    f: &Features,
    positive: &[bool],
    train: &dyn Fn(usize) -> bool,
    params: &PredictParams,
) -> Fitted {
    fit_on_from(f, positive, train, params, None)
}

/// [`fit_on`] warm-started from `start` ([`crate::learn::fit_from`]: same minimiser).
pub fn fit_on_from(
    f: &Features,
    positive: &[bool],
    train: &dyn Fn(usize) -> bool,
    params: &PredictParams,
    start: Option<&LogReg>,
) -> Fitted {
    let t = training_rows(positive, train, params);
    let nf = f.cols.len();
    let mut x = Vec::with_capacity(t.rows.len() * nf);
    let mut y = Vec::with_capacity(t.rows.len());
    for &p in &t.rows {
        x.extend(f.cols.iter().map(|c| c[p] as f64));
        y.push(if positive[p] { 1.0 } else { 0.0 });
    }
    let model = fit_from(&x, t.rows.len(), nf, &y, params.fit, start);
    Fitted {
        model,
        offset: t.rate.ln(),
        train_pos: t.positives,
        train_neg: t.rows.len() - t.positives,
    }
}

/// The rows a head trains on: every positive `train(p)` allows and a seeded sample of its
/// negatives (`negatives_per_positive` per positive), in pair order.
pub struct TrainingRows {
    pub rows: Vec<usize>,
    pub positives: usize,
    /// The negatives' sampling rate: `ln rate` added to a logit undoes the subsampling.
    pub rate: f64,
}

pub fn training_rows(
    positive: &[bool],
    train: &dyn Fn(usize) -> bool,
    params: &PredictParams,
) -> TrainingRows {
    let npairs = positive.len();
    let positives = (0..npairs).filter(|&p| positive[p] && train(p)).count();
    let neg_all = (0..npairs).filter(|&p| !positive[p] && train(p)).count();
    let rate = if neg_all == 0 {
        1.0
    } else {
        (params.negatives_per_positive * positives as f64 / neg_all as f64).min(1.0)
    };
    let rows: Vec<usize> = (0..npairs)
        .filter(|&p| train(p) && (positive[p] || unit(params.seed, p as u64) < rate))
        .collect();
    TrainingRows {
        rows,
        positives,
        rate,
    }
}

/// Gradient-boosted trees ([`crate::gbdt`]) fitted on the same rows as [`fit_on`].
#[derive(Clone, Debug)]
pub struct FittedGbdt {
    pub model: Gbdt,
    /// Added to the logit: undoes the negative subsampling (`ln rate`).
    pub offset: f64,
}

pub fn fit_gbdt_on(
    f: &Features,
    positive: &[bool],
    train: &dyn Fn(usize) -> bool,
    params: &PredictParams,
    gbdt: &GbdtParams,
) -> FittedGbdt {
    let t = training_rows(positive, train, params);
    let y: Vec<f64> = t
        .rows
        .iter()
        .map(|&p| if positive[p] { 1.0 } else { 0.0 })
        .collect();
    FittedGbdt {
        model: Gbdt::fit(&f.cols, &t.rows, &y, gbdt),
        offset: t.rate.ln(),
    }
}

/// A head as served: its logistic regression and, when `trees` is given, gradient-boosted
/// trees on the same rows, with every pair's served logit (the two combined by
/// `params.combine`, or the logistic one alone).
pub struct ServedFit {
    pub fitted: Fitted,
    pub trees: Option<FittedGbdt>,
    /// Every pair's logistic logit, the trees' logit, and the served combination.
    pub logistic: Vec<f64>,
    pub trees_logits: Option<Vec<f64>>,
    pub logits: Vec<f64>,
    /// Time of the trees' fit and scoring.
    pub seconds_trees: f64,
}

pub fn fit_served(
    f: &Features,
    positive: &[bool],
    train: &dyn Fn(usize) -> bool,
    params: &PredictParams,
    start: Option<&LogReg>,
    trees: Option<&GbdtParams>,
) -> ServedFit {
    let fitted = fit_on_from(f, positive, train, params, start);
    let logistic = fitted.logits_all(f);
    let Some(gp) = trees else {
        return ServedFit {
            fitted,
            trees: None,
            logits: logistic.clone(),
            logistic,
            trees_logits: None,
            seconds_trees: 0.0,
        };
    };
    let t = Instant::now();
    let gb = fit_gbdt_on(f, positive, train, params, gp);
    let z = gb.logits_all(f);
    let seconds_trees = t.elapsed().as_secs_f64();
    ServedFit {
        fitted,
        trees: Some(gb),
        logits: combine(&logistic, &z, params.combine, params.logistic_weight),
        logistic,
        trees_logits: Some(z),
        seconds_trees,
    }
}

impl FittedGbdt {
    /// Logits of all pairs, on the scale of all pairs.
    pub fn logits_all(&self, f: &Features) -> Vec<f64> {
        let mut z = self.model.logits_all(&f.cols);
        for v in &mut z {
            *v += self.offset;
        }
        z
    }
}

impl Fitted {
    pub fn logit(&self, f: &Features, p: usize) -> f64 {
        let m = &self.model;
        let mut z = 0.0f64;
        for (j, c) in f.cols.iter().enumerate() {
            if m.std[j] != 0.0 {
                z += m.beta[j] * ((c[p] as f64 - m.mean[j]) / m.std[j]);
            }
        }
        m.intercept + self.offset + z
    }
    /// Logits of all pairs, feature by feature (the same sums as [`Fitted::logit`], in the
    /// same order per pair).
    pub fn logits_all(&self, f: &Features) -> Vec<f64> {
        let m = &self.model;
        let n = f.cols.first().map_or(0, std::vec::Vec::len);
        let mut z = vec![0.0f64; n];
        for (j, c) in f.cols.iter().enumerate() {
            let (b, mu, sd) = (m.beta[j], m.mean[j], m.std[j]);
            if sd == 0.0 {
                continue;
            }
            for (zp, &x) in z.iter_mut().zip(c) {
                *zp += b * ((x as f64 - mu) / sd);
            }
        }
        let base = m.intercept + self.offset;
        z.iter().map(|&s| base + s).collect()
    }
    pub fn score(&self, f: &Features, p: usize) -> f64 {
        sigmoid(self.logit(f, p))
    }
}

/// Out-of-fold logits from `k` refits on one feature table (edge folds as in
/// [`crate::folds::assign_folds`]): every pair is scored by the model fitted without its fold.
/// The features are not recomputed per fold, so this is cheaper than [`crate::eval`] and
/// slightly optimistic — a pair's own treatment edges never enter its own features, but they
/// do enter its neighbours'. Used only to calibrate, never reported as validation. Each refit
/// is warm-started from `start` (the fit on all pairs): the objective is strictly convex, so
/// the refit converges to the same minimiser as from zero, in fewer iterations.
pub fn refit_oof_logits(
    f: &Features,
    positive: &[bool],
    fold: &[usize],
    k: usize,
    params: &PredictParams,
    start: Option<&LogReg>,
    trees: Option<&GbdtParams>,
) -> Vec<f64> {
    let mut oof = vec![0.0f64; positive.len()];
    let refit = PredictParams {
        fit: FitParams {
            tol: params.fit.tol.max(params.calibration_tol),
            ..params.fit
        },
        ..params.clone()
    };
    for fo in 0..k {
        let served = fit_served(f, positive, &|p| fold[p] != fo, &refit, start, trees);
        for (p, z) in oof.iter_mut().enumerate() {
            if fold[p] == fo {
                *z = served.logits[p];
            }
        }
    }
    oof
}

/// The calibration of one head from [`refit_oof_logits`]; `None` when switched off
/// (`calibration_folds` = 0) or when it cannot be fitted.
pub fn calibrate(
    f: &Features,
    positive: &[bool],
    fold: &[usize],
    params: &PredictParams,
    start: Option<&LogReg>,
    trees: Option<&GbdtParams>,
) -> Option<Calibration> {
    if params.calibration_folds < 2 {
        return None;
    }
    let oof = refit_oof_logits(
        f,
        positive,
        fold,
        params.calibration_folds,
        params,
        start,
        trees,
    );
    Calibration::fit(&oof, positive)
}

/// How many metapath contributions each pair keeps.
pub const TOP_METAPATHS: usize = 5;

/// The stored result of a run: every pair's score, percentiles and top metapaths.
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    pub info: PredictionInfo,
    /// Node ids (of the graph the run used), local order.
    pub compounds: Vec<u32>,
    pub diseases: Vec<u32>,
    /// Compound-major, one per pair: the treats head's probability (calibrated when
    /// `info.calibration` is set).
    pub scores: Vec<f32>,
    /// Percentile (0–100) of the pair among its disease's pairs / its compound's pairs.
    pub disease_pct: Vec<f32>,
    pub compound_pct: Vec<f32>,
    /// `TOP_METAPATHS` per pair: index into `info.metapaths` (`u16::MAX` = none) and contribution
    /// — of the treats head's *logistic* part (logit units, `β_j · z_j`), also when the served
    /// score combines it with trees (`info.trees`), which have no per-metapath contribution.
    pub top_idx: Vec<u16>,
    pub top_val: Vec<f32>,
    /// The second label's head (palliates), one per pair, and its percentiles; empty when the
    /// graph has no second label.
    pub palliates: Vec<f32>,
    pub palliates_disease_pct: Vec<f32>,
    pub palliates_compound_pct: Vec<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictionInfo {
    pub graph_hash: String,
    pub params: PredictParamsView,
    /// Metapath features used (compound → disease abbreviations), with their coefficients
    /// on the standardised feature and the feature's mean and deviation.
    pub metapaths: Vec<String>,
    pub coefficients: Vec<f64>,
    pub degree_features: Vec<(String, f64)>,
    pub metapaths_considered: usize,
    pub positives: usize,
    pub train_negatives: usize,
    pub converged: bool,
    pub iterations: usize,
    /// Largest gradient component at the treats head's final weights.
    #[serde(default)]
    pub grad_max: f64,
    /// The treats head's calibration (`None`: scores are the model's own probability).
    #[serde(default)]
    pub calibration: Option<Calibration>,
    /// The treats head's gradient-boosted trees, when the served score combines them with
    /// the logistic regression (`coefficients` and the top metapaths are the logistic part's).
    #[serde(default)]
    pub trees: Option<TreesInfo>,
    /// The second head, when the graph has a second label.
    #[serde(default)]
    pub palliates: Option<HeadInfo>,
    /// The contradiction features ([`crate::contra`]): whether the run had the Disease
    /// Ontology, whether they were fitted, their coefficients and how often they fire.
    #[serde(default)]
    pub contradiction: Option<ContradictionInfo>,
    pub seconds_features: f64,
    pub seconds_fit: f64,
    #[serde(default)]
    pub seconds_calibration: f64,
    pub seconds_predict: f64,
}

/// The trees half of the treats head: parameters, how it is combined, its training loss and
/// the features it gained most from (total split gain, best 10).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreesInfo {
    pub params: GbdtParams,
    pub combine: Combine,
    pub logistic_weight: f64,
    pub train_loss: f64,
    pub top_features: Vec<(String, f64)>,
}

/// A second model head: what it learned from, how its fit ended, its coefficients.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeadInfo {
    /// The label relation's abbreviation (`CpD`).
    pub relation: String,
    pub positives: usize,
    pub train_negatives: usize,
    pub converged: bool,
    pub iterations: usize,
    pub grad_max: f64,
    pub calibration: Option<Calibration>,
    /// Coefficients of `PredictionInfo::metapaths`, in that order.
    pub coefficients: Vec<f64>,
    pub degree_features: Vec<(String, f64)>,
}

/// JSON-friendly copy of the parameters (floats as given).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictParamsView {
    pub damping: f64,
    pub max_len: usize,
    pub min_support: f64,
    pub lambda: f64,
    pub negatives_per_positive: f64,
    pub seed: u64,
    #[serde(default)]
    pub max_iter: usize,
    #[serde(default)]
    pub tol: f64,
    #[serde(default)]
    pub calibration_folds: usize,
}

/// Percentile of each value within its group: share of the group's other members scoring
/// lower, ties counted half, × 100.
fn percentiles(vals: &[f64]) -> Vec<f32> {
    let n = vals.len();
    if n <= 1 {
        return vec![100.0; n];
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]).then(a.cmp(&b)));
    let mut out = vec![0f32; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && vals[order[j + 1]] == vals[order[i]] {
            j += 1;
        }
        let lower = i as f64;
        let ties = (j - i) as f64;
        let pct = (lower + ties / 2.0) / (n - 1) as f64 * 100.0;
        for &k in &order[i..=j] {
            out[k] = pct as f32;
        }
        i = j + 1;
    }
    out
}

/// Percentiles of every pair among its disease's and among its compound's pairs, on the
/// logits (monotone in the score, no `f32` ties from rounding).
fn percentile_tables(logits: &[f64], nc: usize, nd: usize) -> (Vec<f32>, Vec<f32>) {
    let npairs = nc * nd;
    let mut disease_pct = vec![0f32; npairs];
    let mut compound_pct = vec![0f32; npairs];
    for d in 0..nd {
        let v: Vec<f64> = (0..nc).map(|c| logits[c * nd + d]).collect();
        for (c, x) in percentiles(&v).into_iter().enumerate() {
            disease_pct[c * nd + d] = x;
        }
    }
    for c in 0..nc {
        let v = &logits[c * nd..(c + 1) * nd];
        compound_pct[c * nd..(c + 1) * nd].copy_from_slice(&percentiles(v));
    }
    (disease_pct, compound_pct)
}

/// One head fitted on all pairs: the model, every pair's logit and served probability.
struct Head {
    fitted: Fitted,
    trees: Option<FittedGbdt>,
    logits: Vec<f64>,
    calibration: Option<Calibration>,
    scores: Vec<f32>,
    seconds_fit: f64,
    seconds_calibration: f64,
}

fn fit_head(
    f: &Features,
    positive: &[bool],
    fold: Option<&[usize]>,
    params: &PredictParams,
    trees: Option<&GbdtParams>,
) -> Head {
    let t = Instant::now();
    let served = fit_served(f, positive, &|_| true, params, None, trees);
    let (fitted, trees_fit, logits) = (served.fitted, served.trees, served.logits);
    let seconds_fit = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let calibration =
        fold.and_then(|fold| calibrate(f, positive, fold, params, Some(&fitted.model), trees));
    let seconds_calibration = t.elapsed().as_secs_f64();
    let scores = logits
        .iter()
        .map(|&z| calibration.map_or_else(|| sigmoid(z), |c| c.apply(z)) as f32)
        .collect();
    Head {
        fitted,
        trees: trees_fit,
        logits,
        calibration,
        scores,
        seconds_fit,
        seconds_calibration,
    }
}

/// The full run: features on the whole graph, one head per label (treats; palliates when the
/// graph has it) fitted on all of that label's edges, every pair scored. `ontology` (the
/// Disease Ontology files, optional) adds identifier matches to the contradiction features.
pub fn predict(
    g: &Graph,
    params: &PredictParams,
    ontology: Option<&DiseaseOntology>,
) -> Result<Predictions, PredictError> {
    let t0 = Instant::now();
    let space = Space::with_ontology(g, &params.features, ontology)?;
    let mask = EdgeMask::empty(g.edge_count());
    let f = space.features(&mask, &params.features);
    let seconds_features = t0.elapsed().as_secs_f64();
    let (nc, nd) = (space.task.compounds.len(), space.task.diseases.len());
    let npairs = space.task.pairs();
    let positives = space.task.positives(g, &space.li);
    if !positives[0].iter().any(|&b| b) {
        return Err(PredictError::Task(
            "the graph has no treatment edge to learn from".into(),
        ));
    }
    let fold = (params.calibration_folds >= 2).then(|| {
        crate::folds::assign_folds(
            &positives,
            nd,
            params.calibration_folds,
            crate::folds::FoldKind::Edges,
            params.seed,
        )
    });
    let treats = fit_head(
        &f,
        &positives[0],
        fold.as_deref(),
        params,
        params.trees.as_ref(),
    );
    let pall = positives
        .get(1)
        .filter(|p| p.iter().any(|&b| b))
        .map(|pos| fit_head(&f, pos, fold.as_deref(), params, None));
    let t2 = Instant::now();
    let (disease_pct, compound_pct) = percentile_tables(&treats.logits, nc, nd);
    let (palliates_disease_pct, palliates_compound_pct) = match &pall {
        Some(h) => percentile_tables(&h.logits, nc, nd),
        None => (Vec::new(), Vec::new()),
    };
    let mp: Vec<usize> = (0..f.cols.len()).filter(|&j| f.is_metapath[j]).collect();
    let mut top_idx = vec![u16::MAX; npairs * TOP_METAPATHS];
    let mut top_val = vec![0f32; npairs * TOP_METAPATHS];
    let m = &treats.fitted.model;
    // Column by column (cache-friendly), each pair keeping its 5 largest positive
    // contributions; a tie keeps the earlier metapath, as a stable sort would.
    for (k, &j) in mp.iter().enumerate() {
        let (b, mu, sd) = (m.beta[j], m.mean[j], m.std[j]);
        if b == 0.0 || sd == 0.0 {
            continue;
        }
        for (p, &x) in f.cols[j].iter().enumerate() {
            let v = (b * (x as f64 - mu) / sd) as f32;
            if v.is_nan() || v <= 0.0 {
                continue;
            }
            let slots = &mut top_val[p * TOP_METAPATHS..(p + 1) * TOP_METAPATHS];
            let idx = &mut top_idx[p * TOP_METAPATHS..(p + 1) * TOP_METAPATHS];
            if idx[TOP_METAPATHS - 1] != u16::MAX && v <= slots[TOP_METAPATHS - 1] {
                continue;
            }
            let mut pos = TOP_METAPATHS - 1;
            while pos > 0 && (idx[pos - 1] == u16::MAX || v > slots[pos - 1]) {
                pos -= 1;
            }
            for q in (pos + 1..TOP_METAPATHS).rev() {
                slots[q] = slots[q - 1];
                idx[q] = idx[q - 1];
            }
            slots[pos] = v;
            idx[pos] = k as u16;
        }
    }
    let seconds_predict = t2.elapsed().as_secs_f64();
    let degree_features = |m: &crate::learn::LogReg| -> Vec<(String, f64)> {
        (0..f.cols.len())
            .filter(|&j| !f.is_metapath[j] && !f.contradiction.contains(&j))
            .map(|j| (f.names[j].clone(), m.beta[j]))
            .collect()
    };
    let contradiction = {
        let fitted = f.contradiction.len() == CONTRADICTION_NAMES.len();
        let computed;
        let cols: Vec<&Vec<f32>> = if fitted {
            f.contradiction.iter().map(|&j| &f.cols[j]).collect()
        } else {
            computed = space.contra.columns(g, &space.task, &space.li, &mask);
            computed.iter().collect()
        };
        let (pairs_flagged, treatments_flagged, treatments) =
            space.contra.coverage(&cols, &positives[0]);
        ContradictionInfo {
            ontology: space.contra.ontology,
            fitted,
            features: CONTRADICTION_NAMES
                .iter()
                .enumerate()
                .map(|(k, name)| {
                    let j = f.contradiction.get(k).copied();
                    ContradictionFeature {
                        name: (*name).to_string(),
                        beta: j.map_or(0.0, |j| m.beta[j]),
                        mean: j.map_or(0.0, |j| m.mean[j]),
                        std: j.map_or(0.0, |j| m.std[j]),
                    }
                })
                .collect(),
            pairs_flagged,
            treatments_flagged,
            treatments,
        }
    };
    let palliates = match (&pall, space.task.second) {
        (Some(h), Some(r)) => Some(HeadInfo {
            relation: g.relation(r).abbrev.clone(),
            positives: h.fitted.train_pos,
            train_negatives: h.fitted.train_neg,
            converged: h.fitted.model.converged,
            iterations: h.fitted.model.iterations,
            grad_max: h.fitted.model.grad_max,
            calibration: h.calibration,
            coefficients: mp.iter().map(|&j| h.fitted.model.beta[j]).collect(),
            degree_features: degree_features(&h.fitted.model),
        }),
        _ => None,
    };
    let info = PredictionInfo {
        graph_hash: g.content_hash(),
        params: PredictParamsView {
            damping: params.features.damping,
            max_len: params.features.max_len,
            min_support: params.features.min_support,
            lambda: params.fit.lambda,
            negatives_per_positive: params.negatives_per_positive,
            seed: params.seed,
            max_iter: params.fit.max_iter,
            tol: params.fit.tol,
            calibration_folds: params.calibration_folds,
        },
        metapaths: mp.iter().map(|&j| f.names[j].clone()).collect(),
        coefficients: mp.iter().map(|&j| m.beta[j]).collect(),
        degree_features: degree_features(m),
        metapaths_considered: f.metapaths_considered,
        positives: treats.fitted.train_pos,
        train_negatives: treats.fitted.train_neg,
        converged: m.converged,
        iterations: m.iterations,
        grad_max: m.grad_max,
        calibration: treats.calibration,
        trees: treats
            .trees
            .as_ref()
            .zip(params.trees)
            .map(|(t, p)| TreesInfo {
                params: p,
                combine: params.combine,
                logistic_weight: params.logistic_weight,
                train_loss: t.model.train_loss,
                top_features: {
                    let mut by: Vec<(String, f64)> = f
                        .names
                        .iter()
                        .cloned()
                        .zip(t.model.gain.iter().copied())
                        .filter(|(_, g)| *g > 0.0)
                        .collect();
                    by.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                    by.truncate(10);
                    by
                },
            }),
        palliates,
        contradiction: Some(contradiction),
        seconds_features,
        seconds_fit: treats.seconds_fit + pall.as_ref().map_or(0.0, |h| h.seconds_fit),
        seconds_calibration: treats.seconds_calibration
            + pall.as_ref().map_or(0.0, |h| h.seconds_calibration),
        seconds_predict,
    };
    let palliates = pall.map_or_else(Vec::new, |h| h.scores);
    Ok(Predictions {
        info,
        compounds: space.task.compounds.clone(),
        diseases: space.task.diseases.clone(),
        scores: treats.scores,
        disease_pct,
        compound_pct,
        top_idx,
        top_val,
        palliates,
        palliates_disease_pct,
        palliates_compound_pct,
    })
}

impl Predictions {
    /// Where node `n` sits: (is a compound, local index).
    pub fn locate(&self, n: u32) -> Option<(bool, usize)> {
        if let Some(i) = self.compounds.iter().position(|&c| c == n) {
            return Some((true, i));
        }
        self.diseases
            .iter()
            .position(|&d| d == n)
            .map(|i| (false, i))
    }

    /// The pairs (compound, disease local indexes) of one entity, best first (ties by local
    /// index).
    pub fn ranked_pairs(&self, is_compound: bool, local: usize) -> Vec<(usize, usize)> {
        let mut pairs: Vec<(usize, usize)> = if is_compound {
            (0..self.diseases.len()).map(|d| (local, d)).collect()
        } else {
            (0..self.compounds.len()).map(|c| (c, local)).collect()
        };
        pairs.sort_by(|a, b| {
            self.scores[self.pair(b.0, b.1)]
                .total_cmp(&self.scores[self.pair(a.0, a.1)])
                .then(a.cmp(b))
        });
        pairs
    }

    /// Discover's proposal step from the plausibility model: the other side of the located
    /// entity's pairs (its diseases for a compound, its compounds for a disease) with their
    /// scores, best first, leaving out `known` (sorted node ids), at most `limit`.
    pub fn propose(
        &self,
        (is_compound, local): (bool, usize),
        known: &[u32],
        limit: usize,
    ) -> Vec<(u32, f64)> {
        self.ranked_pairs(is_compound, local)
            .into_iter()
            .map(|(c, d)| {
                (
                    if is_compound {
                        self.diseases[d]
                    } else {
                        self.compounds[c]
                    },
                    f64::from(self.scores[self.pair(c, d)]),
                )
            })
            .filter(|(n, _)| known.binary_search(n).is_err())
            .take(limit)
            .collect()
    }

    pub fn pair(&self, c: usize, d: usize) -> usize {
        c * self.diseases.len() + d
    }
    /// The pair's top metapaths: (abbreviation, contribution), strongest first.
    pub fn top(&self, p: usize) -> Vec<(&str, f32)> {
        (0..TOP_METAPATHS)
            .filter_map(|s| {
                let i = self.top_idx[p * TOP_METAPATHS + s];
                self.info
                    .metapaths
                    .get(i as usize)
                    .map(|n| (n.as_str(), self.top_val[p * TOP_METAPATHS + s]))
            })
            .collect()
    }

    /// The palliation score of a pair, when the run had a second head.
    pub fn palliates(&self, p: usize) -> Option<(f32, f32, f32)> {
        Some((
            *self.palliates.get(p)?,
            *self.palliates_disease_pct.get(p)?,
            *self.palliates_compound_pct.get(p)?,
        ))
    }

    /// Writes the TSV of all pairs (compound-major), byte-identical for the same inputs. Scores
    /// are written as the shortest decimal that reads back as the stored `f32` (no rounding to
    /// a fixed number of places, which would tie thousands of low scores).
    pub fn write_tsv(&self, g: &Graph, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        // The six required columns first (an external checker reads them), then the second
        // head's; empty when the graph has no second label.
        writeln!(w, "compound_id\tdisease_id\tscore\tdisease_percentile\tcompound_percentile\ttop_metapaths\tpalliates_score\tpalliates_disease_percentile")?;
        let nd = self.diseases.len();
        let dkeys: Vec<String> = self.diseases.iter().map(|&d| g.key(d)).collect();
        for (ci, &c) in self.compounds.iter().enumerate() {
            let ck = g.key(c);
            for (di, dk) in dkeys.iter().enumerate() {
                let p = ci * nd + di;
                let top: Vec<String> = self
                    .top(p)
                    .iter()
                    .take(3)
                    .map(|(n, v)| format!("{n}:{v:.3}"))
                    .collect();
                write!(
                    w,
                    "{ck}\t{dk}\t{}\t{:.2}\t{:.2}\t{}",
                    self.scores[p],
                    self.disease_pct[p],
                    self.compound_pct[p],
                    top.join(";")
                )?;
                match (self.palliates.get(p), self.palliates_disease_pct.get(p)) {
                    (Some(s), Some(q)) => writeln!(w, "\t{s}\t{q:.2}")?,
                    _ => writeln!(w, "\t\t")?,
                }
            }
        }
        Ok(())
    }
}
