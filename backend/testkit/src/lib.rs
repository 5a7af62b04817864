//! Test set-up shared by the integration tests of the workspace (`[dev-dependencies]` only;
//! never a dependency of a shipped crate). Each piece exists once here:
//! - [`data`] — where the shared data is (`$SERENQA_DATA`, else `../shared/data` above the
//!   workspace) and the skip-or-fail rule when it is missing (under `CI` a missing resource
//!   fails the test; elsewhere the test prints `SKIPPED: …` and passes).
//! - [`redis`] — [`TestRedis`]: `$SERENQA_REDIS_URL`, else a throwaway `redis-server`, with
//!   one flushed database per test.
//! - [`serve`] — the `serenqa` binary as a child process: [`serve::cli`],
//!   [`serve::import_hetionet`] (a tiny graph snapshot), [`serve::spawn_serve`] (`serenqa
//!   serve` on a free loopback port; base URL and a handle that kills it on drop).
//! - [`http`] — plain HTTP calls that return the status instead of failing on 4xx/5xx, and
//!   the assertions on the API's one-line JSON error replies (`{"code", "message"}`).
//!
//! The server binary's path is passed in (`env!("CARGO_BIN_EXE_serenqa")` exists only in the
//! server crate's tests), so this crate does not depend on the server crate.
#![allow(clippy::unwrap_used)] // test set-up may panic on a broken fixture

pub mod data;
pub mod http;
pub mod redis;
pub mod serve;

pub use redis::TestRedis;
