//! `serenqa score` (R, N, S and RNS of a partition) and `serenqa partition` (RNS-guided
//! partition of a candidate set by the greedy swap).

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use serenqa_model::slice::{self, BlockCache};
use serenqa_shared::api::NodeView;
use serenqa_shared::rns::Weights;

use crate::graph_source::GraphArgs;

fn parse_weights(s: &str) -> Result<Weights, String> {
    Weights::parse(s).map_err(|e| e.to_string())
}

fn ids(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[derive(Args)]
pub struct ScoreArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Existing answers Ae: comma-separated ids (`Compound::DB00188` or a bare identifier).
    #[arg(long, value_name = "ID,ID")]
    existing: String,
    /// Serendipity answers As.
    #[arg(long, value_name = "ID,ID")]
    serendipity: String,
    /// Weights α,β,γ of R, N, S (default: the shipped fitted weights, `backend/model/rns-weights.json`).
    #[arg(long, value_name = "A,B,C", value_parser = parse_weights)]
    weights: Option<Weights>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct PartitionArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Candidate answers Ac: comma-separated ids.
    #[arg(long, value_name = "ID,...")]
    candidates: String,
    #[arg(long, value_name = "A,B,C", value_parser = parse_weights)]
    weights: Option<Weights>,
    #[arg(long)]
    json: bool,
}

fn names(v: &[NodeView]) -> String {
    v.iter()
        .map(|n| format!("{}::{} ({})", n.kind, n.id, n.name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn run_score(args: ScoreArgs, progress: bool) -> Result<()> {
    let (g, model) = crate::model_source::load_required(&args.graph, progress)?;
    let t = Instant::now();
    let wf = crate::weights::for_request(args.weights, &serenqa_model::weights::shipped());
    let w = wf.weights;
    let r = slice::score(
        &g,
        &model,
        &BlockCache::new(1),
        &ids(&args.existing),
        &ids(&args.serendipity),
        &wf,
    )?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!("existing:    {}", names(&r.existing));
    println!("serendipity: {}", names(&r.serendipity));
    println!(
        "weights:     α={:.3} β={:.3} γ={:.3} ({})",
        w.alpha, w.beta, w.gamma, wf.source.label
    );
    println!("R   = {:.6}", r.terms.r);
    println!("N   = {:.6}", r.terms.n);
    println!("S   = {:.6}", r.terms.s);
    println!("RNS = {:.6}", r.terms.rns);
    eprintln!("scored in {ms:.1} ms");
    Ok(())
}

pub fn run_partition(args: PartitionArgs, progress: bool) -> Result<()> {
    let (g, model) = crate::model_source::load_required(&args.graph, progress)?;
    let t = Instant::now();
    let wf = crate::weights::for_request(args.weights, &serenqa_model::weights::shipped());
    let w = wf.weights;
    let r = slice::partition(&g, &model, &BlockCache::new(1), &ids(&args.candidates), &wf)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!("existing (Ae):    {}", names(&r.existing));
    println!("serendipity (As): {}", names(&r.serendipity));
    println!(
        "weights:          α={:.3} β={:.3} γ={:.3} ({})",
        w.alpha, w.beta, w.gamma, wf.source.label
    );
    println!(
        "initial RNS = {:.6}  →  RNS = {:.6} after {} swaps ({} evaluations)",
        r.initial.rns, r.terms.rns, r.swaps, r.evaluations
    );
    println!(
        "R = {:.6}, N = {:.6}, S = {:.6}",
        r.terms.r, r.terms.n, r.terms.s
    );
    eprintln!("partitioned in {ms:.1} ms");
    Ok(())
}
