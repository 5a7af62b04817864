//! The serendipity model of serenqa: everything RNS needs from the graph, computed once per
//! graph and stored in the snapshot; per request, only a small *slice* is built. The RNS math
//! itself lives in `serenqa_shared::rns` (no I/O, also compiled to wasm32 for the browser).
//!
//! # Code map
//! - [`transition`] — P1 from edge multiplicities and P3 = Σₕ αₕP1ʰ (αₕ = h/6): P3ᵀx as three
//!   parallel pull passes over the CSR arrays; the exact block P3[A][A] by sparse propagation
//!   meeting in the middle (never a V×V matrix, never a 2-hop frontier).
//! - [`reorder`] — a merged copy of the walk lists, nodes grouped by type and hubs first, used
//!   by the whole-graph passes so the per-edge gathers hit cache (sorted lists).
//! - `segmented` (private) — the long lists cut into cache-sized source windows for the
//!   marginals' passes on graphs above 2²⁰ nodes; `gather` (private) — the gather kernel.
//! - [`marginals`] — Algorithm 2 (damped iteration, λ = 0.85, ε = 1e-10 by default), fused
//!   passes, iteration count and final residual reported; plus the bandwidth floor used by
//!   the benchmark.
//! - [`embeddings`] — the [`embeddings::Embedder`] interface and training-free FastRP-style
//!   propagation embeddings (d = 64 by default, deterministic by seed).
//! - [`slice`] — slices of answer sets (embeddings, marginals, block), a bounded block cache,
//!   id resolution and the score / partition / slice services behind the CLI and HTTP API.
//! - [`store`] — `model.*` snapshot sections next to `graph.*` in one file.
//! - [`bench`] — the benchmark as library functions (`serenqa-model-bench` binary).
//! - [`weights`] — the shipped RNS weights (`rns-weights.json`, fitted by `serenqa rns fit`)
//!   with their provenance.
//!
//! Data flow: `Graph` → [`Model::compute`] (marginals + embeddings) → snapshot; at query time
//! ids → [`slice::build_slice`] → `Scorer` (shared) → R, N, S, RNS / greedy swap.
//!
//! # Modelling choices (where `docs/RNS.md` leaves one)
//! - **Walk direction**: one global switch for the whole graph (`directed = false` walks
//!   M + Mᵀ); per-relation directedness flags of the graph are not used by the model.
//! - **Self-loops in the data** count like other edges (M + Mᵀ counts a stored i→i edge twice).
//! - **Marginal iteration** is capped at 1000 iterations; hitting the cap is reported
//!   (`converged = false`), never silently accepted.
//! - **Embeddings**: Â = W + I, D = rowsum(Â) (so D ≥ 1), X₀ keyed by the node's
//!   `Type::identifier` (stable under renumbering), hop weights (0, 1, 1, 1), one final row
//!   normalisation (no per-hop normalisation: RNS.md's formula). Stored as f32.
//! - **Slices** keep the request order; the block cache is keyed by the sorted set.
//! - **Initial partition** of the greedy swap: the b candidates c with the highest
//!   RNS(Ac∖{c}, {c}) (each scored alone against the rest, A = Ac), ties by node index.
//! - **Greedy swap acceptance**: a swap must gain more than 1e-12·(|α|+|β|+|γ|) (rounding
//!   noise) and the recomputed exact score must rise, so RNS never falls and the loop ends.
//! - **Request limits**: at most [`slice::MAX_ENTITIES`] entities per slice / score / partition.
//!
//! # The paper's axioms (Section 3.2) against these definitions
//! Tested precisely in `tests/axioms.rs`. Two of the paper's loose statements do not hold
//! literally, each shown by a counterexample test there:
//! - "A*s remains optimal if R, N or S is scaled by a constant": scaling *one* term changes
//!   the trade-off and can change the optimum; what holds is scaling all weights by c > 0.
//! - "RNS is only determined by the embeddings of entities in A; no information from entities
//!   outside A can affect it": the block P3[A][A] counts 2- and 3-hop paths through nodes
//!   outside A, so an edge between two outside nodes can change RNS. What holds is that RNS is
//!   a function of the slice (embeddings, marginals and P3 block of A) alone.
//!
//! Novelty is re-derived (docs/RNS.md "Novelty"): the paper's clipped MI was 0 — N = 1 — for
//! almost every answer on Hetionet, because T rows are dominated by the block's diagonal
//! (3-hop walks returning to their start). N is now the conditional self-information of As
//! given Ae with the return-to-self mass excluded, on [0, 1]; R is 1 − mean distance; RNS
//! normalises the weights. The default weights are [`weights::shipped`] (fitted by
//! `serenqa rns fit`), overridden on a server by an expert calibration.
//!
//! # Performance (measured on the shared 2-core machine, load average 10–14 from other jobs,
//! so absolute times are inflated; `bench/README.md` has the commands)
//! - Hetionet (47k nodes, 2.0M edges): marginals 59 iterations in 0.63 s (floor 0.27 s,
//!   ratio 2.3), embeddings 0.8 s, P3 block |A| = 50 median 16 ms (Compounds) / 33 ms
//!   (uniform), greedy swap |Ac| = 100 median 16 / 34 ms, `serenqa score` with |A| = 50:
//!   0.26 s wall including loading the snapshot.
//! - 1/10 CKG scale (1.5M nodes, 20M edges), same exported arrays: scipy.sparse 15.2–15.9 s
//!   vs ours 8.6–17.6 s for the same 40 iterations (ratio scipy/ours 0.9–1.7 across runs;
//!   marginals agree to 2e-16), ours 6–11× its floor.
//! - CKG scale (15.4M nodes, 201.7M edges, synthetic): marginals 40 iterations in 372 s,
//!   plus 27 s reordering, against a 20 s floor (ratio 18: random gathers into a 123 MB
//!   vector with ~0.7 of a core) — now, idle, 22–25 s by shifted Lanczos with windows
//!   (38 passes, 3.0–3.5× the power iteration's floor; `bench/README.md`); embeddings 411 s; peak RSS 12.6 GB; P3 block |A| = 50
//!   median 24–37 ms; greedy swap |Ac| = 100 median 41–66 ms (min 31 ms); RNS(Ae, {c}) for
//!   200 candidates 0.09 ms.

