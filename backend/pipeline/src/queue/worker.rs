//! Queue workers (`serenqa worker --queue URL`): a [`Worker`] takes the items of every active
//! run from Redis, runs them with [`run::run_item`] and stores each result once. Its steps:
//! [`Worker::join_runs`] (rebuild a run's context, or refuse the run), [`Worker::take_work`]
//! (reclaim idle entries, read new ones, spawn them), the keeper task (keepalive of in-flight
//! entries and the heartbeat), [`Worker::drain`] (stop: finish or abandon in-flight items).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::{JoinError, JoinSet};

use super::delivery::{
    host_name, prepare_run, process, Outcome, RunState, Shutdown, WorkerConfig, WorkerGraph,
    WorkerReport,
};
use super::error::{QueueError, QueueResult};
use super::keys::{Keys, RUNS_KEY, WORKERS_KEY};
use super::redis::Redis;
use super::status::{now_ms, Heartbeat};
use super::stream::RunQueue;

/// Entry ids in flight, per run (shared with the keeper task).
type InFlight = Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>;

fn lock_ids(m: &InFlight) -> std::sync::MutexGuard<'_, BTreeMap<String, BTreeSet<String>>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Renews `ids` of `run_id` for consumer `name`; [`QueueError::LostLease`] when other
/// consumers own some of them now.
async fn renew(redis: &Arc<Redis>, run_id: &str, name: &str, ids: &[String]) -> QueueResult<()> {
    let lost = RunQueue::new(redis.clone(), run_id)
        .keepalive(name, ids)
        .await?;
    if lost.is_empty() {
        Ok(())
    } else {
        Err(QueueError::LostLease {
            run_id: run_id.to_string(),
            count: lost.len(),
        })
    }
}

/// What the keeper task needs: it renews the entries in flight every `interval` and writes
/// the worker's heartbeat, until `stop` changes.
struct Keeper {
    redis: Arc<Redis>,
    in_flight: InFlight,
    name: String,
    log: bool,
    concurrency: usize,
    interval: Duration,
}

impl Keeper {
    async fn run(self, mut stop: watch::Receiver<bool>) {
        let name = &self.name;
        loop {
            let snapshot: Vec<(String, Vec<String>)> = lock_ids(&self.in_flight)
                .iter()
                .map(|(r, ids)| (r.clone(), ids.iter().cloned().collect()))
                .collect();
            let mut n = 0;
            for (run_id, ids) in snapshot {
                n += ids.len();
                match renew(&self.redis, &run_id, name, &ids).await {
                    Err(e @ QueueError::LostLease { .. }) if self.log => {
                        eprintln!("[worker {name}] {e}");
                    }
                    Err(e) if self.log => eprintln!("[worker {name}] keepalive: {e}"),
                    _ => {}
                }
            }
            let hb = Heartbeat {
                pid: std::process::id(),
                host: host_name(),
                concurrency: self.concurrency,
                in_flight: n,
                unix_ms: now_ms(),
                interval_ms: self.interval.as_millis() as u64,
            };
            if let Ok(text) = serde_json::to_string(&hb) {
                let _: QueueResult<i64> = self
                    .redis
                    .query(redis::cmd("HSET").arg(WORKERS_KEY).arg(name).arg(text))
                    .await;
            }
            tokio::select! {
                _ = tokio::time::sleep(self.interval) => {}
                _ = stop.changed() => break,
            }
        }
    }
}

/// (run id, entry id, item key) of a spawned task.
type TaskMeta = (String, String, String);

/// One worker process's state: its connection, configuration and graph, the runs it joined
/// or refused, and the items in flight. [`run_worker`] is `Worker::connect` + [`Worker::run`].
pub struct Worker {
    redis: Arc<Redis>,
    cfg: WorkerConfig,
    graph: WorkerGraph,
    in_flight: InFlight,
    runs: HashMap<String, RunState>,
    set: JoinSet<Outcome>,
    tasks: HashMap<tokio::task::Id, TaskMeta>,
    report: WorkerReport,
    seen_run: bool,
    /// Round-robin offset over the active runs.
    rr: usize,
    stored_since_log: usize,
    last_log: Instant,
    last_reclaim: HashMap<String, Instant>,
    /// Last error per run: a failing run (e.g. its keys deleted) is logged once per distinct
    /// error and does not stop the others.
    run_errors: HashMap<String, QueueError>,
}

impl Worker {
    /// Connects to the queue; the only error of a worker (Redis unreachable at start).
    pub async fn connect(url: &str, cfg: WorkerConfig, graph: WorkerGraph) -> QueueResult<Worker> {
        let redis = Redis::connect(url).await?;
        Ok(Worker {
            redis,
            cfg,
            graph,
            in_flight: Arc::new(Mutex::new(BTreeMap::new())),
            runs: HashMap::new(),
            set: JoinSet::new(),
            tasks: HashMap::new(),
            report: WorkerReport::default(),
            seen_run: false,
            rr: 0,
            stored_since_log: 0,
            last_log: Instant::now(),
            last_reclaim: HashMap::new(),
            run_errors: HashMap::new(),
        })
    }

