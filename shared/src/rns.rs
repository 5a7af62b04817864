//! The RNS serendipity score computed from a closed-world [`Slice`] alone (no graph, no I/O),
//! so the server and the browser (wasm32) compute the same numbers.
//!
//! Definitions follow `docs/RNS.md` exactly. For an answer set A = Ae ∪ As (positions into a
//! slice; the slice may hold more entities than A — only the rows and columns of A are read):
//! - π(x) = P(x) / Σ_{y∈A} P(y); πₑ(i) = π(i) / Σ_{i'∈Ae} π(i').
//! - T[i][x] = (B[i][x]·[x ≠ i] + δ) / Σ_{y∈A} (B[i][y]·[y ≠ i] + δ), δ = 1e-12: the walk
//!   from i that leaves its start, conditioned on landing in A (docs/RNS.md "Surprise": the
//!   return-to-self mass B[i][i] is dropped, as in N).
//! - R = 1 − mean_{i∈As, j∈Ae} ‖nᵢ − nⱼ‖₂ / 2 on L2-normalised embeddings (rows are
//!   normalised here again, so a slice from any source gives d ∈ [0, 1]; an all-zero row
//!   stays zero). R ∈ [0, 1]; the paper's R is `R − 1`.
//! - N (re-derived, docs/RNS.md "Novelty"): the information in As that Ae does not predict.
//!   O = Σ_{i∈Ae} πₑ(i) Σ_{j∈As} B[i][j] / (1 − B[i][i]) is the probability that a 1–3 step
//!   walk from Ae (started in proportion to the marginals, return-to-self mass excluded)
//!   ends in As. That walk is mixed with a small background draw from A's own marginals:
//!   O′ = (1 − ε) O + ε π(As), ε = [`PRIOR_MIX`] = 2⁻²⁰, π(As) = Σ_{j∈As} π(j), so an As
//!   that no walk from Ae reaches is still ordered by how rare it is within A instead of
//!   tying at the cap. I = −log₂(O′ + δ) bits is the conditional self-information of As,
//!   and N = min(1, I / [`NOVELTY_BITS`]) ∈ [0, 1] with 40 bits (an unreached As reaches
//!   it only when π(As) < 2⁻²⁰).
//! - S = JSD(Ps ‖ Pe) in bits, Pe = mean of T rows over Ae, Ps = mean over As: where the
//!   walks leaving As land in A, against where the walks leaving Ae land.
//! - RNS = (αR + βN + γS) / (|α| + |β| + |γ|) (0 when all weights are 0): weights are
//!   normalised, so RNS ∈ [0, 1] for non-negative weights and (1, 1, 1) means (⅓, ⅓, ⅓).
//!
//! Three entry points, from general to fast:
//! - [`Scorer::score`]: any partition, O(|A|² + |Ae||As|d).
//! - [`Scorer::score_candidates`]: RNS(Ae, {c}) for many candidates c (the UI's slider path),
//!   O(|Ae|² + |Ae|d) per candidate, no allocation per candidate.
//! - [`Scorer::greedy_swap`]: Algorithm 1 on a fixed candidate set. A = Ac does not change
//!   during swaps, so π, T, the distance matrix and the MI summands are computed once; R and
//!   the MI numerator are updated in O(1) per swap from running row/column sums, S in O(|A|).
//!   With γ ≠ 0 each round first scores every swap with a libm-free logarithm (error below
//!   1e-7) and then scores exactly only the swaps within that error of the best, so the
//!   chosen swap is the one exact scoring of every swap would choose. With the `parallel`
//!   feature (native builds only) the candidate swaps of a round are evaluated on all cores;
//!   the reductions are sequential, so results do not change.
//!
//! Determinism: the swap loop visits candidates in node-index order and only a strictly
//! larger gain (by more than 1e-12; RNS is normalised by |α|+|β|+|γ|) replaces the best, so ties go to the
//! smallest (i, j) by node index and scaling all weights by c > 0 gives the same result.

use serde::{Deserialize, Serialize};

/// Smoothing added to every block entry so no logarithm sees 0.
pub const DELTA: f64 = 1e-12;

/// Bits of conditional self-information at which N reaches 1. With the background mix
/// below, I ≤ 20 + log₂(1/π(As)), so N = 1 only for an As that no walk from Ae reaches and
/// that holds less than 2⁻²⁰ of A's marginal mass: in practice N never saturates, and an As
/// reached with probability 2⁻²⁰ (one in a million) has N = ½.
pub const NOVELTY_BITS: f64 = 40.0;

/// ε, the weight of the background draw from A's marginals mixed into the walk from Ae
/// (docs/RNS.md "Novelty"): small enough that it changes I by less than 0.01 bit whenever a
/// walk from Ae reaches As with probability above 2⁻¹², large enough that unreachable
/// candidates stay ordered by rarity.
pub const PRIOR_MIX: f64 = 1.0 / 1_048_576.0;

/// Everything RNS needs about a set of entities (RNS.md "closed-world slice").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Slice {
    /// Node indices in the graph the slice came from (used for deterministic tie-breaks).
    pub ids: Vec<u32>,
    /// `Type::identifier` keys, parallel to `ids` (for display; may be empty).
    #[serde(default)]
    pub keys: Vec<String>,
    /// Embedding dimension d.
    pub dim: usize,
    /// |ids| × d, row-major.
    pub embeddings: Vec<f32>,
    /// Global marginals P(x), parallel to `ids` (not yet restricted to A).
    pub marginals: Vec<f64>,
    /// B = P3[ids][ids], |ids| × |ids|, row-major: `block[r * n + c]` = P3[ids[r]][ids[c]].
    pub block: Vec<f64>,
}

impl Slice {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// Position of a node index in the slice.
    pub fn position(&self, id: u32) -> Option<usize> {
        self.ids.iter().position(|&x| x == id)
    }

    /// Checks shapes and values, so a slice received as JSON cannot cause a panic or NaN.
    pub fn validate(&self) -> Result<(), RnsError> {
        let n = self.ids.len();
        let bad = |m: String| Err(RnsError::BadSlice(m));
        if !self.keys.is_empty() && self.keys.len() != n {
            return bad(format!("{} keys for {n} ids", self.keys.len()));
        }
        if self.embeddings.len() != n.saturating_mul(self.dim) {
            return bad(format!(
                "embeddings hold {} values, expected {n} × {}",
                self.embeddings.len(),
                self.dim
            ));
        }
        if self.marginals.len() != n {
            return bad(format!("{} marginals for {n} ids", self.marginals.len()));
        }
        if self.block.len() != n.saturating_mul(n) {
            return bad(format!(
                "block holds {} values, expected {n} × {n}",
                self.block.len()
            ));
        }
        if let Some(i) = self
            .marginals
            .iter()
            .position(|p| !(p.is_finite() && *p > 0.0))
        {
            return bad(format!(
                "marginal of entity {} is not a positive number",
                self.ids[i]
            ));
        }
        if self.block.iter().any(|b| !(b.is_finite() && *b >= 0.0)) {
            return bad("block has a negative or non-finite entry".into());
        }
        if self.embeddings.iter().any(|e| !e.is_finite()) {
            return bad("embeddings have a non-finite value".into());
        }
        let mut sorted = self.ids.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return bad(format!("entity {} appears twice", w[0]));
        }
        Ok(())
    }
}

/// User weights of the three terms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Weights {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
}

impl Default for Weights {
    /// Equal weights α = β = γ = 1/3 — the neutral fallback. The defaults in force are the
    /// fitted weights shipped with the project (`serenqa_model::weights::shipped`) or an
    /// expert calibration on a server (docs/RNS.md "Which weights are in force").
    fn default() -> Self {
        Weights {
            alpha: 1.0 / 3.0,
            beta: 1.0 / 3.0,
            gamma: 1.0 / 3.0,
        }
    }
}

impl Weights {
    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Result<Self, RnsError> {
        let w = Weights { alpha, beta, gamma };
        w.validate()?;
        Ok(w)
    }
    pub fn validate(&self) -> Result<(), RnsError> {
        if [self.alpha, self.beta, self.gamma]
            .iter()
            .all(|x| x.is_finite())
        {
            Ok(())
        } else {
            Err(RnsError::BadWeights)
        }
    }
    /// Parses `a,b,c`.
    pub fn parse(s: &str) -> Result<Self, RnsError> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        if parts.len() != 3 {
            return Err(RnsError::BadWeights);
        }
        let mut v = [0.0; 3];
        for (slot, p) in v.iter_mut().zip(&parts) {
            *slot = p.parse().map_err(|_| RnsError::BadWeights)?;
        }
        Weights::new(v[0], v[1], v[2])
    }
    /// RNS from the three terms: the weighted sum divided by |α| + |β| + |γ| (0 when all
    /// weights are 0), so only the weights' proportions matter.
    #[inline]
    pub fn combine(&self, r: f64, n: f64, s: f64) -> f64 {
        let z = self.scale();
        if z > 0.0 {
            (self.alpha * r + self.beta * n + self.gamma * s) / z
        } else {
            0.0
        }
    }
    fn scale(&self) -> f64 {
        self.alpha.abs() + self.beta.abs() + self.gamma.abs()
    }
    /// The same weights scaled to |α| + |β| + |γ| = 1 (equal thirds when all are 0).
    pub fn normalised(&self) -> Weights {
        let z = self.scale();
        if z > 0.0 {
            Weights {
                alpha: self.alpha / z,
                beta: self.beta / z,
                gamma: self.gamma / z,
            }
        } else {
            Weights::default()
        }
    }
}

