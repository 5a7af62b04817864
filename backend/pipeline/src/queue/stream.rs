//! The task stream of one run: [`RunQueue`] (enqueue, read, reclaim, keepalive, complete,
//! results, spec and files) and the Lua scripts that make its invariants atomic (`ENQUEUE`,
//! `COMPLETE`, `KEEPALIVE`; see the module docs of [`crate::queue`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use redis::streams::{
    StreamAutoClaimReply, StreamPendingCountReply, StreamPendingReply, StreamRangeReply,
    StreamReadReply,
};

use super::error::{QueueError, QueueResult};
use super::keys::{Keys, RunSpec, FINISHED_TTL_SECS, GROUP, RUNS_KEY};
use super::redis::Redis;

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
        self.keys.run_id()
    }

    /// Creates the consumer group (and the stream); an existing group is kept.
    pub async fn create_group(&self) -> QueueResult<()> {
        let r: QueueResult<String> = self
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
            Err(e) if e.code() == Some("BUSYGROUP") || e.to_string().contains("BUSYGROUP") => {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Enqueues the keys not enqueued before; returns how many were new.
    pub async fn enqueue(&self, keys: &[String]) -> QueueResult<usize> {
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
    pub async fn read_new(&self, consumer: &str, count: usize) -> QueueResult<Vec<Delivery>> {
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
    ) -> QueueResult<Vec<Delivery>> {
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
    pub async fn pending_of(&self, consumer: &str) -> QueueResult<HashMap<String, usize>> {
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
    pub async fn pending_by_consumer(&self) -> QueueResult<BTreeMap<String, usize>> {
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
    pub async fn keepalive(&self, consumer: &str, ids: &[String]) -> QueueResult<Vec<String>> {
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
    pub async fn complete(&self, id: &str, key: &str, line: &str) -> QueueResult<bool> {
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

    pub async fn ack(&self, id: &str) -> QueueResult<()> {
        let _: i64 = self
            .redis
            .query(redis::cmd("XACK").arg(self.keys.tasks()).arg(GROUP).arg(id))
            .await?;
        Ok(())
    }

    pub async fn has_result(&self, key: &str) -> QueueResult<bool> {
        self.redis
            .query(redis::cmd("HEXISTS").arg(self.keys.results()).arg(key))
            .await
    }

    pub async fn result_count(&self) -> QueueResult<usize> {
        self.redis
            .query(redis::cmd("HLEN").arg(self.keys.results()))
            .await
    }

    pub async fn results(&self, keys: &[String]) -> QueueResult<Vec<Option<String>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.redis
            .query(redis::cmd("HMGET").arg(self.keys.results()).arg(keys))
            .await
    }

    /// Records that a delivery of `key` ended in an LLM outage; returns the count so far.
    pub async fn note_retry(&self, key: &str) -> QueueResult<usize> {
        self.redis
            .query(
                redis::cmd("HINCRBY")
                    .arg(self.keys.retries())
                    .arg(key)
                    .arg(1),
            )
            .await
    }

    pub async fn retries(&self, key: &str) -> QueueResult<usize> {
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
    ) -> QueueResult<Vec<(String, String)>> {
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
    pub async fn task_count(&self) -> QueueResult<usize> {
        self.redis
            .query(redis::cmd("XLEN").arg(self.keys.tasks()))
            .await
    }

    pub async fn spec(&self) -> QueueResult<Option<RunSpec>> {
        let text: Option<String> = self
            .redis
            .query(redis::cmd("GET").arg(self.keys.spec()))
            .await?;
        match text {
            None => Ok(None),
            Some(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| QueueError::UnreadableSpec {
                    run_id: self.run_id().to_string(),
                    detail: e.to_string(),
                }),
        }
    }

    /// Publishes a run: spec, benchmark files, group, then the run id in `serenqa:runs`.
    pub async fn publish(
        &self,
        spec: &RunSpec,
        files: &BTreeMap<String, String>,
    ) -> QueueResult<()> {
        if let Some(old) = self.spec().await? {
            if &old != spec {
                return Err(QueueError::SpecConflict {
                    run_id: spec.run_id.clone(),
                    pattern: self.keys.pattern(),
                });
            }
        }
        let text = serde_json::to_string(spec).map_err(|e| QueueError::Protocol(e.to_string()))?;
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
            .query(redis::cmd("SADD").arg(RUNS_KEY).arg(self.keys.run_id()))
            .await?;
        Ok(())
    }

    pub async fn files(&self) -> QueueResult<BTreeMap<String, String>> {
        self.redis
            .query(redis::cmd("HGETALL").arg(self.keys.files()))
            .await
    }

    /// Workers that refused the run, and why.
    pub async fn refusals(&self) -> QueueResult<BTreeMap<String, String>> {
        self.redis
            .query(redis::cmd("HGETALL").arg(self.keys.refused()))
            .await
    }

    /// Removes the run from the active set and lets its keys expire.
    pub async fn retire(&self) -> QueueResult<()> {
        let _: i64 = self
            .redis
            .query(redis::cmd("SREM").arg(RUNS_KEY).arg(self.keys.run_id()))
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
