//! How much a figure measured on an outside list owes to which diseases the list happens to
//! cover, and whether one model really does better than another on it.
//!
//! An indication list is a sample, and its pairs come in clusters: one disease with twenty
//! listed drugs moves a count at the top of the list by twenty when the ranking puts that
//! disease first. So the intervals here resample the list **by disease** (a disease's positives
//! stay together; the diseases with a positive are drawn with replacement, as many as there
//! are), while the model's ranking of the candidates stays fixed: each positive keeps its
//! AUROC share (the negatives scored below it, ties half, over all negatives) and whether it
//! lies among the best [`TOP_BUDGET`](crate::metrics::TOP_BUDGET) candidates. A draw's AUROC
//! is the mean share of its positives, its count the sum of their top memberships.
//!
//! Two models on the same list are compared **paired**: each draw takes the same diseases for
//! both, so what the list's make-up does to both cancels, and the interval is the one of the
//! difference. The draws are seeded ([`SEED`], [`DRAWS`]): a report is reproducible to the
//! digit.

use serde::Serialize;

use crate::metrics::ranked;

/// Bootstrap draws per interval.
pub const DRAWS: usize = 2000;
/// Seed of the draws.
pub const SEED: u64 = 0x5e7e_4dc0_ffee_0001;

/// What each positive contributes to a ranking's figures.
#[derive(Clone, Debug)]
pub struct PerPositive {
    /// Cluster (disease) of each positive, `0..clusters`.
    cluster: Vec<usize>,
    clusters: usize,
    /// Negatives scored below the positive, plus half the tied ones, over all negatives.
    share: Vec<f64>,
    /// Is the positive among the best `budget` candidates?
    top: Vec<bool>,
}

/// A two-sided 95 % percentile interval.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

/// A ranking's figures with their intervals over the list's diseases.
#[derive(Clone, Debug, Serialize)]
pub struct Spread {
    pub draws: usize,
    /// Diseases with a positive: the clusters drawn.
    pub diseases: usize,
    pub auroc: Interval,
    /// Positives among the best `budget` candidates.
    pub hits: Interval,
}

/// One ranking minus another on the same positives: the point difference and its paired
/// interval.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    pub draws: usize,
    pub auroc: f64,
    pub auroc_interval: Interval,
    pub hits: i64,
    pub hits_interval: Interval,
}

impl PerPositive {
    /// `scores` and `labels` over the candidates, `cluster_of(i)` the disease of candidate
    /// `i`; `budget` the size of the top counted.
    pub fn new(
        scores: &[f64],
        labels: &[bool],
        cluster_of: &dyn Fn(usize) -> usize,
        budget: usize,
    ) -> Self {
        let negatives = labels.iter().filter(|&&l| !l).count().max(1) as f64;
        let mut share = vec![0.0; scores.len()];
        let mut asc: Vec<usize> = (0..scores.len()).collect();
        asc.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
        let (mut below, mut i) = (0usize, 0usize);
        while i < asc.len() {
            let mut j = i;
            while j + 1 < asc.len() && scores[asc[j + 1]] == scores[asc[i]] {
                j += 1;
            }
            let tied = asc[i..=j].iter().filter(|&&k| !labels[k]).count();
            for &k in &asc[i..=j] {
                share[k] = (below as f64 + 0.5 * tied as f64) / negatives;
            }
            below += tied;
            i = j + 1;
        }
        let order = ranked(scores);
        let mut in_top = vec![false; scores.len()];
        for &k in &order[..budget.min(order.len())] {
            in_top[k] = true;
        }
        let mut ids: Vec<usize> = Vec::new();
        let mut out = PerPositive {
            cluster: Vec::new(),
            clusters: 0,
            share: Vec::new(),
            top: Vec::new(),
        };
        for k in (0..scores.len()).filter(|&k| labels[k]) {
            let c = cluster_of(k);
            let id = match ids.iter().position(|&x| x == c) {
                Some(id) => id,
                None => {
                    ids.push(c);
                    ids.len() - 1
                }
            };
            out.cluster.push(id);
            out.share.push(share[k]);
            out.top.push(in_top[k]);
        }
        out.clusters = ids.len();
        out
    }

    fn positives_by_cluster(&self) -> Vec<Vec<usize>> {
        let mut by = vec![Vec::new(); self.clusters];
        for (i, &c) in self.cluster.iter().enumerate() {
            by[c].push(i);
        }
        by
    }

    /// The intervals of this ranking's AUROC and top count over [`DRAWS`] draws of the
    /// list's diseases.
    pub fn spread(&self) -> Spread {
        let by = self.positives_by_cluster();
        let (mut aurocs, mut hits) = (Vec::with_capacity(DRAWS), Vec::with_capacity(DRAWS));
        draw_clusters(self.clusters, |pick| {
            let (mut s, mut n, mut h) = (0.0, 0usize, 0usize);
            for &c in pick {
                for &i in &by[c] {
                    s += self.share[i];
                    h += usize::from(self.top[i]);
                    n += 1;
                }
            }
            aurocs.push(if n == 0 { f64::NAN } else { s / n as f64 });
            hits.push(h as f64);
        });
        Spread {
            draws: DRAWS,
            diseases: self.clusters,
            auroc: interval(aurocs),
            hits: interval(hits),
        }
    }