/// The weight grid |α| + |β| + |γ| = 1 with step `step`, signs free (a negative weight
/// prefers low values of its term; scaling by a positive factor never changes a ranking, so
/// this surface holds every distinct choice), α then β ascending, γ's negative sign first.
/// The one grid of every weight fit (`serenqa rns fit` and expert calibration).
pub fn signed_weight_grid(step: f64) -> Vec<Weights> {
    let k = (1.0 / step).round().max(1.0) as i64;
    let mut out = Vec::new();
    for a in -k..=k {
        for b in -(k - a.abs())..=(k - a.abs()) {
            let c = k - a.abs() - b.abs();
            let signs: &[i64] = if c == 0 { &[1] } else { &[-1, 1] };
            for &sg in signs {
                out.push(Weights {
                    alpha: a as f64 / k as f64,
                    beta: b as f64 / k as f64,
                    gamma: (sg * c) as f64 / k as f64,
                });
            }
        }
    }
    out
}

/// Agreement of RNS with a reference ranking (the fit's or a held-out set's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgreementSummary {
    pub questions: usize,
    /// Mean top-b agreement of the RNS-guided As with the reference As.
    pub top_b: f64,
    /// Mean per-question Spearman's ρ of per-candidate RNS with the reference order.
    pub spearman: f64,
    /// Mean per-question Kendall's τ-b.
    pub kendall: f64,
}

/// Where the weights in force came from. Every output that used weights carries one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WeightsSource {
    /// `fitted` (the shipped weights, fitted to the SerenQA questionnaire's LLM-ensemble
    /// ranks), `calibration` (fitted to expert rankings in the annotation store), `request`
    /// (given by the caller) or `equal` (⅓ each; no fit available).
    pub kind: String,
    /// One line for people: where the weights came from.
    pub label: String,
    /// When the fit was made (ISO date or date-time; empty when not applicable).
    #[serde(default)]
    pub date: String,
    /// Agreement on the data the weights were fitted to.
    #[serde(default)]
    pub fit: Option<AgreementSummary>,
    /// Agreement on held-out data never used for fitting.
    #[serde(default)]
    pub heldout: Option<AgreementSummary>,
}

impl WeightsSource {
    pub fn equal() -> Self {
        WeightsSource {
            kind: "equal".into(),
            label: "equal weights (⅓ each): no fitted weights available".into(),
            date: String::new(),
            fit: None,
            heldout: None,
        }
    }
    pub fn request() -> Self {
        WeightsSource {
            kind: "request".into(),
            label: "weights given with the request".into(),
            date: String::new(),
            fit: None,
            heldout: None,
        }
    }
}

impl Default for WeightsSource {
    fn default() -> Self {
        WeightsSource::equal()
    }
}

/// Weights with their provenance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WeightsInForce {
    pub weights: Weights,
    pub source: WeightsSource,
}

/// R, N, S and their weighted sum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Terms {
    pub r: f64,
    pub n: f64,
    pub s: f64,
    pub rns: f64,
}

impl Terms {
    /// The same terms with RNS computed as if γ were 0: for a view that shows no S
    /// ([`surprise_informative`]).
    pub fn without_s(self, w: &Weights) -> Terms {
        let w = Weights { gamma: 0.0, ..*w };
        Terms {
            rns: w.combine(self.r, self.n, self.s),
            ..self
        }
    }
}

/// Intermediate values of one scoring (for tests, the worked example and explanations).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Details {
    /// Positions in the slice, Ae first then As (the order of the rows below).
    pub order: Vec<usize>,
    pub pi: Vec<f64>,
    /// T, |A| × |A| row-major (return-to-self mass excluded: the rows S compares).
    pub t: Vec<f64>,
    /// O: probability that a walk from Ae (weighted by πₑ, return-to-self excluded) ends in As.
    pub observed: f64,
    /// I = −log₂(O + δ): the conditional self-information of As given Ae (bits).
    pub info_bits: f64,
    /// The paper's MI (docs/RNS.md, "the paper's form") before normalisation and clipping (bits),
    /// kept so the original N = 1 − clip₀₁(mi_paper / log₂|A|) stays recoverable.
    pub mi_paper: f64,
    pub pe: Vec<f64>,
    pub ps: Vec<f64>,
    pub jsd: f64,
    /// The paper's S: the same JSD over rows that keep the return-to-self mass
    /// (docs/RNS.md, "Surprise"), kept so the original stays recoverable.
    pub s_paper: f64,
    pub terms: Terms,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RnsError {
    BadSlice(String),
    EmptyExisting,
    EmptySerendipity,
    /// A position appears in both sets (or twice in one).
    Overlap(u32),
    OutOfRange(usize),
    TooFewCandidates,
    BadWeights,
}

impl std::fmt::Display for RnsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RnsError::BadSlice(m) => write!(f, "invalid slice: {m}"),
            RnsError::EmptyExisting => write!(f, "the existing answer set is empty"),
            RnsError::EmptySerendipity => write!(f, "the serendipity answer set is empty"),
            RnsError::Overlap(id) => write!(
                f,
                "entity {id} appears more than once across the existing and serendipity sets"
            ),
            RnsError::OutOfRange(p) => write!(f, "position {p} is outside the slice"),
            RnsError::TooFewCandidates => write!(f, "partitioning needs at least 2 candidates"),
            RnsError::BadWeights => write!(f, "weights must be three finite numbers a,b,c"),
        }
    }
}

impl std::error::Error for RnsError {}

/// The conditional self-information I of As given Ae in bits, from O (the probability that a
/// leaving walk from Ae ends in As) and π(As) (As's share of A's marginal mass):
/// −log₂((1 − ε) O + ε π(As) + δ).
#[inline]
pub fn novelty_bits(observed: f64, prior: f64) -> f64 {
    -((1.0 - PRIOR_MIX) * observed.max(0.0) + PRIOR_MIX * prior.clamp(0.0, 1.0) + DELTA).log2()
}

/// N = min(1, I / NOVELTY_BITS) ∈ [0, 1], I from [`novelty_bits`].
#[inline]
pub fn novelty(observed: f64, prior: f64) -> f64 {
    (novelty_bits(observed, prior) / NOVELTY_BITS).clamp(0.0, 1.0)
}

/// 1 / (1 − B[i][i]): conditions a walk from i on not ending at i (0 for a node whose walk
/// never leaves it, e.g. an isolated node with its self-loop).
#[inline]
fn leave_factor(self_mass: f64) -> f64 {
    let rest = 1.0 - self_mass;
    if rest > 1e-15 {
        1.0 / rest
    } else {
        0.0
    }
}

/// One unnormalised entry of a row of T: the block entry, except on the diagonal (the walk's
/// return to its start, which S and N leave out), plus δ.
#[inline]
fn t_entry(b: f64, diagonal: bool) -> f64 {
    if diagonal {
        DELTA
    } else {
        b + DELTA
    }
}

/// Whether S can tell candidates apart for a partition with `existing` entities in Ae and
/// `answers` in As. S compares where walks leaving Ae and leaving As land within A; with
/// |A| = 2 (one known entity, one candidate — the page of a disease with no known treatment)
/// a walk that leaves its start can only land on the other entity, so S is 1 when walks
/// connect the two and 0 when they do not (both rows are then the uniform δ row) — what N
/// already measures (docs/RNS.md, "Surprise"). Views show no S there and leave it out of RNS.
pub fn surprise_informative(existing: usize, answers: usize) -> bool {
    existing + answers >= 3
}

/// Jensen–Shannon divergence in bits of two distributions with positive entries.
pub fn jsd_bits(p: &[f64], q: &[f64]) -> f64 {
    let mut acc = 0.0;
    for (&a, &b) in p.iter().zip(q) {
        acc += jsd_term(a, b);
    }
    (acc * 0.5).clamp(0.0, 1.0)
}

/// a·log₂(a/m) + b·log₂(b/m), m = (a+b)/2, with 0·log 0 = 0.
#[inline]
fn jsd_term(a: f64, b: f64) -> f64 {
    let m = 0.5 * (a + b);
    let mut t = 0.0;
    if a > 0.0 {
        t += a * (a / m).log2();
    }
    if b > 0.0 {
        t += b * (b / m).log2();
    }
    t
}

/// Chebyshev coefficients of log₂ μ on μ ∈ [√½, √2] in v = (μ − 1 − c)·2√2,
/// c = (√2 + √½)/2 − 1 (interpolated at 64 Chebyshev nodes and cut at degree 8, where the
/// truncation error is about 5e-8: the screening needs speed more than digits).
const LOG2_CHEB: [f64; 9] = [
    0.043106606327224184,
    0.4950546725594647,
    -0.04246897678943033,
    0.004857682971233207,
    -0.0006250849758344373,
    8.579810126546975e-05,
    -1.226718910453048e-05,
    1.8040430621989872e-06,
    -2.7083424831118863e-07,
];

