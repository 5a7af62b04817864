//! Agents that need no LLM, so the whole pipeline runs on a fresh machine with no key. They
//! are real baselines with documented rules:
//! - [`retrieval`] — entity linking against node names + a grammar for the question
//!   patterns → Cypher, execution-guided.
//! - [`understand`] — everyday clinical questions: a relation/type lexicon (data file),
//!   entity linking with prefix and fuzzy matching, one-hop, chain and intersection
//!   readings, a plain-words interpretation and "did you mean" alternatives.
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
pub mod summary;
pub mod understand;
pub mod understand_eval;

/// SplitMix64: our own generator so sampled results never change with a dependency upgrade.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Fisher–Yates with [`SplitMix`].
pub fn shuffle<T>(xs: &mut [T], rng: &mut SplitMix) {
    for i in (1..xs.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        xs.swap(i, j);
    }
}