    fn log(&self, msg: &str) {
        if self.cfg.log {
            eprintln!("[worker {}] {msg}", self.cfg.name);
        }
    }

    fn run_error(&mut self, run_id: &str, e: QueueError) {
        if self.run_errors.get(run_id) != Some(&e) {
            self.log(&format!("run {run_id}: {e} (retrying)"));
            self.run_errors.insert(run_id.to_string(), e);
        }
    }

    /// Accounts for a finished task.
    fn finish(&mut self, res: Result<(tokio::task::Id, Outcome), JoinError>) {
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
        let Some((run_id, entry, key)) = self.tasks.remove(&id) else {
            return;
        };
        if let Some(ids) = lock_ids(&self.in_flight).get_mut(&run_id) {
            ids.remove(&entry);
        }
        match outcome {
            Outcome::Stored => {
                self.report.completed += 1;
                self.stored_since_log += 1;
            }
            Outcome::Duplicate => {
                self.report.duplicates += 1;
                self.log(&format!(
                    "run {run_id}: {key} already had a result (first one kept)"
                ));
            }
            Outcome::Poisoned => {
                self.report.poisoned += 1;
                self.log(&format!(
                    "run {run_id}: {key} delivered more than {} times: recorded as an error",
                    self.cfg.max_deliveries
                ));
            }
            Outcome::Retry(why) => {
                self.report.retried += 1;
                self.log(&format!("run {run_id}: {key}: {why}"));
            }
            Outcome::Abandoned(why) => {
                self.report.abandoned += 1;
                self.log(&format!("run {run_id}: {key} left pending: {why}"));
            }
        }
    }

    /// Joins the active runs not seen before, or refuses them (the reason goes to the run's
    /// `refused` hash and the report).
    pub async fn join_runs(&mut self, active: &[String]) -> QueueResult<()> {
        for run_id in active {
            if self.runs.contains_key(run_id) {
                continue;
            }
            match prepare_run(&self.redis, run_id, &self.graph, &self.cfg).await? {
                Ok(rc) => {
                    self.log(&format!("joined run {run_id}"));
                    self.runs.insert(run_id.clone(), RunState::Ready(rc));
                }
                Err(why) => {
                    self.log(&format!("refusing run {run_id}: {why}"));
                    let _: QueueResult<i64> = self
                        .redis
                        .query(
                            redis::cmd("HSET")
                                .arg(Keys::new(run_id).refused())
                                .arg(&self.cfg.name)
                                .arg(&why),
                        )
                        .await;
                    self.report.refused.push(why);
                    self.runs.insert(run_id.clone(), RunState::Refused);
                }
            }
        }
        Ok(())
    }

