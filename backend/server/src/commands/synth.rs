//! `serenqa synth`: a CKG-shaped synthetic graph, written as a snapshot.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use serenqa_graph::synth::{generate, SynthSpec};

use crate::rss;

#[derive(Args)]
pub struct SynthArgs {
    /// Number of nodes (CKG scale: 15400000).
    #[arg(long, default_value_t = 100_000)]
    pub nodes: u64,
    /// Number of edges (CKG scale: 200000000).
    #[arg(long, default_value_t = 1_000_000)]
    pub edges: u64,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Snapshot to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

pub fn run(args: SynthArgs, progress: bool) -> Result<()> {
    let t = Instant::now();
    let g = generate(&SynthSpec {
        nodes: args.nodes,
        edges: args.edges,
        seed: args.seed,
        progress,
    });
    let gen_time = t.elapsed();
    g.save(&args.out)?;
    println!(
        "synthetic CKG-shaped graph: {} nodes, {} edges, {} node types, {} relation types; generated in {:.2?}, written to {} in {:.2?}; peak RSS {}",
        g.node_count(),
        g.edge_count(),
        g.type_count(),
        g.relation_count(),
        gen_time,
        args.out.display(),
        t.elapsed() - gen_time,
        rss::peak_rss_bytes().map(rss::human_bytes).unwrap_or_else(|| "n/a".into())
    );
    Ok(())
}
