//! Calibration of the RNS weights (α, β, γ) against expert partitions (paper §4.2).
//!
//! For every point of a regular grid on the simplex α + β + γ = 1, α, β, γ ≥ 0 (scaling all
//! three weights by c > 0 never changes a partition, so the simplex covers every distinct
//! choice), each question's RNS-guided partition (Algorithm 1, started from the ensemble
//! partition when there is one, as the benchmark builder does) is compared with the expert
//! partition: agreement = |As(RNS) ∩ As(expert)| / b, averaged over questions. The best
//! points usually form a region; the reported weights are the grid point of that region
//! nearest its centroid, so the answer does not depend on the grid's scan order.
//!
//! The report adds the agreements and Pearson correlations between the three partition
//! strategies (expert, LLM ensemble, RNS-guided at the fitted weights), computed over all
//! (question, candidate) membership indicators "is in As" — our counterpart of the paper's
//! Figure 3, which correlates the strategies.

use serenqa_shared::annotate::{CalibrationReport, PairStat};
use serenqa_shared::rns::{budget, Scorer, Slice, Weights};

/// One question ready for calibration: a slice holding its candidates.
#[derive(Clone, Debug)]
pub struct Item {
    pub slice: Slice,
    /// Candidate positions in the slice (Ac).
    pub ac: Vec<usize>,
    /// Positions of the entities the question names (not candidates): always in Ae, the
    /// rule the shipped weights were fitted with (docs/RNS.md, "What Ae holds").
    pub anchors: Vec<usize>,
    /// Expert As (b positions).
    pub expert: Vec<usize>,
    /// LLM-ensemble As (b positions), when known.
    pub ensemble: Option<Vec<usize>>,
}

/// One question's partitions for calibration: `link` maps a candidate to its graph node (a
/// node counts once, at its first candidate, in question order). Returns (the linked nodes,
/// expert As, LLM-ensemble As) as positions among those nodes: the expert As are the b best
/// by mean rank, the ensemble As the b best by LLM rank (rank 1 = most serendipitous) when
/// every linked candidate has one. `None` when fewer than two candidates are linked or the
/// experts ranked fewer than b of them.
#[allow(clippy::type_complexity)]
pub fn partitions(
    q: &serenqa_shared::annotate::Question,
    agg: &serenqa_shared::annotate::QuestionAggregate,
    link: impl Fn(&serenqa_shared::annotate::Candidate) -> Option<u32>,
) -> Option<(Vec<u32>, Vec<usize>, Option<Vec<usize>>)> {
    let mut nodes: Vec<u32> = Vec::new();
    let mut cand_ids = Vec::new();
    for c in &q.candidates {
        if let Some(n) = link(c) {
            if !nodes.contains(&n) {
                nodes.push(n);
                cand_ids.push(c.id);
            }
        }
    }
    let b = budget(nodes.len());
    let expert: Vec<usize> = agg
        .candidates
        .iter()
        .filter(|c| c.mean_rank.is_some())
        .filter_map(|c| cand_ids.iter().position(|&id| id == c.candidate))
        .take(b)
        .collect();
    if nodes.len() < 2 || expert.len() < b {
        return None;
    }
    let mut by_llm: Vec<(i64, usize)> = Vec::new();
    for (pos, id) in cand_ids.iter().enumerate() {
        if let Some(r) = q
            .candidates
            .iter()
            .find(|c| c.id == *id)
            .and_then(|c| c.llm_rank)
        {
            by_llm.push((r, pos));
        }
    }
    by_llm.sort_unstable();
    let ensemble =
        (by_llm.len() == nodes.len()).then(|| by_llm.iter().take(b).map(|&(_, p)| p).collect());
    Some((nodes, expert, ensemble))
}

/// The grid on the simplex with `1/step` divisions.
pub fn simplex_grid(step: f64) -> Vec<Weights> {
    let k = (1.0 / step).round().max(1.0) as usize;
    let mut v = Vec::new();
    for i in 0..=k {
        for j in 0..=(k - i) {
            let a = i as f64 / k as f64;
            let b = j as f64 / k as f64;
            v.push(Weights {
                alpha: a,
                beta: b,
                gamma: (1.0 - a - b).max(0.0),
            });
        }
    }
    v
}

fn overlap(a: &[usize], b: &[usize]) -> f64 {
    let hit = a.iter().filter(|x| b.contains(x)).count();
    hit as f64 / a.len().max(1) as f64
}

/// RNS-guided As of every item at `w`.
fn rns_sets(items: &[Item], w: &Weights) -> Result<Vec<Vec<usize>>, String> {
    items
        .iter()
        .map(|it| {
            let sc = Scorer::new(&it.slice).map_err(|e| e.to_string())?;
            let r = sc
                .greedy_swap_anchored(&it.ac, &it.anchors, it.ensemble.as_deref(), w)
                .map_err(|e| e.to_string())?;
            Ok(r.serendipity)
        })
        .collect()
}

fn mean_agreement(items: &[Item], sets: &[Vec<usize>]) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    items
        .iter()
        .zip(sets)
        .map(|(it, s)| overlap(&it.expert, s))
        .sum::<f64>()
        / items.len() as f64
}

/// Pearson correlation (shared with the leaderboard, so both report the same number).
pub use serenqa_shared::results::pearson;

