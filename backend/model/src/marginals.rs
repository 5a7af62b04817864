//! Marginals P(x): the fixed point of Algorithm 2's damped iteration
//! p₀ = 1/V, p_{t+1} = λ P3ᵀ p_t + (1 − λ) p₀, stopped when ‖p_{t+1} − p_t‖₁ < ε.
//!
//! That difference is the residual of the linear system (I − λP3ᵀ) p = (1 − λ) p₀ at p_t, so
//! both solvers stop on the same quantity, the L1 residual of the vector they return:
//! - [`Solver::Power`] runs Algorithm 2 as written (any walk);
//! - [`Solver::ConjugateGradient`] solves the same system
//!   by conjugate gradients. With W symmetric, P1ᵀ = D^½ S D^-½ for the symmetric
//!   S = D^-½ W D^-½, so with p = D^½ q the system becomes (I − λ f(S)) q = D^-½ b where
//!   f(μ) = (μ + 2μ² + 3μ³)/6 is increasing on [−1, 1]: the matrix is symmetric with
//!   eigenvalues in [1 − λ, 1 + λ/3], positive definite. Each CG step costs one application of
//!   P3ᵀ (three pull passes), like a power step, and needs far fewer of them (the error shrinks
//!   like the Chebyshev polynomial on the graph's actual spectrum instead of by its largest
//!   |λ f(μ)|). The returned vector's residual is recomputed exactly before stopping, and
//!   ‖p − p*‖₁ ≤ ‖r‖₁ / (1 − λ) for either solver (‖P3ᵀ‖₁ = 1).
//! - [`Solver::ShiftedLanczos`] (the default for the undirected walk) solves the same symmetric
//!   system with one product by S per step instead of three (below);
//!   [`Solver::MixedLanczos`] is the same with f32 gathers and f64 iterative refinement.
//!
//! **Shifted Lanczos.** CG on M = h(S), h(μ) = 1 − λ f(μ), searches K_k(M, c), which lies in
//! K_3k(S, c): each step pays three products by S but uses a third of the space they span.
//! Searching K_m(S, c) directly:
//! - h is a cubic with leading coefficient −λα₃. Its derivative −λ(α₁ + 2α₂μ + 3α₃μ²) is
//!   negative everywhere (4α₂² < 12α₁α₃), so h is strictly decreasing and has exactly one real
//!   root r₁; h(1) = 1 − λ > 0 puts it above 1 (r₁ ≈ 1.0716 at λ = 0.85). The other two roots
//!   are a complex-conjugate pair r₂, r̄₂ (≈ −0.87 ± 1.20i).
//! - The roots are simple, so 1/h(μ) = Σᵢ aᵢ/(μ − rᵢ) with aᵢ = 1/h′(rᵢ) (a₁ real, a₃ = ā₂).
//!   Hence q = M⁻¹c = −Σᵢ aᵢ xᵢ with (rᵢI − S) xᵢ = c, i.e. q = −a₁x₁ − 2 Re(a₂x₂).
//! - Shifts do not change Krylov spaces: K_m(rᵢI − S, c) = K_m(S, c). One Lanczos process on
//!   S (S Vₘ = Vₘ Tₘ + βₘ₊₁ vₘ₊₁ eₘᵀ) serves all three systems; for each, the Galerkin iterate
//!   xᵢ = ‖c‖ Vₘ (rᵢI − Tₘ)⁻¹ e₁ is updated by the LU recurrences of the tridiagonal
//!   rᵢI − Tₘ (D-Lanczos, no stored basis), and its residual has norm βₘ₊₁ |ζₘ/ηₘ|.
//!   Summed, q = ‖c‖ Vₘ h(Tₘ)⁻¹ e₁: the Lanczos approximation of h(S)⁻¹c.
//! - No pivot can vanish. Tₘ's eigenvalues lie in [−1, 1] (S's spectrum, by interlacing), so
//!   r₁I − Tₘ and all its leading blocks are positive definite (that system is CG on the SPD
//!   r₁I − S); r₂I − Tₘ's leading blocks have eigenvalues r₂ − θ with Im = Im r₂ ≠ 0.
//! - Convergence is set by the real pole: the error of polynomial approximation of 1/h on S's
//!   spectrum, which for the pole r₁ just above 1 beats CG on M per product by S (on the
//!   synthetic CKG: 34–37 products instead of 57–63).
//! - It stops on the exact criterion: when the estimated residual (the shifted residual norms,
//!   scaled to L1 by the last exact check) passes ε, the L1 residual of q is recomputed
//!   exactly (one application of P3ᵀ, three passes); if it has not passed ε, Lanczos goes on,
//!   or restarts from that exact residual (adding to q) if it stalled or broke down.
//!
//! Each power step is three fused pull passes (parallel over target nodes) over a copy of the
//! walk graph grouped by type ([`crate::reorder`]): hop 1 and 2 write the next scaled vector
//! and accumulate αₕ yₕ; hop 3 finishes the update, the L1 residual and the scaled vector for
//! the next iteration in the same sweep. On a graph of more than 2²⁰ nodes, each pass first
//! sums the long lists window by window (the private `segmented` module: the gathers stay in
//! cache) and the fused sweep takes those sums. Memory: five f64 vectors of length V plus the reordered lists (4
//! bytes per walkable edge end); about twelve for CG and shifted Lanczos; with windows, a copy
//! of the long lists and one more vector.

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::gather::{sum4_pf, Elem, GatherBuf};
use crate::reorder::{Lists, WalkCsr};
use crate::segmented::Segmented;
pub use crate::segmented::{LONG_MIN, WINDOW_NODES};
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
    /// Multi-shift Lanczos on S itself (one pull pass per step instead of three); the
    /// undirected walk only, as [`Solver::ConjugateGradient`] (a directed walk falls back to
    /// [`Solver::Power`]; λ outside (0, 1) to [`Solver::ConjugateGradient`]).
    ShiftedLanczos,
    /// [`Solver::ShiftedLanczos`] gathering from an f32 copy of the Lanczos vector (half the
    /// bytes; sums in f64), restarted from the exact f64 residual whenever a cycle has gained
    /// [`MIXED_GAIN`] (iterative refinement): the same exact stopping criterion.
    MixedLanczos,
}

