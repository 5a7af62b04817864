//! Distributed evaluation over Redis Streams: `serenqa eval --queue redis://…` (the
//! coordinator) and `serenqa worker --queue redis://…` (any number of workers, on any
//! machines that have the same graph).
//!
//! The unit of work is the work item of a local run ([`run::Item`]: T1 of a question, T2+T3
//! of a (question, partition, summary mode)); workers execute it with the same
//! [`run::run_item`] as the local executor, so a queue run's traces and tables equal a local
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
//! | `serenqa:run:{R}:spec` | string | [`RunSpec`] JSON: what a worker needs to rebuild the run's [`run::Ctx`] |
//! | `serenqa:run:{R}:files` | hash | benchmark file name → contents (`kgqa.jsonl`, `serendipity.jsonl`, `removed-*.tsv`, `manifest.json`) |
//! | `serenqa:run:{R}:tasks` | stream | one entry `{key: <item key>}` per work item; consumer group `workers` |
//! | `serenqa:run:{R}:enqueued` | set | item keys ever added to `tasks` |
//! | `serenqa:run:{R}:results` | hash | item key → trace line (a [`run::T1Record`] / [`run::T3Record`] JSON) |
//! | `serenqa:run:{R}:done` | stream | one entry `{key}` per result, in completion order (the coordinator tails it) |
//! | `serenqa:run:{R}:retries` | hash | item key → deliveries that ended in an LLM outage (not counted as crashes) |
//! | `serenqa:run:{R}:llm` | hash | worker name → its LLM accounting for this run ([`StatsSnapshot`] JSON) |
//! | `serenqa:run:{R}:refused` | hash | worker name → why it refused the run (graph, prompts, models or model mismatch, unreadable spec) |
//!
//! One stream and one consumer group per run (not one global stream): a run's entries,
//! results and acknowledgements then stay in its slot, and a finished run's keys can expire
//! together.
//!
//! # Lifecycle
//! 1. The coordinator plans the run exactly as a local run ([`run::plan`]: run id, run
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
//!    [`run::run_item`]; its line is stored by script `COMPLETE` (`HSETNX results`, `XADD done`
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
//!   unavailable after the client's retries ([`llm::track_unavailable`]) is left pending and
//!   retried after `--reclaim-after`; Redis errors leave it pending too. Per-question problems
//!   (bad Cypher, unparsable replies, unresolvable ids) are results with `error` / `issues`, as
//!   in a local run.
//! - A poison task (its workers crash or are killed every time) is recorded as an error record
//!   once it has been delivered more than `max_deliveries` (default 5) times, not counting
//!   deliveries that ended in an LLM outage, so the run still completes.
//! - A worker on another graph refuses the run (`graph_hash` of the spec), never mixes results.
//! - Workers never build an LLM client from Redis content: the spec names models and carries
//!   [`ModelsFile::config_hash`] ([`ModelsRef`]); endpoints and API-key variable names come
//!   from each worker's own models file (`serenqa worker --models`), and a worker whose file
//!   hashes differently refuses the run.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::MultiProgress;
use redis::streams::{
    StreamAutoClaimReply, StreamPendingCountReply, StreamPendingReply, StreamRangeReply,
    StreamReadReply,
};
use redis::{FromRedisValue, RedisError};
use serde::{Deserialize, Serialize};
use serenqa_edges::{RedisConn, RedisTarget};
use serenqa_graph::Graph;
use serenqa_model::Model;
use tokio::sync::watch;

use crate::bench::Benchmark;
use crate::explore::ExploreConfig;
use crate::llm::{self, LlmClient, ModelsFile, Roles, StatsSnapshot};
use crate::run::{
    self, Ctx, EvalConfig, Item, ItemResult, QueueInfo, RunOutcome, T1Record, T3Record, TaskKind,
    TraceKind, Writer,
};

/// The set of active run ids.
pub const RUNS_KEY: &str = "serenqa:runs";
/// Worker heartbeats.
pub const WORKERS_KEY: &str = "serenqa:workers";
/// The consumer group of every run's task stream.
pub const GROUP: &str = "workers";
/// Format tag of [`RunSpec`]; a worker refuses any other.
pub const SPEC_FORMAT: &str = "serenqa-run-spec/2";
/// Deliveries after which a task counts as poison (default of `--max-deliveries`).
pub const MAX_DELIVERIES: usize = 5;
/// How long a finished run's keys stay in Redis.
pub const FINISHED_TTL_SECS: u64 = 7 * 24 * 3600;

/// The keys of one run (see the module docs).
#[derive(Clone, Debug)]
pub struct Keys {
    run: String,
}

impl Keys {
    pub fn new(run_id: &str) -> Keys {
        Keys {
            run: run_id.to_string(),
        }
    }
    fn k(&self, what: &str) -> String {
        format!("serenqa:run:{{{}}}:{what}", self.run)
    }
    pub fn spec(&self) -> String {
        self.k("spec")
    }
    pub fn files(&self) -> String {
        self.k("files")
    }
    pub fn tasks(&self) -> String {
        self.k("tasks")
    }
    pub fn enqueued(&self) -> String {
        self.k("enqueued")
    }
    pub fn results(&self) -> String {
        self.k("results")
    }
    pub fn done(&self) -> String {
        self.k("done")
    }
    pub fn retries(&self) -> String {
        self.k("retries")
    }
    pub fn llm(&self) -> String {
        self.k("llm")
    }
    pub fn refused(&self) -> String {
        self.k("refused")
    }
    /// Every key of the run (for expiry).
    pub fn all(&self) -> Vec<String> {
        vec![
            self.spec(),
            self.files(),
            self.tasks(),
            self.enqueued(),
            self.results(),
            self.done(),
            self.retries(),
            self.llm(),
            self.refused(),
        ]
    }
}

/// Everything a worker needs to rebuild a run's [`Ctx`] (besides the graph and the model,
/// which it loads itself, and the benchmark files, stored beside the spec).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub format: String,
    pub run_id: String,
    /// `serenqa_benchmark::records::graph_hash` of the coordinator's graph.
    pub graph_hash: String,
    /// Whether the coordinator had the serendipity model (workers must match).
    pub has_model: bool,
    /// [`Benchmark::hash`] of the files in `files`.
    pub bench_hash: String,
    pub prompts_hash: String,
    /// Which models the run uses, by name and hash only: endpoints and key variables never
    /// travel through Redis (whoever can write there could otherwise send a worker's keys
    /// anywhere). Each worker builds its clients from its own `--models` file and refuses the
    /// run when that file's [`ModelsFile::config_hash`] differs.
    pub models: ModelsRef,
    pub tasks: BTreeSet<TaskKind>,
    pub partitions: Vec<String>,
    pub explore: ExploreConfig,
    /// Work items of the run.
    pub items: usize,
}

/// The models of a run as the spec names them: model names, the role mapping, and the
/// [`ModelsFile::config_hash`] of the coordinator's models file. Nothing else is accepted
/// (a spec with, say, a `base_url` here does not parse and the worker refuses the run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsRef {
    pub names: Vec<String>,
    pub roles: BTreeMap<String, String>,
    pub hash: String,
}

impl ModelsRef {
    pub fn of(f: &ModelsFile) -> ModelsRef {
        ModelsRef {
            names: f.models.iter().map(|m| m.name.clone()).collect(),
            roles: f.roles.clone(),
            hash: f.config_hash(),
        }
    }
}