pub mod bench;
pub mod discover;
pub mod embeddings;
mod gather;
pub mod marginals;
pub mod mechanism;
pub mod reorder;
mod segmented;
pub mod slice;
pub mod store;
pub mod transition;
pub mod weights;

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, GraphError};
use serenqa_shared::rns::RnsError;

use embeddings::{Embedder, EmbeddingInfo, Embeddings, FastRp};
use marginals::{MarginalParams, MarginalStats};
use serenqa_graph::Section;
use transition::Transition;

/// How to compute a model. The default walks both directions with RNS.md's parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    pub directed: bool,
    pub marginals: MarginalParams,
    pub embedding: FastRp,
}

/// Stored description of a computed model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelParams {
    pub directed: bool,
    pub marginal_params: MarginalParams,
    pub marginal_stats: MarginalStats,
    pub embedding: EmbeddingInfo,
    /// Size of the graph the model belongs to.
    pub nodes: u64,
    pub edges: u64,
}

impl ModelParams {
    /// The configuration that computed this model, to compute the same kind of model on
    /// another graph (the benchmark's G = Gc − R of each partition).
    pub fn config(&self) -> ModelConfig {
        ModelConfig {
            directed: self.directed,
            marginals: self.marginal_params,
            embedding: FastRp {
                dim: self.embedding.dim,
                seed: self.embedding.seed,
                hop_weights: self.embedding.hop_weights.clone(),
                directed: self.embedding.directed,
            },
        }
    }
}