fn indicators(items: &[Item], sets: &[&[usize]]) -> Vec<f64> {
    items
        .iter()
        .zip(sets)
        .flat_map(|(it, s)| {
            it.ac
                .iter()
                .map(move |c| if s.contains(c) { 1.0 } else { 0.0 })
        })
        .collect()
}

/// Fits the weights. Fails on no items or inconsistent items (wrong |As|, positions outside
/// the slice).
pub fn calibrate(items: &[Item], step: f64) -> Result<CalibrationReport, String> {
    if items.is_empty() {
        return Err(
            "no question has an expert partition whose candidates are all in the graph".into(),
        );
    }
    if !(step > 0.0 && step <= 0.5) {
        return Err(format!("grid step {step} must lie in (0, 0.5]"));
    }
    for (i, it) in items.iter().enumerate() {
        let b = budget(it.ac.len());
        if it.expert.len() != b || it.ensemble.as_ref().is_some_and(|e| e.len() != b) {
            return Err(format!(
                "item {i}: the serendipity sets must hold b = {b} candidates"
            ));
        }
        if it.ac.iter().chain(&it.expert).any(|&p| p >= it.slice.len())
            || it.expert.iter().any(|p| !it.ac.contains(p))
        {
            return Err(format!("item {i}: positions outside the candidate set"));
        }
    }
    let grid = simplex_grid(step);
    let mut surface = Vec::with_capacity(grid.len());
    for w in &grid {
        let sets = rns_sets(items, w)?;
        surface.push([w.alpha, w.beta, w.gamma, mean_agreement(items, &sets)]);
    }
    let best = surface
        .iter()
        .map(|p| p[3])
        .fold(f64::NEG_INFINITY, f64::max);
    let tied: Vec<&[f64; 4]> = surface
        .iter()
        .filter(|p| (p[3] - best).abs() <= 1e-12)
        .collect();
    let centroid = [0, 1, 2].map(|k| tied.iter().map(|p| p[k]).sum::<f64>() / tied.len() as f64);
    let chosen = tied
        .iter()
        .min_by(|a, b| {
            let d = |p: &[f64; 4]| (0..3).map(|k| (p[k] - centroid[k]).powi(2)).sum::<f64>();
            d(a).total_cmp(&d(b))
        })
        .ok_or("empty grid")?;
    let w = Weights {
        alpha: chosen[0],
        beta: chosen[1],
        gamma: chosen[2],
    };
    let fitted = rns_sets(items, &w)?;
    let default_agreement = mean_agreement(items, &rns_sets(items, &Weights::default())?);

    let expert: Vec<&[usize]> = items.iter().map(|i| i.expert.as_slice()).collect();
    let rns: Vec<&[usize]> = fitted.iter().map(std::vec::Vec::as_slice).collect();
    let mut pairs = vec![PairStat {
        a: "expert".into(),
        b: "rns-guided".into(),
        agreement: mean_agreement(items, &fitted),
        pearson: pearson(&indicators(items, &expert), &indicators(items, &rns)),
    }];
    // The ensemble comparisons use the questions that have an ensemble partition.
    let with_ens: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].ensemble.is_some())
        .collect();
    if !with_ens.is_empty() {
        let sub: Vec<Item> = with_ens.iter().map(|&i| items[i].clone()).collect();
        let ens: Vec<&[usize]> = sub
            .iter()
            .map(|i| i.ensemble.as_deref().unwrap_or(&[]))
            .collect();
        let ex: Vec<&[usize]> = sub.iter().map(|i| i.expert.as_slice()).collect();
        let rn: Vec<&[usize]> = with_ens.iter().map(|&i| fitted[i].as_slice()).collect();
        let agree = |a: &[&[usize]], b: &[&[usize]]| {
            a.iter().zip(b).map(|(x, y)| overlap(x, y)).sum::<f64>() / a.len() as f64
        };
        pairs.push(PairStat {
            a: "expert".into(),
            b: "llm-ensemble".into(),
            agreement: agree(&ex, &ens),
            pearson: pearson(&indicators(&sub, &ex), &indicators(&sub, &ens)),
        });
        pairs.push(PairStat {
            a: "llm-ensemble".into(),
            b: "rns-guided".into(),
            agreement: agree(&ens, &rn),
            pearson: pearson(&indicators(&sub, &ens), &indicators(&sub, &rn)),
        });
    }
    Ok(CalibrationReport {
        alpha: w.alpha,
        beta: w.beta,
        gamma: w.gamma,
        agreement: best,
        default_agreement,
        questions: items.len(),
        grid_step: step,
        grid_points: grid.len(),
        best_points: tied.len(),
        pairs,
        surface,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_the_simplex() {
        let g = simplex_grid(0.5);
        assert_eq!(g.len(), 6);
        assert!(g
            .iter()
            .all(|w| (w.alpha + w.beta + w.gamma - 1.0).abs() < 1e-12 && w.gamma >= 0.0));
        assert_eq!(simplex_grid(0.05).len(), 231);
    }

    #[test]
    fn pearson_known_values() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        // By hand: x = (1,0,0,1), y = (1,0,1,0): means ½; Σ(x−x̄)(y−ȳ) = ¼−(−¼)… = 0.
        assert!(
            pearson(&[1.0, 0.0, 0.0, 1.0], &[1.0, 0.0, 1.0, 0.0])
                .unwrap()
                .abs()
                < 1e-12
        );
        assert_eq!(pearson(&[1.0, 1.0], &[0.0, 1.0]), None);
    }
}