/// Why a worker with models file `mine` must refuse a run whose spec names `theirs`, if it must.
pub fn models_mismatch(run_id: &str, theirs: &ModelsRef, mine: &ModelsFile) -> Option<String> {
    let ours = ModelsRef::of(mine);
    if ours.hash == theirs.hash {
        return None;
    }
    let names = |n: &[String]| {
        if n.is_empty() {
            "none (offline)".to_string()
        } else {
            n.join(", ")
        }
    };
    Some(format!(
        "run {run_id}: the coordinator's models (hash {}, models {}) differ from this worker's models file (hash {}, models {}): start the worker with `--models` naming the same models, base URLs, model ids, temperature, max_tokens and roles",
        theirs.hash,
        names(&theirs.names),
        ours.hash,
        names(&ours.names)
    ))
}

/// One-line description of a Redis error, with a hint for the common cases.
fn redis_error(url: &str, e: &RedisError) -> String {
    if e.is_connection_refusal() {
        format!("{url}: connection refused — is redis-server running?")
    } else if e.is_timeout() {
        format!("{url}: timed out — is the Redis server reachable?")
    } else {
        let mut s = e.to_string().replace('\n', " ");
        let mut src = std::error::Error::source(e);
        while let Some(c) = src {
            s.push_str(": ");
            s.push_str(&c.to_string());
            src = c.source();
        }
        format!("{url}: {s}")
    }
}

/// `redis://user:secret@host` → `redis://***@host`.
pub fn redact(url: &str) -> String {
    serenqa_edges::redis_store::redact(url)
}

/// A Redis connection (one server, `redis://…`, or a Redis Cluster, `redis+cluster://…`) that
/// reconnects on the next command after a connection error. Every key of a run shares the
/// run's hash tag, so each script runs on one shard of a cluster.
pub struct Redis {
    url: String,
    target: RedisTarget,
    conn: tokio::sync::Mutex<Option<RedisConn>>,
}

impl Redis {
    /// Connects and pings; a one-line error when the server is not there.
    pub async fn connect(url: &str) -> Result<Arc<Redis>, String> {
        let shown = redact(url);
        let target = RedisTarget::parse(url)?;
        let r = Arc::new(Redis {
            url: shown,
            target,
            conn: tokio::sync::Mutex::new(None),
        });
        let pong: String = r.query(&redis::cmd("PING")).await?;
        if pong != "PONG" {
            return Err(format!("{}: unexpected reply to PING: {pong:?}", r.url));
        }
        Ok(r)
    }

    /// The URL without credentials.
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn conn(&self) -> Result<RedisConn, String> {
        let mut g = self.conn.lock().await;
        if let Some(c) = g.as_ref() {
            return Ok(c.clone());
        }
        let c = RedisConn::connect(&self.target)
            .await
            .map_err(|e| e.to_string())?;
        *g = Some(c.clone());
        Ok(c)
    }

    async fn failed(&self, e: RedisError) -> String {
        if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_unrecoverable_error()
            || e.is_timeout()
        {
            *self.conn.lock().await = None;
        }
        redis_error(&self.url, &e)
    }

    /// Runs one command.
    pub async fn query<T: FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, String> {
        let mut c = self.conn().await?;
        match c.query::<T>(cmd).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failed(e).await),
        }
    }

    /// Runs a Lua script (EVALSHA, loading it on NOSCRIPT).
    pub async fn script<T: FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[String],
        args: &[String],
    ) -> Result<T, String> {
        let mut c = self.conn().await?;
        let mut inv = script.prepare_invoke();
        for k in keys {
            inv.key(k);
        }
        for a in args {
            inv.arg(a);
        }
        match c.invoke::<T>(&inv).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failed(e).await),
        }
    }
}

const ENQUEUE_LUA: &str = r#"
local n = 0
for _, k in ipairs(ARGV) do
  if redis.call('SADD', KEYS[1], k) == 1 then
    redis.call('XADD', KEYS[2], '*', 'key', k)
    n = n + 1
  end
end
return n
"#;

const COMPLETE_LUA: &str = r#"
local new = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
if new == 1 then
  redis.call('XADD', KEYS[2], '*', 'key', ARGV[1])
end
redis.call('XACK', KEYS[3], ARGV[3], ARGV[4])
return new
"#;

const KEEPALIVE_LUA: &str = r#"
local lost = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if #p == 1 then
    if p[1][2] == ARGV[2] then
      redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'JUSTID')
    else
      lost[#lost + 1] = id
    end
  end
end
return lost
"#;

/// One delivery of a task stream entry to a consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Stream entry id.
    pub id: String,
    /// Work item key.
    pub key: String,
    /// Times the entry was delivered, this delivery included.
    pub deliveries: usize,
}

/// The queue operations of one run.
#[derive(Clone)]
pub struct RunQueue {
    pub redis: Arc<Redis>,
    pub keys: Keys,
    enqueue: Arc<redis::Script>,
    complete: Arc<redis::Script>,
    keepalive: Arc<redis::Script>,
}

fn entry_key(e: &redis::streams::StreamId) -> Option<String> {
    e.get::<String>("key")
}

impl RunQueue {
    pub fn new(redis: Arc<Redis>, run_id: &str) -> RunQueue {
        RunQueue {
            redis,
            keys: Keys::new(run_id),
            enqueue: Arc::new(redis::Script::new(ENQUEUE_LUA)),
            complete: Arc::new(redis::Script::new(COMPLETE_LUA)),
            keepalive: Arc::new(redis::Script::new(KEEPALIVE_LUA)),
        }
    }

    pub fn run_id(&self) -> &str {
        &self.keys.run
    }

