//! T3 serendipity exploration: Algorithm 3 (LLM-enhanced beam search), with any mix of LLM
//! and offline agents per decision.
//!
//! Per level: for each frontier node u, the relation agent picks ≤ m relation types among
//! those at u; the edges of u over them (to unvisited nodes) are scored — edge confidence
//! where the graph has one (with `graph_score` on, else the graph score [`graph_score`]),
//! min-max normalised per relation ([`normalise_per_relation`]) — and the best k per frontier
//! node are kept (a uniform seeded sample when no edge at the node has a score, as on
//! Hetionet, which has no edge confidences); the node agent picks ≤ n
//! (beam width) targets; paths Π are extended; the continue agent writes the level's
//! description (context for later prompts, "with summary" mode only) and decides whether to
//! go on. Afterwards the summariser writes one summary per level reached (Σ), except a level
//! whose continue decision was NO: the walk stops there before summarising it.
//!
//! Exploration starts from all of Ae at once (one beam, Π\[r\] = \[\] for every root): the
//! paper's single root r0 generalised to an answer set. It runs on G = Gc − R of the
//! partition (removed edges are invisible). Predicted serendipity set = the leaves of Π
//! (explored nodes with no explored child).
//!
//! Edges come from an [`EdgeSource`](serenqa_edges::EdgeSource) (the in-memory graph or the
//! Redis edge store), one batched lookup per level for the whole frontier; node labels, types
//! and the model always come from the in-memory graph. Both edge stores give identical
//! explorations.
//!
//! # Layout
//! - `types` — settings ([`ExploreConfig`]), inputs ([`Task`]), steps, level traces and the
//!   result ([`Exploration`]); the one-line path format ([`path_line`]).
//! - `env` — what an exploration reads ([`Env`]: graph, edge store, G = Gc − R), type-level
//!   walk statistics ([`TypeStats`]) and edge scoring ([`graph_score`],
//!   [`normalise_per_relation`]).
//! - `beam` — Algorithm 3 itself ([`explore`]). Every decision goes through the agents of
//!   [`ExploreAgents`] (traits in [`crate::agents`]); this module never asks whether an agent
//!   is a model or offline.

mod beam;
mod env;
mod types;

pub use crate::agents::ExploreAgents;
pub use crate::llm::CallTrace;
pub use beam::explore;
pub use env::{graph_score, normalise_per_relation, Env, Hop, TypeStats};
pub use types::{node_label, path_line, Exploration, ExploreConfig, LevelTrace, Step, Task};
