//! The cost of building the question understanding on a graph snapshot (any schema), and a
//! schema-derived question asked and checked: run under `/usr/bin/time -v` for the peak RSS.
//!
//! `cargo run --release -p serenqa-pipeline --example understand_cost -- <graph.snap>`

use std::time::Instant;

use serenqa_graph::Graph;
use serenqa_pipeline::offline::schema_check::check_schema_question;
use serenqa_pipeline::offline::understand::{Metagraph, Understander};
use serenqa_pipeline::retrieval::OfflineRetriever;

fn vm_hwm() -> String {
    status_line("VmHWM")
}

fn vm_rss() -> String {
    status_line("VmRSS")
}

fn status_line(key: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "n/a".into())
}

fn main() -> Result<(), String> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: understand_cost <graph.snap>")?;
    let t = Instant::now();
    let g = Graph::load(std::path::Path::new(&path)).map_err(|e| e.to_string())?;
    println!(
        "graph: {} nodes, {} edges, loaded in {:.2?}; peak RSS {}",
        g.node_count(),
        g.edge_count(),
        t.elapsed(),
        vm_hwm()
    );
    let t = Instant::now();
    let meta = Metagraph::of(&g);
    println!(
        "metagraph: {:.2?} ({} relations)",
        t.elapsed(),
        (0..g.relation_count())
            .filter(|&r| !meta.ends(r as u16).is_empty())
            .count()
    );
    let t = Instant::now();
    let u = Understander::new(&g)?;
    println!(
        "question understanding alone (schema lexicon + name index): {:.2?}; peak RSS {}, RSS after {}",
        t.elapsed(),
        vm_hwm(),
        vm_rss()
    );
    drop(u);
    println!("RSS with the understanding dropped: {}", vm_rss());
    let t = Instant::now();
    let r = OfflineRetriever::new(&g);
    let u = r.understander.as_ref()?;
    println!(
        "offline retriever (benchmark grammar + question understanding) built in {:.2?}: {} type nouns, {} relation phrases, {} pairs; peak RSS {}",
        t.elapsed(),
        u.lex.nouns.len(),
        u.lex.phrases.len(),
        u.lex.pairs.len() / 2,
        vm_hwm()
    );
    println!("RSS with the offline retriever: {}", vm_rss());
    let c = check_schema_question(&g, &r)?;
    println!(
        "check: {:?} → {} of {} answers, ok {}, {} µs\n  {}",
        c.question,
        c.answered,
        c.expected,
        c.ok,
        c.micros,
        c.cypher.unwrap_or_default()
    );
    Ok(())
}
