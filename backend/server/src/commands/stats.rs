//! `serenqa stats`: node and edge counts by type.

use anyhow::Result;
use clap::Args;

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct StatsArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: StatsArgs, progress: bool) -> Result<()> {
    let g = args.graph.load(progress)?;
    let info = crate::api::graph::graph_info(&g);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
    println!(
        "graph: {}{}",
        info.name,
        if info.synthetic {
            " (SYNTHETIC — not real data)"
        } else {
            ""
        }
    );
    println!("source: {}", info.source);
    println!("{} nodes, {} edges", info.nodes, info.edges);
    println!("\nnodes by type:");
    for t in &info.node_types {
        println!("  {:<28} {:>12}", t.name, t.count);
    }
    println!("\nedges by type:");
    for r in &info.relations {
        println!("  {:<28} {:>12}", r.name, r.count);
    }
    if !info.dropped.is_empty() {
        println!("\ndropped by the subgraph filter:");
        for d in &info.dropped {
            println!("  {:<28} {:>12}", d.name, d.count);
        }
    }
    Ok(())
}
