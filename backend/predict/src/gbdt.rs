//! Gradient-boosted regression trees for a binary label (log-loss, Newton leaves), on
//! histogram-binned features: the second learner of `predict eval`'s comparison.
//!
//! Each round fits one tree of depth ≤ `depth` to the gradient `p − y` and hessian
//! `p (1 − p)` of the log-loss at the current logits, grown level by level: a node splits on
//! the (feature, threshold) of largest gain `G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)` when both
//! children keep at least `min_leaf` rows; a leaf adds `−lr · G/(H+λ)` to the logit.
//!
//! **Bins.** Each feature is cut at ≤ `max_bins − 1` thresholds taken from the quantiles of
//! its training values (every distinct value its own bin when there are few), so a split
//! "bin ≤ b" is the raw test `x ≤ threshold_b` and prediction needs no bins. Most metapath
//! features are 0 for most pairs: a feature's most frequent bin is left implicit, its
//! histogram entry is the node's total minus the other bins', so building a level's
//! histograms costs the feature's non-default entries, not all rows.
//!
//! **Determinism.** No randomness (no row or column subsampling). Histograms are built per
//! feature in parallel, each a sequential sum in row order; the best split is then chosen
//! over features in index order (ties keep the lower feature, then the lower bin); scoring
//! sums the trees in order per pair. So a fit and its predictions do not depend on the rayon
//! thread count.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::learn::sigmoid;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GbdtParams {
    pub rounds: usize,
    pub depth: usize,
    pub learning_rate: f64,
    /// Fewest training rows in a leaf.
    pub min_leaf: usize,
    /// L2 on the leaf values (XGBoost's λ).
    pub lambda: f64,
    /// Bins per feature (≤ 256).
    pub max_bins: usize,
}

impl Default for GbdtParams {
    /// Set once, before any run: shallow trees, moderate shrinkage, a few hundred rounds.
    fn default() -> Self {
        GRID[0]
    }
}

/// The grid `predict eval --learners` compares, fixed before the first run: the default, and
/// deeper trees at half the learning rate.
pub const GRID: [GbdtParams; 2] = [
    GbdtParams {
        rounds: 300,
        depth: 3,
        learning_rate: 0.1,
        min_leaf: 20,
        lambda: 1.0,
        max_bins: 64,
    },
    GbdtParams {
        rounds: 300,
        depth: 4,
        learning_rate: 0.05,
        min_leaf: 20,
        lambda: 1.0,
        max_bins: 64,
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Node {
    /// `u32::MAX` for a leaf.
    feature: u32,
    /// Go left when `x ≤ threshold`.
    threshold: f32,
    left: u32,
    right: u32,
    /// A leaf's contribution to the logit (learning rate included).
    value: f64,
}

const LEAF: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    nodes: Vec<Node>,
}

impl Tree {
    fn leaf_of(&self, x: &dyn Fn(usize) -> f32) -> usize {
        let mut n = 0usize;
        loop {
            let node = &self.nodes[n];
            if node.feature == LEAF {
                return n;
            }
            n = if clean(x(node.feature as usize)) <= node.threshold {
                node.left as usize
            } else {
                node.right as usize
            };
        }
    }
}

/// A fitted ensemble: `logit = base + Σ trees`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gbdt {
    pub base: f64,
    pub trees: Vec<Tree>,
    /// Total split gain per feature (how much each feature was used).
    pub gain: Vec<f64>,
    /// Mean training log-loss after the last round.
    pub train_loss: f64,
}

/// A value as binned and as compared: NaN is read as 0.
fn clean(x: f32) -> f32 {
    if x.is_nan() {
        0.0
    } else {
        x
    }
}

/// One feature on the training rows: its thresholds, every row's bin, the implicit bin and
/// the rows outside it (row, bin), in row order.
struct Binned {
    thresholds: Vec<f32>,
    bins: Vec<u8>,
    default: u8,
    sparse: Vec<(u32, u8)>,
}