/// Bound on |[`fast_log2`](x) − log₂ x| for normal x (`fast_log2_is_within_its_bound`
/// checks it on 200,000 random normals and every exponent's range-reduction edges).
const FAST_LOG2_ERROR: f64 = 1e-7;

/// log₂ x for x > 0 without libm and without division, for the greedy swap's screening pass
/// only (exact results always come from `f64::log2`). x = 2ᵉ·μ with μ ∈ [√½, √2), and log₂ μ
/// is a degree-8 Chebyshev series. Subnormal inputs are raised to the smallest normal;
/// callers multiply the result by x, so that error is below 1e-305. Branch-free, so the loops
/// that call it can vectorise.
#[inline(always)]
fn fast_log2(x: f64) -> f64 {
    let x = x.max(f64::MIN_POSITIVE);
    let bits = x.to_bits();
    // The biased exponent as a float, via the 2⁵² trick (x > 0, so the sign bit is 0).
    let mut e =
        f64::from_bits((bits >> 52) | 0x4330_0000_0000_0000) - (4_503_599_627_370_496.0 + 1023.0);
    let mut mu = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let big = mu > std::f64::consts::SQRT_2;
    mu = if big { mu * 0.5 } else { mu };
    e += if big { 1.0 } else { 0.0 };
    let v = (mu - 1.060_660_171_779_821_4) * (2.0 * std::f64::consts::SQRT_2);
    // Clenshaw's recurrence.
    let (mut b1, mut b2) = (0.0, 0.0);
    for &c in LOG2_CHEB[1..].iter().rev() {
        (b1, b2) = (2.0 * v * b1 - b2 + c, b1);
    }
    e + (v * b1 - b2 + LOG2_CHEB[0])
}

/// ½·Σₓ JSD terms of a = (sₓ + tjₓ − tiₓ)/ns, b = (eₓ − tjₓ + tiₓ)/ne with [`fast_log2`]: S after
/// a swap, within [`FAST_S_ERROR`] of the exact one. Fixed chunks of eight without bounds
/// checks, so the compiler keeps the lanes in vector registers.
///
/// On x86-64 CPUs with AVX2 and FMA (checked at run time) the same code is compiled for
/// them, which about halves the greedy swap with S (`serenqa perf model`); elsewhere (and in
/// wasm32) the baseline build runs.
#[inline]
fn jsd_swap_fast(ti: &[f64], tj: &[f64], sum_s: &[f64], sum_e: &[f64], ns: f64, ne: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA, checked just above.
        return unsafe { jsd_swap_fast_avx2(ti, tj, sum_s, sum_e, ns, ne) };
    }
    jsd_swap_fast_body(ti, tj, sum_s, sum_e, ns, ne)
}

/// [`jsd_swap_fast_body`] compiled for AVX2 + FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn jsd_swap_fast_avx2(
    ti: &[f64],
    tj: &[f64],
    sum_s: &[f64],
    sum_e: &[f64],
    ns: f64,
    ne: f64,
) -> f64 {
    jsd_swap_fast_body(ti, tj, sum_s, sum_e, ns, ne)
}

#[inline(always)]
fn jsd_swap_fast_body(
    ti: &[f64],
    tj: &[f64],
    sum_s: &[f64],
    sum_e: &[f64],
    ns: f64,
    ne: f64,
) -> f64 {
    const LANES: usize = 8;
    let (ins, ine) = (1.0 / ns, 1.0 / ne);
    #[inline(always)]
    fn term(ti: f64, tj: f64, s: f64, e: f64, ins: f64, ine: f64) -> f64 {
        let diff = tj - ti;
        let a = ((s + diff) * ins).max(0.0);
        let b = ((e - diff) * ine).max(0.0);
        let lm = fast_log2(0.5 * (a + b));
        a * (fast_log2(a) - lm) + b * (fast_log2(b) - lm)
    }
    let mut lanes = [0.0f64; LANES];
    let (ci, cj, cs, ce) = (
        ti.chunks_exact(LANES),
        tj.chunks_exact(LANES),
        sum_s.chunks_exact(LANES),
        sum_e.chunks_exact(LANES),
    );
    let (ri, rj, rs, re) = (
        ci.remainder(),
        cj.remainder(),
        cs.remainder(),
        ce.remainder(),
    );
    for (((xi, xj), xs), xe) in ci.zip(cj).zip(cs).zip(ce) {
        for k in 0..LANES {
            lanes[k] += term(xi[k], xj[k], xs[k], xe[k], ins, ine);
        }
    }
    let mut acc: f64 = lanes.iter().sum();
    for k in 0..ri.len() {
        acc += term(ri[k], rj[k], rs[k], re[k], ins, ine);
    }
    (acc * 0.5).clamp(0.0, 1.0)
}

/// An upper bound on |S computed with [`fast_log2`] − S computed with `f64::log2`. Entry x
/// contributes a·(log a − log m) + b·(log b − log m), so its error is at most
/// 2(a + b)·[`FAST_LOG2_ERROR`]; over two distributions that sum to 1 the sum's error is at
/// most 4·FAST_LOG2_ERROR and S (half the sum) 2·FAST_LOG2_ERROR, plus float rounding over
/// at most a few thousand terms. Kept 50× above that.
const FAST_S_ERROR: f64 = 100.0 * FAST_LOG2_ERROR;

/// A slice prepared for scoring: embeddings L2-normalised to f64 once.
#[derive(Clone, Debug)]
pub struct Scorer<'a> {
    slice: &'a Slice,
    emb: Vec<f64>,
}

impl<'a> Scorer<'a> {
    pub fn new(slice: &'a Slice) -> Result<Self, RnsError> {
        slice.validate()?;
        let d = slice.dim;
        let mut emb: Vec<f64> = slice.embeddings.iter().map(|&x| x as f64).collect();
        if d > 0 {
            for row in emb.chunks_mut(d) {
                let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
                if norm > 0.0 {
                    row.iter_mut().for_each(|x| *x /= norm);
                }
            }
        }
        Ok(Scorer { slice, emb })
    }

    pub fn slice(&self) -> &Slice {
        self.slice
    }

    #[inline]
    fn b(&self, r: usize, c: usize) -> f64 {
        self.slice.block[r * self.slice.ids.len() + c]
    }

    /// d(u, v) = ‖u − v‖₂ / 2 between two slice rows.
    #[inline]
    pub fn distance(&self, a: usize, b: usize) -> f64 {
        let d = self.slice.dim;
        let (u, v) = (&self.emb[a * d..a * d + d], &self.emb[b * d..b * d + d]);
        let s: f64 = u.iter().zip(v).map(|(x, y)| (x - y) * (x - y)).sum();
        s.sqrt() * 0.5
    }

    /// Checks that positions are in range, sets non-empty and disjoint.
    fn check(&self, ae: &[usize], as_: &[usize]) -> Result<(), RnsError> {
        if as_.is_empty() {
            return Err(RnsError::EmptySerendipity);
        }
        self.check_existing(ae, as_)
    }

    /// Like `check` but `as_` may be empty.
    fn check_existing(&self, ae: &[usize], as_: &[usize]) -> Result<(), RnsError> {
        if ae.is_empty() {
            return Err(RnsError::EmptyExisting);
        }
        let n = self.slice.len();
        let mut seen = vec![false; n];
        for &p in ae.iter().chain(as_) {
            if p >= n {
                return Err(RnsError::OutOfRange(p));
            }
            if seen[p] {
                return Err(RnsError::Overlap(self.slice.ids[p]));
            }
            seen[p] = true;
        }
        Ok(())
    }

    /// RNS(Ae, As) with A = Ae ∪ As.
    pub fn score(&self, ae: &[usize], as_: &[usize], w: &Weights) -> Result<Terms, RnsError> {
        Ok(self.details(ae, as_, w)?.terms)
    }

