//! Marginals P(x): the fixed point of Algorithm 2's damped iteration
//! p₀ = 1/V, p_{t+1} = λ P3ᵀ p_t + (1 − λ) p₀, stopped when ‖p_{t+1} − p_t‖₁ < ε.
//!
//! That difference is the residual of the linear system (I − λP3ᵀ) p = (1 − λ) p₀ at p_t, so
//! both solvers stop on the same quantity, the L1 residual of the vector they return:
//! - [`Solver::Power`] runs Algorithm 2 as written (any walk);
//! - [`Solver::ConjugateGradient`] (the default for the undirected walk) solves the same system
//!   by conjugate gradients. With W symmetric, P1ᵀ = D^½ S D^-½ for the symmetric
//!   S = D^-½ W D^-½, so with p = D^½ q the system becomes (I − λ f(S)) q = D^-½ b where
//!   f(μ) = (μ + 2μ² + 3μ³)/6 is increasing on [−1, 1]: the matrix is symmetric with
//!   eigenvalues in [1 − λ, 1 + λ/3], positive definite. Each CG step costs one application of
//!   P3ᵀ (three pull passes), like a power step, and needs far fewer of them (the error shrinks
//!   like the Chebyshev polynomial on the graph's actual spectrum instead of by its largest
//!   |λ f(μ)|). The returned vector's residual is recomputed exactly before stopping, and
//!   ‖p − p*‖₁ ≤ ‖r‖₁ / (1 − λ) for either solver (‖P3ᵀ‖₁ = 1).
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
    /// Safety cap on applications of P3ᵀ; reaching it is reported as not converged.
    pub max_iterations: usize,
    /// How the fixed point is reached (a model stored before this field: the power iteration).
    #[serde(default)]
    pub solver: Solver,
}

/// How the marginals' fixed point is reached; both stop on the same residual.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Solver {
    /// Algorithm 2 as the paper writes it: the damped power iteration.
    #[default]
    Power,
    /// Conjugate gradients on the symmetrised system; the undirected walk only (a directed walk
    /// falls back to [`Solver::Power`], and the stats say which ran).
    ConjugateGradient,
}

