//! The figures of a ranking against its labels: AUROC, AUPRC, precision at k, and the top of
//! each list per disease and per compound ([`TopMetrics`]) — what `predict eval` reports for
//! every fold, pooled, and every learner compared.

use serde::Serialize;

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
    /// The top of each list, as a clinician reads it.
    pub top: TopMetrics,
}

/// Precision and recall at 10 and 20 per disease (its compounds ranked) and per compound (its
/// diseases ranked), each the mean over the entities with a positive among the scored pairs;
/// and the share of all positives among the best [`TOP_BUDGET`] pairs overall.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TopMetrics {
    pub p_at_10_disease: f64,
    pub p_at_20_disease: f64,
    pub r_at_10_disease: f64,
    pub r_at_20_disease: f64,
    pub p_at_10_compound: f64,
    pub p_at_20_compound: f64,
    pub r_at_10_compound: f64,
    pub r_at_20_compound: f64,
    /// Share of the positives among the best [`TOP_BUDGET`] pairs (all scored pairs ranked).
    pub in_top_budget: f64,
}

/// Project Rephetio's published list size (pairs above 1% probability): the budget at which
/// the top of the whole list is compared.
pub const TOP_BUDGET: usize = 3980;

/// Mean precision and recall at `k` over the groups (`group(pair)`) with a positive.
pub(crate) fn per_group_at(
    pairs: &[usize],
    scores: &[f64],
    labels: &[bool],
    group: &dyn Fn(usize) -> usize,
    ngroups: usize,
    k: usize,
) -> (f64, f64) {
    let mut by: Vec<(Vec<f64>, Vec<bool>)> = vec![(Vec::new(), Vec::new()); ngroups];
    for (i, &p) in pairs.iter().enumerate() {
        let g = group(p);
        by[g].0.push(scores[i]);
        by[g].1.push(labels[i]);
    }
    let (mut ps, mut rs, mut n) = (0.0, 0.0, 0usize);
    for (sc, lb) in &by {
        let pos = lb.iter().filter(|&&x| x).count();
        if pos == 0 {
            continue;
        }
        let order = ranked(sc);
        let kk = k.min(order.len());
        let hits = order[..kk].iter().filter(|&&i| lb[i]).count();
        ps += hits as f64 / k as f64;
        rs += hits as f64 / pos as f64;
        n += 1;
    }
    if n == 0 {
        (f64::NAN, f64::NAN)
    } else {
        (ps / n as f64, rs / n as f64)
    }
}

pub(crate) fn top_metrics(
    pairs: &[usize],
    scores: &[f64],
    labels: &[bool],
    nd: usize,
) -> TopMetrics {
    let nc = pairs.iter().map(|&p| p / nd.max(1) + 1).max().unwrap_or(0);
    let by_d = |p: usize| p % nd.max(1);
    let by_c = |p: usize| p / nd.max(1);
    let (p10d, r10d) = per_group_at(pairs, scores, labels, &by_d, nd, 10);
    let (p20d, r20d) = per_group_at(pairs, scores, labels, &by_d, nd, 20);
    let (p10c, r10c) = per_group_at(pairs, scores, labels, &by_c, nc, 10);
    let (p20c, r20c) = per_group_at(pairs, scores, labels, &by_c, nc, 20);
    let positives = labels.iter().filter(|&&l| l).count();
    let order = ranked(scores);
    let budget = TOP_BUDGET.min(order.len());
    let in_top = order[..budget].iter().filter(|&&i| labels[i]).count();
    TopMetrics {
        p_at_10_disease: p10d,
        p_at_20_disease: p20d,
        r_at_10_disease: r10d,
        r_at_20_disease: r20d,
        p_at_10_compound: p10c,
        p_at_20_compound: p20c,
        r_at_10_compound: r10c,
        r_at_20_compound: r20c,
        in_top_budget: if positives == 0 {
            f64::NAN
        } else {
            in_top as f64 / positives as f64
        },
    }
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

pub(crate) fn ranked(scores: &[f64]) -> Vec<usize> {
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

pub(crate) fn metrics(pairs: &[usize], scores: &[f64], labels: &[bool], nd: usize) -> Metrics {
    let positives = labels.iter().filter(|&&l| l).count();
    // Per disease: precision among its top 10 (diseases with a positive only).
    let mut by_d: Vec<(Vec<f64>, Vec<bool>)> = vec![(Vec::new(), Vec::new()); nd];
    for (i, &p) in pairs.iter().enumerate() {
        let d = p % nd;
        by_d[d].0.push(scores[i]);
        by_d[d].1.push(labels[i]);
    }
    let per: Vec<f64> = by_d
        .iter()
        .filter(|(_, l)| l.iter().any(|&x| x))
        .map(|(s, l)| precision_at(s, l, 10))
        .collect();
    Metrics {
        positives,
        negatives: labels.len() - positives,
        auroc: auroc(scores, labels),
        auprc: auprc(scores, labels),
        p_at_100: precision_at(scores, labels, 100),
        p_at_10_per_disease: if per.is_empty() {
            f64::NAN
        } else {
            per.iter().sum::<f64>() / per.len() as f64
        },
        top: top_metrics(pairs, scores, labels, nd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_of_each_list_by_disease_and_by_compound() {
        // 3 compounds × 2 diseases (pair = c·2 + d); disease 0's positives: compounds 0 and 2,
        // disease 1's: none. Scores rank compound 2 first for disease 0.
        let pairs: Vec<usize> = (0..6).collect();
        let scores = [0.5, 0.9, 0.1, 0.8, 0.9, 0.2];
        let labels = [true, false, false, false, true, false];
        let t = top_metrics(&pairs, &scores, &labels, 2);
        // Disease 0 (pairs 0, 2, 4; scores 0.5, 0.1, 0.9): both positives in its top 10.
        assert_eq!((t.p_at_10_disease, t.r_at_10_disease), (0.2, 1.0));
        // Compounds 0 and 2 each have one positive, ranked first of their two diseases for
        // compound 2 (0.9 > 0.2) and second for compound 0 (0.5 < 0.9): both within 10.
        assert_eq!((t.p_at_10_compound, t.r_at_10_compound), (0.1, 1.0));
        assert_eq!(t.in_top_budget, 1.0);
        let (p, r) = per_group_at(&pairs, &scores, &labels, &|p| p % 2, 2, 1);
        assert_eq!((p, r), (1.0, 0.5));
    }
}