    /// Creates the consumer group (and the stream); an existing group is kept.
    pub async fn create_group(&self) -> Result<(), String> {
        let r: Result<String, String> = self
            .redis
            .query(
                redis::cmd("XGROUP")
                    .arg("CREATE")
                    .arg(self.keys.tasks())
                    .arg(GROUP)
                    .arg("0")
                    .arg("MKSTREAM"),
            )
            .await;
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.contains("BUSYGROUP") => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Enqueues the keys not enqueued before; returns how many were new.
    pub async fn enqueue(&self, keys: &[String]) -> Result<usize, String> {
        let mut n = 0;
        for chunk in keys.chunks(500) {
            let added: usize = self
                .redis
                .script(
                    &self.enqueue,
                    &[self.keys.enqueued(), self.keys.tasks()],
                    chunk,
                )
                .await?;
            n += added;
        }
        Ok(n)
    }

    /// Up to `count` entries never delivered before.
    pub async fn read_new(&self, consumer: &str, count: usize) -> Result<Vec<Delivery>, String> {
        let reply: Option<StreamReadReply> = self
            .redis
            .query(
                redis::cmd("XREADGROUP")
                    .arg("GROUP")
                    .arg(GROUP)
                    .arg(consumer)
                    .arg("COUNT")
                    .arg(count.max(1))
                    .arg("STREAMS")
                    .arg(self.keys.tasks())
                    .arg(">"),
            )
            .await?;
        let mut out = Vec::new();
        for k in reply.map(|r| r.keys).unwrap_or_default() {
            for e in k.ids {
                if let Some(key) = entry_key(&e) {
                    out.push(Delivery {
                        id: e.id.clone(),
                        key,
                        deliveries: 1,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Claims up to `count` entries idle for at least `min_idle` (their consumer died or gave
    /// them up), with their delivery counts.
    pub async fn reclaim(
        &self,
        consumer: &str,
        min_idle: Duration,
        count: usize,
    ) -> Result<Vec<Delivery>, String> {
        // XAUTOCLAIM scans at most 10 × COUNT pending entries per call: follow its cursor
        // through the whole pending list (bounded), so idle entries behind many live ones
        // are found too.
        let mut claimed = Vec::new();
        let mut cursor = "0-0".to_string();
        for _ in 0..1000 {
            let reply: StreamAutoClaimReply = self
                .redis
                .query(
                    redis::cmd("XAUTOCLAIM")
                        .arg(self.keys.tasks())
                        .arg(GROUP)
                        .arg(consumer)
                        .arg(min_idle.as_millis() as u64)
                        .arg(&cursor)
                        .arg("COUNT")
                        .arg(count.saturating_sub(claimed.len()).max(1)),
                )
                .await?;
            claimed.extend(reply.claimed);
            cursor = reply.next_stream_id;
            if claimed.len() >= count || cursor == "0-0" || cursor.is_empty() {
                break;
            }
        }
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let counts = self.pending_of(consumer).await?;
        Ok(claimed
            .iter()
            .filter_map(|e| {
                Some(Delivery {
                    id: e.id.clone(),
                    key: entry_key(e)?,
                    deliveries: counts.get(&e.id).copied().unwrap_or(1),
                })
            })
            .collect())
    }

    /// Entry id → delivery count of the entries pending for `consumer`.
    pub async fn pending_of(&self, consumer: &str) -> Result<HashMap<String, usize>, String> {
        let p: StreamPendingCountReply = self
            .redis
            .query(
                redis::cmd("XPENDING")
                    .arg(self.keys.tasks())
                    .arg(GROUP)
                    .arg("-")
                    .arg("+")
                    .arg(10_000)
                    .arg(consumer),
            )
            .await?;
        Ok(p.ids
            .into_iter()
            .map(|x| (x.id, x.times_delivered))
            .collect())
    }

    /// Pending entries per consumer (delivered, not acknowledged).
    pub async fn pending_by_consumer(&self) -> Result<BTreeMap<String, usize>, String> {
        let p: StreamPendingReply = self
            .redis
            .query(redis::cmd("XPENDING").arg(self.keys.tasks()).arg(GROUP))
            .await?;
        Ok(match p {
            StreamPendingReply::Data(d) => d
                .consumers
                .into_iter()
                .map(|c| (c.name, c.pending))
                .collect(),
            _ => BTreeMap::new(),
        })
    }

    /// Renews `ids` for `consumer` (resets their idle time without counting a delivery);
    /// returns those another consumer owns now (acknowledged ones are simply skipped).
    pub async fn keepalive(&self, consumer: &str, ids: &[String]) -> Result<Vec<String>, String> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec![GROUP.to_string(), consumer.to_string()];
        args.extend(ids.iter().cloned());
        self.redis
            .script(&self.keepalive, &[self.keys.tasks()], &args)
            .await
    }

    /// Stores the result of `key` unless one is there (`HSETNX`), announces it on `done`
    /// and acknowledges entry `id`, atomically. True when this call stored the result.
    pub async fn complete(&self, id: &str, key: &str, line: &str) -> Result<bool, String> {
        let n: i64 = self
            .redis
            .script(
                &self.complete,
                &[self.keys.results(), self.keys.done(), self.keys.tasks()],
                &[
                    key.to_string(),
                    line.to_string(),
                    GROUP.to_string(),
                    id.to_string(),
                ],
            )
            .await?;
        Ok(n == 1)
    }

    pub async fn ack(&self, id: &str) -> Result<(), String> {
        let _: i64 = self
            .redis
            .query(redis::cmd("XACK").arg(self.keys.tasks()).arg(GROUP).arg(id))
            .await?;
        Ok(())
    }

    pub async fn has_result(&self, key: &str) -> Result<bool, String> {
        self.redis
            .query(redis::cmd("HEXISTS").arg(self.keys.results()).arg(key))
            .await
    }

    pub async fn result_count(&self) -> Result<usize, String> {
        self.redis
            .query(redis::cmd("HLEN").arg(self.keys.results()))
            .await
    }

    pub async fn results(&self, keys: &[String]) -> Result<Vec<Option<String>>, String> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.redis
            .query(redis::cmd("HMGET").arg(self.keys.results()).arg(keys))
            .await
    }

    /// Records that a delivery of `key` ended in an LLM outage; returns the count so far.
    pub async fn note_retry(&self, key: &str) -> Result<usize, String> {
        self.redis
            .query(
                redis::cmd("HINCRBY")
                    .arg(self.keys.retries())
                    .arg(key)
                    .arg(1),
            )
            .await
    }

    pub async fn retries(&self, key: &str) -> Result<usize, String> {
        let v: Option<usize> = self
            .redis
            .query(redis::cmd("HGET").arg(self.keys.retries()).arg(key))
            .await?;
        Ok(v.unwrap_or(0))
    }

    /// `done` entries after `after` (exclusive; `0-0` from the start): (entry id, item key).
    pub async fn done_since(
        &self,
        after: &str,
        count: usize,
    ) -> Result<Vec<(String, String)>, String> {
        let r: StreamRangeReply = self
            .redis
            .query(
                redis::cmd("XRANGE")
                    .arg(self.keys.done())
                    .arg(format!("({after}"))
                    .arg("+")
                    .arg("COUNT")
                    .arg(count.max(1)),
            )
            .await?;
        Ok(r.ids
            .iter()
            .map(|e| (e.id.clone(), entry_key(e).unwrap_or_default()))
            .collect())
    }

    /// Entries in the task stream.
    pub async fn task_count(&self) -> Result<usize, String> {
        self.redis
            .query(redis::cmd("XLEN").arg(self.keys.tasks()))
            .await
    }

    pub async fn spec(&self) -> Result<Option<RunSpec>, String> {
        let text: Option<String> = self
            .redis
            .query(redis::cmd("GET").arg(self.keys.spec()))
            .await?;
        match text {
            None => Ok(None),
            Some(t) => serde_json::from_str(&t).map(Some).map_err(|e| format!("run {}: unreadable spec in Redis ({e}): written by another serenqa version, or not by a coordinator", self.keys.run)),
        }
    }

    /// Publishes a run: spec, benchmark files, group, then the run id in `serenqa:runs`.
    pub async fn publish(
        &self,
        spec: &RunSpec,
        files: &BTreeMap<String, String>,
    ) -> Result<(), String> {
        if let Some(old) = self.spec().await? {
            if &old != spec {
                return Err(format!(
                    "run {} is already in Redis with another configuration (graph, benchmark, models or settings differ); choose another --run, or delete its keys ({})",
                    spec.run_id,
                    self.keys.k("*")
                ));
            }
        }
        let text = serde_json::to_string(spec).map_err(|e| e.to_string())?;
        let _: () = self
            .redis
            .query(redis::cmd("SET").arg(self.keys.spec()).arg(text))
            .await?;
        for (name, body) in files {
            let _: i64 = self
                .redis
                .query(
                    redis::cmd("HSET")
                        .arg(self.keys.files())
                        .arg(name)
                        .arg(body),
                )
                .await?;
        }
        // A rerun of a finished run must not lose keys to the expiry set when it finished.
        for k in self.keys.all() {
            let _: i64 = self.redis.query(redis::cmd("PERSIST").arg(k)).await?;
        }
        self.create_group().await?;
        let _: i64 = self
            .redis
            .query(redis::cmd("SADD").arg(RUNS_KEY).arg(&self.keys.run))
            .await?;
        Ok(())
    }

    pub async fn files(&self) -> Result<BTreeMap<String, String>, String> {
        self.redis
            .query(redis::cmd("HGETALL").arg(self.keys.files()))
            .await
    }

    /// Workers that refused the run, and why.
    pub async fn refusals(&self) -> Result<BTreeMap<String, String>, String> {
        self.redis
            .query(redis::cmd("HGETALL").arg(self.keys.refused()))
            .await
    }

    /// Removes the run from the active set and lets its keys expire.
    pub async fn retire(&self) -> Result<(), String> {
        let _: i64 = self
            .redis
            .query(redis::cmd("SREM").arg(RUNS_KEY).arg(&self.keys.run))
            .await?;
        for k in self.keys.all() {
            let _: i64 = self
                .redis
                .query(redis::cmd("EXPIRE").arg(k).arg(FINISHED_TTL_SECS))
                .await?;
        }
        Ok(())
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A worker's heartbeat in `serenqa:workers`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Heartbeat {
    pub pid: u32,
    pub host: String,
    pub concurrency: usize,
    pub in_flight: usize,
    pub unix_ms: u64,
    pub interval_ms: u64,
}

impl Heartbeat {
    /// Seen within three intervals.
    pub fn alive(&self) -> bool {
        now_ms().saturating_sub(self.unix_ms) <= 3 * self.interval_ms.max(1000)
    }
}

/// One active run as `serenqa queue status` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunStatus {
    pub run_id: String,
    /// Work items planned (from the spec; 0 when the spec is gone).
    pub items: usize,
    pub enqueued: usize,
    pub results: usize,
    /// Delivered, not acknowledged, per worker.
    pub pending: BTreeMap<String, usize>,
    pub refused: BTreeMap<String, String>,
}

/// Every active run's progress (runs listed in `serenqa:runs`).
pub async fn queue_status(redis: &Arc<Redis>) -> Result<Vec<RunStatus>, String> {
    let mut ids: Vec<String> = redis.query(redis::cmd("SMEMBERS").arg(RUNS_KEY)).await?;
    ids.sort();
    let mut out = Vec::new();
    for id in ids {
        let q = RunQueue::new(redis.clone(), &id);
        out.push(RunStatus {
            items: q.spec().await.ok().flatten().map(|s| s.items).unwrap_or(0),
            enqueued: q.task_count().await?,
            results: q.result_count().await?,
            pending: q.pending_by_consumer().await.unwrap_or_default(),
            refused: q.refusals().await?,
            run_id: id,
        });
    }
    Ok(out)
}

/// Live workers by name.
pub async fn live_workers(redis: &Redis) -> Result<BTreeMap<String, Heartbeat>, String> {
    let all: BTreeMap<String, String> = redis.query(redis::cmd("HGETALL").arg(WORKERS_KEY)).await?;
    Ok(all
        .into_iter()
        .filter_map(|(k, v)| Some((k, serde_json::from_str::<Heartbeat>(&v).ok()?)))
        .filter(|(_, h)| h.alive())
        .collect())
}

// ───────────────────────────── coordinator ─────────────────────────────

/// Appends results from Redis to the trace files, each key once.
struct Collector {
    done: BTreeSet<String>,
    planned: BTreeSet<String>,
    last: String,
    w1: Writer,
    w3: Writer,
}

impl Collector {
    /// Appends every result announced on `done` since the last call; returns how many lines
    /// were written per trace kind.
    async fn collect(&mut self, q: &RunQueue) -> Result<(u64, u64), String> {
        let (mut n1, mut n3) = (0, 0);
        loop {
            let batch = q.done_since(&self.last, 500).await?;
            let Some((last, _)) = batch.last() else { break };
            self.last = last.clone();
            let mut want: Vec<String> = Vec::new();
            for (_, k) in batch {
                if self.planned.contains(&k) && !self.done.contains(&k) && !want.contains(&k) {
                    want.push(k);
                }
            }
            let lines = q.results(&want).await?;
            for (k, line) in want.into_iter().zip(lines) {
                let line = line.ok_or_else(|| format!("run {}: result of {k} announced but missing in Redis (were the run's keys deleted?)", q.run_id()))?;
                let kind = TraceKind::of_key(&k)
                    .ok_or_else(|| format!("bad work item key {k:?} in Redis"))?;
                // Only well-formed records reach the traces (the aggregation reads them).
                let ok = match kind {
                    TraceKind::T1 => serde_json::from_str::<T1Record>(&line)
                        .map(|r| r.key == k)
                        .map_err(|e| e.to_string()),
                    TraceKind::T3 => serde_json::from_str::<T3Record>(&line)
                        .map(|r| r.key == k)
                        .map_err(|e| e.to_string()),
                };
                match ok {
                    Ok(true) => {}
                    Ok(false) => return Err(format!("run {}: the result stored for {k} is the record of another item", q.run_id())),
                    Err(e) => return Err(format!("run {}: the result stored for {k} is not a trace record ({e}); do the workers run the same serenqa version?", q.run_id())),
                }
                match kind {
                    TraceKind::T1 => {
                        self.w1.write_line(&line, false)?;
                        n1 += 1;
                    }
                    TraceKind::T3 => {
                        self.w3.write_line(&line, false)?;
                        n3 += 1;
                    }
                }
                self.done.insert(k);
            }
        }
        Ok((n1, n3))
    }

    fn finished(&self) -> bool {
        self.planned.iter().all(|k| self.done.contains(k))
    }
}

/// Sums the workers' LLM accounting for a run (`max_in_flight` is summed too: the workers ran
/// side by side).
fn sum_stats(all: &BTreeMap<String, String>) -> StatsSnapshot {
    let mut s = StatsSnapshot::default();
    let mut latency_weighted = 0.0;
    for v in all.values() {
        let Ok(w) = serde_json::from_str::<StatsSnapshot>(v) else {
            continue;
        };
        s.calls += w.calls;
        s.cache_hits += w.cache_hits;
        s.errors += w.errors;
        s.retries += w.retries;
        s.prompt_tokens += w.prompt_tokens;
        s.completion_tokens += w.completion_tokens;
        s.max_in_flight += w.max_in_flight;
        latency_weighted += w.mean_latency_ms * w.calls.saturating_sub(w.cache_hits) as f64;
    }
    let net = s.calls.saturating_sub(s.cache_hits);
    s.mean_latency_ms = if net == 0 {
        0.0
    } else {
        latency_weighted / net as f64
    };
    s
}

/// `serenqa eval --queue URL`: plans the run like a local run, publishes it, enqueues the
/// items not done yet, appends the workers' results to the traces as they arrive and
/// finishes the run exactly like [`run::run_eval`]. Resumable: rerunning the same command
/// (after a crash or ctrl-c) picks up where the traces end, without enqueuing anything twice.
pub async fn run_coordinator(
    cfg: &EvalConfig,
    g: Arc<Graph>,
    model: Option<Arc<Model>>,
    url: &str,
) -> Result<RunOutcome, String> {
    let started = Instant::now();
    let redis = Redis::connect(url).await?;
    let plan = run::plan(cfg, &g)?;
    let q = RunQueue::new(redis.clone(), &plan.run_id);
    let mut files = BTreeMap::new();
    for name in Benchmark::file_names() {
        let p = cfg.bench_dir.join(&name);
        if p.is_file() {
            files.insert(
                name,
                std::fs::read_to_string(&p).map_err(|e| format!("reading {}: {e}", p.display()))?,
            );
        }
    }
    let spec = RunSpec {
        format: SPEC_FORMAT.into(),
        run_id: plan.run_id.clone(),
        graph_hash: plan.graph_hash.clone(),
        has_model: model.is_some(),
        bench_hash: plan.bench.hash.clone(),
        prompts_hash: crate::prompts::prompts_hash(),
        models: ModelsRef::of(&cfg.models),
        tasks: cfg.tasks.clone(),
        partitions: plan.partitions.clone(),
        explore: cfg.explore.clone(),
        items: plan.items.len(),
    };
    q.publish(&spec, &files).await?;

    let mut col = Collector {
        done: plan.done.clone(),
        planned: plan.items.iter().map(|(k, _)| k.clone()).collect(),
        last: "0-0".into(),
        w1: Writer::append(&plan.dir.join(run::T1_FILE))?,
        w3: Writer::append(&plan.dir.join(run::T3_FILE))?,
    };
    let mp = MultiProgress::new();
    if !cfg.progress {
        mp.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let todo: Vec<&String> = plan.todo().map(|(k, _)| k).collect();
    let n_t1 = todo.iter().filter(|k| k.starts_with("t1:")).count() as u64;
    let (bar1, bar3) = run::progress_bars(&mp, n_t1, todo.len() as u64 - n_t1);
    // Results that arrived while no coordinator was watching.
    let (a, b) = col.collect(&q).await?;
    bar1.inc(a);
    bar3.inc(b);
    let missing: Vec<String> = plan
        .items
        .iter()
        .map(|(k, _)| k)
        .filter(|k| !col.done.contains(*k))
        .cloned()
        .collect();
    let added = q.enqueue(&missing).await?;
    if cfg.progress {
        let _ = mp.println(format!(
            "run {} on {}: {} items, {} in the traces, {} newly enqueued, {} already queued",
            plan.run_id,
            redis.url(),
            plan.items.len(),
            col.done.len(),
            added,
            missing.len() - added
        ));
    }

    let mut last_status = Instant::now() - Duration::from_secs(60);
    let mut shown_refusals: BTreeSet<String> = BTreeSet::new();
    let mut last_error: Option<String> = None;
    let mut no_worker_since: Option<Instant> = None;
    while !col.finished() {
        let step = async {
            let (a, b) = col.collect(&q).await?;
            bar1.inc(a);
            bar3.inc(b);
            if last_status.elapsed() >= Duration::from_secs(2) {
                last_status = Instant::now();
                let pending: usize = q.pending_by_consumer().await?.values().sum();
                let workers = live_workers(&redis).await?;
                let refused: BTreeMap<String, String> = redis
                    .query(redis::cmd("HGETALL").arg(q.keys.refused()))
                    .await?;
                for (w, why) in refused {
                    if shown_refusals.insert(w.clone()) {
                        let _ = mp.println(format!("warning: worker {w} refused this run: {why}"));
                        if !cfg.progress {
                            eprintln!("warning: worker {w} refused run {}: {why}", plan.run_id);
                        }
                    }
                }
                let msg = if workers.is_empty() {
                    let since = *no_worker_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_secs(10) {
                        format!(
                            "no live worker: start `serenqa worker --queue {}`",
                            redis.url()
                        )
                    } else {
                        "waiting for workers".to_string()
                    }
                } else {
                    no_worker_since = None;
                    format!("{pending} running on {} workers", workers.len())
                };
                bar3.set_message(msg);
            }
            Ok::<(), String>(())
        };
        match step.await {
            Ok(()) => last_error = None,
            // Redis or the file system failing mid-run: say so once, keep trying (ctrl-c stops;
            // rerunning resumes).
            Err(e) => {
                if last_error.as_deref() != Some(e.as_str()) {
                    eprintln!("warning: {e} (retrying)");
                }
                last_error = Some(e);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        if !col.finished() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    bar1.finish();
    bar3.finish();

    let llm_all: BTreeMap<String, String> =
        redis.query(redis::cmd("HGETALL").arg(q.keys.llm())).await?;
    let mut manifest = plan.manifest.clone();
    manifest.queue = Some(QueueInfo {
        redis: redis.url().to_string(),
        workers: llm_all.keys().cloned().collect(),
    });
    let out = run::finalize(cfg, &plan, manifest, started, Some(sum_stats(&llm_all)))?;
    q.retire().await?;
    Ok(out)
}

// ───────────────────────────── worker ─────────────────────────────

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Consumer name (unique per worker process).
    pub name: String,
    /// Items in flight at most.
    pub concurrency: usize,
    /// Entries idle this long are taken from their (presumably dead) consumer.
    pub reclaim_after: Duration,
    /// Deliveries after which a task is recorded as an error (poison).
    pub max_deliveries: usize,
    /// Exit when no run is active and nothing is in flight, once a run has been seen.
    pub once: bool,
    /// LLM response cache (None: none).
    pub cache_dir: Option<PathBuf>,
    /// This worker's own models (`serenqa worker --models`): the only source of endpoints and
    /// key variables; a run whose spec hashes its models differently is refused.
    pub models: ModelsFile,
    /// Idle polling interval.
    pub poll: Duration,
    /// On the first stop signal, time allowed to in-flight items before they are abandoned.
    pub grace: Duration,
    /// Log lines on stderr.
    pub log: bool,
}

impl WorkerConfig {
    pub fn new(name: &str) -> WorkerConfig {
        WorkerConfig {
            name: name.to_string(),
            concurrency: 8,
            reclaim_after: Duration::from_secs(60),
            max_deliveries: MAX_DELIVERIES,
            once: false,
            cache_dir: None,
            models: ModelsFile::offline(),
            poll: Duration::from_millis(200),
            grace: Duration::from_secs(60),
            log: true,
        }
    }
}

/// A default worker name: `<host>-<pid>`.
pub fn default_worker_name() -> String {
    format!("{}-{}", host_name(), std::process::id())
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "worker".into())
}

/// Stop requests for a worker (from signals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    Run,
    /// Take no new work; finish what is in flight (within the grace time).
    Drain,
    /// Leave now; in-flight entries stay pending and are reclaimed by other workers.
    Abort,
}

/// The graph side of a worker, loaded once at startup.
pub struct WorkerGraph {
    pub g: Arc<Graph>,
    pub model: Option<Arc<Model>>,
    /// Where T3 reads edges (None: the in-memory graph). Results are the same either way, so
    /// this is each worker's own choice, not part of the run spec.
    pub edges: Option<Arc<dyn serenqa_edges::EdgeSource>>,
    /// `serenqa_benchmark::records::graph_hash(&g)`.
    pub graph_hash: String,
}

impl WorkerGraph {
    pub fn new(g: Arc<Graph>, model: Option<Arc<Model>>) -> WorkerGraph {
        let graph_hash = serenqa_benchmark::records::graph_hash(&g);
        WorkerGraph {
            g,
            model,
            graph_hash,
            edges: None,
        }
    }
}

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Results stored by this worker.
    pub completed: usize,
    /// Items whose result another delivery had stored first.
    pub duplicates: usize,
    /// Entries taken over from other (dead) consumers or retried.
    pub reclaimed: usize,
    /// Poison tasks recorded as errors.
    pub poisoned: usize,
    /// Items left pending after an LLM outage.
    pub retried: usize,
    /// Items abandoned (stop signal, Redis failure, panic).
    pub abandoned: usize,
    /// Runs refused (graph / model / prompts mismatch), with the reason.
    pub refused: Vec<String>,
}

struct RunCtx {
    q: RunQueue,
    ctx: Arc<Ctx>,
    client: Option<Arc<LlmClient>>,
}

enum RunState {
    Ready(Arc<RunCtx>),
    Refused,
}

enum Outcome {
    Stored,
    Duplicate,
    Poisoned,
    Retry(String),
    Abandoned(String),
}

/// Prepares a run for this worker: `Ok(Err(reason))` when the worker must refuse it, `Err`
/// for a transient problem (Redis).
async fn prepare_run(
    redis: &Arc<Redis>,
    run_id: &str,
    graph: &WorkerGraph,
    cfg: &WorkerConfig,
) -> Result<Result<Arc<RunCtx>, String>, String> {
    let q = RunQueue::new(redis.clone(), run_id);
    let spec = match q.spec().await {
        Ok(Some(spec)) => spec,
        Ok(None) => {
            return Ok(Err(format!(
                "run {run_id} is active but has no spec in Redis"
            )))
        }
        // Transient (Redis) errors are retried; a spec that does not parse is refused.
        Err(e) if e.contains("unreadable spec") => return Ok(Err(e)),
        Err(e) => return Err(e),
    };
    if spec.format != SPEC_FORMAT {
        return Ok(Err(format!("run {run_id}: spec format {:?}, this worker reads {SPEC_FORMAT:?} (another serenqa version?)", spec.format)));
    }
    if spec.graph_hash != graph.graph_hash {
        return Ok(Err(format!(
            "run {run_id} was planned on graph {}, this worker loaded graph {}: start the worker on the same graph (--graph) as the coordinator",
            spec.graph_hash, graph.graph_hash
        )));
    }
    if spec.has_model != graph.model.is_some() {
        return Ok(Err(format!(
            "run {run_id}: the coordinator {} the serendipity model, this worker {}: use the same snapshot (with `serenqa precompute`)",
            if spec.has_model { "had" } else { "had no" },
            if graph.model.is_some() { "has it" } else { "has none" }
        )));
    }
    let prompts = crate::prompts::prompts_hash();
    if spec.prompts_hash != prompts {
        return Ok(Err(format!("run {run_id}: prompts {} differ from this worker's {prompts} (another serenqa version?)", spec.prompts_hash)));
    }
    let files = q.files().await?;
    let g = graph.g.clone();
    let label = PathBuf::from(format!("redis:{run_id}"));
    let bench = tokio::task::spawn_blocking(move || {
        Benchmark::from_files(&label, &g, |name| {
            files
                .get(name)
                .cloned()
                .ok_or_else(|| format!("benchmark file {name} is not in Redis"))
        })
    })
    .await
    .map_err(|e| format!("loading the benchmark: {e}"))?;
    let bench = match bench {
        Ok(b) => b,
        Err(e) => return Ok(Err(format!("run {run_id}: {e}"))),
    };
    if bench.hash != spec.bench_hash {
        return Ok(Err(format!(
            "run {run_id}: the benchmark files in Redis hash to {}, the spec says {}",
            bench.hash, spec.bench_hash
        )));
    }
    if let Some(why) = models_mismatch(run_id, &spec.models, &cfg.models) {
        return Ok(Err(why));
    }
    // Clients come from this worker's own models file only, never from Redis.
    let client = if cfg.models.models.is_empty() {
        None
    } else {
        match LlmClient::new(&cfg.models, cfg.cache_dir.clone()) {
            Ok(c) => Some(Arc::new(c)),
            Err(e) => return Ok(Err(format!("run {run_id}: {e}"))),
        }
    };
    let roles = Roles::from_file(&cfg.models, client.clone());
    let (g, model, edges) = (graph.g.clone(), graph.model.clone(), graph.edges.clone());
    let ctx = tokio::task::spawn_blocking(move || {
        Ctx::new(
            g,
            model,
            Arc::new(bench),
            roles,
            spec.explore.clone(),
            &spec.partitions,
            &spec.tasks,
        )
        .with_edges(edges)
    })
    .await
    .map_err(|e| format!("building the run context: {e}"))?;
    Ok(Ok(Arc::new(RunCtx {
        q,
        ctx: Arc::new(ctx),
        client,
    })))
}

/// A record for a key that does not even parse (never expected: the benchmark hash is checked).
fn fallback_error_line(key: &str, msg: &str) -> String {
    let qid: u32 = key
        .split(':')
        .nth(1)
        .and_then(|q| q.parse().ok())
        .unwrap_or(0);
    match TraceKind::of_key(key) {
        Some(TraceKind::T1) => serde_json::to_string(&T1Record {
            key: key.into(),
            qid,
            retrieved: crate::retrieval::Retrieved {
                error: Some(msg.into()),
                ..Default::default()
            },
            ..Default::default()
        }),
        _ => serde_json::to_string(&T3Record {
            key: key.into(),
            qid,
            error: Some(msg.into()),
            ..Default::default()
        }),
    }
    .unwrap_or_default()
}

/// Runs one delivery to its end (result stored, or left pending).
async fn process(rc: Arc<RunCtx>, d: Delivery, cfg: WorkerConfig) -> Outcome {
    let q = &rc.q;
    // A result from an earlier delivery whose acknowledgement was lost: acknowledge only.
    match q.has_result(&d.key).await {
        Ok(true) => {
            return match q.ack(&d.id).await {
                Ok(()) => Outcome::Duplicate,
                Err(e) => Outcome::Abandoned(e),
            }
        }
        Ok(false) => {}
        Err(e) => return Outcome::Abandoned(e),
    }
    let item = Item::parse(&d.key, &rc.ctx);
    // Poison: delivered more than `max_deliveries` times, deliveries that ended in an LLM
    // outage not counted. Recorded as an error record so the run completes.
    if d.deliveries > cfg.max_deliveries {
        let outages = match q.retries(&d.key).await {
            Ok(n) => n,
            Err(e) => return Outcome::Abandoned(e),
        };
        let crashes = d.deliveries.saturating_sub(outages);
        if crashes > cfg.max_deliveries {
            let msg = format!(
                "given up after {} deliveries: every worker that ran it crashed or was stopped",
                crashes - 1
            );
            let line = match &item {
                Ok(i) => run::error_item(&rc.ctx, i, &msg)
                    .map(|r| r.line)
                    .unwrap_or_else(|_| fallback_error_line(&d.key, &msg)),
                Err(_) => fallback_error_line(&d.key, &msg),
            };
            return match q.complete(&d.id, &d.key, &line).await {
                Ok(true) => Outcome::Poisoned,
                Ok(false) => Outcome::Duplicate,
                Err(e) => Outcome::Abandoned(e),
            };
        }
    }
    let line: String = match item {
        Err(e) => fallback_error_line(&d.key, &e),
        Ok(item) => {
            let (res, unavailable) = llm::track_unavailable(run::run_item(&rc.ctx, &item)).await;
            if unavailable > 0 {
                let _ = q.note_retry(&d.key).await;
                return Outcome::Retry(format!("{unavailable} LLM call(s) failed with the endpoint unavailable; left pending for a retry after {}s", cfg.reclaim_after.as_secs()));
            }
            match res {
                Ok(ItemResult { line, .. }) => line,
                // Not a result: leave it pending, another delivery redoes it.
                Err(run::ItemError::Unavailable(e)) => {
                    let _ = q.note_retry(&d.key).await;
                    return Outcome::Retry(format!(
                        "edge store unavailable ({e}); left pending for a retry after {}s",
                        cfg.reclaim_after.as_secs()
                    ));
                }
                Err(run::ItemError::Record(e)) => match run::error_item(&rc.ctx, &item, &e) {
                    Ok(r) => r.line,
                    Err(e) => return Outcome::Abandoned(e),
                },
            }
        }
    };
    let mut last = String::new();
    for attempt in 0..4u32 {
        match q.complete(&d.id, &d.key, &line).await {
            Ok(new) => {
                if let Some(c) = &rc.client {
                    if let Ok(text) = serde_json::to_string(&c.stats.snapshot()) {
                        let _: Result<i64, String> = q
                            .redis
                            .query(
                                redis::cmd("HSET")
                                    .arg(q.keys.llm())
                                    .arg(&cfg.name)
                                    .arg(text),
                            )
                            .await;
                    }
                } else {
                    let _: Result<i64, String> = q
                        .redis
                        .query(
                            redis::cmd("HSETNX")
                                .arg(q.keys.llm())
                                .arg(&cfg.name)
                                .arg("{}"),
                        )
                        .await;
                }
                return if new {
                    Outcome::Stored
                } else {
                    Outcome::Duplicate
                };
            }
            Err(e) => {
                last = e;
                tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
            }
        }
    }
    Outcome::Abandoned(last)
}

type InFlight = Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>;

fn lock_ids(m: &InFlight) -> std::sync::MutexGuard<'_, BTreeMap<String, BTreeSet<String>>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `serenqa worker`: takes items of every active run from Redis and runs them until stopped
/// (or, with `once`, until no run is active). Errors only when Redis is unreachable at start.
pub async fn run_worker(
    url: &str,
    cfg: &WorkerConfig,
    graph: WorkerGraph,
    mut shutdown: watch::Receiver<Shutdown>,
) -> Result<WorkerReport, String> {
    let redis = Redis::connect(url).await?;
    let name = cfg.name.clone();
    let log = |msg: String| {
        if cfg.log {
            eprintln!("[worker {name}] {msg}");
        }
    };
    let mut report = WorkerReport::default();
    let in_flight: InFlight = Arc::new(Mutex::new(BTreeMap::new()));
    let interval =
        (cfg.reclaim_after / 3).clamp(Duration::from_millis(100), Duration::from_secs(5));

    // Keepalive + heartbeat.
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let keeper = {
        let (redis, in_flight, name, log_on) =
            (redis.clone(), in_flight.clone(), name.clone(), cfg.log);
        let concurrency = cfg.concurrency;
        tokio::spawn(async move {
            loop {
                let snapshot: Vec<(String, Vec<String>)> = lock_ids(&in_flight)
                    .iter()
                    .map(|(r, ids)| (r.clone(), ids.iter().cloned().collect()))
                    .collect();
                let mut n = 0;
                for (run_id, ids) in snapshot {
                    n += ids.len();
                    match RunQueue::new(redis.clone(), &run_id).keepalive(&name, &ids).await {
                        Ok(lost) if !lost.is_empty() && log_on => eprintln!("[worker {name}] run {run_id}: {} entries were taken over by other workers while running here (their first result wins)", lost.len()),
                        Err(e) if log_on => eprintln!("[worker {name}] keepalive: {e}"),
                        _ => {}
                    }
                }
                let hb = Heartbeat {
                    pid: std::process::id(),
                    host: host_name(),
                    concurrency,
                    in_flight: n,
                    unix_ms: now_ms(),
                    interval_ms: interval.as_millis() as u64,
                };
                if let Ok(text) = serde_json::to_string(&hb) {
                    let _: Result<i64, String> = redis
                        .query(redis::cmd("HSET").arg(WORKERS_KEY).arg(&name).arg(text))
                        .await;
                }
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = stop_rx.changed() => break,
                }
            }
        })
    };

    let mut runs: HashMap<String, RunState> = HashMap::new();
    let mut set: tokio::task::JoinSet<Outcome> = tokio::task::JoinSet::new();
    let mut tasks: HashMap<tokio::task::Id, (String, String, String)> = HashMap::new();
    let mut seen_run = false;
    let mut backoff = Duration::from_millis(250);
    let mut last_error: Option<String> = None;
    let mut rr = 0usize;
    let mut stored_since_log = 0usize;
    let mut last_log = Instant::now();
    let mut last_reclaim: HashMap<String, Instant> = HashMap::new();
    let reclaim_every =
        (cfg.reclaim_after / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    // A failing run (e.g. its keys deleted) is logged once per distinct error and does not
    // stop the others.
    let run_errors: Mutex<HashMap<String, String>> = Mutex::new(HashMap::new());
    let run_error = |run_id: &str, e: String| {
        let mut m = run_errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if m.get(run_id) != Some(&e) {
            log(format!("run {run_id}: {e} (retrying)"));
            m.insert(run_id.to_string(), e);
        }
    };

    let finish = |res: Result<(tokio::task::Id, Outcome), tokio::task::JoinError>,
                  tasks: &mut HashMap<tokio::task::Id, (String, String, String)>,
                  report: &mut WorkerReport,
                  stored: &mut usize| {
        let (id, outcome) = match res {
            Ok((id, o)) => (id, o),
            Err(e) => (
                e.id(),
                Outcome::Abandoned(if e.is_panic() {
                    "the item panicked".to_string()
                } else {
                    "cancelled".to_string()
                }),
            ),
        };
        let Some((run_id, entry, key)) = tasks.remove(&id) else {
            return;
        };
        if let Some(ids) = lock_ids(&in_flight).get_mut(&run_id) {
            ids.remove(&entry);
        }
        match outcome {
            Outcome::Stored => {
                report.completed += 1;
                *stored += 1;
            }
            Outcome::Duplicate => {
                report.duplicates += 1;
                log(format!(
                    "run {run_id}: {key} already had a result (first one kept)"
                ));
            }
            Outcome::Poisoned => {
                report.poisoned += 1;
                log(format!(
                    "run {run_id}: {key} delivered more than {} times: recorded as an error",
                    cfg.max_deliveries
                ));
            }
            Outcome::Retry(why) => {
                report.retried += 1;
                log(format!("run {run_id}: {key}: {why}"));
            }
            Outcome::Abandoned(why) => {
                report.abandoned += 1;
                log(format!("run {run_id}: {key} left pending: {why}"));
            }
        }
    };

    log(format!(
        "ready (concurrency {}, reclaim after {}s) on {}",
        cfg.concurrency,
        cfg.reclaim_after.as_secs_f64(),
        redis.url()
    ));
    loop {
        while let Some(res) = set.try_join_next_with_id() {
            finish(res, &mut tasks, &mut report, &mut stored_since_log);
        }
        if stored_since_log > 0 && last_log.elapsed() > Duration::from_secs(10) {
            log(format!(
                "{stored_since_log} items done in the last {:.0}s, {} in flight",
                last_log.elapsed().as_secs_f64(),
                set.len()
            ));
            stored_since_log = 0;
            last_log = Instant::now();
        }
        if *shutdown.borrow() != Shutdown::Run {
            break;
        }
        let step: Result<usize, String> = async {
            let mut active: Vec<String> = redis.query(redis::cmd("SMEMBERS").arg(RUNS_KEY)).await?;
            active.sort();
            seen_run |= !active.is_empty();
            runs.retain(|k, _| active.contains(k));
            last_reclaim.retain(|k, _| active.contains(k));
            for run_id in &active {
                if runs.contains_key(run_id) {
                    continue;
                }
                match prepare_run(&redis, run_id, &graph, cfg).await? {
                    Ok(rc) => {
                        log(format!("joined run {run_id}"));
                        runs.insert(run_id.clone(), RunState::Ready(rc));
                    }
                    Err(why) => {
                        log(format!("refusing run {run_id}: {why}"));
                        let _: Result<i64, String> = redis
                            .query(
                                redis::cmd("HSET")
                                    .arg(Keys::new(run_id).refused())
                                    .arg(&name)
                                    .arg(&why),
                            )
                            .await;
                        report.refused.push(why);
                        runs.insert(run_id.clone(), RunState::Refused);
                    }
                }
            }
            let mut started = 0;
            if !active.is_empty() {
                rr = rr.wrapping_add(1);
                for i in 0..active.len() {
                    let run_id = &active[(rr + i) % active.len()];
                    let Some(RunState::Ready(rc)) = runs.get(run_id) else {
                        continue;
                    };
                    let free = cfg.concurrency.saturating_sub(set.len());
                    if free == 0 {
                        break;
                    }
                    // Entries only become reclaimable after `reclaim_after`: scanning the
                    // pending list a few times per period is enough.
                    let mut got = Vec::new();
                    if last_reclaim
                        .get(run_id)
                        .is_none_or(|t: &Instant| t.elapsed() >= reclaim_every)
                    {
                        last_reclaim.insert(run_id.clone(), Instant::now());
                        got = match rc.q.reclaim(&name, cfg.reclaim_after, free).await {
                            Ok(g) => g,
                            Err(e) => {
                                run_error(run_id, e);
                                continue;
                            }
                        };
                        let mine: BTreeSet<String> = lock_ids(&in_flight)
                            .get(run_id)
                            .cloned()
                            .unwrap_or_default();
                        got.retain(|d| !mine.contains(&d.id));
                        for d in &got {
                            log(format!(
                                "run {run_id}: reclaimed {} (entry {}, delivery {})",
                                d.key, d.id, d.deliveries
                            ));
                        }
                        report.reclaimed += got.len();
                    }
                    if got.len() < free {
                        match rc.q.read_new(&name, free - got.len()).await {
                            Ok(more) => got.extend(more),
                            Err(e) => run_error(run_id, e),
                        }
                    }
                    for d in got {
                        lock_ids(&in_flight)
                            .entry(run_id.clone())
                            .or_default()
                            .insert(d.id.clone());
                        let (rc, c) = (rc.clone(), cfg.clone());
                        let meta = (run_id.clone(), d.id.clone(), d.key.clone());
                        let h = set.spawn(process(rc, d, c));
                        tasks.insert(h.id(), meta);
                        started += 1;
                    }
                }
            }
            Ok(started)
        }
        .await;
        let started = match step {
            Ok(n) => {
                backoff = Duration::from_millis(250);
                last_error = None;
                n
            }
            Err(e) => {
                if last_error.as_deref() != Some(e.as_str()) {
                    log(format!("{e} (retrying)"));
                }
                last_error = Some(e);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shutdown.changed() => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
                continue;
            }
        };
        if cfg.once && seen_run && runs.is_empty() && set.is_empty() {
            log("no active run left: exiting (--once)".into());
            break;
        }
        if started == 0 || set.len() >= cfg.concurrency {
            tokio::select! {
                Some(res) = set.join_next_with_id(), if !set.is_empty() => finish(res, &mut tasks, &mut report, &mut stored_since_log),
                _ = tokio::time::sleep(cfg.poll) => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    // Stopping: finish in-flight items within the grace time unless told to abort.
    if *shutdown.borrow() == Shutdown::Drain && !set.is_empty() {
        log(format!(
            "stopping: finishing {} in-flight items (up to {}s; signal again to abandon them)",
            set.len(),
            cfg.grace.as_secs()
        ));
        let deadline = tokio::time::Instant::now() + cfg.grace;
        while !set.is_empty() && *shutdown.borrow() != Shutdown::Abort {
            tokio::select! {
                Some(res) = set.join_next_with_id() => finish(res, &mut tasks, &mut report, &mut stored_since_log),
                _ = tokio::time::sleep_until(deadline) => break,
                _ = shutdown.changed() => {}
            }
        }
    }
    if !set.is_empty() {
        log(format!(
            "abandoning {} in-flight items (other workers reclaim them after {}s)",
            set.len(),
            cfg.reclaim_after.as_secs()
        ));
        report.abandoned += set.len();
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
    let _ = stop_tx.send(true);
    let _ = keeper.await;
    let _: Result<i64, String> = redis
        .query(redis::cmd("HDEL").arg(WORKERS_KEY).arg(&name))
        .await;
    log(format!(
        "stopped: {} stored, {} duplicates, {} reclaimed, {} poisoned, {} retried, {} abandoned",
        report.completed,
        report.duplicates,
        report.reclaimed,
        report.poisoned,
        report.retried,
        report.abandoned
    ));
    Ok(report)
}

// ───────────────────────── tests and benchmarks ─────────────────────────

/// A throwaway `redis-server` on a free loopback port, without persistence, killed on drop.
/// For tests and `serenqa perf queue` only.
pub struct LocalRedis {
    child: std::process::Child,
    pub url: String,
}

impl LocalRedis {
    pub fn start() -> Result<LocalRedis, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("finding a free port: {e}"))?
            .port();
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(std::env::temp_dir())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("starting redis-server: {e}"))?;
        let mut r = LocalRedis {
            child,
            url: format!("redis://127.0.0.1:{port}"),
        };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if ping(port) {
                return Ok(r);
            }
            if let Ok(Some(status)) = r.child.try_wait() {
                return Err(format!("redis-server exited at start ({status})"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("redis-server did not answer PING within 10 s".into())
    }
}

fn ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buf = [0u8; 16];
    s.write_all(b"PING\r\n").is_ok()
        && s.read(&mut buf)
            .is_ok_and(|n| buf[..n].starts_with(b"+PONG"))
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Says so on the real stderr (not captured by the test harness, so it shows in CI logs).
fn skipped(why: &str) {
    serenqa_graph::datadir::missing_resource(&format!("no Redis ({why})"));
}

/// The Redis of a test: `$SERENQA_REDIS_URL`, else a [`LocalRedis`] when `redis-server` is
/// installed, else None (the test prints `SKIPPED: no Redis`). `db` selects a database so
/// that tests sharing one server do not see each other's runs; it is flushed first.
pub struct TestRedis {
    pub url: String,
    _local: Option<LocalRedis>,
}

impl TestRedis {
    pub async fn get(db: u8) -> Option<TestRedis> {
        let (base, local) = match std::env::var("SERENQA_REDIS_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
        {
            Some(u) => (u.trim().trim_end_matches('/').to_string(), None),
            None => match LocalRedis::start() {
                Ok(l) => (l.url.clone(), Some(l)),
                Err(e) => {
                    skipped(&format!("SERENQA_REDIS_URL unset and {e}"));
                    return None;
                }
            },
        };
        // Replace a database number already in the URL.
        let base = match base.rfind('/') {
            Some(i)
                if i > base.find("://").map(|s| s + 2).unwrap_or(0)
                    && base[i + 1..].chars().all(|c| c.is_ascii_digit()) =>
            {
                base[..i].to_string()
            }
            _ => base,
        };
        let url = format!("{base}/{db}");
        let r = match Redis::connect(&url).await {
            Ok(r) => r,
            Err(e) => {
                skipped(&e);
                return None;
            }
        };
        let _: Result<String, String> = r.query(&redis::cmd("FLUSHDB")).await;
        Some(TestRedis { url, _local: local })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_a_run_shares_its_hash_tag() {
        let k = Keys::new("gpt-4o-1234abcd");
        for key in k.all() {
            assert!(key.starts_with("serenqa:run:{gpt-4o-1234abcd}:"), "{key}");
        }
        assert_eq!(
            k.all().len(),
            k.all().into_iter().collect::<BTreeSet<_>>().len(),
            "distinct keys"
        );
    }

    #[test]
    fn urls_are_shown_without_passwords() {
        assert_eq!(
            redact("redis://:s3cret@host:6379/2"),
            "redis://***@host:6379/2"
        );
        assert_eq!(redact("redis://user:pw@host"), "redis://***@host");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }

    #[test]
    fn worker_llm_accounting_sums() {
        let a = StatsSnapshot {
            calls: 10,
            cache_hits: 0,
            mean_latency_ms: 100.0,
            max_in_flight: 4,
            ..Default::default()
        };
        let b = StatsSnapshot {
            calls: 30,
            cache_hits: 10,
            mean_latency_ms: 400.0,
            max_in_flight: 2,
            ..Default::default()
        };
        let all: BTreeMap<String, String> = [
            ("a".to_string(), serde_json::to_string(&a).unwrap()),
            ("b".into(), serde_json::to_string(&b).unwrap()),
            ("offline".into(), "{}".into()),
        ]
        .into();
        let s = sum_stats(&all);
        assert_eq!((s.calls, s.cache_hits, s.max_in_flight), (40, 10, 6));
        assert!(
            (s.mean_latency_ms - 300.0).abs() < 1e-9,
            "weighted by network calls: {}",
            s.mean_latency_ms
        );
    }
}
