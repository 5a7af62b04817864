//! serenqa-benchmark: the serendipity-aware benchmark builder (paper §4, Appendix A).
//!
//! Data flow: `Graph` (Gc) → [`generate`] (questions with Ac, checked by the Cypher
//! executor) → [`partition`] (ensemble / RNS-guided / expert) → [`removal`] (R per
//! strategy, G = Gc − R as a view) → [`paths`] (ground truth on G) → [`records`] (JSONL +
//! manifest) → [`stats`] (Tables 1 and 4). [`build`] runs the whole pipeline; the CLI is
//! `serenqa bench build|stats|show|questionnaire`.
//!
//! # Code map
//! - [`query`] — structured graph queries (the `graph_query` of a record), their direct
//!   evaluation with witnesses and a work budget, and [`query::View`] = Gc minus an
//!   [`query::EdgeMask`] (R is a bitset over edge ids; the graph is never copied).
//! - [`cypher`] — the Cypher text of a query in the loaded graph's schema (labels, relation
//!   names, `id` properties; one `MATCH`, the A.3 `COLLECT(DISTINCT {id, name})` return).
//! - [`exec`] — runs that Cypher with `serenqa-cypher`; [`exec::MaskedGraph`] is the overlay
//!   store that hides R, so the executor answers on G as well.
//! - [`patterns`] — the nine pattern types (1.1 … 4.3) as shapes, Table 4 quotas, and
//!   instance-first sampling along real edges.
//! - [`phrasing`] — relation phrases in both directions (Hetionet's 24 by hand, a verb-based
//!   fallback otherwise), type nouns, entity mentions, 2–4 templates per type, and the
//!   placeholder / doubled-word check.
//! - [`generate`] — seeded sampling to the quotas, 2–20 answers, size shaping towards a mean
//!   of ≈ 4, duplicate and phrasing rejection; answers re-checked by the executor.
//! - [`category`] — the annotation category ("class:subclass") from the graph (anatomy of
//!   the focus disease on Hetionet; the rule is in the module docs).
//! - [`partition`] — the [`partition::Scorer`] trait (LLM or offline), the offline
//!   obviousness scorers (not LLMs), the LLM prompt and reply parser, the ensemble, the
//!   RNS-guided greedy swap (via `serenqa_shared::rns`), and reading the expert-rankings file (its type lives in `serenqa_shared::annotate`, shared with the annotation store that writes it).
//! - [`removal`] — global edge removal with greedy admission, verification and drop counts.
//! - [`paths`] — ≤ 20 shortest ≤ 3-hop paths from Ae to As on G, in the A.3 string form.
//! - [`records`] — KGQA and serendipity records (A.3 shape), manifest, graph hash, JSONL.
//! - [`build`] — the pipeline and the writer (byte-identical output for the same inputs).
//! - [`stats`] — reading a build back; Tables 1 and 4; one question for `bench show`.
//! - [`questionnaire`] — the real SerenQA questionnaire (read in place) and its entity
//!   linking to the loaded graph, with an overlap report.
//! - [`agreement`] — RNS against the questionnaire's LLM-ensemble ranks: linking with
//!   per-batch link rates, top-b / Spearman / Kendall per question, baselines, bootstrap CIs,
//!   the weight fit on batches 1–10 and the held-out table on 11–14, the terms' spread.
//! - [`perf`] — the nine pattern types as Cypher on a Hetionet-shaped graph (anchors picked
//!   deterministically) and their latency through `serenqa-cypher` (`serenqa perf cypher`);
//!   the engine itself knows no relation names.
//! - [`rng`] — our own SplitMix64, so outputs never change with a dependency upgrade.
//!
//! # Known limits
//! - Offline, the "LLM ensemble" is two graph-statistics scorers, labelled "offline proxy"
//!   (manifest `ensemble`, the stats, the evaluation tables, the leaderboard). With
//!   `serenqa bench build --models FILE` the language models of `serenqa_pipeline::ensemble`
//!   score instead; models dropped for a question are listed in `ensemble_dropped`.
//! - Questions of the real questionnaire are not built into benchmarks (they are CKG
//!   questions); their authors' LLM-ensemble ranks are used by [`agreement`].
//! - On Hetionet about 10% (ensemble) to 15% (RNS-guided) of the questions cannot keep their
//!   partition under any removal without breaking another question's existing answers; they
//!   are dropped from that strategy and counted in the manifest.

pub mod agreement;
pub mod build;
pub mod category;
pub mod cypher;
pub mod exec;
pub mod generate;
pub mod partition;
pub mod paths;
pub mod patterns;
pub mod perf;
pub mod phrasing;
pub mod query;
pub mod questionnaire;
pub mod records;
pub mod removal;
pub mod rng;
pub mod stats;
