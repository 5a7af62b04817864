//! The coordinator of a distributed run (`serenqa eval --queue URL`): [`run_coordinator`]
//! plans the run like a local run, publishes it, enqueues what is not done, and appends the
//! workers' results to the traces ([`Collector`]) until the run is complete.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::MultiProgress;
use serenqa_graph::Graph;
use serenqa_model::Model;

use super::error::{QueueError, QueueResult};
use super::keys::{ModelsRef, RunSpec, SPEC_FORMAT};
use super::redis::Redis;
use super::status::live_workers;
use super::stream::RunQueue;
use crate::bench::Benchmark;
use crate::llm::StatsSnapshot;
use crate::run::{self, EvalConfig, QueueInfo, RunOutcome, T1Record, T3Record, TraceKind, Writer};

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
    async fn collect(&mut self, q: &RunQueue) -> QueueResult<(u64, u64)> {
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
                let line = line.ok_or_else(|| QueueError::MissingResult {
                    run_id: q.run_id().to_string(),
                    key: k.clone(),
                })?;
                let kind = TraceKind::of_key(&k).ok_or_else(|| QueueError::BadKey(k.clone()))?;
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
                    Ok(false) => {
                        return Err(QueueError::ForeignRecord {
                            run_id: q.run_id().to_string(),
                            key: k,
                        })
                    }
                    Err(detail) => {
                        return Err(QueueError::NotARecord {
                            run_id: q.run_id().to_string(),
                            key: k,
                            detail,
                        })
                    }
                }
                match kind {
                    TraceKind::T1 => {
                        self.w1.write_line(&line, false).map_err(QueueError::Run)?;
                        n1 += 1;
                    }
                    TraceKind::T3 => {
                        self.w3.write_line(&line, false).map_err(QueueError::Run)?;
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
) -> QueueResult<RunOutcome> {
    let started = Instant::now();
    let redis = Redis::connect(url).await?;
    let plan = run::plan(cfg, &g).map_err(QueueError::Run)?;
    let q = RunQueue::new(redis.clone(), &plan.run_id);
    let mut files = BTreeMap::new();
    for name in Benchmark::file_names() {
        let p = cfg.bench_dir.join(&name);
        if p.is_file() {
            files.insert(
                name,
                std::fs::read_to_string(&p).map_err(|e| QueueError::Io {
                    path: p.display().to_string(),
                    detail: e.to_string(),
                })?,
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
        w1: Writer::append(&plan.dir.join(run::T1_FILE)).map_err(QueueError::Run)?,
        w3: Writer::append(&plan.dir.join(run::T3_FILE)).map_err(QueueError::Run)?,
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
    let mut last_error: Option<QueueError> = None;
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
            Ok::<(), QueueError>(())
        };
        match step.await {
            Ok(()) => last_error = None,
            // Redis or the file system failing mid-run: say so once, keep trying (ctrl-c stops;
            // rerunning resumes).
            Err(e) => {
                if last_error.as_ref() != Some(&e) {
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
    let out = run::finalize(cfg, &plan, manifest, started, Some(sum_stats(&llm_all)))
        .map_err(QueueError::Run)?;
    q.retire().await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
