//! Agents that need no LLM, so the whole pipeline runs on a fresh machine with no key. They
//! are real baselines with documented rules:
//! - [`retrieval`] — entity linking against node names + a grammar for the question
//!   patterns → Cypher, execution-guided.
//! - [`understand`] — everyday clinical questions: a relation/type lexicon (data file),
//!   entity linking with prefix and fuzzy matching, one-hop, chain and intersection
//!   readings, a plain-words interpretation and "did you mean" alternatives.
//! - [`schema_check`] — a question written from a loaded graph's schema, asked and checked
//!   against its edges (Ask on a non-Hetionet graph).
//! - [`explorer`] — relations by type-level reachability of the answer type and rarity;
//!   nodes by marginal RNS gain RNS(Ae, {c}) for answer-typed candidates (when the model is
//!   precomputed) and by reachability × edge score otherwise; stop when half the beam
//!   already holds answer-typed candidates.
//! - [`summary`] — a template summariser that states only facts of the explored subgraph,
//!   naming entities with their ids.
//! - [`judge`] — code-based PROXIES for the LLM judges (faithfulness, comprehensiveness,
//!   relevance), always labelled `proxy` in traces and tables.

pub mod explorer;
pub mod judge;
pub mod retrieval;
pub mod schema_check;
mod strtable;
pub mod summary;
pub mod understand;
pub mod understand_eval;
