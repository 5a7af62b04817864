//! Calibration of the RNS weights (α, β, γ) against expert partitions (paper §4.2).
//!
//! For every point of a regular grid on the surface |α| + |β| + |γ| = 1 with signs free
//! (`serenqa_shared::rns::signed_weight_grid`, the grid `serenqa rns fit` uses: scaling all
//! three weights by c > 0 never changes a partition, and a negative weight prefers low values
//! of its term, as the shipped α = −0.3 does), each question's RNS-guided partition
//! (Algorithm 1, started from the ensemble partition when there is one, as the benchmark
//! builder does) is compared with the expert partition: agreement = |As(RNS) ∩ As(expert)| / b,
//! averaged over questions. The best points usually form a region; the reported weights are
//! the grid point of that region nearest its centroid, so the answer does not depend on the
//! grid's scan order.
//!
//! With at least [`HELDOUT_MIN_ITEMS`] questions, every fifth question (positions 4, 9, … in
//! the order given) is held out of the fit; on those the report compares the weights in force
//! before with the fitted ones (`CalibrationReport::heldout`), which is what an admin reads
//! before putting the weights in force.
//!
//! The report adds the agreements and Pearson correlations between the three partition
//! strategies (expert, LLM ensemble, RNS-guided at the fitted weights), computed over all
//! (question, candidate) membership indicators "is in As" — our counterpart of the paper's
//! Figure 3, which correlates the strategies.

use serenqa_shared::annotate::{CalibrationReport, HeldoutComparison, PairStat, HELDOUT_MIN_ITEMS};
use serenqa_shared::rns::{budget, signed_weight_grid, Scorer, Slice, Weights};

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
    /// The annotators whose submitted rankings made the expert partition.
    pub annotators: Vec<i64>,
    /// Their agreement on this question (Kendall's W; `None` with one annotator).
    pub kendall_w: Option<f64>,
}

/// The weights in force when a calibration runs, for the held-out comparison.
#[derive(Clone, Debug)]
pub struct Before {
    pub weights: Weights,
    pub label: String,
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
pub fn calibrate(items: &[Item], step: f64, before: &Before) -> Result<CalibrationReport, String> {
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
    let all = items;
    let held = |i: usize| all.len() >= HELDOUT_MIN_ITEMS && i % 5 == 4;
    let fit_items: Vec<Item> = (0..all.len())
        .filter(|&i| !held(i))
        .map(|i| all[i].clone())
        .collect();
    let held_items: Vec<Item> = (0..all.len())
        .filter(|&i| held(i))
        .map(|i| all[i].clone())
        .collect();
    let items = fit_items.as_slice();
    let grid = signed_weight_grid(step);
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
    let heldout = if held_items.is_empty() {
        None
    } else {
        let b = before.weights;
        Some(HeldoutComparison {
            questions: held_items.len(),
            before: mean_agreement(&held_items, &rns_sets(&held_items, &b)?),
            after: mean_agreement(&held_items, &rns_sets(&held_items, &w)?),
            before_weights: [b.alpha, b.beta, b.gamma],
            before_label: before.label.clone(),
        })
    };
    let mut annotators: Vec<i64> = all
        .iter()
        .flat_map(|i| i.annotators.iter().copied())
        .collect();
    annotators.sort_unstable();
    annotators.dedup();
    let ws: Vec<f64> = all.iter().filter_map(|i| i.kendall_w).collect();
    let mean_kendall_w = (!ws.is_empty()).then(|| ws.iter().sum::<f64>() / ws.len() as f64);
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
        questions: all.len(),
        grid_step: step,
        grid_points: grid.len(),
        best_points: tied.len(),
        pairs,
        surface,
        annotators: annotators.len(),
        mean_kendall_w,
        heldout,
        id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_holds_signed_weights() {
        let g = signed_weight_grid(0.05);
        assert_eq!(g.len(), 4 * 20 * 20 + 2);
        assert!(g
            .iter()
            .all(|w| (w.alpha.abs() + w.beta.abs() + w.gamma.abs() - 1.0).abs() < 1e-12));
        // The shipped weights are a grid point.
        assert!(g.iter().any(|w| (w.alpha + 0.3).abs() < 1e-12
            && (w.beta - 0.7).abs() < 1e-12
            && w.gamma.abs() < 1e-12));
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
