//! `serenqa perf queue`: throughput of distributed evaluation over Redis Streams. Starts the
//! scripted OpenAI-compatible server ([`crate::scripted_llm`], a benchmark double, not a
//! model) with a fixed latency per call, spawns N `serenqa worker` processes (this
//! executable), coordinates runs in this process, and reports work items per second per
//! worker count (median of `--reps` runs) with the speed-up over one worker. Redis:
//! `--queue`, else `$SERENQA_REDIS_URL`, else a throwaway `redis-server` on loopback.
//! A measurement, not a test.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serenqa_pipeline::llm::ModelsFile;
use serenqa_pipeline::queue::{live_workers, run_coordinator, LocalRedis, Redis};
use serenqa_pipeline::run::{parse_tasks, EvalConfig};

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct QueuePerfArgs {
    /// Worker counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    workers: Vec<usize>,
    /// Latency of every scripted LLM call, milliseconds.
    #[arg(long, default_value_t = 200)]
    llm_latency_ms: u64,
    /// Questions per run (`eval --limit`).
    #[arg(long, default_value_t = 24)]
    questions: usize,
    /// Work items in flight per worker.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Runs per worker count (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Roles the scripted model plays (comma-separated; `all` for every role); the others
    /// run the offline agents.
    #[arg(long, default_value = "retrieval,summary,judge")]
    roles: String,
    /// Tasks of each run.
    #[arg(long, default_value = "t1,t2,t3")]
    tasks: String,
    /// Redis URL (default: $SERENQA_REDIS_URL, else a throwaway local redis-server).
    #[arg(long, value_name = "URL")]
    queue: Option<String>,
    /// Benchmark directory (default: as `serenqa eval`).
    #[arg(long, value_name = "DIR")]
    bench: Option<PathBuf>,
    #[command(flatten)]
    graph: GraphArgs,
}

struct Workers {
    children: Vec<Child>,
}

