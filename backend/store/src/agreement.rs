//! Inter-annotator agreement.
//!
//! - [`kendall_w`]: Kendall's coefficient of concordance with the correction for ties,
//!   W = 12·S / (m²(n³ − n) − m·Σⱼ Tⱼ), S = Σᵢ (Rᵢ − R̄)², Tⱼ = Σ (t³ − t) over rater j's
//!   tie groups of size t. Input: m complete rankings (average ranks) of the same n items.
//! - [`krippendorff_alpha_ordinal`]: α = 1 − D_o / D_e from the coincidence matrix of all
//!   pairable values (units with ≥ 2 values; missing values allowed), ordinal metric
//!   δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)².
//!
//! Both return `None` when undefined (fewer than two raters or items; no variation at all).

/// Kendall's W of `m` rankings over the same `n` items (`ranks[j][i]` = rater j's rank of
/// item i, average ranks for ties).
pub fn kendall_w(ranks: &[Vec<f64>]) -> Option<f64> {
    let m = ranks.len();
    if m < 2 {
        return None;
    }
    let n = ranks[0].len();
    if n < 2 || ranks.iter().any(|r| r.len() != n) {
        return None;
    }
    let (mf, nf) = (m as f64, n as f64);
    let totals: Vec<f64> = (0..n).map(|i| ranks.iter().map(|r| r[i]).sum()).collect();
    let mean = mf * (nf + 1.0) / 2.0;
    let s: f64 = totals.iter().map(|t| (t - mean).powi(2)).sum();
    let ties: f64 = ranks
        .iter()
        .map(|r| {
            let mut v = r.clone();
            v.sort_by(f64::total_cmp);
            let mut t = 0.0;
            let mut i = 0;
            while i < v.len() {
                let mut j = i;
                while j + 1 < v.len() && v[j + 1] == v[i] {
                    j += 1;
                }
                let size = (j - i + 1) as f64;
                t += size.powi(3) - size;
                i = j + 1;
            }
            t
        })
        .sum();
    let denom = mf * mf * (nf.powi(3) - nf) - mf * ties;
    if denom <= 0.0 {
        return None;
    }
    Some(12.0 * s / denom)
}

