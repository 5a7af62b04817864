//! Neighbour lookups per second — the figure the paper's Appendix D.2 moved from Neo4j to
//! Redis for. Measured, never asserted: `serenqa edges bench` prints these.
//!
//! A lookup = all incident edges of one node, decoded into [`Incident`]s. The same seeded
//! sample of nodes (nodes with at least one edge, uniformly) is used for every store.

use std::time::Instant;

use serenqa_graph::{Graph, NodeId};

use crate::{EdgeResult, EdgeSource, Incident, MemoryEdges, RedisEdges};

/// One measured configuration: the median over repetitions.
#[derive(Clone, Debug)]
pub struct Figure {
    pub label: String,
    pub lookups: usize,
    /// Median lookups per second.
    pub lookups_per_sec: f64,
    /// Median incident edges decoded per second.
    pub edges_per_sec: f64,
    pub reps: usize,
}

/// `n` nodes with at least one edge, sampled with a fixed seed (SplitMix64).
pub fn sample_nodes(g: &Graph, n: usize, seed: u64) -> Vec<NodeId> {
    let with_edges: Vec<NodeId> = (0..g.node_count() as NodeId)
        .filter(|&u| g.degree(u) > 0)
        .collect();
    if with_edges.is_empty() {
        return Vec::new();
    }
    let mut rng = serenqa_shared::rng::SplitMix64::new(seed);
    (0..n)
        .map(|_| with_edges[rng.below(with_edges.len())])
        .collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => 0.0,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

fn figure(label: String, lookups: usize, runs: Vec<(f64, usize)>) -> Figure {
    let reps = runs.len();
    Figure {
        label,
        lookups,
        lookups_per_sec: median(
            runs.iter()
                .map(|(s, _)| lookups as f64 / s.max(1e-9))
                .collect(),
        ),
        edges_per_sec: median(runs.iter().map(|(s, e)| *e as f64 / s.max(1e-9)).collect()),
        reps,
    }
}

fn count(lists: &[Vec<Incident>]) -> usize {
    lists.iter().map(Vec::len).sum()
}

/// The in-memory CSR store, one node at a time.
pub fn memory(g: &Graph, nodes: &[NodeId], reps: usize) -> Figure {
    let mem = MemoryEdges::new(g);
    let runs = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            let mut edges = 0;
            for &u in nodes {
                edges += std::hint::black_box(mem.incident(u)).len();
            }
            (t.elapsed().as_secs_f64(), edges)
        })
        .collect();
    figure("in-memory CSR".into(), nodes.len(), runs)
}

/// Redis, one `GET` per lookup, waiting for each reply (no pipelining).
pub async fn redis_sequential(
    edges: &RedisEdges,
    nodes: &[NodeId],
    reps: usize,
) -> EdgeResult<Figure> {
    let mut runs = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let mut n = 0;
        for &u in nodes {
            n += edges.incident(u).await?.len();
        }
        runs.push((t.elapsed().as_secs_f64(), n));
    }
    Ok(figure(
        format!("{} GET, one at a time", edges.target()),
        nodes.len(),
        runs,
    ))
}

/// Redis, `MGET` batches of `batch` nodes, `in_flight` batches outstanding on the connection.
pub async fn redis_batched(
    edges: &RedisEdges,
    nodes: &[NodeId],
    batch: usize,
    in_flight: usize,
    reps: usize,
) -> EdgeResult<Figure> {
    let mut runs = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let mut n = 0;
        for group in nodes.chunks(batch.max(1) * in_flight.max(1)) {
            let futs = group.chunks(batch.max(1)).map(|c| edges.incident_many(c));
            for r in futures_util::future::join_all(futs).await {
                n += count(&r?);
            }
        }
        runs.push((t.elapsed().as_secs_f64(), n));
    }
    Ok(figure(
        format!("{} MGET ×{batch}, {in_flight} in flight", edges.target()),
        nodes.len(),
        runs,
    ))
}

/// Redis, explicit pipelines of `batch` `GET`s (single instance only).
pub async fn redis_pipelined(
    edges: &RedisEdges,
    nodes: &[NodeId],
    batch: usize,
    reps: usize,
) -> EdgeResult<Figure> {
    let mut runs = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let mut n = 0;
        for c in nodes.chunks(batch.max(1)) {
            n += count(&edges.incident_pipelined(c).await?);
        }
        runs.push((t.elapsed().as_secs_f64(), n));
    }
    Ok(figure(
        format!("{} pipeline of {batch} GETs", edges.target()),
        nodes.len(),
        runs,
    ))
}
