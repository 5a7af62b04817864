//! `serenqa cypher 'MATCH …'`: one read-only query against the graph, printed as a table or
//! JSON. Errors (syntax with line:column, read-only, budget) come back as one line.

use std::time::Duration;

use anyhow::{anyhow, Result};
use clap::Args;
use serenqa_cypher::{Budget, Options};

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct CypherArgs {
    /// The query (read-only Cypher).
    query: String,
    #[command(flatten)]
    graph: GraphArgs,
    /// Print `{columns, rows}` JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Time budget in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
    /// Row budget (rows produced by all steps of the query together).
    #[arg(long, default_value_t = 5_000_000)]
    max_rows: u64,
    /// Widest table cell, in characters.
    #[arg(long, default_value_t = 80)]
    width: usize,
}

pub fn run(args: CypherArgs, progress: bool) -> Result<()> {
    let g = args.graph.load(progress)?;
    let opts = Options {
        budget: Budget::with_time_rows(Duration::from_millis(args.timeout_ms), args.max_rows),
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let r = serenqa_cypher::execute(&g, &args.query, &opts).map_err(|e| anyhow!("{e}"))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r.to_json())?);
    } else {
        print!("{}", r.to_table(args.width));
        if progress {
            eprintln!("in {:.2?}", t.elapsed());
        }
    }
    Ok(())
}