impl Default for MarginalParams {
    fn default() -> Self {
        MarginalParams {
            lambda: 0.85,
            epsilon: 1e-10,
            max_iterations: 1000,
            solver: Solver::ShiftedLanczos,
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
    /// Pull passes (sweeps gathering along every list) done, residual checks included: three
    /// per application of P3ᵀ, one per Lanczos step (0 in a model stored before this field).
    #[serde(default)]
    pub passes: usize,
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

/// The walk graph as the passes read it: its pull lists, the long ones cut into cache-sized
/// windows when the graph is large ([`crate::segmented`]).
pub(crate) struct PullGraph<'a> {
    w: &'a WalkCsr,
    seg: Option<Segmented>,
}

impl<'a> PullGraph<'a> {
    fn new(w: &'a WalkCsr, window: usize, long_min: usize) -> PullGraph<'a> {
        PullGraph {
            w,
            seg: Segmented::build(w, window, long_min),
        }
    }

    /// Before a pass gathering from z: the long lists' sums, window by window.
    fn prepare<T: Elem>(&self, z: &[T]) {
        if let Some(seg) = &self.seg {
            seg.gather(z);
        }
    }

    /// (P1ᵀx)_j from z = x ∘ inv_deg (after [`PullGraph::prepare`] on z), and 1/max(1, deg_j).
    #[inline(always)]
    fn pull<T: Elem>(&self, z: &[T], j: usize) -> (f64, f64) {
        let w = self.w;
        let (a, b) = (w.offsets[j] as usize, w.offsets[j + 1] as usize);
        let mut acc = match &self.seg {
            Some(seg) if seg.is_long(b - a) => seg.sum(j),
            _ => sum4_pf(z, &w.nbrs, a, b),
        };
        let d = w.degree[j];
        if d == 0 {
            acc += z[j].into();
        }
        (acc, 1.0 / d.max(1) as f64)
    }
}

/// The marginals on a prebuilt pull-list graph ([`Lists::Pull`]) with the solver of `params`
/// (conjugate gradients only on a symmetric walk). `seconds` covers cutting the long lists
/// into windows and the iterations.
pub fn compute_on(
    w: &WalkCsr,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    compute_segmented(w, params, progress, WINDOW_NODES, LONG_MIN)
}

/// [`compute_on`] with source windows of `window` nodes for the lists of at least `long_min`
/// entries (the private `segmented` module; `window ≥ |V|`: nothing is segmented). For tests
/// and benchmarks: the defaults are measured.
pub fn compute_segmented(
    w: &WalkCsr,
    params: &MarginalParams,
    progress: bool,
    window: usize,
    long_min: usize,
) -> (Vec<f64>, MarginalStats) {
    let start = Instant::now();
    let g = PullGraph::new(w, window, long_min);
    let built = start.elapsed().as_secs_f64();
    let (p, mut stats) = if params.solver == Solver::ShiftedLanczos && w.symmetric {
        match Shifts::new(params.lambda) {
            Some(shifts) => shifted_lanczos::<f64>(&g, params, shifts, progress),
            None => conjugate_gradient(&g, params, progress),
        }
    } else if params.solver == Solver::MixedLanczos && w.symmetric {
        match Shifts::new(params.lambda) {
            Some(shifts) => shifted_lanczos::<f32>(&g, params, shifts, progress),
            None => conjugate_gradient(&g, params, progress),
        }
    } else if params.solver == Solver::ConjugateGradient && w.symmetric {
        conjugate_gradient(&g, params, progress)
    } else {
        power_iteration(&g, params, progress)
    };
    stats.seconds += built;
    (p, stats)
}

/// Chunk sums added in chunk order: a reduction whose last bits never depend on scheduling.
fn ordered_sum(parts: Vec<f64>) -> f64 {
    parts.iter().sum()
}

/// One of P3ᵀ's first two pull passes: y = P1ᵀx from z = x / deg; acc = αy (`first`) or
/// acc += αy; next = y / deg (the next pass's z).
fn hop(g: &PullGraph, z: &[f64], next: &mut [f64], acc: &mut [f64], alpha: f64, first: bool) {
    g.prepare(z);
    next.par_chunks_mut(CHUNK)
        .zip(acc.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (nc, ac))| {
            let base = c * CHUNK;
            for k in 0..nc.len() {
                let (y, inv) = g.pull(z, base + k);
                if first {
                    ac[k] = alpha * y;
                } else {
                    ac[k] += alpha * y;
                }
                nc[k] = y * inv;
            }
        });
}

/// Scratch vectors of one application of M = I − λ f(S).
struct Apply {
    z1: GatherBuf,
    z2: GatherBuf,
    acc: Vec<f64>,
}

impl Apply {
    /// out = M d from z = d / √deg (three fused pull passes); returns dᵀ M d.
    fn run(
        &mut self,
        g: &PullGraph,
        lam: f64,
        isd: &[f64],
        d: &[f64],
        z: &[f64],
        out: &mut [f64],
    ) -> f64 {
        hop(g, z, &mut self.z1, &mut self.acc, ALPHA[0], true);
        hop(g, &self.z1, &mut self.z2, &mut self.acc, ALPHA[1], false);
        let (z2, acc) = (&self.z2, &self.acc);
        g.prepare(z2);
        ordered_sum(
            out.par_chunks_mut(CHUNK)
                .zip(d.par_chunks(CHUNK))
                .zip(acc.par_chunks(CHUNK))
                .enumerate()
                .map(|(c, ((oc, dc), ac))| {
                    let base = c * CHUNK;
                    let mut dot = 0.0;
                    for k in 0..oc.len() {
                        let (y, _) = g.pull(z2, base + k);
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
    g: &PullGraph,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    let w = g.w;
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
        passes: 3 * iterations,
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
    let mut z = GatherBuf::<f64>::zeroed(n);
    z.par_iter_mut()
        .zip(d.par_iter().zip(&isd))
        .for_each(|(zj, (x, i))| *zj = x * i);
    let mut md = vec![0.0; n];
    let mut scratch = Apply {
        z1: GatherBuf::zeroed(n),
        z2: GatherBuf::zeroed(n),
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
        let dmd = scratch.run(g, lam, &isd, &d, &z, &mut md);
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
            scratch.run(g, lam, &isd, &q, &z, &mut md);
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

/// A complex number, for the pair of complex shifts (no dependency for four operations).
#[derive(Clone, Copy, Debug, PartialEq)]
struct C64 {
    re: f64,
    im: f64,
}

impl C64 {
    const fn new(re: f64, im: f64) -> C64 {
        C64 { re, im }
    }
    fn add(self, o: C64) -> C64 {
        C64::new(self.re + o.re, self.im + o.im)
    }
    fn sub(self, o: C64) -> C64 {
        C64::new(self.re - o.re, self.im - o.im)
    }
    fn mul(self, o: C64) -> C64 {
        C64::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
    fn scale(self, s: f64) -> C64 {
        C64::new(self.re * s, self.im * s)
    }
    fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
    fn recip(self) -> C64 {
        let d = self.re * self.re + self.im * self.im;
        C64::new(self.re / d, -self.im / d)
    }
    fn div(self, o: C64) -> C64 {
        self.mul(o.recip())
    }
}

/// h(μ) = 1 − λ f(μ) as the partial fractions 1/h(μ) = a₁/(μ − r₁) + a₂/(μ − r₂) + ā₂/(μ − r̄₂)
/// ([`Solver::ShiftedLanczos`]).
#[derive(Clone, Copy, Debug)]
struct Shifts {
    r1: f64,
    a1: f64,
    r2: C64,
    a2: C64,
}

impl Shifts {
    /// `None` unless 0 < λ < 1 (then h has one real root above 1 and a complex pair).
    fn new(lam: f64) -> Option<Shifts> {
        if !(lam > 0.0 && lam < 1.0) {
            return None;
        }
        let [c1, c2, c3] = ALPHA;
        let h = |m: f64| 1.0 - lam * (c1 * m + c2 * m * m + c3 * m * m * m);
        let dh = |m: f64| -lam * (c1 + 2.0 * c2 * m + 3.0 * c3 * m * m);
        // h is decreasing (h' < 0: 4c2² < 12 c1 c3) and h(1) = 1 − λ > 0: one real root, above
        // 1. Bisection brackets it, Newton polishes it.
        let (mut lo, mut hi) = (1.0f64, 2.0f64);
        while h(hi) > 0.0 {
            hi *= 2.0;
            if hi > 1e12 {
                return None;
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if h(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut r1 = 0.5 * (lo + hi);
        for _ in 0..3 {
            r1 -= h(r1) / dh(r1);
        }
        // h(μ) = −λc3 (μ − r1)(μ² + Bμ + C).
        let b = c2 / c3 + r1;
        let c = c1 / c3 + r1 * b;
        let disc = 4.0 * c - b * b;
        if disc.is_nan() || disc <= 0.0 || !r1.is_finite() {
            return None;
        }
        let r2 = C64::new(-0.5 * b, 0.5 * disc.sqrt());
        let dh2 = C64::new(c1, 0.0)
            .add(r2.scale(2.0 * c2))
            .add(r2.mul(r2).scale(3.0 * c3))
            .scale(-lam);
        Some(Shifts {
            r1,
            a1: 1.0 / dh(r1),
            r2,
            a2: dh2.recip(),
        })
    }
}

/// One shifted system (σI − S) x = v₁‖r‖ solved from the common Lanczos basis: the LU
/// recurrences of σI − Tₖ (D-Lanczos; Saad, *Iterative Methods for Sparse Linear Systems*,
/// Algorithm 6.17), in complex arithmetic for a complex σ (no conjugation: σI − Tₖ is complex
/// symmetric). xₖ = xₖ₋₁ + ζₖ pₖ, pₖ = (vₖ + βₖ pₖ₋₁)/ηₖ, and the residual of xₖ has norm
/// βₖ₊₁ |ζₖ/ηₖ|.
#[derive(Clone, Copy, Debug)]
struct ShiftState {
    sigma: C64,
    eta: C64,
    zeta: C64,
}

impl ShiftState {
    fn new(sigma: C64) -> ShiftState {
        ShiftState {
            sigma,
            eta: C64::new(1.0, 0.0),
            zeta: C64::new(0.0, 0.0),
        }
    }

    /// Step k with αₖ and βₖ (β = 0 and `norm` = ‖r‖ at the first step); returns ζₖ and 1/ηₖ.
    fn step(&mut self, alpha: f64, beta: f64, first: bool, norm: f64) -> (C64, C64) {
        let a = self.sigma.sub(C64::new(alpha, 0.0));
        if first {
            self.eta = a;
            self.zeta = C64::new(norm, 0.0);
        } else {
            let inv_prev = self.eta.recip();
            self.zeta = self.zeta.mul(inv_prev).scale(beta);
            self.eta = a.sub(inv_prev.scale(beta * beta));
        }
        (self.zeta, self.eta.recip())
    }

    /// |ζₖ/ηₖ|: the residual norm of the shifted system over βₖ₊₁.
    fn residual_factor(&self) -> f64 {
        self.zeta.div(self.eta).abs()
    }
}

/// Step k's updates of the shifted directions and of q, from vₖ (see [`ShiftState`]):
/// p₁ = (vₖ + βₖp₁)/η₁, p₂ = (vₖ + βₖp₂)/η₂ (complex), q += g1 p₁ + Re(g2 p₂).
#[derive(Clone, Copy, Debug)]
struct Pending {
    beta: f64,
    i1: f64,
    inv2: C64,
    g1: f64,
    g2: C64,
}

impl Pending {
    #[inline(always)]
    fn apply(&self, x: f64, p1: &mut f64, re: &mut f64, im: &mut f64, q: &mut f64) {
        let a = (x + self.beta * *p1) * self.i1;
        *p1 = a;
        let (br, bi) = (x + self.beta * *re, self.beta * *im);
        let (pr, pi) = (
            br * self.inv2.re - bi * self.inv2.im,
            br * self.inv2.im + bi * self.inv2.re,
        );
        *re = pr;
        *im = pi;
        *q += self.g1 * a + self.g2.re * pr - self.g2.im * pi;
    }

    /// The update as a sweep of its own (before a check, or at the end).
    fn flush(&self, v: &[f64], p1: &mut [f64], re: &mut [f64], im: &mut [f64], q: &mut [f64]) {
        v.par_chunks(CHUNK)
            .zip(p1.par_chunks_mut(CHUNK))
            .zip(re.par_chunks_mut(CHUNK).zip(im.par_chunks_mut(CHUNK)))
            .zip(q.par_chunks_mut(CHUNK))
            .for_each(|(((vc, p1c), (rec, imc)), qc)| {
                for k in 0..vc.len() {
                    self.apply(vc[k], &mut p1c[k], &mut rec[k], &mut imc[k], &mut qc[k]);
                }
            });
    }
}

/// With f32 gathers: the residual reduction one Lanczos cycle aims for before its exact check.
/// The f32 products stall the true residual near 3e-8 of the cycle's start (measured on the
/// synthetic CKG at 1/10 scale); aiming lower only adds steps the restart has to redo.
pub const MIXED_GAIN: f64 = 1e-6;

/// The marginals by [`Solver::ShiftedLanczos`] (module docs): one pull pass per Lanczos step.
fn shifted_lanczos<T: Elem>(
    g: &PullGraph,
    params: &MarginalParams,
    shifts: Shifts,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    let w = g.w;
    let n = w.len();
    let start = Instant::now();
    let lam = params.lambda;
    let teleport = (1.0 - lam) / n.max(1) as f64;
    let max_passes = params.max_iterations.saturating_mul(3);
    let stats = |iterations, passes, residual: f64, start: Instant| MarginalStats {
        iterations,
        residual,
        converged: residual < params.epsilon,
        seconds: start.elapsed().as_secs_f64(),
        solver: if std::mem::size_of::<T>() < std::mem::size_of::<f64>() {
            Solver::MixedLanczos
        } else {
            Solver::ShiftedLanczos
        },
        passes,
    };
    if n == 0 {
        return (Vec::new(), stats(0, 0, 0.0, start));
    }
    let isd: Vec<f64> = w
        .degree
        .par_iter()
        .map(|&g| 1.0 / (g.max(1) as f64).sqrt())
        .collect();
    // The exact L1 residual (p coordinates) of q, with the residual r = c − M q in `out`
    // (c = D^-½ b = teleport / √deg): one application of P3ᵀ.
    let mut scratch = Apply {
        z1: GatherBuf::zeroed(n),
        z2: GatherBuf::zeroed(n),
        acc: vec![0.0; n],
    };
    let mut out = vec![0.0; n];
    let check = |q: &[f64], zq: &mut [f64], out: &mut [f64], scratch: &mut Apply| -> f64 {
        zq.par_iter_mut()
            .zip(q.par_iter().zip(&isd))
            .for_each(|(zj, (qj, ij))| *zj = qj * ij);
        scratch.run(g, lam, &isd, q, zq, out);
        ordered_sum(
            out.par_chunks_mut(CHUNK)
                .zip(isd.par_chunks(CHUNK))
                .map(|(oc, ic)| {
                    let mut l1 = 0.0;
                    for (o, i) in oc.iter_mut().zip(ic) {
                        *o = teleport * i - *o;
                        l1 += o.abs() / i;
                    }
                    l1
                })
                .collect(),
        )
    };
    let mut q = vec![0.0; n];
    // Lanczos vectors vₖ₋₁, vₖ (stored unnormalised until the pass that normalises it), the
    // pass output u = S vₖ, z = vₖ/√deg (unnormalised) for the gathers, and the directions.
    let mut vp = vec![0.0; n];
    let mut v: Vec<f64> = isd.par_iter().map(|i| teleport * i).collect();
    let mut u = GatherBuf::<f64>::zeroed(n);
    let mut z = GatherBuf::<T>::zeroed(n);
    z.par_iter_mut()
        .zip(v.par_iter().zip(&isd))
        .for_each(|(zj, (x, i))| *zj = T::from_f64(x * i));
    let mut p1 = vec![0.0; n];
    let mut p2re = vec![0.0; n];
    let mut p2im = vec![0.0; n];
    let square_sum = |r: &[f64]| -> f64 {
        ordered_sum(
            r.par_chunks(CHUNK)
                .map(|rc| rc.iter().map(|x| x * x).sum())
                .collect(),
        )
    };
    // Start (and restart) state: the norm of the unnormalised vₖ, βₖ, and the first step flag.
    let mut norm = square_sum(&v).sqrt();
    let mut scale = norm; // ‖the stored vₖ‖: the pass divides by it
    let mut beta = 0.0;
    let mut first = true;
    let mut s1 = ShiftState::new(C64::new(shifts.r1, 0.0));
    let mut s2 = ShiftState::new(shifts.r2);
    // The L1 residual of q is ~ γ × the estimate E (2-norm, q coordinates); γ is calibrated by
    // each exact check (first guess: as for the starting residual).
    let mut residual = 1.0 - lam;
    let mut gamma = residual / norm.max(f64::MIN_POSITIVE);
    let mut last_check = residual;
    // With f32 gathers the products are exact to ~1e-7 (relative), so each Lanczos cycle only
    // gains ~1e-6 on the residual it starts from: check there, then restart from the exact
    // residual (iterative refinement: the exact residuals are f64).
    let mixed = std::mem::size_of::<T>() < std::mem::size_of::<f64>();
    let mut cycle_start = residual;
    let mut passes = 0usize;
    let mut steps = 0usize;
    let mut checks = 0usize;
    let mut pending: Option<Pending> = None;
    let bar = serenqa_graph::progress::count_bar(60, "marginals (Lanczos steps)", progress);
    while passes < max_passes {
        // Pass: normalise vₖ, u = S vₖ, αₖ = vₖᵀ u; and step k − 1's direction and q updates
        // (streams that overlap the gathers' latency instead of adding a sweep).
        let inv = 1.0 / scale;
        let pd = pending.take();
        g.prepare(&z);
        let alpha = ordered_sum(
            u.par_chunks_mut(CHUNK)
                .zip(v.par_chunks_mut(CHUNK))
                .zip(vp.par_chunks(CHUNK))
                .zip(q.par_chunks_mut(CHUNK))
                .zip(p1.par_chunks_mut(CHUNK))
                .zip(p2re.par_chunks_mut(CHUNK).zip(p2im.par_chunks_mut(CHUNK)))
                .enumerate()
                .map(|(c, (((((uc, vc), vpc), qc), p1c), (rec, imc)))| {
                    let base = c * CHUNK;
                    let mut dot = 0.0;
                    for k in 0..uc.len() {
                        let j = base + k;
                        let (y, _) = g.pull(&z, j);
                        if let Some(pd) = &pd {
                            pd.apply(vpc[k], &mut p1c[k], &mut rec[k], &mut imc[k], &mut qc[k]);
                        }
                        vc[k] *= inv;
                        uc[k] = y * isd[j] * inv;
                        dot += vc[k] * uc[k];
                    }
                    dot
                })
                .collect(),
        );
        passes += 1;
        steps += 1;
        let (zeta1, inv1) = s1.step(alpha, beta, first, norm);
        let (zeta2, inv2) = s2.step(alpha, beta, first, norm);
        first = false;
        // q = −Σ aᵢ xᵢ: Δq = g1 p1 + Re(g2 p2) with g1 = −a₁ζ₁ (real), g2 = −2a₂ζ₂; applied
        // with the next pass (or before a check).
        pending = Some(Pending {
            beta,
            i1: inv1.re,
            inv2,
            g1: -shifts.a1 * zeta1.re,
            g2: shifts.a2.mul(zeta2).scale(-2.0),
        });
        // One sweep: w = u − αvₖ − βvₖ₋₁ (into vp), z = w/√deg, ‖w‖².
        let ww = ordered_sum(
            vp.par_chunks_mut(CHUNK)
                .zip(z.par_chunks_mut(CHUNK))
                .zip(v.par_chunks(CHUNK).zip(u.par_chunks(CHUNK)))
                .enumerate()
                .map(|(c, ((wc, zc), (vc, uc)))| {
                    let base = c * CHUNK;
                    let mut ss = 0.0;
                    for k in 0..wc.len() {
                        let nw = uc[k] - alpha * vc[k] - beta * wc[k];
                        wc[k] = nw;
                        zc[k] = T::from_f64(nw * isd[base + k]);
                        ss += nw * nw;
                    }
                    ss
                })
                .collect(),
        );
        beta = ww.sqrt();
        std::mem::swap(&mut vp, &mut v); // vp = vₖ, v = w (unnormalised vₖ₊₁)
        scale = beta;
        let estimate = beta
            * (shifts.a1.abs() * s1.residual_factor()
                + 2.0 * shifts.a2.abs() * s2.residual_factor());
        bar.set_position(steps as u64);
        bar.set_message(format!("marginals, estimate {:.1e}", estimate * gamma));
        let breakdown = beta.is_nan() || beta <= 1e-300 || !estimate.is_finite();
        let target = if mixed {
            (0.5 * params.epsilon).max(MIXED_GAIN * cycle_start)
        } else {
            0.5 * params.epsilon
        };
        if estimate * gamma >= target && !breakdown {
            continue;
        }
        if let Some(pd) = pending.take() {
            pd.flush(&vp, &mut p1, &mut p2re, &mut p2im, &mut q);
        }
        residual = check(&q, &mut u, &mut out, &mut scratch);
        passes += 3;
        checks += 1;
        if residual < params.epsilon || !residual.is_finite() {
            break;
        }
        let stalled = residual > 0.5 * last_check;
        last_check = residual;
        gamma = residual / estimate.max(f64::MIN_POSITIVE);
        if breakdown || stalled || mixed {
            cycle_start = residual;
            // Restart from the exact residual r (in `out`): the increments keep adding to q.
            std::mem::swap(&mut v, &mut out);
            z.par_iter_mut()
                .zip(v.par_iter().zip(&isd))
                .for_each(|(zj, (x, i))| *zj = T::from_f64(x * i));
            norm = square_sum(&v).sqrt();
            scale = norm;
            beta = 0.0;
            first = true;
            p1.fill(0.0);
            p2re.fill(0.0);
            p2im.fill(0.0);
            gamma = residual / norm.max(f64::MIN_POSITIVE);
        }
    }
    bar.finish_and_clear();
    if let Some(pd) = pending.take() {
        pd.flush(&vp, &mut p1, &mut p2re, &mut p2im, &mut q);
    }
    let p: Vec<f64> = q.par_iter().zip(&isd).map(|(x, i)| x / i).collect();
    (
        w.to_original(&p),
        stats(steps + checks, passes, residual, start),
    )
}

/// Algorithm 2 as written: the damped power iteration, three fused pull passes per step.
fn power_iteration(
    g: &PullGraph,
    params: &MarginalParams,
    progress: bool,
) -> (Vec<f64>, MarginalStats) {
    let w = g.w;
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
                passes: 0,
            },
        );
    }
    let lam = params.lambda;
    let p0 = 1.0 / n as f64;
    let teleport = (1.0 - lam) * p0;
    let mut p = vec![p0; n];
    let mut z: Vec<f64> = w.degree.par_iter().map(|&d| p0 / d.max(1) as f64).collect();
    let mut z1 = vec![0.0; n];
    let mut z2 = vec![0.0; n];
    let mut acc = vec![0.0; n];
    // λᵗ ≈ ε: the expected iteration count (the bar grows if more are needed).
    let expected = (params.epsilon.ln() / lam.ln()).ceil().max(1.0) as u64;
    let bar = serenqa_graph::progress::count_bar(expected, "marginals (iterations)", progress);
    let mut iterations = 0;
    let mut residual = f64::INFINITY;
    while iterations < params.max_iterations {
        // Hop 1: y = P1ᵀ p; acc = α₁ y; z1 = y / deg. Hop 2: acc += α₂ y; z2 = y / deg.
        hop(g, &z, &mut z1, &mut acc, ALPHA[0], true);
        hop(g, &z1, &mut z2, &mut acc, ALPHA[1], false);
        // Hop 3 + update + residual + next z.
        g.prepare(&z2);
        residual = p
            .par_chunks_mut(CHUNK)
            .zip(z.par_chunks_mut(CHUNK))
            .zip(acc.par_chunks(CHUNK))
            .enumerate()
            .map(|(c, ((pc, zc), ac))| {
                let base = c * CHUNK;
                let mut diff = 0.0;
                for k in 0..pc.len() {
                    let (y, inv) = g.pull(&z2, base + k);
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
            passes: 3 * iterations,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The roots of h(μ) = 1 − λ f(μ) and the partial fractions of 1/h at λ = 0.85.
    #[test]
    fn shifts_are_the_partial_fractions_of_one_over_h() {
        let lam = 0.85;
        let s = Shifts::new(lam).expect("0 < λ < 1");
        let hc = |m: C64| {
            let f = m
                .scale(ALPHA[0])
                .add(m.mul(m).scale(ALPHA[1]))
                .add(m.mul(m).mul(m).scale(ALPHA[2]));
            C64::new(1.0, 0.0).sub(f.scale(lam))
        };
        assert!((s.r1 - 1.0716).abs() < 1e-4, "{}", s.r1);
        assert!(hc(C64::new(s.r1, 0.0)).abs() < 1e-14);
        assert!(
            (s.r2.re + 0.869).abs() < 1e-3 && (s.r2.im.abs() - 1.2002).abs() < 1e-3,
            "{:?}",
            s.r2
        );
        assert!(hc(s.r2).abs() < 1e-14);
        for mu in [-1.0, -0.3, 0.0, 0.5, 0.99, 1.0] {
            let h = 1.0 - lam * (ALPHA[0] * mu + ALPHA[1] * mu * mu + ALPHA[2] * mu * mu * mu);
            let m = C64::new(mu, 0.0);
            let pair = s.a2.div(m.sub(s.r2)).scale(2.0).re; // a₂/(μ − r₂) + its conjugate
            let sum = s.a1 / (mu - s.r1) + pair;
            assert!(
                (sum - 1.0 / h).abs() < 1e-12 * (1.0 / h).abs(),
                "μ = {mu}: {sum} vs {}",
                1.0 / h
            );
        }
        assert!(Shifts::new(0.0).is_none() && Shifts::new(1.0).is_none());
        assert!(Shifts::new(f64::NAN).is_none());
    }
}
