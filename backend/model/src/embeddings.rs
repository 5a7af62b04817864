//! Node embeddings for the relevance term.
//!
//! [`Embeddings`] is a plain |V| × d f32 matrix (row-major) plus a description of how it was
//! made; any method that fills one — the training-free [`FastRp`] here, or a trained GCN later —
//! implements [`Embedder`] and stores the same way.
//!
//! FastRP-style propagation (RNS.md): X₀ is a very sparse random projection, then
//! X_h = D⁻¹ Â X_{h−1} with Â = W + I (the walk matrix plus self-loops, so D ≥ 1 and a node
//! keeps its own signal), embedding = Σₕ wₕ X_h, rows L2-normalised.
//! - X₀[v][k] ∈ {+1, −1, 0} with probabilities 1/6, 1/6, 2/3 (Achlioptas, s = 3; the scale
//!   √3 is dropped because rows are normalised at the end). The entry is a hash of
//!   (seed, FNV-1a of the node's `Type::identifier` key, k) — keyed by the node's key rather
//!   than its index, so the embedding of a node does not change when nodes are renumbered
//!   (a relabelled or re-imported graph gives the same embeddings up to summation order).
//! - Hop weights default to w = (0, 1, 1, 1) for h = 0..3 (X₀ alone is noise).
//! - Columns are independent, so propagation runs 16 columns at a time (one cache line per
//!   node per gather): memory is the output plus two |V| × 16 f32 buffers, whatever d is.
//!   Sums are accumulated in f64 per node, so results do not depend on the thread count.

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId, Section};

use crate::reorder::{Lists, WalkCsr};
use crate::transition::Transition;

/// How embeddings were made (stored with them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingInfo {
    /// `fastrp` (or the name of a later trained method).
    pub method: String,
    pub dim: usize,
    pub seed: u64,
    /// wₕ for h = 0..
    pub hop_weights: Vec<f64>,
    pub directed: bool,
    pub seconds: f64,
}

/// |V| × d embeddings, row-major f32 (memory-mapped when read from a snapshot).
#[derive(Clone, Debug, PartialEq)]
pub struct Embeddings {
    pub info: EmbeddingInfo,
    pub data: Section<f32>,
}

impl Embeddings {
    pub fn dim(&self) -> usize {
        self.info.dim
    }
    pub fn row(&self, n: NodeId) -> &[f32] {
        let d = self.info.dim;
        &self.data[n as usize * d..(n as usize + 1) * d]
    }
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.info.dim).unwrap_or(0)
    }
}

/// A way to compute embeddings for a graph.
pub trait Embedder {
    fn embed(&self, g: &Graph, progress: bool) -> Embeddings;
}

/// Training-free FastRP-style embeddings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FastRp {
    pub dim: usize,
    pub seed: u64,
    pub hop_weights: Vec<f64>,
    pub directed: bool,
}

impl Default for FastRp {
    fn default() -> Self {
        FastRp {
            dim: 64,
            seed: 42,
            hop_weights: vec![0.0, 1.0, 1.0, 1.0],
            directed: false,
        }
    }
}

/// Columns propagated together.
const BLOCK: usize = 16;

pub use serenqa_shared::rng::splitmix64;

