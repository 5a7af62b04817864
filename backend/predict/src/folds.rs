//! Cross-validation folds: which fold holds out each compound–disease pair (by treatment edge or
//! by whole disease), the treatment edges a fold hides, and the seeded uniform draw both the
//! folds and the negative sampling use.

use serde::Serialize;
use serenqa_graph::Graph;

use crate::dwpc::EdgeMask;

/// Deterministic uniform in [0, 1) from a seed and an index (splitmix64 of
/// `seed + i·0xBF58476D1CE4E5B9`).
pub fn unit(seed: u64, i: u64) -> f64 {
    use serenqa_shared::rng::{splitmix64, unit_f64};
    unit_f64(splitmix64(
        seed.wrapping_add(i.wrapping_mul(0xBF58_476D_1CE4_E5B9)),
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FoldKind {
    Edges,
    Diseases,
}

/// The fold of every pair.
///
/// **Edge folds**: the first label's pairs are shuffled (seeded) and dealt round-robin; then
/// the pairs positive for a later label only (CpD and not CtD) are shuffled with another seed
/// and dealt on from where the first deal stopped, so every fold holds out its share of both
/// labels; every other pair gets a seeded hash fold. The first label's deal does not depend on
/// the second, so a graph without a second label gets the same CtD folds.
/// **Disease folds**: the diseases are shuffled and dealt; a pair takes its disease's fold.
pub fn assign_folds(
    positives: &[Vec<bool>],
    nd: usize,
    k: usize,
    kind: FoldKind,
    seed: u64,
) -> Vec<usize> {
    let npairs = positives.first().map_or(0, std::vec::Vec::len);
    let k = k.max(1);
    let mut fold = vec![0usize; npairs];
    match kind {
        FoldKind::Edges => {
            let labelled = |p: usize| positives.iter().any(|l| l[p]);
            let mut dealt = 0usize;
            for (h, pos) in positives.iter().enumerate() {
                let mut pairs: Vec<usize> = (0..npairs)
                    .filter(|&p| pos[p] && !positives[..h].iter().any(|l| l[p]))
                    .collect();
                shuffle(
                    &mut pairs,
                    if h == 0 {
                        seed
                    } else {
                        seed ^ (0x9a11_1a7e_u64.wrapping_mul(h as u64))
                    },
                );
                for &p in &pairs {
                    fold[p] = dealt % k;
                    dealt += 1;
                }
            }
            for (p, f) in fold.iter_mut().enumerate() {
                if !labelled(p) {
                    *f = ((unit(seed ^ 0x5eed_f01d, p as u64) * k as f64) as usize).min(k - 1);
                }
            }
        }
        FoldKind::Diseases => {
            let mut ds: Vec<usize> = (0..nd).collect();
            shuffle(&mut ds, seed);
            let mut dfold = vec![0usize; nd];
            for (i, &d) in ds.iter().enumerate() {
                dfold[d] = i % k;
            }
            for (p, f) in fold.iter_mut().enumerate() {
                *f = dfold[p % nd.max(1)];
            }
        }
    }
    fold
}

/// The edges fold `f` hides: every direct compound–disease edge (all treatment relations, CtD
/// and CpD alike) of its labelled pairs — for disease folds, of all its diseases' pairs. A
/// held-out pair of either label thus has none of its own treatment edges in the graph its
/// features are computed on.
pub fn fold_mask(
    g: &Graph,
    treat_edges: &[(usize, u32)],
    positives: &[Vec<bool>],
    fold: &[usize],
    f: usize,
    kind: FoldKind,
) -> EdgeMask {
    let mut mask = EdgeMask::empty(g.edge_count());
    for &(p, e) in treat_edges {
        let hide = match kind {
            FoldKind::Edges => fold[p] == f && positives.iter().any(|l| l[p]),
            FoldKind::Diseases => fold[p] == f,
        };
        if hide {
            mask.insert(e);
        }
    }
    mask
}

fn shuffle<T>(v: &mut [T], seed: u64) {
    for i in (1..v.len()).rev() {
        let j = ((unit(seed ^ 0xf01d_5eed, i as u64) * (i + 1) as f64) as usize).min(i);
        v.swap(i, j);
    }
}
