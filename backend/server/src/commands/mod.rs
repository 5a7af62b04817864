//! One module per subcommand.

pub mod annotate;
pub mod bench;
pub mod cypher;
pub mod data;
pub mod discover;
pub mod edges;
pub mod eval;
pub mod import;
mod live_server;
pub mod models;
pub mod perf;
pub mod perf_annotate;
pub mod perf_ckg;
pub mod perf_hostile;
pub mod perf_hostile_clients;
pub mod perf_queue;
pub mod precompute;
pub mod predict;
pub mod predict_topk;
pub mod queue;
pub mod rns;
pub mod score;
pub mod serve;
pub mod stats;
pub mod synth;
pub mod worker;