/// FNV-1a 64 of `Type::identifier` without building the string.
fn key_hash(g: &Graph, n: NodeId) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let ty = g.type_display(g.node_type(n));
    for &b in ty
        .as_bytes()
        .iter()
        .chain(b"::")
        .chain(g.ident(n).as_bytes())
    {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// X₀[v][k] from the node's key hash.
#[inline]
pub fn projection_entry(seed: u64, key_hash: u64, k: usize) -> f32 {
    let node = splitmix64(seed ^ key_hash);
    match splitmix64(node.wrapping_add(k as u64)) % 6 {
        0 => 1.0,
        1 => -1.0,
        _ => 0.0,
    }
}

impl Embedder for FastRp {
    fn embed(&self, g: &Graph, progress: bool) -> Embeddings {
        let start = Instant::now();
        let t = Transition::new(g, self.directed);
        let sp =
            serenqa_graph::progress::spinner("embeddings: reordering the walk graph", progress);
        let w = WalkCsr::build(&t, Lists::Rows);
        sp.finish_and_clear();
        let mut e = self.embed_on(g, &w, progress);
        e.info.seconds = start.elapsed().as_secs_f64();
        e
    }
}

impl FastRp {
    /// Propagation on a prebuilt row-list graph ([`Lists::Rows`] of the same walk direction;
    /// for the undirected walk the pull lists are the same lists).
    pub fn embed_on(&self, g: &Graph, w: &WalkCsr, progress: bool) -> Embeddings {
        let start = Instant::now();
        let n = g.node_count();
        let d = self.dim;
        // X₀ rows by new index, from the original node's key.
        let hashes: Vec<u64> = w.perm.par_iter().map(|&v| key_hash(g, v)).collect();
        let mut inv = vec![0u32; n];
        for (j, &v) in w.perm.iter().enumerate() {
            inv[v as usize] = j as u32;
        }
        let mut out = vec![0.0f32; n * d];
        let hops = self.hop_weights.len().saturating_sub(1);
        let blocks = d.div_ceil(BLOCK);
        let bar = serenqa_graph::progress::count_bar(
            (blocks * hops.max(1)) as u64,
            "embeddings (passes)",
            progress,
        );
        let mut cur = vec![0.0f32; n * BLOCK];
        let mut next = vec![0.0f32; n * BLOCK];
        for blk in 0..blocks {
            let c0 = blk * BLOCK;
            let width = BLOCK.min(d - c0);
            cur.par_chunks_mut(BLOCK).enumerate().for_each(|(j, row)| {
                for (k, x) in row.iter_mut().enumerate() {
                    *x = if k < width {
                        projection_entry(self.seed, hashes[j], c0 + k)
                    } else {
                        0.0
                    };
                }
            });
            accumulate(
                &mut out,
                &cur,
                &inv,
                d,
                c0,
                width,
                self.hop_weights.first().copied().unwrap_or(0.0),
            );
            for h in 1..=hops {
                let cur_ref: &[f32] = &cur;
                next.par_chunks_mut(BLOCK).enumerate().for_each(|(j, row)| {
                    let mut acc = [0.0f64; BLOCK];
                    // Â = W + I: the node itself, then its neighbours with multiplicity (a
                    // dangling node has no list: D = 1 there).
                    for u in std::iter::once(j as u32).chain(w.list(j).iter().copied()) {
                        let src = &cur_ref[u as usize * BLOCK..u as usize * BLOCK + BLOCK];
                        for k in 0..BLOCK {
                            acc[k] += src[k] as f64;
                        }
                    }
                    let inv_d = 1.0 / (w.degree[j] as f64 + 1.0);
                    for k in 0..BLOCK {
                        row[k] = (acc[k] * inv_d) as f32;
                    }
                });
                std::mem::swap(&mut cur, &mut next);
                accumulate(&mut out, &cur, &inv, d, c0, width, self.hop_weights[h]);
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
        out.par_chunks_mut(d.max(1)).for_each(|row| {
            let norm = row
                .iter()
                .map(|&x| (x as f64) * (x as f64))
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 {
                row.iter_mut().for_each(|x| *x = (*x as f64 / norm) as f32);
            }
        });
        Embeddings {
            info: EmbeddingInfo {
                method: "fastrp".into(),
                dim: d,
                seed: self.seed,
                hop_weights: self.hop_weights.clone(),
                directed: self.directed,
                seconds: start.elapsed().as_secs_f64(),
            },
            data: out.into(),
        }
    }
}

/// out[v, c0..c0+width] += w · block[inv[v], ..width] (rows of `out` by node id, rows of
/// `block` by new index).
fn accumulate(
    out: &mut [f32],
    block: &[f32],
    inv: &[u32],
    d: usize,
    c0: usize,
    width: usize,
    w: f64,
) {
    if w == 0.0 || d == 0 {
        return;
    }
    out.par_chunks_mut(d).enumerate().for_each(|(v, row)| {
        let j = inv[v] as usize;
        let b = &block[j * BLOCK..j * BLOCK + BLOCK];
        for k in 0..width {
            row[c0 + k] = (row[c0 + k] as f64 + w * b[k] as f64) as f32;
        }
    });
}
