//! The top-k model's features and fit: the task's space, the feature layout, a pair's row from
//! one disease's pushes, the training sample, and the fitted model as sums
//! (logit = base + metapath part + compound term + disease term).

use rayon::prelude::*;
use serenqa_graph::{Direction, Graph, RelId};
use serenqa_shared::rng::SplitMix64;

use super::info::TopkParams;
use super::walk::{Scratch, Sparse, Walker};
use crate::dwpc::{EdgeMask, LocalIndex};
use crate::learn::{self, LogReg};
use crate::metagraph::Metagraph;
use crate::task::Task;
use crate::PredictError;

/// Everything fixed for a graph: the task, metagraph, local indices.
pub(super) struct Space<'g> {
    pub(super) g: &'g Graph,
    pub(super) task: Task,
    pub(super) mg: Metagraph,
    pub(super) li: LocalIndex,
}

/// The feature layout: kept metapaths, their means, the degree steps.
#[derive(Clone)]
pub(super) struct Layout {
    pub(super) paths: Vec<Vec<usize>>,
    pub(super) means: Vec<f64>,
    /// (step, compound side?) of each degree feature.
    pub(super) deg_steps: Vec<(usize, bool)>,
}

impl Layout {
    pub(super) fn width(&self) -> usize {
        self.paths.len() + self.deg_steps.len()
    }
    /// The steps the metapaths walk, sorted.
    pub(super) fn path_steps(&self) -> Vec<usize> {
        let mut s: Vec<usize> = self.paths.iter().flatten().copied().collect();
        s.sort_unstable();
        s.dedup();
        s
    }
    pub(super) fn degree_steps(&self) -> Vec<usize> {
        self.deg_steps.iter().map(|x| x.0).collect()
    }
    /// A walker of these metapaths and degree features on `g` without `mask`.
    pub(super) fn walker<'a>(&self, sp: &'a Space, mask: &'a EdgeMask, w: f64) -> Walker<'a> {
        Walker::with_degrees(
            sp.g,
            &sp.mg,
            &sp.li,
            mask,
            w,
            &self.path_steps(),
            &self.degree_steps(),
        )
    }
}

