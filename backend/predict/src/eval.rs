//! Cross-validation without leakage.
//!
//! Every compound–disease pair gets a fold. **Edge folds**: the label pairs are shuffled
//! (seeded) and dealt round-robin into k folds, the other pairs get a seeded hash fold.
//! **Disease folds** (the harder, "new disease" variant): the diseases are shuffled and dealt
//! into k folds, and a pair takes its disease's fold — every treatment of those diseases is
//! hidden at once.
//!
//! For fold k, the treatment edges (label and every other direct compound–disease relation)
//! of its positive pairs — for disease folds, of all its diseases — go into an [`EdgeMask`];
//! the whole feature table (DWPC, degrees, metapath selection) is recomputed on the graph
//! without them; the model is fitted on the pairs of the other folds and scores the pairs of
//! fold k. So no fold's features or model ever read one of its held-out edges
//! (`tests/no_leakage.rs` checks the features against a graph rebuilt without the edges).

use std::time::Instant;

use serde::Serialize;
use serenqa_graph::Graph;

use crate::dwpc::EdgeMask;
use crate::features::Space;
use crate::model::{fit_on, unit, PredictParams};
use crate::PredictError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FoldKind {
    Edges,
    Diseases,
}

#[derive(Clone, Debug, Serialize)]
pub struct Metrics {
    pub positives: usize,
    pub negatives: usize,
    pub auroc: f64,
    pub auprc: f64,
    /// Precision among the top 100 pairs.
    pub p_at_100: f64,
    /// Mean over diseases with a held-out positive of the precision among their top 10.
    pub p_at_10_per_disease: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FoldResult {
    pub fold: usize,
    pub masked_edges: usize,
    pub features: usize,
    pub metrics: Metrics,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    pub kind: FoldKind,
    pub folds: Vec<FoldResult>,
    /// Pooled out-of-fold scores.
    pub overall: Metrics,
    /// AUROC of the compound-treatment-degree × disease-treatment-degree prior alone, on the
    /// same folds (degrees on each fold's masked graph).
    pub prior_auroc: f64,
}

/// AUROC with ties counted half (Mann–Whitney).
pub fn auroc(scores: &[f64], labels: &[bool]) -> f64 {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let (mut rank_sum, mut npos) = (0.0, 0usize);
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && scores[idx[j + 1]] == scores[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            if labels[k] {
                rank_sum += avg;
                npos += 1;
            }
        }
        i = j + 1;
    }
    let nneg = scores.len() - npos;
    if npos == 0 || nneg == 0 {
        return f64::NAN;
    }
    (rank_sum - (npos * (npos + 1)) as f64 / 2.0) / (npos as f64 * nneg as f64)
}

/// Average precision (area under the precision–recall curve, step-wise), best score first,
/// ties broken by index.
pub fn auprc(scores: &[f64], labels: &[bool]) -> f64 {
    let order = ranked(scores);
    let npos = labels.iter().filter(|&&l| l).count();
    if npos == 0 {
        return f64::NAN;
    }
    let (mut hits, mut sum) = (0usize, 0.0);
    for (r, &k) in order.iter().enumerate() {
        if labels[k] {
            hits += 1;
            sum += hits as f64 / (r + 1) as f64;
        }
    }
    sum / npos as f64
}

