//! Marginals P(x) by the damped iteration of Algorithm 2:
//! p₀ = 1/V, p_{t+1} = λ P3ᵀ p_t + (1 − λ) p₀, until ‖p_{t+1} − p_t‖₁ < ε.
//!
//! Each iteration is three fused pull passes (parallel over target nodes, no atomics) over a
//! degree-ordered copy of the walk graph ([`crate::reorder`]): hop 1 and 2 write the next
//! scaled vector and accumulate αₕ yₕ; hop 3 finishes the update, the L1 residual and the
//! scaled vector for the next iteration in the same sweep. Memory: five f64 vectors of
//! length V plus the reordered lists (4 bytes per walkable edge end).

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::reorder::{Lists, WalkCsr};
use crate::transition::{Transition, ALPHA};

const CHUNK: usize = 1 << 13;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarginalParams {
    /// Damping λ.
    pub lambda: f64,
    /// L1 tolerance ε.
    pub epsilon: f64,
    /// Safety cap; reaching it is reported as not converged.
    pub max_iterations: usize,
}

impl Default for MarginalParams {
    fn default() -> Self {
        MarginalParams {
            lambda: 0.85,
            epsilon: 1e-10,
            max_iterations: 1000,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarginalStats {
    pub iterations: usize,
    /// ‖p_t − p_{t−1}‖₁ at the last iteration.
    pub residual: f64,
    pub converged: bool,
    pub seconds: f64,
}

/// Runs Algorithm 2. Returns P (sums to 1, indexed by node id) and how it went.
pub fn compute(
    t: &Transition,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    let start = Instant::now();
    let sp = serenqa_graph::progress::spinner("marginals: reordering the walk graph", progress);
    let w = WalkCsr::build(t, Lists::Pull);
    sp.finish_and_clear();
    let (p, mut stats) = compute_on(&w, params, progress);
    stats.seconds = start.elapsed().as_secs_f64();
    (p, stats)
}

/// Σ z[i] over a list, with four independent sums (one running sum would serialise on the
/// add latency).
#[inline(always)]
fn sum4(z: &[f64], list: &[u32]) -> f64 {
    let mut a = [0.0f64; 4];
    let quads = list.chunks_exact(4);
    let rest = quads.remainder();
    for q in quads {
        a[0] += z[q[0] as usize];
        a[1] += z[q[1] as usize];
        a[2] += z[q[2] as usize];
        a[3] += z[q[3] as usize];
    }
    for &i in rest {
        a[0] += z[i as usize];
    }
    (a[0] + a[1]) + (a[2] + a[3])
}

/// A segment size for [`compute_blocked`]: 2²¹ f64 values = 16 MiB, half of a 32 MiB L3.
/// Not the default: on the 2-core test machine the blocked passes measured 1.9× slower at
/// CKG scale than the plain degree-ordered passes (the extra sweeps over y and the segment
/// bounds cost more than the cache misses they save once hubs come first).
pub const SEGMENT_NODES: usize = 1 << 21;

/// Where each pull list crosses each segment boundary (lists are sorted, so the sources of a
/// segment are one contiguous run). 4 bytes per node per boundary.
struct Segments {
    count: usize,
    bounds: Vec<u32>,
}

impl Segments {
    fn build(w: &WalkCsr, seg: usize) -> Segments {
        let n = w.len();
        let count = n.div_ceil(seg).max(1);
        let k = count - 1;
        let mut bounds = vec![0u32; n * k];
        if k > 0 {
            bounds.par_chunks_mut(k).enumerate().for_each(|(j, b)| {
                let l = w.list(j);
                for s in 1..count {
                    b[s - 1] = l.partition_point(|&i| (i as usize) < s * seg) as u32;
                }
            });
        }
        Segments { count, bounds }
    }

    #[inline(always)]
    fn range(&self, j: usize, s: usize, len: usize) -> (usize, usize) {
        let k = self.count - 1;
        let a = if s == 0 {
            0
        } else {
            self.bounds[j * k + s - 1] as usize
        };
        let b = if s == k {
            len
        } else {
            self.bounds[j * k + s] as usize
        };
        (a, b)
    }
}

/// y = P1ᵀx from z = x ∘ inv_deg (dangling self-loops included), one source segment at a
/// time: each sweep gathers only from a cache-sized window of z.
fn blocked_pass(w: &WalkCsr, segs: &Segments, z: &[f64], y: &mut [f64]) {
    for s in 0..segs.count {
        y.par_chunks_mut(CHUNK).enumerate().for_each(|(c, yc)| {
            let base = c * CHUNK;
            for (k, yv) in yc.iter_mut().enumerate() {
                let j = base + k;
                let l = w.list(j);
                let (a, b) = segs.range(j, s, l.len());
                let v = sum4(z, &l[a..b]);
                if s == 0 {
                    *yv = v;
                } else {
                    *yv += v;
                }
            }
        });
    }
    y.par_chunks_mut(CHUNK).enumerate().for_each(|(c, yc)| {
        let base = c * CHUNK;
        for (k, yv) in yc.iter_mut().enumerate() {
            if w.degree[base + k] == 0 {
                *yv += z[base + k];
            }
        }
    });
}

#[inline(always)]
fn inv_degree(w: &WalkCsr, j: usize) -> f64 {
    1.0 / w.degree[j].max(1) as f64
}

/// (P1ᵀx)_j from z = x ∘ inv_deg in the reordered graph, and 1/max(1, deg_j).
#[inline(always)]
fn pull(w: &WalkCsr, z: &[f64], j: usize) -> (f64, f64) {
    let mut acc = sum4(z, w.list(j));
    let d = w.degree[j];
    if d == 0 {
        acc += z[j];
    }
    (acc, 1.0 / d.max(1) as f64)
}

/// Algorithm 2 on a prebuilt pull-list graph ([`Lists::Pull`]), one fused sweep per hop.
/// `seconds` in the stats covers the iterations only.
pub fn compute_on(
    w: &WalkCsr,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    compute_blocked(w, params, progress, usize::MAX)
}

/// [`compute_on`] with cache-blocked passes: the sources are cut into segments of `seg_nodes`
/// and each hop sweeps once per segment (`seg_nodes ≥ |V|`: one fused sweep per hop).
pub fn compute_blocked(
    w: &WalkCsr,
    params: &MarginalParams,
    progress: bool,
    seg_nodes: usize,
) -> (Vec<f64>, MarginalStats) {
    let n = w.len();
    let start = Instant::now();
    if n == 0 {
        return (
            Vec::new(),
            MarginalStats {
                iterations: 0,
                residual: 0.0,
                converged: true,
                seconds: 0.0,
            },
        );
    }
    let segs = (n > seg_nodes.max(1)).then(|| Segments::build(w, seg_nodes.max(1)));
    let lam = params.lambda;
    let p0 = 1.0 / n as f64;
    let teleport = (1.0 - lam) * p0;
    let mut p = vec![p0; n];
    let mut z: Vec<f64> = w.degree.par_iter().map(|&d| p0 / d.max(1) as f64).collect();
    let mut z1 = vec![0.0; n];
    let mut z2 = vec![0.0; n];
    let mut acc = vec![0.0; n];
    let mut y = if segs.is_some() {
        vec![0.0; n]
    } else {
        Vec::new()
    };
    // λᵗ ≈ ε: the expected iteration count (the bar grows if more are needed).
    let expected = (params.epsilon.ln() / lam.ln()).ceil().max(1.0) as u64;
    let bar = serenqa_graph::progress::count_bar(expected, "marginals (iterations)", progress);
    let mut iterations = 0;
    let mut residual = f64::INFINITY;
    while iterations < params.max_iterations {
        if let Some(segs) = &segs {
            blocked_pass(w, segs, &z, &mut y);
            z1.par_chunks_mut(CHUNK)
                .zip(acc.par_chunks_mut(CHUNK))
                .zip(y.par_chunks(CHUNK))
                .enumerate()
                .for_each(|(c, ((z1c, ac), yc))| {
                    for k in 0..z1c.len() {
                        ac[k] = ALPHA[0] * yc[k];
                        z1c[k] = yc[k] * inv_degree(w, c * CHUNK + k);
                    }
                });
            blocked_pass(w, segs, &z1, &mut y);
            z2.par_chunks_mut(CHUNK)
                .zip(acc.par_chunks_mut(CHUNK))
                .zip(y.par_chunks(CHUNK))
                .enumerate()
                .for_each(|(c, ((z2c, ac), yc))| {
                    for k in 0..z2c.len() {
                        ac[k] += ALPHA[1] * yc[k];
                        z2c[k] = yc[k] * inv_degree(w, c * CHUNK + k);
                    }
                });
            blocked_pass(w, segs, &z2, &mut y);
            residual = p
                .par_chunks_mut(CHUNK)
                .zip(z.par_chunks_mut(CHUNK))
                .zip(acc.par_chunks(CHUNK).zip(y.par_chunks(CHUNK)))
                .enumerate()
                .map(|(c, ((pc, zc), (ac, yc)))| {
                    let mut diff = 0.0;
                    for k in 0..pc.len() {
                        let new = lam * (ac[k] + ALPHA[2] * yc[k]) + teleport;
                        diff += (new - pc[k]).abs();
                        pc[k] = new;
                        zc[k] = new * inv_degree(w, c * CHUNK + k);
                    }
                    diff
                })
                .collect::<Vec<f64>>()
                .iter()
                .sum(); // in chunk order: the stopping iteration never depends on scheduling
        } else {
            // Hop 1: y = P1ᵀ p; acc = α₁ y; z1 = y / deg.
            z1.par_chunks_mut(CHUNK)
                .zip(acc.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(c, (z1c, ac))| {
                    let base = c * CHUNK;
                    for k in 0..z1c.len() {
                        let (y, inv) = pull(w, &z, base + k);
                        ac[k] = ALPHA[0] * y;
                        z1c[k] = y * inv;
                    }
                });
            // Hop 2.
            z2.par_chunks_mut(CHUNK)
                .zip(acc.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(c, (z2c, ac))| {
                    let base = c * CHUNK;
                    for k in 0..z2c.len() {
                        let (y, inv) = pull(w, &z1, base + k);
                        ac[k] += ALPHA[1] * y;
                        z2c[k] = y * inv;
                    }
                });
            // Hop 3 + update + residual + next z.
            residual = p
                .par_chunks_mut(CHUNK)
                .zip(z.par_chunks_mut(CHUNK))
                .zip(acc.par_chunks(CHUNK))
                .enumerate()
                .map(|(c, ((pc, zc), ac))| {
                    let base = c * CHUNK;
                    let mut diff = 0.0;
                    for k in 0..pc.len() {
                        let (y, inv) = pull(w, &z2, base + k);
                        let new = lam * (ac[k] + ALPHA[2] * y) + teleport;
                        diff += (new - pc[k]).abs();
                        pc[k] = new;
                        zc[k] = new * inv;
                    }
                    diff
                })
                .collect::<Vec<f64>>()
                .iter()
                .sum(); // in chunk order: the stopping iteration never depends on scheduling
        }
        iterations += 1;
        if iterations as u64 > bar.length().unwrap_or(0) {
            bar.set_length(iterations as u64 + 1);
        }
        bar.set_position(iterations as u64);
        bar.set_message(format!("marginals, residual {residual:.1e}"));
        if residual < params.epsilon {
            break;
        }
    }
    bar.finish_and_clear();
    let converged = residual < params.epsilon;
    (
        w.to_original(&p),
        MarginalStats {
            iterations,
            residual,
            converged,
            seconds: start.elapsed().as_secs_f64(),
        },
    )
}

/// The bandwidth floor of [`compute_on`]: the time of `passes` plain parallel sequential
/// sweeps over exactly the arrays one pull pass reads (offsets, neighbour lists, degrees),
/// with the same chunking, summing them so the reads cannot be optimised away. Only the
/// gathers into the |V|-long vector are missing. Returns (seconds, checksum).
pub fn bandwidth_floor(w: &WalkCsr, passes: usize) -> (f64, u64) {
    let n = w.len();
    let start = Instant::now();
    let mut check = 0u64;
    for _ in 0..passes {
        let chunks = n.div_ceil(CHUNK);
        check = check.wrapping_add(
            (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let (a, b) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
                    let mut s = 0u64;
                    for &x in &w.nbrs[w.offsets[a] as usize..w.offsets[b] as usize] {
                        s = s.wrapping_add(x as u64);
                    }
                    for j in a..b {
                        s = s.wrapping_add(w.offsets[j + 1] ^ w.degree[j] as u64);
                    }
                    s
                })
                .reduce(|| 0, u64::wrapping_add),
        );
    }
    (start.elapsed().as_secs_f64(), check)
}