fn bin_feature(vals: &[f32], max_bins: usize) -> Binned {
    let mut sorted: Vec<f32> = vals.iter().map(|&x| clean(x)).collect();
    sorted.sort_by(f32::total_cmp);
    let mut distinct = sorted.clone();
    distinct.dedup();
    let max_bins = max_bins.clamp(2, 256);
    let thresholds: Vec<f32> = if distinct.len() <= max_bins {
        distinct[..distinct.len().saturating_sub(1)].to_vec()
    } else {
        let n = sorted.len();
        let last = distinct[distinct.len() - 1];
        let mut t: Vec<f32> = (1..max_bins)
            .map(|q| sorted[(q * n / max_bins).min(n - 1)])
            .filter(|&v| v < last)
            .collect();
        t.dedup();
        t
    };
    let bins: Vec<u8> = vals
        .iter()
        .map(|&x| thresholds.partition_point(|&e| e < clean(x)) as u8)
        .collect();
    let mut count = vec![0usize; thresholds.len() + 1];
    for &b in &bins {
        count[b as usize] += 1;
    }
    let mut default = 0usize;
    for (b, &c) in count.iter().enumerate() {
        if c > count[default] {
            default = b;
        }
    }
    let default = default as u8;
    let sparse = bins
        .iter()
        .enumerate()
        .filter(|(_, &b)| b != default)
        .map(|(i, &b)| (i as u32, b))
        .collect();
    Binned {
        thresholds,
        bins,
        default,
        sparse,
    }
}

#[derive(Clone, Copy, Default)]
struct Sum {
    g: f64,
    h: f64,
    n: usize,
}

/// The best split of one node on one feature: (gain, bin, left sums).
type Best = Option<(f64, u8, Sum)>;

fn leaf_weight(s: Sum, lambda: f64) -> f64 {
    -s.g / (s.h + lambda)
}

fn score(s: Sum, lambda: f64) -> f64 {
    s.g * s.g / (s.h + lambda)
}

/// A training row as one level's histograms read it: its gradient, hessian and active node
/// slot (`LEAF` when its node no longer splits), side by side for one memory access.
#[derive(Clone, Copy)]
struct RowState {
    g: f64,
    h: f64,
    slot: u32,
}

/// Best split of each active node on feature `f`.
fn best_splits(f: &Binned, rows: &[RowState], totals: &[Sum], p: &GbdtParams) -> Vec<Best> {
    let nb = f.thresholds.len() + 1;
    if nb < 2 {
        return vec![None; totals.len()];
    }
    let mut hist = vec![Sum::default(); totals.len() * nb];
    for &(i, b) in &f.sparse {
        let r = rows[i as usize];
        if r.slot == LEAF {
            continue;
        }
        let e = &mut hist[r.slot as usize * nb + b as usize];
        e.g += r.g;
        e.h += r.h;
        e.n += 1;
    }
    totals
        .iter()
        .enumerate()
        .map(|(k, tot)| {
            let row = &mut hist[k * nb..(k + 1) * nb];
            let mut rest = *tot;
            for (b, e) in row.iter().enumerate() {
                if b != f.default as usize {
                    rest.g -= e.g;
                    rest.h -= e.h;
                    rest.n -= e.n;
                }
            }
            row[f.default as usize] = rest;
            let parent = score(*tot, p.lambda);
            let mut left = Sum::default();
            let mut best: Best = None;
            for (b, e) in row.iter().enumerate().take(nb - 1) {
                left.g += e.g;
                left.h += e.h;
                left.n += e.n;
                let right = Sum {
                    g: tot.g - left.g,
                    h: tot.h - left.h,
                    n: tot.n - left.n,
                };
                if left.n < p.min_leaf || right.n < p.min_leaf {
                    continue;
                }
                let gain = score(left, p.lambda) + score(right, p.lambda) - parent;
                if gain > 1e-12 && best.is_none_or(|(bg, _, _)| gain > bg) {
                    best = Some((gain, b as u8, left));
                }
            }
            best
        })
        .collect()
}

