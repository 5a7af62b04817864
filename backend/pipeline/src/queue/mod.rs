//! Distributed evaluation over Redis Streams: `serenqa eval --queue redis://…` (the
//! coordinator) and `serenqa worker --queue redis://…` (any number of workers, on any
//! machines that have the same graph).
//!
//! The unit of work is the work item of a local run ([`run::Item`](crate::run::Item): T1 of a question, T2+T3
//! of a (question, partition, summary mode)); workers execute it with the same
//! [`run::run_item`](crate::run::run_item) as the local executor, so a queue run's traces and tables equal a local
//! run's.
//!
//! # Keys
//! Everything of a run lives under the hash tag `{<run_id>}`, so in a Redis Cluster all keys
//! of a run share one slot and the Lua scripts below touch one slot only.
//!
//! | key | type | content |
//! |---|---|---|
//! | `serenqa:runs` | set | ids of the active runs (workers poll it) |
//! | `serenqa:workers` | hash | worker name → heartbeat JSON (`pid`, `host`, `concurrency`, `in_flight`, `unix_ms`, `interval_ms`) |
//! | `serenqa:run:{R}:spec` | string | [`RunSpec`] JSON: what a worker needs to rebuild the run's [`run::Ctx`](crate::run::Ctx) |
//! | `serenqa:run:{R}:files` | hash | benchmark file name → contents (`kgqa.jsonl`, `serendipity.jsonl`, `removed-*.tsv`, `manifest.json`) |
//! | `serenqa:run:{R}:tasks` | stream | one entry `{key: <item key>}` per work item; consumer group `workers` |
//! | `serenqa:run:{R}:enqueued` | set | item keys ever added to `tasks` |
//! | `serenqa:run:{R}:results` | hash | item key → trace line (a [`run::T1Record`](crate::run::T1Record) / [`run::T3Record`](crate::run::T3Record) JSON) |
//! | `serenqa:run:{R}:done` | stream | one entry `{key}` per result, in completion order (the coordinator tails it) |
//! | `serenqa:run:{R}:retries` | hash | item key → deliveries that ended in an LLM outage (not counted as crashes) |
//! | `serenqa:run:{R}:llm` | hash | worker name → its LLM accounting for this run ([`StatsSnapshot`](crate::llm::StatsSnapshot) JSON) |
//! | `serenqa:run:{R}:refused` | hash | worker name → why it refused the run (graph, prompts, models or model mismatch, unreadable spec) |
//!
//! One stream and one consumer group per run (not one global stream): a run's entries,
//! results and acknowledgements then stay in its slot, and a finished run's keys can expire
//! together.
//!
//! # Lifecycle
//! 1. The coordinator plans the run exactly as a local run ([`run::plan`](crate::run::plan): run id, run
//!    directory, manifest, what the traces already hold), writes `spec` and `files`, creates
//!    the group (`XGROUP CREATE … MKSTREAM`), then adds the run to `serenqa:runs`. A spec
//!    already in Redis under the same id must be identical, else the coordinator refuses.
//! 2. It appends every result already in Redis but not in the traces (replaying `done` from
//!    the start), then enqueues each item that is neither in the traces nor in `enqueued`
//!    (script `ENQUEUE`: `SADD enqueued` and, only when that returned 1, `XADD tasks`, in one
//!    atomic step).
//! 3. Workers poll `serenqa:runs`, rebuild a run's context once from `spec` + `files`
//!    (refusing, with the reason in `refused`, when their graph hash, model presence, prompt
//!    hash or models hash differ, or the spec does not parse), then take entries: first `XAUTOCLAIM` of entries idle longer than
//!    `--reclaim-after` (their worker died), then `XREADGROUP … >`. Each item runs with
//!    [`run::run_item`](crate::run::run_item); its line is stored by script `COMPLETE` (`HSETNX results`, `XADD done`
//!    only when the field was new, `XACK`), atomically.
//! 4. While an item runs, its worker renews the entry every `reclaim-after / 3` (script
//!    `KEEPALIVE`: `XCLAIM … 0 <id> JUSTID` to itself, only if it still owns the entry), so a
//!    slow but alive worker is never robbed.
//! 5. The coordinator tails `done`, appends each new line to `t1.jsonl` / `t3.jsonl` and, once
//!    every planned key is in the traces, writes the aggregates exactly like a local run,
//!    removes the run from `serenqa:runs` and lets the run's keys expire after 7 days.
//!
//! # Invariants
//! - A task is enqueued at most once per run: `enqueued` is checked and extended in the same
//!   script as the `XADD`, so a restarted coordinator never duplicates an entry.
//! - A task's result is written at most once: `HSETNX`. A task run twice (a reclaimed entry
//!   whose first worker was only slow) stores the first result; the second is dropped.
//! - A line is appended to the traces exactly once: the coordinator's set of keys is seeded
//!   from the trace files (a torn last line is cut and re-fetched from `results`).
//! - Infrastructure failures are never results: an item during which an LLM endpoint stayed
//!   unavailable after the client's retries ([`llm::track_unavailable`](crate::llm::track_unavailable)) is left pending and
//!   retried after `--reclaim-after`; Redis errors leave it pending too. Per-question problems
//!   (bad Cypher, unparsable replies, unresolvable ids) are results with `error` / `issues`, as
//!   in a local run.
//! - A poison task (its workers crash or are killed every time) is recorded as an error record
//!   once it has been delivered more than `max_deliveries` (default 5) times, not counting
//!   deliveries that ended in an LLM outage, so the run still completes.
//! - A worker on another graph refuses the run (`graph_hash` of the spec), never mixes results.
//! - Workers never build an LLM client from Redis content: the spec names models and carries
//!   [`ModelsFile::config_hash`](crate::llm::ModelsFile::config_hash) ([`ModelsRef`]); endpoints and API-key variable names come
//!   from each worker's own models file (`serenqa worker --models`), and a worker whose file
//!   hashes differently refuses the run.
//!
//! # Code map
//! Each file uses only those above it in this list (no import cycles):
//! - `error.rs` — [`QueueError`], the typed error of every queue operation (its Display is
//!   the one-line message the CLI prints).
//! - `keys.rs` — the key schema ([`Keys`], [`RUNS_KEY`], [`WORKERS_KEY`], [`GROUP`]) and
//!   what the coordinator stores under `spec` ([`RunSpec`], [`ModelsRef`], [`models_mismatch`]).
//! - `redis.rs` — [`Redis`], a reconnecting connection (server or cluster) with typed errors;
//!   [`LocalRedis`], a throwaway `redis-server` for tests and `serenqa perf queue`.
//! - `stream.rs` — [`RunQueue`], the stream operations of one run, and the Lua scripts
//!   (`ENQUEUE`, `COMPLETE`, `KEEPALIVE`) that make the invariants below atomic.
//! - `status.rs` — heartbeats and progress ([`Heartbeat`], [`live_workers`], [`queue_status`]).
//! - `coordinator.rs` — [`run_coordinator`] (`serenqa eval --queue`).
//! - `delivery.rs` — what a worker is given ([`WorkerConfig`], [`WorkerGraph`], [`Shutdown`])
//!   and reports ([`WorkerReport`]); a worker's side of one run (rebuild its context or refuse it) and of
//!   one delivery (run the item, store its result once, or leave it pending).
//! - `worker.rs` — [`Worker`] / [`run_worker`] (`serenqa worker`): the poll loop, the keeper
//!   task (keepalive + heartbeat), draining on stop.
//!
//! Where to add: a new key of a run → `keys.rs` ([`Keys::all`] too, so it expires); a new
//! atomic stream operation → a script and a method in `stream.rs`; a new refusal reason →
//! `delivery.rs` (`prepare_run`); a new failure → a [`QueueError`] variant.
//! Redis test fixtures (`TestRedis`) live in the `serenqa-testkit` crate.

mod coordinator;
mod delivery;
mod error;
mod keys;
mod redis;
mod status;
mod stream;
mod worker;

pub use coordinator::run_coordinator;
pub use delivery::{default_worker_name, Shutdown, WorkerConfig, WorkerGraph, WorkerReport};
pub use error::{QueueError, QueueResult};
pub use keys::{
    models_mismatch, Keys, ModelsRef, RunSpec, FINISHED_TTL_SECS, GROUP, MAX_DELIVERIES, RUNS_KEY,
    SPEC_FORMAT, WORKERS_KEY,
};
pub use redis::{redact, LocalRedis, Redis};
pub use status::{live_workers, queue_status, Heartbeat, RunStatus};
pub use stream::{Delivery, RunQueue};
pub use worker::{run_worker, Worker};
