//! What the queue is doing: worker heartbeats ([`Heartbeat`], [`live_workers`]) and the
//! progress of every active run ([`RunStatus`], [`queue_status`]; `serenqa queue status`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::QueueResult;
use super::keys::{RUNS_KEY, WORKERS_KEY};
use super::redis::Redis;
use super::stream::RunQueue;

pub(super) fn now_ms() -> u64 {
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
pub async fn queue_status(redis: &Arc<Redis>) -> QueueResult<Vec<RunStatus>> {
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
pub async fn live_workers(redis: &Redis) -> QueueResult<BTreeMap<String, Heartbeat>> {
    let all: BTreeMap<String, String> = redis.query(redis::cmd("HGETALL").arg(WORKERS_KEY)).await?;
    Ok(all
        .into_iter()
        .filter_map(|(k, v)| Some((k, serde_json::from_str::<Heartbeat>(&v).ok()?)))
        .filter(|(_, h)| h.alive())
        .collect())
}