impl Default for MarginalParams {
    fn default() -> Self {
        MarginalParams {
            lambda: 0.85,
            epsilon: 1e-10,
            max_iterations: 1000,
            solver: Solver::ConjugateGradient,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarginalStats {
    /// Applications of P3ᵀ (three pull passes each): power steps, or CG steps plus the exact
    /// residual checks.
    pub iterations: usize,
    /// ‖(1 − λ)p₀ − (I − λP3ᵀ)p‖₁ of the returned p (for the power iteration, ‖p_t − p_{t−1}‖₁).
    pub residual: f64,
    pub converged: bool,
    pub seconds: f64,
    /// The solver that ran (a stored model from before this field: the power iteration).
    #[serde(default)]
    pub solver: Solver,
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

/// The marginals on a prebuilt pull-list graph ([`Lists::Pull`]) with the solver of `params`
/// (conjugate gradients only on a symmetric walk). `seconds` covers the iterations only.
pub fn compute_on(
    w: &WalkCsr,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    if params.solver == Solver::ConjugateGradient && w.symmetric {
        conjugate_gradient(w, params, progress)
    } else {
        compute_blocked(w, params, progress, usize::MAX)
    }
}

/// Chunk sums added in chunk order: a reduction whose last bits never depend on scheduling.
fn ordered_sum(parts: Vec<f64>) -> f64 {
    parts.iter().sum()
}

/// Scratch vectors of one application of M = I − λ f(S).
struct Apply {
    z1: Vec<f64>,
    z2: Vec<f64>,
    acc: Vec<f64>,
}

impl Apply {
    /// out = M d from z = d / √deg (three fused pull passes); returns dᵀ M d.
    fn run(
        &mut self,
        w: &WalkCsr,
        lam: f64,
        isd: &[f64],
        d: &[f64],
        z: &[f64],
        out: &mut [f64],
    ) -> f64 {
        self.z1
            .par_chunks_mut(CHUNK)
            .zip(self.acc.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, (z1c, ac))| {
                let base = c * CHUNK;
                for k in 0..z1c.len() {
                    let (y, inv) = pull(w, z, base + k);
                    ac[k] = ALPHA[0] * y;
                    z1c[k] = y * inv;
                }
            });
        let z1 = &self.z1;
        self.z2
            .par_chunks_mut(CHUNK)
            .zip(self.acc.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, (z2c, ac))| {
                let base = c * CHUNK;
                for k in 0..z2c.len() {
                    let (y, inv) = pull(w, z1, base + k);
                    ac[k] += ALPHA[1] * y;
                    z2c[k] = y * inv;
                }
            });
        let (z2, acc) = (&self.z2, &self.acc);
        ordered_sum(
            out.par_chunks_mut(CHUNK)
                .zip(d.par_chunks(CHUNK))
                .zip(acc.par_chunks(CHUNK))
                .enumerate()
                .map(|(c, ((oc, dc), ac))| {
                    let base = c * CHUNK;
                    let mut dot = 0.0;
                    for k in 0..oc.len() {
                        let (y, _) = pull(w, z2, base + k);
                        let ax = ac[k] + ALPHA[2] * y;
                        oc[k] = dc[k] - lam * ax * isd[base + k];
                        dot += dc[k] * oc[k];
                    }
                    dot
                })
                .collect(),
        )
    }
}

/// The marginals by conjugate gradients on (I − λ f(S)) q = D^-½ b, p = D^½ q (module docs).
/// Starts from q = 0; when the recursively updated residual passes ε, the true residual of the
/// iterate is computed (one more application) and CG restarts from it if it has not.
fn conjugate_gradient(
    w: &WalkCsr,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    let n = w.len();
    let start = Instant::now();
    let lam = params.lambda;
    let teleport = (1.0 - lam) / n.max(1) as f64;
    let stats = |iterations, residual: f64, start: Instant| MarginalStats {
        iterations,
        residual,
        converged: residual < params.epsilon,
        seconds: start.elapsed().as_secs_f64(),
        solver: Solver::ConjugateGradient,
    };
    if n == 0 {
        return (Vec::new(), stats(0, 0.0, start));
    }
    // √deg and 1/√deg (deg = max(1, walkable degree)): the similarity transform.
    let sd: Vec<f64> = w
        .degree
        .par_iter()
        .map(|&g| (g.max(1) as f64).sqrt())
        .collect();
    let isd: Vec<f64> = sd.par_iter().map(|x| 1.0 / x).collect();
    // c = D^-½ b; q = 0, so r = c and the first direction is r (z = d / √deg).
    let c: Vec<f64> = isd.par_iter().map(|x| teleport * x).collect();
    let mut q = vec![0.0; n];
    let mut r = c.clone();
    let mut d = r.clone();
    let mut z: Vec<f64> = d.par_iter().zip(&isd).map(|(x, i)| x * i).collect();
    let mut md = vec![0.0; n];
    let mut scratch = Apply {
        z1: vec![0.0; n],
        z2: vec![0.0; n],
        acc: vec![0.0; n],
    };
    let square_sum = |r: &[f64]| -> f64 {
        ordered_sum(
            r.par_chunks(CHUNK)
                .map(|rc| rc.iter().map(|x| x * x).sum())
                .collect(),
        )
    };
    // The L1 residual in p's coordinates: r_p = D^½ r.
    let l1 = |r: &[f64]| -> f64 {
        ordered_sum(
            r.par_chunks(CHUNK)
                .zip(sd.par_chunks(CHUNK))
                .map(|(rc, sc)| rc.iter().zip(sc).map(|(x, s)| x.abs() * s).sum())
                .collect(),
        )
    };
    let mut rr = square_sum(&r);
    let mut residual = l1(&r);
    let bar = serenqa_graph::progress::count_bar(20, "marginals (CG steps)", progress);
    let mut iterations = 0;
    while iterations < params.max_iterations && residual >= params.epsilon {
        let dmd = scratch.run(w, lam, &isd, &d, &z, &mut md);
        iterations += 1;
        if dmd.is_nan() || dmd <= 0.0 {
            break; // exact solution reached (d = 0) or a breakdown: the residual says which
        }
        let alpha = rr / dmd;
        let parts: Vec<(f64, f64)> = q
            .par_chunks_mut(CHUNK)
            .zip(r.par_chunks_mut(CHUNK))
            .zip(d.par_chunks(CHUNK).zip(md.par_chunks(CHUNK)))
            .zip(sd.par_chunks(CHUNK))
            .map(|(((qc, rc), (dc, mc)), sc)| {
                let (mut sq, mut a1) = (0.0, 0.0);
                for k in 0..qc.len() {
                    qc[k] += alpha * dc[k];
                    rc[k] -= alpha * mc[k];
                    sq += rc[k] * rc[k];
                    a1 += rc[k].abs() * sc[k];
                }
                (sq, a1)
            })
            .collect();
        let rr_new: f64 = parts.iter().map(|p| p.0).sum();
        residual = parts.iter().map(|p| p.1).sum();
        bar.set_position(iterations as u64);
        bar.set_message(format!("marginals, residual {residual:.1e}"));
        let beta = if residual < params.epsilon {
            // The recursive residual drifts from the true one: recompute r = c − M q exactly,
            // and restart from it (β = 0) unless it has converged too.
            z.par_iter_mut()
                .zip(q.par_iter().zip(&isd))
                .for_each(|(zj, (qj, ij))| *zj = qj * ij);
            scratch.run(w, lam, &isd, &q, &z, &mut md);
            iterations += 1;
            r.par_iter_mut()
                .zip(c.par_iter().zip(md.par_iter()))
                .for_each(|(rj, (cj, mj))| *rj = cj - mj);
            residual = l1(&r);
            if residual < params.epsilon {
                break;
            }
            rr = square_sum(&r);
            0.0
        } else {
            let beta = rr_new / rr;
            rr = rr_new;
            beta
        };
        // d = r + β d and z = d / √deg in one sweep.
        d.par_chunks_mut(CHUNK)
            .zip(z.par_chunks_mut(CHUNK))
            .zip(r.par_chunks(CHUNK).zip(isd.par_chunks(CHUNK)))
            .for_each(|((dc, zc), (rc, ic))| {
                for k in 0..dc.len() {
                    dc[k] = rc[k] + beta * dc[k];
                    zc[k] = dc[k] * ic[k];
                }
            });
    }
    bar.finish_and_clear();
    let p: Vec<f64> = q.par_iter().zip(&sd).map(|(x, s)| x * s).collect();
    (w.to_original(&p), stats(iterations, residual, start))
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
                solver: Solver::Power,
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
            solver: Solver::Power,
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