/// Precomputed per-graph model: marginals and embeddings.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub params: ModelParams,
    /// |V| stationary probabilities; memory-mapped when read from a snapshot.
    pub marginals: Section<f64>,
    pub embeddings: Embeddings,
}

impl Model {
    /// Computes marginals and embeddings (the embedding config's `directed` follows `cfg`).
    pub fn compute(g: &Graph, cfg: &ModelConfig, progress: bool) -> Model {
        let t = Transition::new(g, cfg.directed);
        let fastrp = FastRp {
            directed: cfg.directed,
            ..cfg.embedding.clone()
        };
        let (marginals, stats, emb) = if cfg.directed {
            let (m, s) = marginals::compute(&t, &cfg.marginals, progress);
            (m, s, fastrp.embed(g, progress))
        } else {
            // Undirected: pull lists and row lists are the same lists; build them once.
            let start = std::time::Instant::now();
            let sp = serenqa_graph::progress::spinner("reordering the walk graph", progress);
            let w = reorder::WalkCsr::build(&t, reorder::Lists::Pull);
            sp.finish_and_clear();
            let build = start.elapsed().as_secs_f64();
            let (m, mut s) = marginals::compute_on(&w, &cfg.marginals, progress);
            s.seconds += build;
            (m, s, fastrp.embed_on(g, &w, progress))
        };
        Model::from_parts(g, cfg.directed, cfg.marginals, stats, marginals, emb)
    }

    /// A model from given parts (e.g. a trained embedding).
    pub fn from_parts(
        g: &Graph,
        directed: bool,
        marginal_params: MarginalParams,
        marginal_stats: MarginalStats,
        marginals: Vec<f64>,
        embeddings: Embeddings,
    ) -> Model {
        Model {
            params: ModelParams {
                directed,
                marginal_params,
                marginal_stats,
                embedding: embeddings.info.clone(),
                nodes: g.node_count() as u64,
                edges: g.edge_count() as u64,
            },
            marginals: marginals.into(),
            embeddings,
        }
    }
}

/// Every error of the model layer, one line each. [`ModelError::code`] gives the stable API
/// code; [`ModelError::is_client_error`] tells HTTP whether it is a 4xx.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("unknown entity '{0}' (use Type::identifier, e.g. Compound::DB00188)")]
    UnknownNode(String),
    #[error("identifier '{0}' is ambiguous: it names {names}; use Type::identifier", names = .1.join(", "))]
    AmbiguousNode(String, Vec<String>),
    #[error("the {0} set is empty")]
    EmptySet(&'static str),
    #[error("entity {0} is given more than once (the sets must be disjoint)")]
    Overlap(String),
    #[error("too many entities: {got} (at most {max})")]
    TooLarge { got: usize, max: usize },
    #[error("the snapshot has no precomputed model; run `serenqa precompute` first")]
    NoModel,
    #[error("{0}")]
    Rns(#[from] RnsError),
    #[error("{0}")]
    Graph(#[from] GraphError),
    #[error("{0}")]
    Invalid(String),
}

impl ModelError {
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::UnknownNode(_) => "unknown_node",
            ModelError::AmbiguousNode(..) => "ambiguous_node",
            ModelError::EmptySet(_) => "empty_set",
            ModelError::Overlap(_) => "overlapping_sets",
            ModelError::TooLarge { .. } => "too_large",
            ModelError::NoModel => "no_model",
            ModelError::Rns(RnsError::EmptyExisting | RnsError::EmptySerendipity) => "empty_set",
            ModelError::Rns(RnsError::Overlap(_)) => "overlapping_sets",
            ModelError::Rns(_) => "bad_request",
            ModelError::Graph(_) => "internal",
            ModelError::Invalid(_) => "bad_request",
        }
    }
    pub fn is_client_error(&self) -> bool {
        !matches!(self, ModelError::Graph(_) | ModelError::NoModel)
    }
}