fn ranked(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

pub fn precision_at(scores: &[f64], labels: &[bool], k: usize) -> f64 {
    let order = ranked(scores);
    let k = k.min(order.len());
    if k == 0 {
        return f64::NAN;
    }
    order[..k].iter().filter(|&&i| labels[i]).count() as f64 / k as f64
}

fn metrics(pairs: &[usize], scores: &[f64], labels: &[bool], nd: usize) -> Metrics {
    let positives = labels.iter().filter(|&&l| l).count();
    // Per disease: precision among its top 10 (diseases with a positive only).
    let mut by_d: Vec<(Vec<f64>, Vec<bool>)> = vec![(Vec::new(), Vec::new()); nd];
    for (i, &p) in pairs.iter().enumerate() {
        let d = p % nd;
        by_d[d].0.push(scores[i]);
        by_d[d].1.push(labels[i]);
    }
    let per: Vec<f64> = by_d.iter().filter(|(_, l)| l.iter().any(|&x| x)).map(|(s, l)| precision_at(s, l, 10)).collect();
    Metrics {
        positives,
        negatives: labels.len() - positives,
        auroc: auroc(scores, labels),
        auprc: auprc(scores, labels),
        p_at_100: precision_at(scores, labels, 100),
        p_at_10_per_disease: if per.is_empty() { f64::NAN } else { per.iter().sum::<f64>() / per.len() as f64 },
    }
}

/// Runs k-fold cross-validation; `progress` gets one line per fold.
pub fn cross_validate(g: &Graph, params: &PredictParams, k: usize, kind: FoldKind, progress: &mut dyn FnMut(&FoldResult)) -> Result<EvalReport, PredictError> {
    if !(2..=20).contains(&k) {
        return Err(PredictError::Task(format!("folds must be between 2 and 20, not {k}")));
    }
    let space = Space::new(g, &params.features)?;
    let task = &space.task;
    let (nc, nd) = (task.compounds.len(), task.diseases.len());
    let npairs = nc * nd;
    let label_edges = task.edges_of(g, &space.li, &[task.label]);
    let treat_edges = task.edges_of(g, &space.li, &task.treatment);
    let mut positive = vec![false; npairs];
    for &(p, _) in &label_edges {
        positive[p] = true;
    }
    let mut pos_pairs: Vec<usize> = (0..npairs).filter(|&p| positive[p]).collect();
    if pos_pairs.len() < k {
        return Err(PredictError::Task(format!("{} treatment pairs: too few for {k} folds", pos_pairs.len())));
    }
    let mut fold = vec![0usize; npairs];
    match kind {
        FoldKind::Edges => {
            shuffle(&mut pos_pairs, params.seed);
            for (i, &p) in pos_pairs.iter().enumerate() {
                fold[p] = i % k;
            }
            for p in 0..npairs {
                if !positive[p] {
                    fold[p] = ((unit(params.seed ^ 0x5eed_f01d, p as u64) * k as f64) as usize).min(k - 1);
                }
            }
        }
        FoldKind::Diseases => {
            let mut ds: Vec<usize> = (0..nd).collect();
            shuffle(&mut ds, params.seed);
            let mut dfold = vec![0usize; nd];
            for (i, &d) in ds.iter().enumerate() {
                dfold[d] = i % k;
            }
            for p in 0..npairs {
                fold[p] = dfold[p % nd];
            }
        }
    }
    let mut oof = vec![0f64; npairs];
    let mut prior = vec![0f64; npairs];
    let mut folds = Vec::new();
    for f in 0..k {
        let t = Instant::now();
        let mut mask = EdgeMask::empty(g.edge_count());
        for &(p, e) in &treat_edges {
            let hide = match kind {
                FoldKind::Edges => fold[p] == f && positive[p],
                FoldKind::Diseases => fold[p] == f,
            };
            if hide {
                mask.insert(e);
            }
        }
        let feats = space.features(&mask, &params.features);
        let fitted = fit_on(&feats, &positive, &|p| fold[p] != f, params);
        let test: Vec<usize> = (0..npairs).filter(|&p| fold[p] == f).collect();
        let scores: Vec<f64> = test.iter().map(|&p| fitted.logit(&feats, p)).collect();
        let labels: Vec<bool> = test.iter().map(|&p| positive[p]).collect();
        // The degree prior: product of the two treatment degrees on the masked graph.
        let (ci, di) = degree_columns(&feats);
        for (i, &p) in test.iter().enumerate() {
            oof[p] = scores[i];
            prior[p] = match (ci, di) {
                (Some(a), Some(b)) => (feats.cols[a][p] as f64).sinh().ln_1p() + (feats.cols[b][p] as f64).sinh().ln_1p(),
                _ => 0.0,
            };
        }
        let r = FoldResult { fold: f, masked_edges: mask.len(), features: feats.cols.len(), metrics: metrics(&test, &scores, &labels, nd), seconds: t.elapsed().as_secs_f64() };
        progress(&r);
        folds.push(r);
    }
    let all: Vec<usize> = (0..npairs).collect();
    let labels: Vec<bool> = positive.clone();
    Ok(EvalReport { kind, folds, overall: metrics(&all, &oof, &labels, nd), prior_auroc: auroc(&prior, &labels) })
}

/// The label-degree columns of compound and disease.
fn degree_columns(f: &crate::features::Features) -> (Option<usize>, Option<usize>) {
    f.label_degree
}

fn shuffle<T>(v: &mut [T], seed: u64) {
    for i in (1..v.len()).rev() {
        let j = ((unit(seed ^ 0xf01d_5eed, i as u64) * (i + 1) as f64) as usize).min(i);
        v.swap(i, j);
    }
}

impl EvalReport {
    /// The table `serenqa predict eval` prints.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{} folds ({}):\nfold  masked  features  positives  negatives   AUROC   AUPRC   P@100  P@10/disease  seconds\n",
            self.folds.len(),
            match self.kind {
                FoldKind::Edges => "treatment edges held out",
                FoldKind::Diseases => "diseases held out: all their treatments hidden",
            }
        );
        for f in &self.folds {
            let m = &f.metrics;
            s += &format!(
                "{:>4}  {:>6}  {:>8}  {:>9}  {:>9}  {:.4}  {:.4}  {:.3}  {:>12.3}  {:>7.1}\n",
                f.fold, f.masked_edges, f.features, m.positives, m.negatives, m.auroc, m.auprc, m.p_at_100, m.p_at_10_per_disease, f.seconds
            );
        }
        let m = &self.overall;
        s += &format!(
            " all  {:>6}  {:>8}  {:>9}  {:>9}  {:.4}  {:.4}  {:.3}  {:>12.3}  {:>7.1}\n",
            "",
            "",
            m.positives,
            m.negatives,
            m.auroc,
            m.auprc,
            m.p_at_100,
            m.p_at_10_per_disease,
            self.folds.iter().map(|f| f.seconds).sum::<f64>()
        );
        s += &format!("treatment-degree prior alone (same folds): AUROC {:.4}\n", self.prior_auroc);
        s
    }
}