impl Workers {
    /// SIGTERM, then SIGKILL whatever is left after 10 s.
    fn stop(&mut self) {
        for c in &self.children {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
        }
        let t = Instant::now();
        for c in &mut self.children {
            while t.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = c.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.clear();
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.stop();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

pub fn run(args: QueuePerfArgs, progress: bool) -> Result<()> {
    if args.workers.is_empty() || args.workers.contains(&0) {
        bail!("--workers needs positive counts, e.g. 1,2,3");
    }
    let reps = args.reps.max(1);
    let tasks = parse_tasks(&args.tasks).map_err(|e| anyhow!(e))?;
    let local;
    let url = match args.queue.clone().or_else(|| {
        std::env::var("SERENQA_REDIS_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
    }) {
        Some(u) => u,
        None => {
            local = LocalRedis::start()
                .map_err(|e| anyhow!("no --queue, no $SERENQA_REDIS_URL, and {e}"))?;
            local.url.clone()
        }
    };
    let (g, model) = super::eval::load_graph_and_model(&args.graph, progress)?;
    let bench = super::eval::bench_dir(args.bench.as_deref(), &g, model.as_ref(), 1529, progress)?;
    let g = Arc::new(g);
    let model = model.map(Arc::new);
    let work = tempfile_dir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let redis = rt.block_on(Redis::connect(&url)).map_err(|e| anyhow!(e))?;
    let llm = rt
        .block_on(crate::scripted_llm::start(Duration::from_millis(
            args.llm_latency_ms,
        )))
        .context("starting the scripted LLM server")?;
    let roles: Vec<&str> = if args.roles.trim() == "all" {
        Vec::new()
    } else {
        args.roles
            .split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .collect()
    };
    let models_json = crate::scripted_llm::models_file(&llm.base_url, &roles, 1024);
    let models: ModelsFile = serde_json::from_value(models_json).context("scripted models file")?;
    models.validate().map_err(|e| anyhow!(e))?;
    let models_path = work.join("models.json");
    std::fs::write(&models_path, serde_json::to_string_pretty(&models)?)
        .with_context(|| format!("writing {}", models_path.display()))?;
    let exe = std::env::current_exe()?;
    println!(
        "perf queue: Redis {}, scripted LLM latency {} ms (roles: {}), {} questions, concurrency {} per worker, {} run(s) per worker count (median)",
        redis.url(),
        args.llm_latency_ms,
        if roles.is_empty() { "all".to_string() } else { roles.join(",") },
        args.questions,
        args.concurrency,
        reps
    );
    let mut rows: Vec<(usize, f64, f64, usize)> = Vec::new();
    for &n in &args.workers {
        let names: Vec<String> = (0..n)
            .map(|i| format!("perf-{}-w{n}-{i}", std::process::id()))
            .collect();
        let mut ws = Workers {
            children: Vec::new(),
        };
        for name in &names {
            let log = std::fs::File::create(work.join(format!("{name}.log")))?;
            let mut cmd = Command::new(&exe);
            cmd.args([
                "--quiet",
                "worker",
                "--queue",
                &url,
                "--concurrency",
                &args.concurrency.to_string(),
                "--name",
                name,
                "--no-cache",
                "--reclaim-after",
                "30",
            ]);
            // Workers take their endpoints from their own models file, never from Redis.
            cmd.arg("--models").arg(&models_path);
            if let Some(gp) = &args.graph.graph {
                cmd.arg("--graph").arg(gp);
            }
            ws.children.push(
                cmd.stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(log)
                    .spawn()
                    .context("spawning a worker")?,
            );
        }
        // Wait until every worker has loaded the graph and sent a heartbeat.
        let t = Instant::now();
        loop {
            let live = rt.block_on(live_workers(&redis)).map_err(|e| anyhow!(e))?;
            if names.iter().all(|n| live.contains_key(n)) {
                break;
            }
            for c in &mut ws.children {
                if let Ok(Some(st)) = c.try_wait() {
                    bail!("a worker exited at start ({st}); see {}", work.display());
                }
            }
            if t.elapsed() > Duration::from_secs(300) {
                bail!("workers not ready after 300 s; logs in {}", work.display());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut secs = Vec::new();
        let mut items = 0;
        for rep in 0..reps {
            let mut cfg = EvalConfig::new(bench.clone(), work.join("runs"));
            cfg.run_id = Some(format!("perf-queue-{}-w{n}-r{rep}", std::process::id()));
            cfg.tasks = tasks.clone();
            cfg.limit = Some(args.questions.max(1));
            cfg.models = models.clone();
            cfg.models_label = "scripted (perf double)".into();
            cfg.progress = false;
            let t = Instant::now();
            let out = rt
                .block_on(run_coordinator(&cfg, g.clone(), model.clone(), &url))
                .map_err(|e| anyhow!(e))?;
            let s = t.elapsed().as_secs_f64();
            items = out.manifest.items.values().sum();
            if progress {
                eprintln!(
                    "  {n} worker(s), run {}: {items} items in {s:.2}s ({:.1}/s)",
                    rep + 1,
                    items as f64 / s
                );
            }
            secs.push(s);
        }
        ws.stop();
        let m = median(secs);
        rows.push((n, m, items as f64 / m, items));
    }
    let base = rows.iter().find(|r| r.0 == 1).map(|r| r.2);
    println!("\n| workers | items | median s | items/s | speed-up vs 1 |");
    println!("|---:|---:|---:|---:|---:|");
    for (n, s, tps, items) in &rows {
        let up = base
            .map(|b| format!("{:.2}×", tps / b))
            .unwrap_or_else(|| "–".into());
        println!("| {n} | {items} | {s:.2} | {tps:.2} | {up} |");
    }
    println!(
        "(scripted LLM calls answered: {}; worker logs in {})",
        llm.calls.load(std::sync::atomic::Ordering::Relaxed),
        work.display()
    );
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("serenqa-perf-queue-{}", std::process::id()));
    std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    Ok(d)
}