    /// `self − other`, paired by disease. Both must come from the same candidates and labels
    /// (the same positives in the same order); `None` when they do not.
    pub fn minus(&self, other: &PerPositive) -> Option<Difference> {
        if self.cluster != other.cluster {
            return None;
        }
        let by = self.positives_by_cluster();
        let n = self.share.len().max(1) as f64;
        let auroc = (self.share.iter().sum::<f64>() - other.share.iter().sum::<f64>()) / n;
        let count = |t: &[bool]| t.iter().filter(|&&x| x).count() as i64;
        let hits = count(&self.top) - count(&other.top);
        let (mut da, mut dh) = (Vec::with_capacity(DRAWS), Vec::with_capacity(DRAWS));
        draw_clusters(self.clusters, |pick| {
            let (mut s, mut n, mut h) = (0.0, 0usize, 0i64);
            for &c in pick {
                for &i in &by[c] {
                    s += self.share[i] - other.share[i];
                    h += i64::from(self.top[i]) - i64::from(other.top[i]);
                    n += 1;
                }
            }
            da.push(if n == 0 { f64::NAN } else { s / n as f64 });
            dh.push(h as f64);
        });
        Some(Difference {
            draws: DRAWS,
            auroc,
            auroc_interval: interval(da),
            hits,
            hits_interval: interval(dh),
        })
    }
}

/// Calls `f` [`DRAWS`] times with `clusters` cluster indices drawn uniformly with replacement
/// (the workspace's SplitMix64 from [`SEED`]; nothing when there is no cluster).
fn draw_clusters(clusters: usize, mut f: impl FnMut(&[usize])) {
    if clusters == 0 {
        return;
    }
    let mut rng = serenqa_shared::rng::SplitMix64::new(SEED);
    let mut pick = vec![0usize; clusters];
    for _ in 0..DRAWS {
        for p in &mut pick {
            *p = rng.below(clusters);
        }
        f(&pick);
    }
}

/// The 2.5th and 97.5th percentiles (nearest rank) of the finite values; NaN when none.
fn interval(mut v: Vec<f64>) -> Interval {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return Interval {
            lo: f64::NAN,
            hi: f64::NAN,
        };
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    Interval {
        lo: at(0.025),
        hi: at(0.975),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::auroc;

    /// 6 diseases × 50 candidates; a disease's positives are its first few.
    fn toy(shift: f64) -> (Vec<f64>, Vec<bool>) {
        let (mut s, mut l) = (Vec::new(), Vec::new());
        for d in 0..6 {
            for c in 0..50 {
                let pos = c < d + 1;
                l.push(pos);
                s.push(
                    if pos {
                        shift + (c * 7 % 11) as f64
                    } else {
                        (c * 13 % 17) as f64
                    } + d as f64,
                );
            }
        }
        (s, l)
    }

    #[test]
    fn shares_average_to_the_auroc_and_the_top_counts_the_best() {
        let (s, l) = toy(3.0);
        let p = PerPositive::new(&s, &l, &|i| i / 50, 40);
        let mean = p.share.iter().sum::<f64>() / p.share.len() as f64;
        assert!((mean - auroc(&s, &l)).abs() < 1e-12);
        let order = ranked(&s);
        let hits = order[..40].iter().filter(|&&i| l[i]).count();
        assert_eq!(p.top.iter().filter(|&&t| t).count(), hits);
        assert_eq!(p.clusters, 6);
    }

    #[test]
    fn intervals_hold_the_point_and_are_reproducible() {
        let (s, l) = toy(3.0);
        let p = PerPositive::new(&s, &l, &|i| i / 50, 40);
        let a = p.spread();
        let point = auroc(&s, &l);
        assert!(a.auroc.lo <= point && point <= a.auroc.hi, "{a:?}");
        assert!(a.auroc.lo < a.auroc.hi);
        let b = p.spread();
        assert_eq!(a.auroc, b.auroc);
        assert_eq!(a.hits, b.hits);
    }

    #[test]
    fn a_ranking_minus_itself_is_zero_and_a_better_one_is_positive() {
        let (s, l) = toy(3.0);
        let p = PerPositive::new(&s, &l, &|i| i / 50, 40);
        let d = p.minus(&p).unwrap();
        assert_eq!(d.hits, 0);
        assert_eq!(d.auroc, 0.0);
        assert_eq!((d.auroc_interval.lo, d.auroc_interval.hi), (0.0, 0.0));
        let (better, _) = toy(9.0);
        let q = PerPositive::new(&better, &l, &|i| i / 50, 40);
        let d = q.minus(&p).unwrap();
        assert!(d.auroc > 0.0 && d.auroc_interval.lo > 0.0, "{d:?}");
        assert!(d.hits > 0 && d.hits_interval.lo >= 0.0, "{d:?}");
        // Different positives: not comparable.
        let mut l2 = l.clone();
        l2[49] = true;
        let r = PerPositive::new(&s, &l2, &|i| i / 50, 40);
        assert!(r.minus(&p).is_none());
    }
}
