//! Plausibility of every compound × disease pair, in the manner of Project Rephetio
//! (Himmelstein et al. 2017): metapath features, a regularised logistic regression, and an
//! honest cross-validation.
//!
//! Data flows `Graph` → [`metagraph`] (steps, metapaths) → [`dwpc`] (degree-weighted walk
//! counts by sparse products, with an [`dwpc::EdgeMask`] of edges that do not exist) →
//! [`features`] (transformed DWPC + degree prior per pair) → [`learn`] (L2 logistic regression,
//! L-BFGS on `nalgebra`) → [`model`] (the full run: every pair's score, percentiles, top
//! metapaths) → [`store`] (cached file) ; [`eval`] (k-fold CV with the held-out edges masked
//! before any feature is computed).
//!
//! Choices, and why:
//! - **Metapaths**: every metapath Compound → Disease of length 2–4 over the graph's own
//!   metagraph (Hetionet: 1,000-odd), with at most one treatment step (`CtD`/`CpD`, crossed
//!   disease→compound), kept when ≥ 0.1 % of all pairs have a walk of it. Rephetio used 1,206
//!   metapaths up to length 4 and also let treatment edges inside paths; the single-step limit
//!   is what makes the removal of a pair's own edge from its walks exact (see [`dwpc`]).
//! - **Walks instead of simple paths**, by sparse products from the disease side (rows =
//!   diseases, dense `|D| × |X|` blocks); repeated-node walks are counted (documented in
//!   [`dwpc`]), the pair's own treatment edge never is.
//! - **Prior**: degree features (treatment degrees without the pair's own edge, and every other
//!   metaedge degree of c and d) instead of Rephetio's permutation prior.
//! - **Learner**: L2 logistic regression (λ = 1e-3 on the mean log-loss, standardised
//!   features), negatives subsampled 20 per positive with a seed, the subsampling undone in
//!   the intercept so scores are on the scale of all pairs.
//!
//! **Invariant:** no fold's features read its held-out edges — they are computed on the
//! masked graph, bit-identical to a graph rebuilt without them (`tests/no_leakage.rs`).
//! Everything is deterministic: rows of a product are independent, reductions run in a fixed
//! order, and the only randomness is the seeded fold assignment and negative sample.

pub mod dwpc;
pub mod eval;
pub mod explain;
pub mod features;
pub mod learn;
pub mod metagraph;
pub mod model;
pub mod store;

pub use model::{predict, PredictParams, Predictions};

#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    #[error("{0}")]
    Task(String),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Graph(#[from] serenqa_graph::GraphError),
}