    /// RNS(Ae, As) with every intermediate value.
    #[allow(clippy::needless_range_loop)] // index arithmetic over |A| × |A| matrices
    pub fn details(&self, ae: &[usize], as_: &[usize], w: &Weights) -> Result<Details, RnsError> {
        self.check(ae, as_)?;
        w.validate()?;
        let order: Vec<usize> = ae.iter().chain(as_).copied().collect();
        let m = order.len();
        let (ne, ns) = (ae.len(), as_.len());
        let p = &self.slice.marginals;
        let z: f64 = order.iter().map(|&x| p[x]).sum();
        let pi: Vec<f64> = order.iter().map(|&x| p[x] / z).collect();
        // T (S's rows, without the return-to-self mass) and the paper's rows (with it).
        let mut t = vec![0.0; m * m];
        let mut t_paper = vec![0.0; m * m];
        for (r, &i) in order.iter().enumerate() {
            let row = &mut t[r * m..(r + 1) * m];
            let row_paper = &mut t_paper[r * m..(r + 1) * m];
            for (c, &x) in order.iter().enumerate() {
                row[c] = t_entry(self.b(i, x), r == c);
                row_paper[c] = self.b(i, x) + DELTA;
            }
            let s: f64 = row.iter().sum();
            row.iter_mut().for_each(|v| *v /= s);
            let s: f64 = row_paper.iter().sum();
            row_paper.iter_mut().for_each(|v| *v /= s);
        }
        // Relevance.
        let mut dsum = 0.0;
        for &i in as_ {
            for &j in ae {
                dsum += self.distance(i, j);
            }
        }
        let r = 1.0 - dsum / (ne * ns) as f64;
        // Novelty: where walks from Ae that leave their start end up.
        let ze: f64 = pi[..ne].iter().sum();
        let (mut observed, mut mi_paper) = (0.0, 0.0);
        for (e, &i) in order[..ne].iter().enumerate() {
            let we = pi[e] / ze;
            let leave = leave_factor(self.b(i, i));
            for (s, &j) in order.iter().enumerate().skip(ne) {
                observed += we * self.b(i, j) * leave;
                let tv = t_paper[e * m + s];
                mi_paper += we * tv * (tv / pi[s]).log2();
            }
        }
        let prior: f64 = pi[ne..].iter().sum();
        let info_bits = novelty_bits(observed, prior);
        let n = novelty(observed, prior);
        // Surprise.
        let means = |t: &[f64]| {
            let mut pe = vec![0.0; m];
            let mut ps = vec![0.0; m];
            for row in 0..m {
                let (target, k) = if row < ne {
                    (&mut pe, ne)
                } else {
                    (&mut ps, ns)
                };
                for c in 0..m {
                    target[c] += t[row * m + c] / k as f64;
                }
            }
            (pe, ps)
        };
        let (pe, ps) = means(&t);
        let jsd = jsd_bits(&ps, &pe);
        let s_paper = {
            let (pe, ps) = means(&t_paper);
            jsd_bits(&ps, &pe)
        };
        let terms = Terms {
            r,
            n,
            s: jsd,
            rns: w.combine(r, n, jsd),
        };
        Ok(Details {
            order,
            pi,
            t,
            observed,
            info_bits,
            mi_paper,
            pe,
            ps,
            jsd,
            s_paper,
            terms,
        })
    }

    /// RNS(Ae, {c}) for every candidate c (A = Ae ∪ {c} for each), in candidate order.
    /// This is the fast path the UI re-runs on every weight change: the Ae-only sums are
    /// computed once, each candidate then costs O(|Ae|² + |Ae|·d).
    pub fn score_candidates(
        &self,
        ae: &[usize],
        candidates: &[usize],
        w: &Weights,
    ) -> Result<Vec<Terms>, RnsError> {
        self.check_existing(ae, &[])?;
        w.validate()?;
        let n = self.slice.len();
        let mut in_ae = vec![false; n];
        for &e in ae {
            in_ae[e] = true;
        }
        for &c in candidates {
            if c >= n {
                return Err(RnsError::OutOfRange(c));
            }
            if in_ae[c] {
                return Err(RnsError::Overlap(self.slice.ids[c]));
            }
        }
        let ne = ae.len();
        let m = ne + 1;
        let p = &self.slice.marginals;
        let zp: f64 = ae.iter().map(|&e| p[e]).sum();
        // Σ_{y∈Ae, y≠e} B[e][y] for each e ∈ Ae (T leaves out the return-to-self mass).
        let sb: Vec<f64> = ae
            .iter()
            .map(|&e| ae.iter().filter(|&&y| y != e).map(|&y| self.b(e, y)).sum())
            .collect();
        // πₑ(e) / (1 − B[e][e]) for each e ∈ Ae (πₑ's normaliser does not depend on c).
        let lead: Vec<f64> = ae
            .iter()
            .map(|&e| p[e] / zp * leave_factor(self.b(e, e)))
            .collect();
        let mut pe = vec![0.0; m];
        let mut inv_rs = vec![0.0; ne];
        let mut out = Vec::with_capacity(candidates.len());
        for &c in candidates {
            for (k, &e) in ae.iter().enumerate() {
                inv_rs[k] = 1.0 / (sb[k] + self.b(e, c) + m as f64 * DELTA);
            }
            // Pe over A = (Ae…, c); N's sums over j = c only.
            pe.iter_mut().for_each(|v| *v = 0.0);
            let mut observed = 0.0;
            for (k, &e) in ae.iter().enumerate() {
                let inv = inv_rs[k];
                for (x, &y) in ae.iter().enumerate() {
                    pe[x] += t_entry(self.b(e, y), x == k) * inv;
                }
                pe[ne] += (self.b(e, c) + DELTA) * inv;
                observed += lead[k] * self.b(e, c);
            }
            pe.iter_mut().for_each(|v| *v /= ne as f64);
            let rs_c: f64 = ae.iter().map(|&y| self.b(c, y)).sum::<f64>() + m as f64 * DELTA;
            let mut acc = 0.0;
            for (x, &y) in ae.iter().enumerate() {
                acc += jsd_term((self.b(c, y) + DELTA) / rs_c, pe[x]);
            }
            acc += jsd_term(DELTA / rs_c, pe[ne]);
            let s = (acc * 0.5).clamp(0.0, 1.0);
            let r = 1.0 - ae.iter().map(|&e| self.distance(c, e)).sum::<f64>() / ne as f64;
            let nov = novelty(observed, p[c] / (zp + p[c]));
            out.push(Terms {
                r,
                n: nov,
                s,
                rns: w.combine(r, nov, s),
            });
        }
        Ok(out)
    }

    /// Algorithm 1 (greedy swap) over the candidate positions `ac`, keeping
    /// |As| = b = max(1, ⌊0.2|Ac|⌋). `initial_as` defaults to [`Scorer::initial_partition`].
    pub fn greedy_swap(
        &self,
        ac: &[usize],
        initial_as: Option<&[usize]>,
        w: &Weights,
    ) -> Result<SwapResult, RnsError> {
        self.greedy_swap_anchored(ac, &[], initial_as, w)
    }

    /// [`Scorer::greedy_swap`] with `anchors` — entities the asker already has in mind (e.g.
    /// the ones a question names) — kept in Ae throughout: A = Ac ∪ anchors, As is chosen
    /// among Ac only and b = max(1, ⌊0.2|Ac|⌋) counts the candidates only. The result's
    /// `existing` lists the candidates left in Ae (the anchors are in Ae as well).
    pub fn greedy_swap_anchored(
        &self,
        ac: &[usize],
        anchors: &[usize],
        initial_as: Option<&[usize]>,
        w: &Weights,
    ) -> Result<SwapResult, RnsError> {
        let st = SwapState::new(self, ac, anchors, w)?;
        let init: Vec<usize> = match initial_as {
            Some(s) => {
                let b = budget(ac.len());
                if s.len() != b {
                    return Err(RnsError::BadSlice(format!(
                        "the initial serendipity set must hold b = {b} of the candidates"
                    )));
                }
                s.to_vec()
            }
            None => st.initial(),
        };
        st.run(&init)
    }

    /// The default starting partition: the b candidates c with the highest RNS(Ac∖{c}, {c})
    /// (each scored alone against all others, A = Ac), ties by node index.
    pub fn initial_partition(&self, ac: &[usize], w: &Weights) -> Result<Vec<usize>, RnsError> {
        Ok(SwapState::new(self, ac, &[], w)?.initial())
    }
}

/// Positions of `terms` best first, with a deterministic tie-break: RNS descending, then the
/// unweighted mean (R + N + S)/3 descending (so equal RNS — e.g. all weights 0 — still orders
/// by the terms), then `ids[k]` ascending (node index; position when `ids` is shorter).
pub fn rank(terms: &[Terms], ids: &[u32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..terms.len()).collect();
    let id = |k: usize| ids.get(k).copied().unwrap_or(u32::MAX);
    let mean = |t: &Terms| t.r + t.n + t.s;
    order.sort_by(|&a, &b| {
        let (x, y) = (&terms[a], &terms[b]);
        y.rns
            .total_cmp(&x.rns)
            .then(mean(y).total_cmp(&mean(x)))
            .then(id(a).cmp(&id(b)))
            .then(a.cmp(&b))
    });
    order
}

/// b = max(1, ⌊0.2|Ac|⌋).
pub fn budget(candidates: usize) -> usize {
    (candidates / 5).max(1)
}

/// Result of the greedy swap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwapResult {
    /// Positions in the slice, sorted by node index.
    pub existing: Vec<usize>,
    pub serendipity: Vec<usize>,
    pub initial: Terms,
    pub terms: Terms,
    /// Swaps applied.
    pub swaps: usize,
    /// Candidate swaps evaluated.
    pub evaluations: u64,
}

/// The first entry with the strictly largest gain (entries are in (i, j) order).
fn pick_first_max(rows: &[(f64, usize, usize)]) -> (f64, usize, usize) {
    let mut best = (f64::NEG_INFINITY, usize::MAX, usize::MAX);
    for &r in rows {
        if r.0 > best.0 {
            best = r;
        }
    }
    best
}

