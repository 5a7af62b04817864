//! Confidence intervals that stay honest at small n.
//!
//! A percentile bootstrap of a mean has no width when every question scored the same (3 of 3
//! at 100%, or 0 of 3): it says [100, 100] where an exact interval for 3 of 3 is [29%, 100%].
//! Every metric this project averages is bounded (a share in 0–1, a percentage, a 1–5 judge
//! score), so a cell's interval is the **Clopper–Pearson** ("exact") interval of the mean
//! rescaled to 0–1, with the sum of the rescaled values as the count of successes:
//!
//! - for 0/1 metrics (Hit, Exe, SerenHit) it is the exact binomial interval: coverage at least
//!   the nominal level for every true rate and every n;
//! - for other bounded values it is conservative in practice: a variable in [0, 1] with mean p
//!   is at most as spread as a Bernoulli(p) one, and the binomial tails are the widest
//!   (checked by the coverage simulation in this module's tests: ≥ 93% for nominal 95% at
//!   n = 5, 10 and 30, over 0/1, uniform, three-level and judge-score distributions).
//!
//! The regularised incomplete beta function gives the binomial tails for a real-valued count;
//! its continued fraction and the log-gamma (Lanczos) are computed here, without I/O.

use crate::results::Ci;

/// α of a two-sided 95% interval.
const ALPHA: f64 = 0.05;

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms; reflection below ½).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin().abs()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let fix = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / fix(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=400 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / fix(1.0 + aa * d);
        c = fix(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / fix(1.0 + aa * d);
        c = fix(1.0 + aa / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function I_x(a, b), a, b > 0.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The p in [0, 1] where the increasing `f(p)` reaches `target` (bisection).
fn solve(f: impl Fn(f64) -> f64, target: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The 95% Clopper–Pearson interval of a rate from `s` successes in `n` trials (`s` may be
/// fractional: a sum of values in [0, 1]).
pub fn clopper_pearson(s: f64, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let nf = n as f64;
    let s = if s.is_finite() { s.clamp(0.0, nf) } else { 0.0 };
    let lo = if s <= 0.0 {
        0.0
    } else {
        solve(|p| inc_beta(s, nf - s + 1.0, p), ALPHA / 2.0)
    };
    let hi = if s >= nf {
        1.0
    } else {
        solve(|p| inc_beta(s + 1.0, nf - s, p), 1.0 - ALPHA / 2.0)
    };
    (lo.min(s / nf), hi.max(s / nf))
}

/// The 95% interval of the mean of `xs`, whose values lie in `[lo, hi]` (widened to the
/// values' own range if one falls outside): Clopper–Pearson on the values rescaled to 0–1.
/// `None` for no values.
pub fn bounded_mean_ci(xs: &[f64], lo: f64, hi: f64) -> Option<Ci> {
    let xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if xs.is_empty() {
        return None;
    }
    let lo = xs.iter().copied().fold(lo, f64::min);
    let hi = xs.iter().copied().fold(hi, f64::max);
    let width = hi - lo;
    if width <= 0.0 || !width.is_finite() {
        return Some(Ci { lo, hi: lo });
    }
    let s: f64 = xs.iter().map(|x| (x - lo) / width).sum();
    let (a, b) = clopper_pearson(s, xs.len());
    Some(Ci {
        lo: lo + width * a,
        hi: lo + width * b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn exact_binomial_intervals_match_known_values() {
        // 0 of 3: [0, 1 − 0.025^(1/3)] = [0, 0.7076]; 3 of 3: [0.2924, 1].
        let (a, b) = clopper_pearson(0.0, 3);
        assert_eq!(a, 0.0);
        assert!((b - (1.0 - 0.025f64.powf(1.0 / 3.0))).abs() < 1e-9, "{b}");
        let (a, b) = clopper_pearson(3.0, 3);
        assert!((a - 0.025f64.powf(1.0 / 3.0)).abs() < 1e-9, "{a}");
        assert_eq!(b, 1.0);
        // 5 of 10: [0.1871, 0.8129].
        let (a, b) = clopper_pearson(5.0, 10);
        assert!(
            (a - 0.1871).abs() < 1e-4 && (b - 0.8129).abs() < 1e-4,
            "{a} {b}"
        );
        // 50 of 200: [0.191607, 0.315963] (bisection on exact binomial sums).
        let (a, b) = clopper_pearson(50.0, 200);
        assert!(
            (a - 0.191_607).abs() < 1e-6 && (b - 0.315_963).abs() < 1e-6,
            "{a} {b}"
        );
        // ln Γ at known points.
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-10);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-10);
    }

    #[test]
    fn small_cells_are_never_zero_width() {
        for n in 1..10 {
            for v in [0.0, 1.0, 0.5] {
                let ci = bounded_mean_ci(&vec![v; n], 0.0, 1.0).unwrap();
                assert!(ci.hi - ci.lo > 0.05, "n={n} v={v}: {ci:?}");
                assert!(ci.lo <= v && v <= ci.hi);
            }
            let judge = bounded_mean_ci(&vec![5.0; n], 1.0, 5.0).unwrap();
            assert!(judge.lo < 5.0 && judge.hi == 5.0, "{judge:?}");
            let pct = bounded_mean_ci(&vec![100.0; n], 0.0, 100.0).unwrap();
            assert!(pct.lo < 100.0, "{pct:?}");
        }
        assert_eq!(bounded_mean_ci(&[], 0.0, 1.0), None);
    }

    /// Coverage of the nominal 95% interval, simulated: every distribution a cell meets (0/1
    /// rates from rare to common, uniform values, three levels as in partial credit, skewed
    /// 1–5 judge scores) at n = 5, 10 and 30.
    #[test]
    fn coverage_is_at_least_93_percent_at_small_n() {
        type Draw = Box<dyn Fn(&mut SplitMix64) -> f64>;
        let bern = |p: f64| -> (String, Draw, f64, f64, f64) {
            (
                format!("Bernoulli({p})"),
                Box::new(move |r: &mut SplitMix64| f64::from(u8::from(r.unit() < p))),
                p,
                0.0,
                1.0,
            )
        };
        let mut dists: Vec<(String, Draw, f64, f64, f64)> = [0.02, 0.1, 0.3, 0.5, 0.8, 0.97]
            .into_iter()
            .map(bern)
            .collect();
        dists.push(("uniform".into(), Box::new(SplitMix64::unit), 0.5, 0.0, 1.0));
        dists.push((
            "three levels 0 / 0.5 / 1 (0.6, 0.3, 0.1)".into(),
            Box::new(|r| {
                let u = r.unit();
                if u < 0.6 {
                    0.0
                } else if u < 0.9 {
                    0.5
                } else {
                    1.0
                }
            }),
            0.25,
            0.0,
            1.0,
        ));
        // Judge scores 1–5 with probabilities .05 .1 .15 .3 .4: mean 3.9.
        dists.push((
            "judge 1–5".into(),
            Box::new(|r| {
                let u = r.unit();
                let cum = [0.05, 0.15, 0.30, 0.60, 1.0];
                (cum.iter().position(|&c| u < c).unwrap_or(4) + 1) as f64
            }),
            3.9,
            1.0,
            5.0,
        ));
        let mut rng = SplitMix64::new(20261205);
        let trials = 1500;
        for n in [5usize, 10, 30] {
            for (name, draw, mean, lo, hi) in &dists {
                let mut covered = 0;
                for _ in 0..trials {
                    let xs: Vec<f64> = (0..n).map(|_| draw(&mut rng)).collect();
                    let ci = bounded_mean_ci(&xs, *lo, *hi).unwrap();
                    covered += usize::from(ci.lo <= *mean && *mean <= ci.hi);
                }
                let share = covered as f64 / trials as f64;
                assert!(share >= 0.93, "{name}, n = {n}: coverage {share:.3}");
            }
        }
    }
}
