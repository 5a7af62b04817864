//! `serenqa edges`: the Redis edge store (paper Appendix D.2) — export the graph's edges into
//! Redis or a Redis Cluster, check an export against the graph, and measure neighbour
//! lookups per second against the in-memory store.

use std::sync::Arc;

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use serenqa_edges::redis_store::{self, ExportOptions};
use serenqa_edges::{bench, RedisEdges, RedisTarget};

use crate::graph_source::GraphArgs;

/// Opens the Redis edge store at `url` for graph `g`, checking that it holds exactly this graph
/// (`ask`, `serve` and `worker` explore on it with `--edges`).
pub fn open_store(
    rt: &tokio::runtime::Runtime,
    url: &str,
    g: Arc<serenqa_graph::Graph>,
) -> Result<Arc<dyn serenqa_edges::EdgeSource>> {
    let target = RedisTarget::parse(url).map_err(|e| anyhow!(e))?;
    let edges = rt.block_on(RedisEdges::open(target, g))?;
    Ok(Arc::new(edges))
}

#[derive(Args)]
pub struct EdgesArgs {
    #[command(subcommand)]
    command: EdgesCommand,
}

#[derive(Subcommand)]
enum EdgesCommand {
    /// Write the graph's edges into Redis: `adj:{id}:Type` per node, `rel:{src}:…` per edge.
    Export(ExportArgs),
    /// Compare every node's adjacency in Redis with the graph's.
    Check(CheckArgs),
    /// Neighbour lookups per second: in memory, and Redis sequential, pipelined and batched.
    Bench(BenchArgs),
}

#[derive(Args)]
struct ExportArgs {
    /// `redis://host:port[/db]` or `redis+cluster://host:port,host:port,…`.
    #[arg(long, value_name = "URL", env = "SERENQA_EDGES")]
    to: String,
    /// Only the adjacency keys (enough for exploration; a fraction of the memory).
    #[arg(long)]
    adjacency_only: bool,
    /// FLUSHDB first (every primary of a cluster): drops everything in that database.
    #[arg(long)]
    flush: bool,
    /// Key/value pairs per MSET.
    #[arg(long, default_value_t = 2000)]
    batch: usize,
    #[command(flatten)]
    graph: GraphArgs,
}

#[derive(Args)]
struct CheckArgs {
    #[arg(long, value_name = "URL", env = "SERENQA_EDGES")]
    from: String,
    #[command(flatten)]
    graph: GraphArgs,
}

#[derive(Args)]
struct BenchArgs {
    /// Redis edge stores to measure (each exported from this graph), comma-separated.
    #[arg(long, value_name = "URL[,URL]", value_delimiter = ',', num_args = 1..)]
    redis: Vec<String>,
    /// Redis Cluster seed nodes (`host:port,host:port,…`), measured too when given.
    #[arg(long, value_name = "HOST:PORT,…")]
    cluster: Option<String>,
    /// Lookups per repetition.
    #[arg(long, default_value_t = 20_000)]
    lookups: usize,
    /// Nodes per MGET / pipeline.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// Batches outstanding on the connection.
    #[arg(long, default_value_t = 4)]
    in_flight: usize,
    /// Repetitions (the median is printed).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[command(flatten)]
    graph: GraphArgs,
}

pub fn run(args: EdgesArgs, progress: bool) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match args.command {
        EdgesCommand::Export(a) => {
            let target = RedisTarget::parse(&a.to).map_err(|e| anyhow!(e))?;
            let g = a.graph.load(progress)?;
            let opts = ExportOptions {
                edge_keys: !a.adjacency_only,
                flush: a.flush,
                batch: a.batch.max(1),
                progress,
                ..Default::default()
            };
            let r = rt.block_on(redis_store::export(&g, &target, &opts))?;
            println!(
                "exported {} adjacency keys and {} edge keys ({:.1} MB of keys and values) to {target} in {:.1}s",
                r.adjacency_keys,
                r.edge_keys,
                r.bytes as f64 / 1e6,
                r.seconds
            );
            Ok(())
        }
        EdgesCommand::Check(a) => {
            let target = RedisTarget::parse(&a.from).map_err(|e| anyhow!(e))?;
            let g = Arc::new(a.graph.load(progress)?);
            let bad = rt.block_on(async {
                let edges = RedisEdges::open(target.clone(), g.clone()).await?;
                redis_store::check(&g, &edges, 512).await
            })?;
            if bad.is_empty() {
                println!(
                    "{target}: all {} nodes' adjacency equals the graph's",
                    g.node_count()
                );
                Ok(())
            } else {
                Err(anyhow!(
                    "{target}: {} mismatching nodes, first: {}",
                    bad.len(),
                    bad.join("; ")
                ))
            }
        }
        EdgesCommand::Bench(a) => run_bench(a, progress, &rt),
    }
}

fn run_bench(a: BenchArgs, progress: bool, rt: &tokio::runtime::Runtime) -> Result<()> {
    let g = Arc::new(a.graph.load(progress)?);
    let nodes = bench::sample_nodes(&g, a.lookups, a.seed);
    let mean_degree: f64 =
        nodes.iter().map(|&u| g.degree(u) as f64).sum::<f64>() / nodes.len().max(1) as f64;
    println!(
        "neighbour lookups: {} sampled nodes (mean degree {:.0}), median of {} repetitions; `serenqa edges bench{}{}`",
        nodes.len(),
        mean_degree,
        a.reps,
        a.redis.iter().map(|u| format!(" --redis {u}")).collect::<String>(),
        a.cluster.as_deref().map(|c| format!(" --cluster {c}")).unwrap_or_default()
    );
    let mem = bench::memory(&g, &nodes, a.reps);
    let mut figures = vec![mem.clone()];
    let mut targets: Vec<RedisTarget> = a
        .redis
        .iter()
        .map(|u| RedisTarget::parse(u))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!(e))?;
    if let Some(c) = &a.cluster {
        targets.push(
            RedisTarget::parse(&format!(
                "redis+cluster://{}",
                c.trim_start_matches("redis+cluster://")
            ))
            .map_err(|e| anyhow!(e))?,
        );
    }
    for t in targets {
        let fs = rt.block_on(async {
            let edges = RedisEdges::open(t.clone(), g.clone()).await?;
            let mut fs = vec![bench::redis_sequential(&edges, &nodes, a.reps).await?];
            if !t.is_cluster() {
                fs.push(bench::redis_pipelined(&edges, &nodes, a.batch, a.reps).await?);
            }
            fs.push(bench::redis_batched(&edges, &nodes, a.batch, 1, a.reps).await?);
            fs.push(bench::redis_batched(&edges, &nodes, a.batch, a.in_flight, a.reps).await?);
            Ok::<_, serenqa_edges::EdgeError>(fs)
        })?;
        figures.extend(fs);
    }
    println!(
        "{:<86} {:>12} {:>14} {:>10}",
        "store", "lookups/s", "edges/s", "vs memory"
    );
    for f in &figures {
        println!(
            "{:<86} {:>12.0} {:>14.0} {:>9.3}×",
            f.label,
            f.lookups_per_sec,
            f.edges_per_sec,
            f.lookups_per_sec / mem.lookups_per_sec.max(1e-9)
        );
    }
    Ok(())
}