/// Precomputed quantities for a fixed A = Ac ∪ anchors (local indices 0..m).
struct SwapState<'s, 'a> {
    sc: &'s Scorer<'a>,
    /// A's positions in the slice, in node-index order.
    ac: Vec<usize>,
    /// Local index is a candidate (false: an anchor, always in Ae).
    movable: Vec<bool>,
    /// Number of candidates (movable entries).
    nc: usize,
    m: usize,
    w: Weights,
    /// π restricted to Ac.
    pi: Vec<f64>,
    /// T restricted to Ac, m × m.
    t: Vec<f64>,
    /// Pairwise distances, m × m.
    d: Vec<f64>,
    /// N's summands π(e)·B[e][s]/(1 − B[e][e]), m × m (zero diagonal).
    q: Vec<f64>,
    /// Screen swaps with [`fast_log2`] before scoring the close ones exactly (always, except
    /// in the test that compares it with scoring every swap exactly).
    screen: bool,
}

/// Running sums of one partition.
struct Part {
    in_s: Vec<bool>,
    d_to_e: Vec<f64>,
    d_to_s: Vec<f64>,
    q_row_s: Vec<f64>,
    q_col_e: Vec<f64>,
    cross_d: f64,
    cross_q: f64,
    z_e: f64,
    sum_e: Vec<f64>,
    sum_s: Vec<f64>,
    ne: usize,
    ns: usize,
}

impl<'s, 'a> SwapState<'s, 'a> {
    fn new(
        sc: &'s Scorer<'a>,
        cands: &[usize],
        anchors: &[usize],
        w: &Weights,
    ) -> Result<Self, RnsError> {
        w.validate()?;
        if cands.len() < 2 {
            return Err(RnsError::TooFewCandidates);
        }
        let mut ac: Vec<usize> = cands.iter().chain(anchors).copied().collect();
        sc.check(&ac[..1], &ac[1..])?;
        // Local order by node index: the tie-break order of Algorithm 1.
        ac.sort_by_key(|&p| sc.slice.ids[p]);
        let movable: Vec<bool> = ac.iter().map(|p| !anchors.contains(p)).collect();
        let nc = cands.len();
        let m = ac.len();
        let p = &sc.slice.marginals;
        let z: f64 = ac.iter().map(|&x| p[x]).sum();
        let pi: Vec<f64> = ac.iter().map(|&x| p[x] / z).collect();
        let mut t = vec![0.0; m * m];
        let mut d = vec![0.0; m * m];
        for r in 0..m {
            let row = &mut t[r * m..(r + 1) * m];
            for c in 0..m {
                row[c] = t_entry(sc.b(ac[r], ac[c]), r == c);
            }
            let s: f64 = row.iter().sum();
            row.iter_mut().for_each(|v| *v /= s);
            for c in r + 1..m {
                let dist = sc.distance(ac[r], ac[c]);
                d[r * m + c] = dist;
                d[c * m + r] = dist;
            }
        }
        // N's summands; O = (Σ over Ae × As of q) / Σ_{Ae} π.
        let mut q = vec![0.0; m * m];
        for e in 0..m {
            let lead = pi[e] * leave_factor(sc.b(ac[e], ac[e]));
            for s in 0..m {
                if s != e {
                    q[e * m + s] = lead * sc.b(ac[e], ac[s]);
                }
            }
        }
        Ok(SwapState {
            sc,
            ac,
            movable,
            nc,
            m,
            w: *w,
            pi,
            t,
            d,
            q,
            screen: true,
        })
    }

    #[allow(clippy::needless_range_loop)] // index arithmetic over m × m matrices
    fn initial(&self) -> Vec<usize> {
        let m = self.m;
        let b = budget(self.nc);
        let mut col_t = vec![0.0; m];
        let mut col_q = vec![0.0; m];
        let mut row_d = vec![0.0; m];
        for r in 0..m {
            for c in 0..m {
                col_t[c] += self.t[r * m + c];
                col_q[c] += self.q[r * m + c];
                row_d[r] += self.d[r * m + c];
            }
        }
        let mut scored: Vec<(f64, usize)> = (0..m)
            .filter(|&c| self.movable[c])
            .map(|c| {
                let ne = (m - 1) as f64;
                let r = 1.0 - row_d[c] / ne;
                // q's diagonal is 0: the column sum is the sum over Ac∖{c}.
                let nov = novelty(col_q[c] / (1.0 - self.pi[c]), self.pi[c]);
                let mut acc = 0.0;
                for x in 0..m {
                    let tcx = self.t[c * m + x];
                    acc += jsd_term(tcx, (col_t[x] - tcx) / ne);
                }
                let s = (acc * 0.5).clamp(0.0, 1.0);
                (self.w.combine(r, nov, s), c)
            })
            .collect();
        // Highest score first; equal scores by node index (local order is node order).
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored[..b].iter().map(|&(_, c)| self.ac[c]).collect()
    }

    fn part(&self, in_s: Vec<bool>) -> Part {
        let m = self.m;
        let mut pt = Part {
            d_to_e: vec![0.0; m],
            d_to_s: vec![0.0; m],
            q_row_s: vec![0.0; m],
            q_col_e: vec![0.0; m],
            cross_d: 0.0,
            cross_q: 0.0,
            z_e: 0.0,
            sum_e: vec![0.0; m],
            sum_s: vec![0.0; m],
            ne: in_s.iter().filter(|s| !**s).count(),
            ns: in_s.iter().filter(|s| **s).count(),
            in_s,
        };
        for x in 0..m {
            for y in 0..m {
                if pt.in_s[y] {
                    pt.d_to_s[x] += self.d[x * m + y];
                    pt.q_row_s[x] += self.q[x * m + y];
                } else {
                    pt.d_to_e[x] += self.d[x * m + y];
                }
                if !pt.in_s[x] {
                    pt.q_col_e[y] += self.q[x * m + y];
                }
            }
            if !pt.in_s[x] {
                pt.z_e += self.pi[x];
            }
            let target = if pt.in_s[x] {
                &mut pt.sum_s
            } else {
                &mut pt.sum_e
            };
            for (acc, &tv) in target.iter_mut().zip(&self.t[x * m..(x + 1) * m]) {
                *acc += tv;
            }
        }
        pt.cross_d = (0..m).filter(|&x| pt.in_s[x]).map(|x| pt.d_to_e[x]).sum();
        pt.cross_q = (0..m).filter(|&x| !pt.in_s[x]).map(|x| pt.q_row_s[x]).sum();
        pt
    }

    fn terms_of(&self, pt: &Part, cross_d: f64, cross_q: f64, z_e: f64, jsd: f64) -> Terms {
        let r = 1.0 - cross_d / (pt.ne * pt.ns) as f64;
        // π sums to 1 over Ac, so As's share is 1 − z_e.
        let n = novelty(cross_q / z_e, 1.0 - z_e);
        Terms {
            r,
            n,
            s: jsd,
            rns: self.w.combine(r, n, jsd),
        }
    }

    fn exact(&self, pt: &Part) -> Terms {
        let (ne, ns) = (pt.ne as f64, pt.ns as f64);
        let mut acc = 0.0;
        for x in 0..self.m {
            acc += jsd_term(pt.sum_s[x] / ns, pt.sum_e[x] / ne);
        }
        self.terms_of(
            pt,
            pt.cross_d,
            pt.cross_q,
            pt.z_e,
            (acc * 0.5).clamp(0.0, 1.0),
        )
    }

    /// Terms after swapping i ∈ As with j ∈ Ae (local indices), without changing `pt`.
    #[cfg(test)]
    fn swapped(&self, pt: &Part, i: usize, j: usize) -> Terms {
        self.swapped_terms(pt, i, j, true)
    }

    /// As `swapped`, but when `with_s` is false S is not computed (reported as 0): the O(m)
    /// JSD is the only term that is not O(1) per swap, and with γ = 0 it cannot change the
    /// RNS, so the greedy swap skips it (the swapped RNS is then exact all the same).
    #[inline]
    fn swapped_terms(&self, pt: &Part, i: usize, j: usize, with_s: bool) -> Terms {
        let m = self.m;
        let (d, q) = (&self.d, &self.q);
        let cross_d = pt.cross_d - pt.d_to_e[i] - pt.d_to_s[j] + d[i * m + j] + pt.d_to_s[i]
            - d[i * m + i]
            + pt.d_to_e[j]
            - d[j * m + j]
            + d[j * m + i];
        let cross_q = pt.cross_q - pt.q_row_s[j] - pt.q_col_e[i] + q[j * m + i] + pt.q_col_e[j]
            - q[j * m + j]
            + pt.q_row_s[i]
            - q[i * m + i]
            + q[i * m + j];
        let z_e = pt.z_e - self.pi[j] + self.pi[i];
        let (ne, ns) = (pt.ne as f64, pt.ns as f64);
        let mut acc = 0.0;
        if with_s {
            let (ti, tj) = (&self.t[i * m..(i + 1) * m], &self.t[j * m..(j + 1) * m]);
            for x in 0..m {
                let diff = tj[x] - ti[x];
                let ps = ((pt.sum_s[x] + diff) / ns).max(0.0);
                let pe = ((pt.sum_e[x] - diff) / ne).max(0.0);
                acc += jsd_term(ps, pe);
            }
        }
        self.terms_of(pt, cross_d, cross_q, z_e, (acc * 0.5).clamp(0.0, 1.0))
    }

