//! serenqa-store: everything the expert annotation app keeps and computes.
//!
//! # Code map
//! - [`types`] — the records (users, invites, sessions, batches, questions, candidates,
//!   responses, runs, calibrations, batch assignments) shared by the repository, the server
//!   and the CLI. Candidate ids ascend in name order within a question (import and schema
//!   migration 3), so the ids annotators see never reveal the questionnaire's LLM order.
//! - [`repo`] — the [`repo::Repo`] trait: the only way the rest of the program touches
//!   storage, so a server database could replace SQLite behind it.
//! - [`sqlite`] — the embedded default: SQLite in WAL mode with `synchronous = FULL` (an
//!   acknowledged write is on disk), foreign keys on, schema
//!   migrations by `PRAGMA user_version`, one connection behind a mutex (writes are short;
//!   SQLite serialises writers anyway).
//! - [`auth`] — argon2id password hashes, random tokens, and the SHA-256 digests under which
//!   session, invite and password-reset tokens are stored (a leaked database holds no usable
//!   token).
//! - batch assignment (in [`repo::Repo`]): a batch assigned to annotators is theirs only (an
//!   unassigned one is open to all), with an overlap target k per question and coverage
//!   (submitted rankings per question).
//! - shortlists (in [`repo::Repo`], schema migration 5): the candidates a clinician keeps,
//!   per user, bounded by a cap checked in the same transaction as the insert.
//! - [`limiter`] — sign-in back-off: exponential delays per e-mail, per network (IPv6 by /64)
//!   and per pair, instead of a lock-out; bounded memory; the clock is passed in.
//! - [`ranking`] — validation of a submitted ranking: known candidates, each once, ranks a
//!   proper (dense, ties allowed) order; average ranks for statistics.
//! - [`agreement`] — Kendall's W with tie correction and Krippendorff's α (ordinal metric).
//! - [`aggregate`] — expert partitions (mean rank → top 20 % as As) in the expert-rankings
//!   file format of the benchmark builder; per-question and per-batch agreement; export of
//!   all responses as JSON and CSV.
//! - [`questionnaire`] — importer of the real SerenQA questionnaire (14 batches) and of
//!   generated benchmark records (batched by category).
//! - [`calibrate`] — grid search on the weight simplex for the RNS weights whose RNS-guided
//!   partitions agree best with the experts; Pearson correlations between strategies.
//! - [`runs`] — importer of pipeline runs (`runs/<id>/manifest.json`, `aggregate.json`) into
//!   the results table the leaderboard reads.
pub mod aggregate;
pub mod agreement;
pub mod auth;
pub mod calibrate;
pub mod limiter;
pub mod questionnaire;
pub mod ranking;
pub mod repo;
pub mod runs;
pub mod sqlite;
pub mod types;

pub use repo::{RankingFilter, Repo, StoreError};
pub use sqlite::SqliteRepo;
pub use types::*;

/// Seconds since the Unix epoch (all timestamps in the store).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