/// Compounds joined to disease `d` (local) by an unmasked edge of one of `rels`: (local
/// compound, relation), sorted.
pub(super) fn joined(sp: &Space, mask: &EdgeMask, d: usize, rels: &[RelId]) -> Vec<(u32, RelId)> {
    let g = sp.g;
    let dn = sp.task.diseases[d];
    let mut out: Vec<(u32, RelId)> = g
        .edges(dn, Direction::Both)
        .filter(|e| rels.contains(&e.rel) && !mask.contains(e.id))
        .filter_map(|e| {
            let other = if e.source == dn { e.target } else { e.source };
            (g.node_type(other) == sp.task.compound_type)
                .then(|| (sp.li.local[other as usize], e.rel))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The label's compounds of `d` (positives) and every treatment's compounds (known).
pub(super) fn positives_and_known(sp: &Space, mask: &EdgeMask, d: usize) -> (Vec<u32>, Vec<u32>) {
    let all = joined(sp, mask, d, &sp.task.treatment);
    let mut pos: Vec<u32> = all
        .iter()
        .filter(|x| x.1 == sp.task.label)
        .map(|x| x.0)
        .collect();
    pos.dedup();
    let mut known: Vec<u32> = all.iter().map(|x| x.0).collect();
    known.dedup();
    (pos, known)
}

/// The raw feature row of (c, d) from d's pushes; `known`: remove the pair's own edges.
#[allow(clippy::too_many_arguments)]
pub(super) fn row(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    vecs: &[Sparse],
    prefix: &[f64],
    d: u32,
    c: u32,
    known: bool,
    sc: &mut Scratch,
) -> Vec<f64> {
    let mut r = Vec::with_capacity(lay.width());
    for (j, p) in lay.paths.iter().enumerate() {
        let mut v = vecs[j].get_sorted(c);
        if known && v > 0.0 {
            v = (v - w.own_walks(p, prefix[j], d, c, sc)).max(0.0);
        }
        r.push(transform(v, lay.means[j]));
    }
    for &(s, side_c) in &lay.deg_steps {
        let st = &sp.mg.steps[s];
        let degs = w.deg[s].as_deref().unwrap_or(&[]);
        let (me, other) = if side_c { (c, d) } else { (d, c) };
        let mut deg = degs.get(me as usize).copied().unwrap_or(0);
        let reaches_other = if side_c {
            st.to == sp.task.disease_type
        } else {
            st.to == sp.task.compound_type
        };
        if known && st.treatment && reaches_other {
            deg = deg.saturating_sub(w.edges_between(s, me, other));
        }
        r.push((deg as f64).asinh());
    }
    r
}

/// The training rows of `diseases` on the masked graph: each disease's positives and a
/// seeded sample of its unknown pairs. Returns (rows, labels, sampling rate of negatives).
pub(super) fn training_rows(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    diseases: &[u32],
    params: &TopkParams,
    salt: u64,
) -> (Vec<f64>, Vec<f64>, f64) {
    let nc = sp.task.compounds.len();
    let per: Vec<(Vec<u32>, Vec<u32>)> = diseases
        .par_iter()
        .map(|&d| positives_and_known(sp, w.mask, d as usize))
        .collect();
    let npos: usize = per.iter().map(|p| p.0.len()).sum();
    let unknown: usize = per.iter().map(|p| nc - p.1.len()).sum();
    let want = (npos * params.neg_per_pos).max(200).min(unknown);
    let mut rng = SplitMix64::new(params.seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut neg: Vec<Vec<u32>> = vec![Vec::new(); diseases.len()];
    let mut drawn = 0;
    let mut tries = 0usize;
    while drawn < want && tries < want * 50 {
        tries += 1;
        let i = rng.below(diseases.len());
        let c = rng.below(nc) as u32;
        if per[i].1.binary_search(&c).is_ok() {
            continue;
        }
        neg[i].push(c);
        drawn += 1;
    }
    let rate = if unknown == 0 {
        1.0
    } else {
        drawn as f64 / unknown as f64
    };
    let blocks: Vec<(Vec<f64>, Vec<f64>)> = diseases
        .par_iter()
        .enumerate()
        .map_init(Scratch::default, |sc, (i, &d)| {
            let (pos, _) = &per[i];
            if pos.is_empty() && neg[i].is_empty() {
                return (Vec::new(), Vec::new());
            }
            let (vecs, prefix) = w.from_disease(&lay.paths, d, sc);
            let vecs: Vec<Sparse> = vecs.iter().map(Sparse::sorted).collect();
            let mut x = Vec::new();
            let mut y = Vec::new();
            for &c in pos {
                x.extend(row(sp, w, lay, &vecs, &prefix, d, c, true, sc));
                y.push(1.0);
            }
            for &c in &neg[i] {
                x.extend(row(sp, w, lay, &vecs, &prefix, d, c, false, sc));
                y.push(0.0);
            }
            (x, y)
        })
        .collect();
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (bx, by) in blocks {
        x.extend(bx);
        y.extend(by);
    }
    (x, y, rate)
}

/// The fitted model as sums: logit(c, d) = base + paths(c, d) + gc[c] + hd[d].
pub(super) struct Scorer {
    pub(super) lr: LogReg,
    pub(super) base: f64,
    /// Σ_j β_j z_j(0) over the metapaths: an unreached pair's metapath part.
    pub(super) z0: f64,
    pub(super) gc: Vec<f64>,
    pub(super) hd: Vec<f64>,
}

impl Scorer {
    pub(super) fn new(sp: &Space, w: &Walker, lay: &Layout, lr: LogReg, rate: f64) -> Scorer {
        let np = lay.paths.len();
        let z0 = (0..np).map(|j| lr.beta[j] * lr.z(j, 0.0)).sum();
        let side = |want_c: bool, n: usize| -> Vec<f64> {
            (0..n)
                .into_par_iter()
                .map(|i| {
                    lay.deg_steps
                        .iter()
                        .enumerate()
                        .filter(|(_, &(_, c))| c == want_c)
                        .map(|(k, &(s, _))| {
                            let deg = w.deg[s].as_ref().and_then(|x| x.get(i)).copied();
                            let v = (deg.unwrap_or(0) as f64).asinh();
                            lr.beta[np + k] * lr.z(np + k, v)
                        })
                        .sum()
                })
                .collect()
        };
        let gc = side(true, sp.task.compounds.len());
        let hd = side(false, sp.task.diseases.len());
        Scorer {
            base: lr.intercept + rate.ln(),
            lr,
            z0,
            gc,
            hd,
        }
    }

    /// β_j · z_j of metapath `j` at raw value `v`.
    pub(super) fn path_term(&self, lay: &Layout, j: usize, v: f64) -> f64 {
        self.lr.beta[j] * self.lr.z(j, transform(v, lay.means[j]))
    }

    /// The logits of every compound `reach`ed from `d` (each once, any order), in one pass over
    /// the pushes' entries; `acc` is a zeroed buffer over the compounds, left zeroed.
    pub(super) fn reached_all(
        &self,
        lay: &Layout,
        vecs: &[Sparse],
        reach: &[u32],
        d: u32,
        acc: &mut [f64],
    ) -> Vec<f64> {
        for (j, v) in vecs.iter().enumerate() {
            let zero = self.path_term(lay, j, 0.0);
            for (&c, &x) in v.idx.iter().zip(&v.val) {
                acc[c as usize] += self.path_term(lay, j, x) - zero;
            }
        }
        reach
            .iter()
            .map(|&c| {
                let z = std::mem::take(&mut acc[c as usize]);
                self.base + self.z0 + z + self.gc[c as usize] + self.hd[d as usize]
            })
            .collect()
    }

    pub(super) fn unreached(&self, c: u32, d: u32) -> f64 {
        self.base + self.z0 + self.gc[c as usize] + self.hd[d as usize]
    }
}

/// A metapath feature: `asinh(v / mean)` for `v` ≥ 0, as `ln(x + √(x² + 1))` (the scoring
/// pass takes one per entry; libm's `asinh` guards ranges these values never reach).
pub(super) fn transform(v: f64, mean: f64) -> f64 {
    let x = v / mean;
    (x + (x * x + 1.0).sqrt()).ln()
}

/// The compounds a disease's pushes reach, sorted.
pub(super) fn reached(vecs: &[Sparse]) -> Vec<u32> {
    let mut r: Vec<u32> = vecs.iter().flat_map(|v| v.idx.iter().copied()).collect();
    r.sort_unstable();
    r.dedup();
    r
}

pub(super) fn sample(n: usize, m: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut all: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut all);
    all.truncate(m.min(n));
    all
}

/// Fits on `fit_diseases` of the graph as masked.
pub(super) fn fit(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    diseases: &[u32],
    params: &TopkParams,
    salt: u64,
) -> Result<(Scorer, usize, usize), PredictError> {
    let (x, y, rate) = training_rows(sp, w, lay, diseases, params, salt);
    let n = y.len();
    let npos = y.iter().filter(|&&v| v > 0.5).count();
    if npos == 0 || npos == n {
        return Err(PredictError::Task(format!(
            "the {} sampled diseases have {npos} known treatments among {n} pairs: nothing to fit",
            diseases.len()
        )));
    }
    let lr = learn::fit(&x, n, lay.width(), &y, params.fit);
    Ok((Scorer::new(sp, w, lay, lr, rate), npos, n - npos))
}