/// Krippendorff's α with the ordinal metric. `units[u]` holds the values the raters gave
/// unit u (missing values simply absent). Values are compared by order only.
pub fn krippendorff_alpha_ordinal(units: &[Vec<f64>]) -> Option<f64> {
    let mut values: Vec<f64> = units
        .iter()
        .filter(|u| u.len() >= 2)
        .flatten()
        .copied()
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let k = values.len();
    if k < 2 {
        return None;
    }
    let idx = |x: f64| values.partition_point(|v| *v < x);
    // Coincidence matrix o[c][k].
    let mut o = vec![vec![0.0; k]; k];
    for u in units.iter().filter(|u| u.len() >= 2) {
        let w = 1.0 / (u.len() as f64 - 1.0);
        for (a, &x) in u.iter().enumerate() {
            for (b, &y) in u.iter().enumerate() {
                if a != b {
                    o[idx(x)][idx(y)] += w;
                }
            }
        }
    }
    let nc: Vec<f64> = o.iter().map(|row| row.iter().sum()).collect();
    let n: f64 = nc.iter().sum();
    // Prefix sums of n_c for the ordinal metric.
    let mut prefix = vec![0.0; k + 1];
    for c in 0..k {
        prefix[c + 1] = prefix[c] + nc[c];
    }
    let delta2 = |c: usize, e: usize| -> f64 {
        let (lo, hi) = if c <= e { (c, e) } else { (e, c) };
        let sum = prefix[hi + 1] - prefix[lo];
        (sum - (nc[c] + nc[e]) / 2.0).powi(2)
    };
    let mut d_o = 0.0;
    let mut d_e = 0.0;
    for c in 0..k {
        for e in 0..k {
            let d = delta2(c, e);
            d_o += o[c][e] * d;
            d_e += nc[c] * nc[e] * d;
        }
    }
    if d_e <= 0.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * d_o / d_e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn kendall_w_hand_computed() {
        // Identical rankings: W = 1.
        let same = vec![vec![1.0, 2.0, 3.0]; 3];
        assert!(close(kendall_w(&same).unwrap(), 1.0, 1e-12));
        // Two opposite rankings: R = (4, 4, 4) = mean, S = 0, W = 0.
        assert!(close(
            kendall_w(&[vec![1.0, 2.0, 3.0], vec![3.0, 2.0, 1.0]]).unwrap(),
            0.0,
            1e-12
        ));
        // With a tie (by hand): R = (2.5, 3.5, 6), R̄ = 4, S = 2.25 + 0.25 + 4 = 6.5;
        // T₂ = 2³ − 2 = 6; denominator = 4·24 − 2·6 = 84; W = 12·6.5/84 = 13/14.
        let w = kendall_w(&[vec![1.0, 2.0, 3.0], vec![1.5, 1.5, 3.0]]).unwrap();
        assert!(close(w, 13.0 / 14.0, 1e-12), "{w}");
        // Three raters, four items (by hand): R = (4, 7, 8, 11), R̄ = 7.5,
        // S = 12.25 + 0.25 + 0.25 + 12.25 = 25; W = 12·25 / (9·60) = 300/540 = 5/9.
        let w = kendall_w(&[
            vec![1.0, 2.0, 3.0, 4.0],
            vec![2.0, 1.0, 3.0, 4.0],
            vec![1.0, 4.0, 2.0, 3.0],
        ])
        .unwrap();
        assert!(close(w, 5.0 / 9.0, 1e-12), "{w}");
        assert_eq!(kendall_w(&[vec![1.0, 2.0]]), None, "one rater");
        assert_eq!(
            kendall_w(&[vec![1.0, 1.0], vec![1.0, 1.0]]),
            None,
            "all tied: undefined"
        );
    }

    #[test]
    fn krippendorff_alpha_hand_computed() {
        // Two raters, three units, values (1,1), (2,2), (3,3): perfect agreement.
        assert!(close(
            krippendorff_alpha_ordinal(&[vec![1.0, 1.0], vec![2.0, 2.0], vec![3.0, 3.0]]).unwrap(),
            1.0,
            1e-12
        ));
        // Two raters, units (1,2), (2,1) (by hand): o₁₂ = o₂₁ = 2, n₁ = n₂ = 2, n = 4;
        // δ²(1,2) = (2 + 2 − 2)² = 4; D_o = 2·2·4 = 16; D_e = 2·(2·2·4) = 32;
        // α = 1 − 3·16/32 = −0.5.
        let a = krippendorff_alpha_ordinal(&[vec![1.0, 2.0], vec![2.0, 1.0]]).unwrap();
        assert!(close(a, -0.5, 1e-12), "{a}");
        // Units (1,1), (1,2), (2,2) (by hand): o₁₁ = 2, o₁₂ = o₂₁ = 1, o₂₂ = 2; n₁ = n₂ = 3,
        // n = 6; δ²(1,2) = (3 + 3 − 3)² = 9; D_o = 2·9 = 18; D_e = 2·9·9 = 162;
        // α = 1 − 5·18/162 = 4/9.
        let a =
            krippendorff_alpha_ordinal(&[vec![1.0, 1.0], vec![1.0, 2.0], vec![2.0, 2.0]]).unwrap();
        assert!(close(a, 4.0 / 9.0, 1e-12), "{a}");
        // Units with a single value are not pairable and change nothing.
        let b = krippendorff_alpha_ordinal(&[
            vec![1.0, 1.0],
            vec![1.0, 2.0],
            vec![2.0, 2.0],
            vec![3.0],
        ])
        .unwrap();
        assert!(close(a, b, 1e-12));
        assert_eq!(
            krippendorff_alpha_ordinal(&[vec![1.0, 1.0]]),
            None,
            "no variation"
        );
    }

    #[test]
    fn krippendorff_alpha_reference_example() {
        // The reliability data of Krippendorff, "Computing Krippendorff's alpha-reliability"
        // (2011): 4 observers, 12 units, values 1–5, missing data. Published ordinal α = 0.815.
        let m = f64::NAN;
        let data = [
            [1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 4.0, 1.0, 2.0, m, m, m],
            [1.0, 2.0, 3.0, 3.0, 2.0, 2.0, 4.0, 1.0, 2.0, 5.0, m, 3.0],
            [m, 3.0, 3.0, 3.0, 2.0, 3.0, 4.0, 2.0, 2.0, 5.0, 1.0, m],
            [1.0, 2.0, 3.0, 3.0, 2.0, 4.0, 4.0, 1.0, 2.0, 5.0, 1.0, m],
        ];
        let units: Vec<Vec<f64>> = (0..12)
            .map(|u| {
                data.iter()
                    .map(|row| row[u])
                    .filter(|v| !v.is_nan())
                    .collect()
            })
            .collect();
        let a = krippendorff_alpha_ordinal(&units).unwrap();
        assert!(close(a, 0.815, 5e-4), "{a}");
    }
}