impl Gbdt {
    /// Fits on the training rows `rows` (indexes into every column of `cols`) with labels
    /// `y ∈ {0, 1}` (one per row).
    pub fn fit(cols: &[Vec<f32>], rows: &[usize], y: &[f64], p: &GbdtParams) -> Gbdt {
        assert_eq!(rows.len(), y.len());
        let n = rows.len();
        let binned: Vec<Binned> = cols
            .par_iter()
            .map(|c| {
                let vals: Vec<f32> = rows.iter().map(|&r| c[r]).collect();
                bin_feature(&vals, p.max_bins)
            })
            .collect();
        let pos = y.iter().filter(|&&v| v > 0.5).count() as f64;
        let prior = ((pos + 0.5) / (n as f64 + 1.0)).clamp(1e-6, 1.0 - 1e-6);
        let base = (prior / (1.0 - prior)).ln();
        let mut z = vec![base; n];
        let mut g = vec![0.0f64; n];
        let mut h = vec![0.0f64; n];
        let mut gain = vec![0.0f64; cols.len()];
        let mut trees = Vec::with_capacity(p.rounds);
        for _ in 0..p.rounds {
            for i in 0..n {
                let q = sigmoid(z[i]);
                g[i] = q - y[i];
                h[i] = (q * (1.0 - q)).max(1e-12);
            }
            let (tree, leaf) = grow(&binned, &g, &h, p, &mut gain);
            for i in 0..n {
                z[i] += tree.nodes[leaf[i] as usize].value;
            }
            trees.push(tree);
        }
        let train_loss = (0..n)
            .map(|i| {
                let q = sigmoid(z[i]).clamp(1e-15, 1.0 - 1e-15);
                -(y[i] * q.ln() + (1.0 - y[i]) * (1.0 - q).ln())
            })
            .sum::<f64>()
            / n.max(1) as f64;
        Gbdt {
            base,
            trees,
            gain,
            train_loss,
        }
    }

    /// The logit of one row, its feature `j` read by `x(j)`.
    pub fn logit_of(&self, x: &dyn Fn(usize) -> f32) -> f64 {
        let mut s = self.base;
        for t in &self.trees {
            s += t.nodes[t.leaf_of(x)].value;
        }
        s
    }

    /// Logits of every pair of a column-major table: pairs in parallel chunks, each chunk
    /// tree by tree (a node's column is read for the whole chunk at once), so every pair's sum
    /// is `base` then the trees in order — the same as [`Gbdt::logit_of`].
    pub fn logits_all(&self, cols: &[Vec<f32>]) -> Vec<f64> {
        const CHUNK: usize = 1024;
        let n = cols.first().map_or(0, Vec::len);
        let mut out = vec![self.base; n];
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let first = c * CHUNK;
                for t in &self.trees {
                    for (k, o) in chunk.iter_mut().enumerate() {
                        *o += t.nodes[t.leaf_of(&|j| cols[j][first + k])].value;
                    }
                }
            });
        out
    }
}