    /// Fills free slots from the joined runs, round robin: idle entries of dead consumers
    /// first (a few times per reclaim period), then new entries. Returns how many started.
    pub async fn take_work(&mut self, active: &[String]) -> usize {
        let mut started = 0;
        if active.is_empty() {
            return 0;
        }
        let reclaim_every =
            (self.cfg.reclaim_after / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
        self.rr = self.rr.wrapping_add(1);
        for i in 0..active.len() {
            let run_id = &active[(self.rr + i) % active.len()];
            let Some(RunState::Ready(rc)) = self.runs.get(run_id).cloned() else {
                continue;
            };
            let free = self.cfg.concurrency.saturating_sub(self.set.len());
            if free == 0 {
                break;
            }
            // Entries only become reclaimable after `reclaim_after`: scanning the pending
            // list a few times per period is enough.
            let mut got = Vec::new();
            if self
                .last_reclaim
                .get(run_id)
                .is_none_or(|t: &Instant| t.elapsed() >= reclaim_every)
            {
                self.last_reclaim.insert(run_id.clone(), Instant::now());
                got = match rc
                    .q
                    .reclaim(&self.cfg.name, self.cfg.reclaim_after, free)
                    .await
                {
                    Ok(g) => g,
                    Err(e) => {
                        self.run_error(run_id, e);
                        continue;
                    }
                };
                let mine: BTreeSet<String> = lock_ids(&self.in_flight)
                    .get(run_id)
                    .cloned()
                    .unwrap_or_default();
                got.retain(|d| !mine.contains(&d.id));
                for d in &got {
                    self.log(&format!(
                        "run {run_id}: reclaimed {} (entry {}, delivery {})",
                        d.key, d.id, d.deliveries
                    ));
                }
                self.report.reclaimed += got.len();
            }
            if got.len() < free {
                match rc.q.read_new(&self.cfg.name, free - got.len()).await {
                    Ok(more) => got.extend(more),
                    Err(e) => self.run_error(run_id, e),
                }
            }
            for d in got {
                lock_ids(&self.in_flight)
                    .entry(run_id.clone())
                    .or_default()
                    .insert(d.id.clone());
                let meta = (run_id.clone(), d.id.clone(), d.key.clone());
                let h = self.set.spawn(process(rc.clone(), d, self.cfg.clone()));
                self.tasks.insert(h.id(), meta);
                started += 1;
            }
        }
        started
    }

    /// One poll of the queue: the active runs, joined or refused, then new work.
    async fn step(&mut self) -> QueueResult<usize> {
        let mut active: Vec<String> = self
            .redis
            .query(redis::cmd("SMEMBERS").arg(RUNS_KEY))
            .await?;
        active.sort();
        self.seen_run |= !active.is_empty();
        self.runs.retain(|k, _| active.contains(k));
        self.last_reclaim.retain(|k, _| active.contains(k));
        self.join_runs(&active).await?;
        Ok(self.take_work(&active).await)
    }

    /// Stopping: finishes in-flight items within the grace time unless told to abort, then
    /// abandons the rest (they stay pending and are reclaimed by other workers).
    pub async fn drain(&mut self, shutdown: &mut watch::Receiver<Shutdown>) {
        if *shutdown.borrow() == Shutdown::Drain && !self.set.is_empty() {
            self.log(&format!(
                "stopping: finishing {} in-flight items (up to {}s; signal again to abandon them)",
                self.set.len(),
                self.cfg.grace.as_secs()
            ));
            let deadline = tokio::time::Instant::now() + self.cfg.grace;
            while !self.set.is_empty() && *shutdown.borrow() != Shutdown::Abort {
                tokio::select! {
                    Some(res) = self.set.join_next_with_id() => self.finish(res),
                    _ = tokio::time::sleep_until(deadline) => break,
                    _ = shutdown.changed() => {}
                }
            }
        }
        if !self.set.is_empty() {
            self.log(&format!(
                "abandoning {} in-flight items (other workers reclaim them after {}s)",
                self.set.len(),
                self.cfg.reclaim_after.as_secs()
            ));
            self.report.abandoned += self.set.len();
            self.set.abort_all();
            while self.set.join_next().await.is_some() {}
        }
    }

    /// Takes items of every active run until stopped (or, with `once`, until no run is
    /// active), then drains.
    pub async fn run(mut self, mut shutdown: watch::Receiver<Shutdown>) -> WorkerReport {
        let interval =
            (self.cfg.reclaim_after / 3).clamp(Duration::from_millis(100), Duration::from_secs(5));
        let (stop_tx, stop_rx) = watch::channel(false);
        let keeper = tokio::spawn(
            Keeper {
                redis: self.redis.clone(),
                in_flight: self.in_flight.clone(),
                name: self.cfg.name.clone(),
                log: self.cfg.log,
                concurrency: self.cfg.concurrency,
                interval,
            }
            .run(stop_rx),
        );
        let mut backoff = Duration::from_millis(250);
        let mut last_error: Option<QueueError> = None;
        self.log(&format!(
            "ready (concurrency {}, reclaim after {}s) on {}",
            self.cfg.concurrency,
            self.cfg.reclaim_after.as_secs_f64(),
            self.redis.url()
        ));
        loop {
            while let Some(res) = self.set.try_join_next_with_id() {
                self.finish(res);
            }
            if self.stored_since_log > 0 && self.last_log.elapsed() > Duration::from_secs(10) {
                self.log(&format!(
                    "{} items done in the last {:.0}s, {} in flight",
                    self.stored_since_log,
                    self.last_log.elapsed().as_secs_f64(),
                    self.set.len()
                ));
                self.stored_since_log = 0;
                self.last_log = Instant::now();
            }
            if *shutdown.borrow() != Shutdown::Run {
                break;
            }
            let started = match self.step().await {
                Ok(n) => {
                    backoff = Duration::from_millis(250);
                    last_error = None;
                    n
                }
                Err(e) => {
                    if last_error.as_ref() != Some(&e) {
                        self.log(&format!("{e} (retrying)"));
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
            if self.cfg.once && self.seen_run && self.runs.is_empty() && self.set.is_empty() {
                self.log("no active run left: exiting (--once)");
                break;
            }
            if started == 0 || self.set.len() >= self.cfg.concurrency {
                tokio::select! {
                    Some(res) = self.set.join_next_with_id(), if !self.set.is_empty() => self.finish(res),
                    _ = tokio::time::sleep(self.cfg.poll) => {}
                    _ = shutdown.changed() => {}
                }
            }
        }
        self.drain(&mut shutdown).await;
        let _ = stop_tx.send(true);
        let _ = keeper.await;
        let _: QueueResult<i64> = self
            .redis
            .query(redis::cmd("HDEL").arg(WORKERS_KEY).arg(&self.cfg.name))
            .await;
        let r = &self.report;
        self.log(&format!(
            "stopped: {} stored, {} duplicates, {} reclaimed, {} poisoned, {} retried, {} abandoned",
            r.completed, r.duplicates, r.reclaimed, r.poisoned, r.retried, r.abandoned
        ));
        self.report
    }
}

/// `serenqa worker`: takes items of every active run from Redis and runs them until stopped
/// (or, with `once`, until no run is active). Errors only when Redis is unreachable at start.
pub async fn run_worker(
    url: &str,
    cfg: &WorkerConfig,
    graph: WorkerGraph,
    shutdown: watch::Receiver<Shutdown>,
) -> QueueResult<WorkerReport> {
    Ok(Worker::connect(url, cfg.clone(), graph)
        .await?
        .run(shutdown)
        .await)
}
