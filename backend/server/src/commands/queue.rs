//! `serenqa queue`: what a distributed evaluation is doing (`status`: active runs, their
//! progress and pending items per worker, live workers) and dropping a run whose coordinator
//! will not come back (`forget`).

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use serenqa_pipeline::queue::{live_workers, queue_status, Redis, RunQueue};

#[derive(Args)]
pub struct QueueArgs {
    /// The queue: redis://HOST:PORT[/DB] or redis+cluster://HOST:PORT,… (as `eval --queue`).
    #[arg(long, value_name = "URL", env = "SERENQA_QUEUE", global = true)]
    queue: Option<String>,
    #[command(subcommand)]
    command: QueueCommand,
}

#[derive(Subcommand)]
enum QueueCommand {
    /// Active runs (items, results, pending per worker, refusals) and live workers.
    Status,
    /// Take a run out of the active set (its keys expire in 7 days); workers stop taking its
    /// items. For a run whose coordinator is gone for good.
    Forget {
        /// The run id.
        run: String,
    },
}

pub fn run(args: QueueArgs) -> Result<()> {
    let url = args
        .queue
        .ok_or_else(|| anyhow!("--queue redis://… (or $SERENQA_QUEUE) is required"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let redis = Redis::connect(&url).await.map_err(|e| anyhow!(e))?;
        match args.command {
            QueueCommand::Status => {
                let runs = queue_status(&redis).await.map_err(|e| anyhow!(e))?;
                let workers = live_workers(&redis).await.map_err(|e| anyhow!(e))?;
                println!("queue {}", redis.url());
                if runs.is_empty() {
                    println!("no active runs");
                }
                for r in &runs {
                    let pending: Vec<String> = r
                        .pending
                        .iter()
                        .filter(|(_, n)| **n > 0)
                        .map(|(w, n)| format!("{w} {n}"))
                        .collect();
                    println!(
                        "run {}: {}/{} results, {} enqueued, pending: {}",
                        r.run_id,
                        r.results,
                        r.items,
                        r.enqueued,
                        if pending.is_empty() {
                            "none".to_string()
                        } else {
                            pending.join(", ")
                        }
                    );
                    for (w, why) in &r.refused {
                        println!("  refused by {w}: {why}");
                    }
                }
                if workers.is_empty() {
                    println!("no live workers");
                }
                for (name, h) in &workers {
                    println!(
                        "worker {name}: {} pid {}, {}/{} in flight",
                        h.host, h.pid, h.in_flight, h.concurrency
                    );
                }
                Ok(())
            }
            QueueCommand::Forget { run } => {
                let active = queue_status(&redis).await.map_err(|e| anyhow!(e))?;
                if !active.iter().any(|r| r.run_id == run) {
                    return Err(anyhow!("no active run {run:?} on {}", redis.url()));
                }
                RunQueue::new(redis.clone(), &run)
                    .retire()
                    .await
                    .map_err(|e| anyhow!(e))?;
                println!("run {run} is no longer active; its keys expire in 7 days");
                Ok(())
            }
        }
    })
}