/// One tree, level by level; returns it and every row's leaf.
fn grow(
    binned: &[Binned],
    g: &[f64],
    h: &[f64],
    p: &GbdtParams,
    gain: &mut [f64],
) -> (Tree, Vec<u32>) {
    let n = g.len();
    let mut nodes = vec![Node {
        feature: LEAF,
        threshold: 0.0,
        left: 0,
        right: 0,
        value: 0.0,
    }];
    // Every row's tree node, and per row its slot among the level's active nodes.
    let mut leaf = vec![0u32; n];
    let mut active: Vec<u32> = vec![0];
    for _ in 0..p.depth {
        if active.is_empty() {
            break;
        }
        let mut slot_of = vec![LEAF; nodes.len()];
        for (k, &a) in active.iter().enumerate() {
            slot_of[a as usize] = k as u32;
        }
        let node_of: Vec<u32> = leaf.iter().map(|&l| slot_of[l as usize]).collect();
        let mut totals = vec![Sum::default(); active.len()];
        for i in 0..n {
            let k = node_of[i];
            if k != LEAF {
                let t = &mut totals[k as usize];
                t.g += g[i];
                t.h += h[i];
                t.n += 1;
            }
        }
        let rows: Vec<RowState> = (0..n)
            .map(|i| RowState {
                g: g[i],
                h: h[i],
                slot: node_of[i],
            })
            .collect();
        let per_feature: Vec<Vec<Best>> = binned
            .par_iter()
            .map(|f| best_splits(f, &rows, &totals, p))
            .collect();
        let mut next = Vec::new();
        // Per active slot: the chosen (feature, bin) and its children, in slot order.
        let mut chosen: Vec<Option<(usize, u8, u32)>> = vec![None; active.len()];
        for (k, &a) in active.iter().enumerate() {
            let mut best: Option<(f64, usize, u8)> = None;
            for (j, fb) in per_feature.iter().enumerate() {
                if let Some((gn, b, _)) = fb[k] {
                    if best.is_none_or(|(bg, _, _)| gn > bg) {
                        best = Some((gn, j, b));
                    }
                }
            }
            let Some((gn, j, b)) = best else { continue };
            gain[j] += gn;
            let left = nodes.len() as u32;
            for _ in 0..2 {
                nodes.push(Node {
                    feature: LEAF,
                    threshold: 0.0,
                    left: 0,
                    right: 0,
                    value: 0.0,
                });
            }
            let node = &mut nodes[a as usize];
            node.feature = j as u32;
            node.threshold = binned[j].thresholds[b as usize];
            node.left = left;
            node.right = left + 1;
            chosen[k] = Some((j, b, left));
            next.push(left);
            next.push(left + 1);
        }
        for i in 0..n {
            let k = node_of[i];
            if k == LEAF {
                continue;
            }
            if let Some((j, b, left)) = chosen[k as usize] {
                leaf[i] = if binned[j].bins[i] <= b {
                    left
                } else {
                    left + 1
                };
            }
        }
        active = next;
    }
    // Leaf values from the rows that reached them.
    let mut sums = vec![Sum::default(); nodes.len()];
    for i in 0..n {
        let s = &mut sums[leaf[i] as usize];
        s.g += g[i];
        s.h += h[i];
        s.n += 1;
    }
    for (node, s) in nodes.iter_mut().zip(&sums) {
        if node.feature == LEAF {
            node.value = p.learning_rate * leaf_weight(*s, p.lambda);
        }
    }
    (Tree { nodes }, leaf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xor_table(n: usize, seed: u64) -> (Vec<Vec<f32>>, Vec<f64>) {
        let mut s = seed;
        let mut r = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) as f32
        };
        let mut cols = vec![Vec::new(); 3];
        let mut y = Vec::new();
        for _ in 0..n {
            let (a, b, c) = (r(), r(), if r() < 0.7 { 0.0 } else { r() });
            cols[0].push(a);
            cols[1].push(b);
            cols[2].push(c);
            // An interaction a linear model cannot express.
            y.push(if (a > 0.5) != (b > 0.5) { 1.0 } else { 0.0 });
        }
        (cols, y)
    }

    #[test]
    fn learns_an_interaction_and_scores_raw_rows_as_in_training() {
        let (cols, y) = xor_table(2000, 3);
        let rows: Vec<usize> = (0..1500).collect();
        let p = GbdtParams {
            rounds: 60,
            ..GbdtParams::default()
        };
        let m = Gbdt::fit(&cols, &rows, &y[..1500], &p);
        let z = m.logits_all(&cols);
        let correct = (1500..2000)
            .filter(|&i| (z[i] > 0.0) == (y[i] > 0.5))
            .count();
        assert!(correct > 450, "{correct} of 500 held-out rows");
        assert!(m.gain[2] < 0.05 * (m.gain[0] + m.gain[1]), "{:?}", m.gain);
        for i in [0, 7, 1999] {
            assert_eq!(z[i], m.logit_of(&|j| cols[j][i]));
        }
    }

    #[test]
    fn the_same_fit_whatever_the_thread_count() {
        let (cols, y) = xor_table(1200, 5);
        let rows: Vec<usize> = (0..1200).step_by(2).collect();
        let ys: Vec<f64> = rows.iter().map(|&r| y[r]).collect();
        let p = GbdtParams {
            rounds: 40,
            depth: 4,
            ..GbdtParams::default()
        };
        let run = |t: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map(|pool| pool.install(|| Gbdt::fit(&cols, &rows, &ys, &p)))
        };
        let (Ok(a), Ok(b)) = (run(1), run(3)) else {
            panic!("no thread pool");
        };
        assert_eq!(a, b);
        assert_eq!(a.logits_all(&cols), b.logits_all(&cols));
    }

    #[test]
    fn bins_cut_at_quantiles_and_keep_few_values_apart() {
        let b = bin_feature(&[0.0, 0.0, 0.0, 1.0, 2.0, 2.0], 64);
        assert_eq!(b.thresholds, vec![0.0, 1.0]);
        assert_eq!(b.bins, vec![0, 0, 0, 1, 2, 2]);
        assert_eq!(b.default, 0);
        assert_eq!(b.sparse, vec![(3, 1), (4, 2), (5, 2)]);
        let many: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let b = bin_feature(&many, 16);
        assert_eq!(b.thresholds.len(), 15);
        assert!(b.bins.iter().all(|&x| x < 16));
    }
}
