//! Combining two learners' scores of the same pairs into one ranking (the logistic head and
//! the gradient-boosted trees of [`crate::gbdt`]), each combination a pure function of the two
//! score vectors over *all* pairs of one feature table — no label is read, so a fold's
//! combination leaks nothing its two models did not.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Mean of the two logits as they are (both are log-odds on the scale of all pairs).
    MeanLogit,
    /// Mean of the two logits, each standardised over all pairs (mean 0, deviation 1), put
    /// back on the scale of the first (× its deviation + its mean: the same ranking, on a
    /// logit-like scale the calibration expects).
    MeanZ,
    /// Mean of the two normalised ranks over all pairs (0 = worst, 1 = best; ties share the
    /// mean rank).
    MeanRank,
}

impl Combine {
    pub const ALL: [Combine; 3] = [Combine::MeanLogit, Combine::MeanZ, Combine::MeanRank];

    pub fn name(self) -> &'static str {
        match self {
            Combine::MeanLogit => "mean logit",
            Combine::MeanZ => "mean z",
            Combine::MeanRank => "mean rank",
        }
    }
}

/// `w·a + (1 − w)·b` after the transform of `how`, pair by pair.
pub fn combine(a: &[f64], b: &[f64], how: Combine, w: f64) -> Vec<f64> {
    assert_eq!(a.len(), b.len());
    let mix = |ta: &[f64], tb: &[f64]| -> Vec<f64> {
        ta.iter()
            .zip(tb)
            .map(|(x, y)| w * x + (1.0 - w) * y)
            .collect()
    };
    match how {
        Combine::MeanLogit => mix(a, b),
        Combine::MeanZ => {
            let (ma, sa) = mean_sd(a);
            let (mb, sb) = mean_sd(b);
            a.iter()
                .zip(b)
                .map(|(x, y)| ma + sa * (w * (x - ma) / sa + (1.0 - w) * (y - mb) / sb))
                .collect()
        }
        Combine::MeanRank => mix(&ranks(a), &ranks(b)),
    }
}

/// Mean and deviation over all pairs (deviation 1 for a constant vector).
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, if var > 0.0 { var.sqrt() } else { 1.0 })
}

/// Normalised ranks in [0, 1], ties at their mean rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let n = v.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| v[x].total_cmp(&v[y]));
    let mut out = vec![0.0; n];
    let denom = n.saturating_sub(1).max(1) as f64;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 / denom;
        for &k in &order[i..=j] {
            out[k] = r;
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations() {
        let a = [0.0, 1.0, 2.0, 3.0];
        let b = [10.0, 10.0, 30.0, 20.0];
        assert_eq!(
            combine(&a, &b, Combine::MeanLogit, 0.5),
            vec![5.0, 5.5, 16.0, 11.5]
        );
        let r = combine(&a, &b, Combine::MeanRank, 0.5);
        // a's ranks 0, 1/3, 2/3, 1; b's 1/6, 1/6, 1, 2/3 (the two 10s tie).
        let want = [1.0 / 12.0, 0.25, 5.0 / 6.0, 5.0 / 6.0];
        for (x, y) in r.iter().zip(want) {
            assert!((x - y).abs() < 1e-12, "{r:?}");
        }
        // The same vector twice: itself (standardised, averaged, put back on its scale).
        let z = combine(&a, &a, Combine::MeanZ, 0.5);
        for (x, y) in z.iter().zip(a) {
            assert!((x - y).abs() < 1e-12, "{z:?}");
        }
        // b standardised ≈ (−0.90, −0.90, 1.51, 0.30): the order of the sums, the mean of a.
        let z = combine(&a, &b, Combine::MeanZ, 0.5);
        assert!((z.iter().sum::<f64>() / 4.0 - 1.5).abs() < 1e-12);
        assert!(z[0] < z[1] && z[1] < z[3] && z[3] < z[2], "{z:?}");
    }
}