    /// S after swapping i ∈ As with j ∈ Ae, with [`fast_log2`]: within [`FAST_S_ERROR`] of
    /// `swapped_terms(.., true).s`. Four lanes so the loop vectorises.
    fn swapped_s_fast(&self, pt: &Part, i: usize, j: usize) -> f64 {
        let m = self.m;
        let (ti, tj) = (&self.t[i * m..(i + 1) * m], &self.t[j * m..(j + 1) * m]);
        jsd_swap_fast(ti, tj, &pt.sum_s, &pt.sum_e, pt.ns as f64, pt.ne as f64)
    }

    /// The best swap of a round: the largest exact gain, ties to the smallest (i, j) in local
    /// (node-index) order. With S in play the exact gain costs m libm logarithms per swap,
    /// so every swap is first scored with [`fast_log2`] (error ≤ `slack` in RNS), and only
    /// the swaps whose fast gain is within 2·slack of the best fast gain — a set that holds
    /// every exact maximiser — are scored exactly. The result is the exhaustive one.
    fn best_swap(
        &self,
        pt: &Part,
        tau: f64,
        s_list: &[usize],
        e_list: &[usize],
    ) -> (f64, usize, usize) {
        let with_s = self.w.gamma != 0.0;
        let exact_gain = |i: usize, j: usize| self.swapped_terms(pt, i, j, with_s).rns - tau;
        // Rows are independent: natively (feature `parallel`) they run on all cores; the
        // reductions below are sequential, so the result is the same either way.
        #[cfg(feature = "parallel")]
        use rayon::prelude::*;
        #[cfg(feature = "parallel")]
        let rows = s_list.par_iter();
        #[cfg(not(feature = "parallel"))]
        let rows = s_list.iter();
        let pick = |cands: &mut dyn Iterator<Item = (usize, usize)>| {
            let mut best = (f64::NEG_INFINITY, usize::MAX, usize::MAX);
            for (i, j) in cands {
                let g = exact_gain(i, j);
                if g > best.0 {
                    best = (g, i, j);
                }
            }
            best
        };
        if !with_s || !self.screen {
            // O(1) per swap already: score every swap exactly.
            let per_row: Vec<(f64, usize, usize)> = rows
                .map(|&i| pick(&mut e_list.iter().map(|&j| (i, j))))
                .collect();
            return pick_first_max(&per_row);
        }
        // S's error moves RNS by at most |γ|/(|α| + |β| + |γ|) times it; the rest covers the
        // few ulps by which the two sums of the same R and N may round apart.
        let w = self.w.normalised();
        let slack = w.gamma.abs() * FAST_S_ERROR + 1e-12;
        let fast: Vec<Vec<f64>> = rows
            .map(|&i| {
                e_list
                    .iter()
                    .map(|&j| {
                        let mut t = self.swapped_terms(pt, i, j, false);
                        t.s = self.swapped_s_fast(pt, i, j);
                        self.w.combine(t.r, t.n, t.s)
                    })
                    .collect()
            })
            .collect();
        let top = fast
            .iter()
            .flatten()
            .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let floor = top - 2.0 * slack;
        let mut close = s_list.iter().zip(&fast).flat_map(|(&i, row)| {
            e_list
                .iter()
                .zip(row)
                .filter(move |&(_, &g)| g >= floor)
                .map(move |(&j, _)| (i, j))
        });
        pick(&mut close)
    }

