//! serenqa-edges: where serendipity exploration (T3) reads edges from.
//!
//! Exploration only ever asks one question of the graph's edges: *which edges touch these
//! nodes?* ([`EdgeSource::incident_many`]). Two stores answer it with identical results:
//! - [`MemoryEdges`] — the in-memory CSR store of `serenqa-graph` (one process holds the graph);
//! - [`RedisEdges`] — the Redis edge store of the paper's Appendix D.2, on a single Redis or a
//!   Redis Cluster, filled by [`redis_store::export`] (many processes or machines share one
//!   edge store; the graph's edges need not fit in each worker's memory).
//!
//! # Code map
//! - [`keys`] — the key scheme (`adj:{id}:Type`, `rel:{src id}:Type:REL:tgt id:Type`, the
//!   meta key) and the binary adjacency record codec. Pure.
//! - [`memory`] — [`MemoryEdges`] over a [`Graph`].
//! - [`redis_store`] — [`RedisTarget`] (URL parsing), [`RedisEdges`] (batched `MGET` lookups,
//!   cluster routing by the client), export and a full consistency check against a graph.
//! - [`bench`] — neighbour lookups per second: in memory, Redis sequential, Redis batched.
//!
//! # Architecture invariant
//! For the same graph, every [`EdgeSource`] returns the same [`Incident`]s in the same order
//! (the CSR order: out-edges by (relation, neighbour), then in-edges). Exploration's
//! tie-breaks depend on that order, so this is what makes T3 results store-independent; the
//! Redis store checks the graph's content hash before answering anything.

use std::future::Future;
use std::pin::Pin;

use serenqa_graph::{EdgeId, NodeId, RelId};

pub mod bench;
pub mod keys;
pub mod memory;
pub mod redis_store;

pub use memory::MemoryEdges;
pub use redis_store::{RedisConn, RedisEdges, RedisTarget};

/// One edge as seen from one of its ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Incident {
    pub edge: EdgeId,
    pub rel: RelId,
    /// The other end (the node itself for a self-loop).
    pub other: NodeId,
    /// Walked in the stored direction (the asking node is the edge's source).
    pub forward: bool,
    /// Edge confidence, where the graph has one.
    pub score: Option<f32>,
    /// Degree of the other end in the whole graph (exploration's graph score needs it; the
    /// Redis store keeps it in the record so a lookup is one round trip).
    pub other_degree: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    #[error("{0}")]
    Redis(String),
    #[error("edge store {store}: {message}")]
    Store { store: String, message: String },
}

pub type EdgeResult<T> = Result<T, EdgeError>;

/// A boxed future, so the trait stays object-safe (`&dyn EdgeSource`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A store that answers "which edges touch these nodes?".
pub trait EdgeSource: Send + Sync {
    /// Incident edges of each node (same order as `nodes`), each list in CSR order. One
    /// round trip per call for remote stores: callers batch a whole frontier.
    fn incident_many<'a>(
        &'a self,
        nodes: &'a [NodeId],
    ) -> BoxFuture<'a, EdgeResult<Vec<Vec<Incident>>>>;

    /// Where the edges come from, for traces and logs (`memory`, `redis://127.0.0.1:6379`).
    fn describe(&self) -> String;
}
