//! serenqa-benchmark: the serendipity-aware benchmark builder (paper §4, Appendix A).
//!
//! # Code map
//! - [`query`] — structured graph queries (the `graph_query` of a record), their direct
//!   evaluation with witnesses, and [`query::View`] = graph minus an [`query::EdgeMask`].
//! - [`cypher`] — the Cypher text of a query in the loaded graph's schema.
//! - [`patterns`] — the nine pattern types (1.1 … 4.3) as shapes; instance-first sampling.
//! - [`phrasing`] — relation phrases in both directions, type nouns, entity mentions,
//!   several sentence templates per type, and the placeholder / doubled-word check.
//! - [`generate`] — seeded sampling to per-type quotas (Table 4 proportions), 2–20 answers,
//!   size shaping towards a mean of ≈ 4.
//! - [`category`] — the annotation category ("class:subclass") derived from the graph.
//! - [`rng`] — our own SplitMix64 so outputs never change with a dependency upgrade.
pub mod query;
pub mod cypher;
pub mod patterns;
pub mod phrasing;
pub mod generate;
pub mod category;
pub mod rng;
pub mod partition;
pub mod removal;
pub mod paths;
pub mod records;
pub mod build;