    fn run(&self, initial_as: &[usize]) -> Result<SwapResult, RnsError> {
        let m = self.m;
        let mut in_s = vec![false; m];
        for &p in initial_as {
            let local = self
                .ac
                .iter()
                .position(|&x| x == p)
                .ok_or(RnsError::OutOfRange(p))?;
            if !self.movable[local] {
                return Err(RnsError::BadSlice(
                    "the initial serendipity set may hold candidates only, not anchors".into(),
                ));
            }
            if in_s[local] {
                return Err(RnsError::Overlap(self.sc.slice.ids[p]));
            }
            in_s[local] = true;
        }
        let mut pt = self.part(in_s);
        let initial = self.exact(&pt);
        let mut tau = initial;
        // Gains below this are rounding noise (RNS is normalised by the weights' scale, so
        // scaling (α, β, γ) by c > 0 cannot change the result).
        let tol = 1e-12;
        let mut swaps = 0usize;
        let mut evaluations = 0u64;
        loop {
            let s_list: Vec<usize> = (0..m).filter(|&i| pt.in_s[i]).collect();
            let e_list: Vec<usize> = (0..m).filter(|&j| !pt.in_s[j] && self.movable[j]).collect();
            evaluations += (s_list.len() * e_list.len()) as u64;
            let (gain, i, j) = self.best_swap(&pt, tau.rns, &s_list, &e_list);
            if gain.is_nan() || gain <= tol {
                break;
            }
            let mut in_s = pt.in_s.clone();
            in_s[i] = false;
            in_s[j] = true;
            // Rebuild the sums from scratch after each swap (O(m²)) so no rounding drifts.
            let next = self.part(in_s);
            let exact = self.exact(&next);
            if exact.rns <= tau.rns {
                break;
            }
            pt = next;
            tau = exact;
            swaps += 1;
        }
        let mut existing: Vec<usize> = (0..m)
            .filter(|&x| !pt.in_s[x] && self.movable[x])
            .map(|x| self.ac[x])
            .collect();
        let mut serendipity: Vec<usize> =
            (0..m).filter(|&x| pt.in_s[x]).map(|x| self.ac[x]).collect();
        let ids = &self.sc.slice.ids;
        existing.sort_by_key(|&p| ids[p]);
        serendipity.sort_by_key(|&p| ids[p]);
        Ok(SwapResult {
            existing,
            serendipity,
            initial,
            terms: tau,
            swaps,
            evaluations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small slice with a pseudo-random (but fixed) block and embeddings.
    fn slice(n: usize, seed: u64) -> Slice {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let dim = 4;
        let embeddings = (0..n * dim).map(|_| (next() - 0.5) as f32).collect();
        let marginals = (0..n).map(|_| 0.01 + next()).collect();
        let mut block: Vec<f64> = (0..n * n)
            .map(|_| if next() < 0.3 { 0.0 } else { next() })
            .collect();
        for r in 0..n {
            let s: f64 = block[r * n..(r + 1) * n].iter().sum::<f64>() + 1.0;
            block[r * n..(r + 1) * n].iter_mut().for_each(|v| *v /= s);
        }
        Slice {
            ids: (0..n as u32).map(|i| i * 3 + 1).collect(),
            keys: vec![],
            dim,
            embeddings,
            marginals,
            block,
        }
    }

    #[test]
    fn candidates_path_equals_general_path() {
        let s = slice(12, 7);
        let sc = Scorer::new(&s).unwrap();
        let w = Weights::new(0.5, 0.3, 0.2).unwrap();
        let ae = [0, 3, 5, 7];
        let cands = [1, 2, 4, 6, 8, 11];
        let fast = sc.score_candidates(&ae, &cands, &w).unwrap();
        for (t, &c) in fast.iter().zip(&cands) {
            let g = sc.score(&ae, &[c], &w).unwrap();
            for (a, b) in [(t.r, g.r), (t.n, g.n), (t.s, g.s), (t.rns, g.rns)] {
                assert!((a - b).abs() < 1e-12, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn surprise_needs_three_entities_and_without_s_drops_gamma() {
        assert!(!surprise_informative(1, 1));
        assert!(surprise_informative(2, 1) && surprise_informative(1, 2));
        let w = Weights::new(0.2, 0.3, 0.5).unwrap();
        let t = Terms {
            r: 0.4,
            n: 0.6,
            s: 0.99,
            rns: w.combine(0.4, 0.6, 0.99),
        };
        let u = t.without_s(&w);
        assert_eq!((u.r, u.n, u.s), (t.r, t.n, t.s));
        assert!((u.rns - (0.2 * 0.4 + 0.3 * 0.6) / 0.5).abs() < 1e-12);
    }

    /// With γ = 0 the greedy swap skips S per candidate swap; its RNS must still be exact.
    #[test]
    fn swap_without_s_keeps_the_exact_rns_when_gamma_is_zero() {
        let s = slice(15, 5);
        let sc = Scorer::new(&s).unwrap();
        let w = Weights::new(-0.3, 0.7, 0.0).unwrap();
        let ac: Vec<usize> = (0..15).collect();
        let st = SwapState::new(&sc, &ac, &[], &w).unwrap();
        let mut in_s = vec![false; 15];
        for k in [2, 6, 11] {
            in_s[k] = true;
        }
        let pt = st.part(in_s);
        for i in [2, 6, 11] {
            for j in [0, 3, 14] {
                let full = st.swapped_terms(&pt, i, j, true);
                let fast = st.swapped_terms(&pt, i, j, false);
                assert_eq!(full.rns.to_bits(), fast.rns.to_bits(), "swap {i} ↔ {j}");
                assert!(full.s > 0.0 && fast.s == 0.0);
            }
        }
        // And the whole swap: same partition as with S computed (γ = 0 either way).
        let res = sc.greedy_swap(&ac, None, &w).unwrap();
        let again = sc.greedy_swap(&ac, Some(&res.serendipity), &w).unwrap();
        assert_eq!(again.serendipity, res.serendipity);
        assert_eq!(again.swaps, 0);
    }

    #[test]
    fn fast_log2_is_within_its_bound() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut worst = 0.0f64;
        let mut check = |v: f64| {
            let err = (fast_log2(v) - v.log2()).abs();
            worst = worst.max(err);
            assert!(err < FAST_LOG2_ERROR, "fast_log2({v:e}) off by {err:e}");
        };
        // Random bit patterns over every normal exponent, and the range-reduction edges.
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x >> 1); // sign bit 0
            if v.is_normal() {
                check(v);
            }
        }
        let r2 = std::f64::consts::SQRT_2;
        for k in -1074..1024 {
            let p = 2f64.powi(k);
            for v in [
                p,
                r2 * p,
                r2.next_down() * p,
                r2.next_up() * p,
                p.next_down(),
            ] {
                if v.is_normal() {
                    check(v);
                }
            }
        }
        assert!(
            worst < FAST_LOG2_ERROR && worst > 0.0,
            "worst error {worst:e}"
        );
        // Zero and subnormals are raised to the smallest normal (the caller multiplies by x).
        assert!(0.0 * fast_log2(0.0) == 0.0);
        assert!((5e-324 * fast_log2(5e-324)).abs() < 1e-300);
    }

    /// S after a swap from fast logarithms stays within the analytic bound of the exact S
    /// (2 × the logarithm's bound), on the dispatched path (AVX2 where the CPU has it) and the
    /// baseline one.
    #[test]
    fn fast_swap_s_is_within_its_bound() {
        let mut worst = 0.0f64;
        for seed in 0..6u64 {
            let n = 23;
            let s = slice(n, seed + 40);
            let sc = Scorer::new(&s).unwrap();
            let ac: Vec<usize> = (0..n).collect();
            let st = SwapState::new(&sc, &ac, &[], &Weights::default()).unwrap();
            let in_s: Vec<bool> = (0..n).map(|x| x % 5 == 1).collect();
            let pt = st.part(in_s.clone());
            for i in (0..n).filter(|&x| in_s[x]) {
                for j in (0..n).filter(|&x| !in_s[x]) {
                    let exact = st.swapped(&pt, i, j).s;
                    let fast = st.swapped_s_fast(&pt, i, j);
                    let (ti, tj) = (&st.t[i * n..(i + 1) * n], &st.t[j * n..(j + 1) * n]);
                    let (ns, ne) = (pt.ns as f64, pt.ne as f64);
                    let base = jsd_swap_fast_body(ti, tj, &pt.sum_s, &pt.sum_e, ns, ne);
                    for v in [fast, base] {
                        let err = (v - exact).abs();
                        worst = worst.max(err);
                        assert!(err <= 2.0 * FAST_LOG2_ERROR + 1e-12, "{v} vs {exact}");
                    }
                }
            }
        }
        assert!(worst <= FAST_S_ERROR);
    }

    /// The screened swap (fast logarithms first, exact scoring of the close swaps) gives the
    /// same result as scoring every swap exactly — partitions, terms to the bit, swap counts
    /// — including slices built to tie: duplicated entities make equal gains.
    #[test]
    fn screened_swap_equals_exhaustive_swap() {
        let weights = [
            Weights::default(),
            Weights::new(0.2, 0.2, 0.6).unwrap(),
            Weights::new(-0.3, 0.4, 0.3).unwrap(),
            Weights::new(0.0, 0.0, 1.0).unwrap(),
            Weights::new(1.0, -1.0, 0.5).unwrap(),
        ];
        let (mut compared, mut swaps) = (0, 0);
        for seed in 0..24u64 {
            for n in [6usize, 11, 25] {
                let mut s = slice(n, seed + 100);
                if seed % 3 == 0 {
                    // Entities 1 and 2 become copies of entity 0 (ties in every term).
                    let dim = s.dim;
                    for c in [1usize, 2] {
                        for k in 0..dim {
                            s.embeddings[c * dim + k] = s.embeddings[k];
                        }
                        s.marginals[c] = s.marginals[0];
                    }
                    for c in [1usize, 2] {
                        for r in 0..n {
                            s.block[r * n + c] = s.block[r * n];
                        }
                        for k in 0..n {
                            s.block[c * n + k] = s.block[k];
                        }
                    }
                }
                let sc = Scorer::new(&s).unwrap();
                let ac: Vec<usize> = (0..n).collect();
                for w in &weights {
                    let anchors: Vec<usize> = if n > 10 { vec![n - 1] } else { vec![] };
                    let cands: Vec<usize> = ac
                        .iter()
                        .copied()
                        .filter(|c| !anchors.contains(c))
                        .collect();
                    let fast = SwapState::new(&sc, &cands, &anchors, w).unwrap();
                    let mut slow = SwapState::new(&sc, &cands, &anchors, w).unwrap();
                    slow.screen = false;
                    let init = fast.initial();
                    let a = fast.run(&init).unwrap();
                    let b = slow.run(&init).unwrap();
                    assert_eq!(a, b, "seed {seed}, n {n}, {w:?}");
                    assert_eq!(a.terms.rns.to_bits(), b.terms.rns.to_bits());
                    compared += 1;
                    swaps += a.swaps;
                }
            }
        }
        assert_eq!(compared, 24 * 3 * 5);
        assert!(
            swaps > compared / 2,
            "the runs must actually swap ({swaps} swaps)"
        );
    }

    #[test]
    fn incremental_swap_equals_general_path() {
        let s = slice(15, 3);
        let sc = Scorer::new(&s).unwrap();
        let w = Weights::default();
        let ac: Vec<usize> = (0..15).collect();
        let st = SwapState::new(&sc, &ac, &[], &w).unwrap();
        let mut in_s = vec![false; 15];
        for k in [1, 4, 9] {
            in_s[k] = true;
        }
        let pt = st.part(in_s.clone());
        for i in [1, 4, 9] {
            for j in [0, 2, 14] {
                let inc = st.swapped(&pt, i, j);
                let mut s2 = in_s.clone();
                s2[i] = false;
                s2[j] = true;
                let ae: Vec<usize> = (0..15).filter(|&x| !s2[x]).collect();
                let as_: Vec<usize> = (0..15).filter(|&x| s2[x]).collect();
                let g = sc.score(&ae, &as_, &w).unwrap();
                assert!((inc.rns - g.rns).abs() < 1e-12, "{} vs {}", inc.rns, g.rns);
                assert!(
                    (inc.r - g.r).abs() < 1e-12
                        && (inc.n - g.n).abs() < 1e-12
                        && (inc.s - g.s).abs() < 1e-12
                );
            }
        }
    }

    /// N is the conditional self-information of As given Ae on a fixed scale: a landing
    /// probability O gives N ≈ −log₂ O / 40, so O = 2⁻²⁰ gives ½ and O = 1 gives 0; an As no
    /// walk reaches (O = 0) gets −log₂(ε π(As)) / 40, larger the rarer As is within A.
    #[test]
    fn novelty_scale() {
        assert!((novelty(2f64.powi(-20), 0.0) - 0.5).abs() < 1e-6);
        assert!(novelty(1.0, 1.0).abs() < 1e-9);
        assert!(novelty(0.3, 0.5) < novelty(0.01, 0.5) && novelty(0.01, 0.5) < novelty(1e-5, 0.5));
        // Unreachable: ordered by rarity, never tied at the cap, above any well-reached As.
        let (common, rare) = (novelty(0.0, 0.5), novelty(0.0, 0.001));
        assert!(common < rare && rare < 1.0, "{common} {rare}");
        assert!((common - (21.0 / 40.0)).abs() < 1e-6, "{common}");
        assert!(novelty(1e-4, 0.5) < common);
        // The mix moves a well-reached As by less than 0.01 bit.
        assert!((novelty_bits(2f64.powi(-12), 1.0) - 12.0).abs() < 0.01);
    }

    /// N moves the right way on a hand-made block: a candidate the walks from Ae reach often
    /// has a low N, one they never reach has N = 1; moving mass of a row of Ae between its
    /// return-to-self entry and everything else (keeping where the leaving walks go) does not
    /// change N.
    #[test]
    fn novelty_follows_walk_mass_not_self_mass() {
        let mut s = slice(4, 9);
        let n = 4;
        s.marginals = vec![0.25; 4];
        s.block = vec![0.0; n * n];
        // Ae = {0, 3}: leaving walks go to 1 (and to each other), never to 2.
        s.block[0] = 0.5; // self
        s.block[1] = 0.3;
        s.block[3] = 0.02;
        s.block[3 * n + 3] = 0.6;
        s.block[3 * n + 1] = 0.2;
        s.block[3 * n] = 0.02;
        for r in 1..3 {
            s.block[r * n + r] = 0.5;
        }
        let sc = Scorer::new(&s).unwrap();
        let w = Weights::default();
        let t = sc.score_candidates(&[0, 3], &[1, 2], &w).unwrap();
        assert!(t[0].n < 0.05, "reached candidate: N = {}", t[0].n);
        // Never reached: only the background draw, π(2) = ⅓ within A = {0, 3, 2}.
        assert!(
            (t[1].n - novelty(0.0, 1.0 / 3.0)).abs() < 1e-12,
            "never reached candidate: N = {}",
            t[1].n
        );
        assert!(t[1].n > 0.5);
        let mut more_self = s.clone();
        // Row 0: self mass 0.5 → 0.9, the leaving mass 0.5 → 0.1 with the same proportions.
        more_self.block[0] = 0.9;
        more_self.block[1] = 0.06;
        more_self.block[3] = 0.004;
        let t2 = Scorer::new(&more_self)
            .unwrap()
            .score_candidates(&[0, 3], &[1, 2], &w)
            .unwrap();
        assert!((t2[0].n - t[0].n).abs() < 1e-12 && (t2[1].n - t[1].n).abs() < 1e-12);
        // With one existing answer N still informs (no closed-world normalisation).
        assert!(sc.score(&[0], &[1], &w).unwrap().n < sc.score(&[0], &[2], &w).unwrap().n);
    }

    /// S compares where the walks that leave their start land (docs/RNS.md "Surprise"): how
    /// much of a row's mass returns to its start — for an Ae row or a candidate's row — does
    /// not move S, on any of the three paths; the paper's S (return-to-self kept) does move.
    #[test]
    fn surprise_follows_walk_mass_not_self_mass() {
        let n = 5;
        let mut s = slice(n, 11);
        s.marginals = vec![0.2; n];
        s.block = vec![0.0; n * n];
        let rows: [[f64; 5]; 5] = [
            [0.50, 0.20, 0.05, 0.10, 0.05],
            [0.10, 0.60, 0.05, 0.15, 0.02],
            [0.01, 0.02, 0.70, 0.05, 0.10],
            [0.12, 0.08, 0.04, 0.40, 0.20],
            [0.03, 0.01, 0.09, 0.15, 0.55],
        ];
        for (r, row) in rows.iter().enumerate() {
            s.block[r * n..(r + 1) * n].copy_from_slice(row);
        }
        // Rows 0 (in Ae) and 2 (a candidate): self mass raised, leaving mass scaled down in
        // the same proportions.
        let mut more_self = s.clone();
        for (r, self_mass) in [(0, 0.9), (2, 0.95)] {
            let leave_old = 1.0 - rows[r][r];
            for (c, &v) in rows[r].iter().enumerate() {
                more_self.block[r * n + c] = if c == r {
                    self_mass
                } else {
                    v * (1.0 - self_mass) / leave_old
                };
            }
        }
        let w = Weights::new(0.2, 0.3, 0.5).unwrap();
        let (a, b) = (Scorer::new(&s).unwrap(), Scorer::new(&more_self).unwrap());
        // δ is added after the rows are rescaled, so equality holds up to δ-sized terms.
        let close = |x: f64, y: f64| (x - y).abs() < 1e-7;
        for (ae, as_) in [(&[0, 1][..], &[2][..]), (&[0, 3, 4][..], &[1, 2][..])] {
            let (da, db) = (
                a.details(ae, as_, &w).unwrap(),
                b.details(ae, as_, &w).unwrap(),
            );
            assert!(
                close(da.terms.s, db.terms.s),
                "{} vs {}",
                da.terms.s,
                db.terms.s
            );
            assert!(
                (da.s_paper - db.s_paper).abs() > 1e-3,
                "the paper's S keeps self mass"
            );
        }
        let (ca, cb) = (
            a.score_candidates(&[0, 1], &[2, 3, 4], &w).unwrap(),
            b.score_candidates(&[0, 1], &[2, 3, 4], &w).unwrap(),
        );
        for (x, y) in ca.iter().zip(&cb) {
            assert!(close(x.s, y.s));
        }
        let all: Vec<usize> = (0..n).collect();
        let (ga, gb) = (
            a.greedy_swap(&all, Some(&[2]), &w).unwrap(),
            b.greedy_swap(&all, Some(&[2]), &w).unwrap(),
        );
        assert!(close(ga.initial.s, gb.initial.s));
    }

    #[test]
    fn rank_breaks_ties_deterministically() {
        let t = |rns: f64, r: f64| Terms {
            r,
            n: 0.5,
            s: 0.1,
            rns,
        };
        let terms = [t(0.2, 0.1), t(0.3, 0.1), t(0.2, 0.4), t(0.2, 0.1)];
        assert_eq!(rank(&terms, &[9, 5, 7, 3]), vec![1, 2, 3, 0]);
        let w = Weights::new(0.0, 0.0, 0.0).unwrap();
        assert_eq!(w.combine(0.3, 0.2, 0.1), 0.0);
        assert_eq!(
            Weights::new(1.0, 1.0, 2.0).unwrap().normalised(),
            Weights {
                alpha: 0.25,
                beta: 0.25,
                gamma: 0.5
            }
        );
        assert!((Weights::new(1.0, 1.0, 1.0).unwrap().combine(1.0, 1.0, 1.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn errors_are_reported() {
        let s = slice(5, 1);
        let sc = Scorer::new(&s).unwrap();
        let w = Weights::default();
        assert_eq!(sc.score(&[], &[1], &w), Err(RnsError::EmptyExisting));
        assert_eq!(sc.score(&[0], &[], &w), Err(RnsError::EmptySerendipity));
        assert_eq!(
            sc.score(&[0, 1], &[1], &w),
            Err(RnsError::Overlap(s.ids[1]))
        );
        assert_eq!(sc.score(&[0], &[9], &w), Err(RnsError::OutOfRange(9)));
        let mut bad = s.clone();
        bad.marginals[2] = 0.0;
        assert!(matches!(Scorer::new(&bad), Err(RnsError::BadSlice(_))));
        assert!(Weights::parse("1,2").is_err());
        assert_eq!(
            Weights::parse("1, 2,3").unwrap(),
            Weights {
                alpha: 1.0,
                beta: 2.0,
                gamma: 3.0
            }
        );
    }

    #[test]
    fn anchors_stay_in_ae_and_do_not_count_towards_b() {
        let s = slice(16, 5);
        let sc = Scorer::new(&s).unwrap();
        let w = Weights::new(-0.3, 0.7, 0.0).unwrap();
        let ac: Vec<usize> = (0..11).collect();
        let anchors = [11, 13, 15];
        let res = sc.greedy_swap_anchored(&ac, &anchors, None, &w).unwrap();
        // b = ⌊0.2 · 11⌋ = 2 of the candidates; the anchors are in neither output list.
        assert_eq!(res.serendipity.len(), budget(ac.len()));
        assert_eq!(res.existing.len() + res.serendipity.len(), ac.len());
        assert!(res.serendipity.iter().all(|p| ac.contains(p)));
        assert!(res.existing.iter().all(|p| ac.contains(p)));
        // The terms are those of Ae = the candidates left + the anchors.
        let mut ae = res.existing.clone();
        ae.extend(anchors);
        let g = sc.score(&ae, &res.serendipity, &w).unwrap();
        assert!((g.rns - res.terms.rns).abs() < 1e-12);
        // No single swap of a candidate pair improves it (a local optimum over Ac only).
        for &i in &res.serendipity {
            for &j in &res.existing {
                let mut as2: Vec<usize> = res
                    .serendipity
                    .iter()
                    .map(|&x| if x == i { j } else { x })
                    .collect();
                as2.sort();
                let mut ae2: Vec<usize> = ae.iter().map(|&x| if x == j { i } else { x }).collect();
                ae2.sort();
                assert!(sc.score(&ae2, &as2, &w).unwrap().rns <= res.terms.rns + 1e-12);
            }
        }
        // Without anchors it is the plain swap; an anchor cannot start in As or be a candidate.
        assert_eq!(
            sc.greedy_swap_anchored(&ac, &[], None, &w).unwrap(),
            sc.greedy_swap(&ac, None, &w).unwrap()
        );
        assert!(sc
            .greedy_swap_anchored(&ac, &anchors, Some(&[0, 11]), &w)
            .is_err());
        assert!(sc.greedy_swap_anchored(&ac, &[3], None, &w).is_err());
    }

    #[test]
    fn slice_round_trips_through_json() {
        let s = slice(6, 2);
        let json = serde_json::to_string(&s).unwrap();
        let back: Slice = serde_json::from_str(&json).unwrap();
        assert_eq!(s, back);
    }
}
