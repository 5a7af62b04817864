//! Degree-weighted path counts by sparse products.
//!
//! Each metagraph step becomes a CSR matrix over the local indices of its two node types
//! (a node's position in [`Graph::nodes_of_type`]), with entry `(u, v)` = Σ over `u`–`v` edges
//! of `(deg_step(u) · deg_reverse(v))^-w`, the degrees counted on the graph *as masked* (the
//! edges in the [`EdgeMask`] do not exist for anything computed here). The DWPC matrix of a
//! metapath is then the product of its steps' matrices: walks, each weighted by the product
//! of its edges' degree terms, exactly as DWPC weights paths.
//!
//! Products run from the disease side: a dense block of `|Disease| × |X|` rows (137 × 20,945
//! for genes on Hetionet, 23 MB of `f64`) times the next step's CSR, never `V × V` and never
//! a dense compound × gene block. Metapaths sharing a prefix share its products (a trie walked
//! depth first, so at most `max_len` blocks are alive). Rows are computed in parallel with
//! rayon, each row by one thread in a fixed order, so the result does not depend on the
//! thread count.
//!
//! **Walks, not paths.** Rephetio counts only paths without repeated nodes; products count
//! walks. The one repetition that matters for a label is corrected exactly: walks of a pair
//! `(c, d)` that cross the pair's *own* treatment edge (possible only through one treatment
//! step, e.g. `CbGbCtD` with the middle compound = `c`) are subtracted —
//! `prefix_diag[d] · T[d, c] · suffix_diag[c]` — so a known treatment is never evidence for
//! itself. Other repeats (`DaGaD` returning to the disease, …) stay counted; their effect is a
//! mild extra weight on hubs' neighbourhoods, which the learner sees on every pair alike.

use std::collections::HashMap;

use rayon::prelude::*;
use serenqa_graph::{Graph, NodeId, TypeId};

use crate::metagraph::Metagraph;

/// Edges treated as absent (a fold's held-out treatment edges). One bit per edge id.
#[derive(Clone, Debug)]
pub struct EdgeMask {
    bits: Vec<u64>,
    count: usize,
}

impl EdgeMask {
    pub fn empty(edges: usize) -> Self {
        EdgeMask {
            bits: vec![0; edges.div_ceil(64)],
            count: 0,
        }
    }
    pub fn insert(&mut self, e: u32) {
        let (w, b) = (e as usize / 64, e % 64);
        if self.bits[w] & (1 << b) == 0 {
            self.bits[w] |= 1 << b;
            self.count += 1;
        }
    }
    pub fn contains(&self, e: u32) -> bool {
        self.bits
            .get(e as usize / 64)
            .is_some_and(|w| w & (1 << (e % 64)) != 0)
    }
    pub fn len(&self) -> usize {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Position of every node within its type.
#[derive(Clone, Debug)]
pub struct LocalIndex {
    pub local: Vec<u32>,
}

impl LocalIndex {
    pub fn of(g: &Graph) -> Self {
        let mut local = vec![0u32; g.node_count()];
        for t in 0..g.type_count() {
            for (i, &n) in g.nodes_of_type(t as TypeId).iter().enumerate() {
                local[n as usize] = i as u32;
            }
        }
        LocalIndex { local }
    }
}

/// A step's degree-weighted adjacency (CSR, rows = `from` type, columns = `to` type).
#[derive(Clone, Debug)]
pub struct StepMatrix {
    pub rows: usize,
    pub cols: usize,
    pub offsets: Vec<u32>,
    pub idx: Vec<u32>,
    pub val: Vec<f64>,
    /// Edges per row (the step degree of each `from` node), as counted on the masked graph.
    pub degree: Vec<u32>,
}

impl StepMatrix {
    pub fn row(&self, r: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.offsets[r] as usize, self.offsets[r + 1] as usize);
        (&self.idx[a..b], &self.val[a..b])
    }
    /// Σ of the entries at (r, c) (parallel edges add up); 0 when absent.
    pub fn get(&self, r: usize, c: u32) -> f64 {
        let (i, v) = self.row(r);
        i.iter()
            .zip(v)
            .filter(|(&x, _)| x == c)
            .map(|(_, &w)| w)
            .sum()
    }
}

/// Builds every step's matrix for `g` without the masked edges, damping `w`.
pub fn step_matrices(
    g: &Graph,
    mg: &Metagraph,
    li: &LocalIndex,
    mask: &EdgeMask,
    w: f64,
) -> Vec<StepMatrix> {
    (0..mg.steps.len())
        .into_par_iter()
        .map(|s| step_matrix(g, mg, li, mask, w, s))
        .collect()
}

fn step_matrix(
    g: &Graph,
    mg: &Metagraph,
    li: &LocalIndex,
    mask: &EdgeMask,
    w: f64,
    s: usize,
) -> StepMatrix {
    let st = &mg.steps[s];
    let from = g.nodes_of_type(st.from);
    let cols = g.nodes_of_type(st.to).len();
    let (_, out_t, _) = g.out_csr();
    let (_, in_s, _, in_e) = g.in_csr();
    let mut offsets = Vec::with_capacity(from.len() + 1);
    offsets.push(0u32);
    let mut idx = Vec::new();
    for &u in from {
        if st.out {
            for i in g.out_range_rel(u, st.rel) {
                let v: NodeId = out_t[i];
                if g.node_type(v) == st.to && !mask.contains(i as u32) {
                    idx.push(li.local[v as usize]);
                }
            }
        }
        if st.inn {
            for i in g.in_range_rel(u, st.rel) {
                let v: NodeId = in_s[i];
                if g.node_type(v) == st.to && !mask.contains(in_e[i]) {
                    idx.push(li.local[v as usize]);
                }
            }
        }
        offsets.push(idx.len() as u32);
    }
    let degree: Vec<u32> = offsets.windows(2).map(|p| p[1] - p[0]).collect();
    // Degree of each column node over the reverse step = how often it appears as a column.
    let mut col_deg = vec![0u32; cols];
    for &c in &idx {
        col_deg[c as usize] += 1;
    }
    let mut val = Vec::with_capacity(idx.len());
    for r in 0..from.len() {
        let (a, b) = (offsets[r] as usize, offsets[r + 1] as usize);
        let du = degree[r] as f64;
        for &c in &idx[a..b] {
            val.push((du * col_deg[c as usize] as f64).powf(-w));
        }
    }
    StepMatrix {
        rows: from.len(),
        cols,
        offsets,
        idx,
        val,
        degree,
    }
}

/// Dense row block × CSR: `out[i] = Σ_x a[i][x] · M[x]`, rows in parallel, fixed order.
fn times(a: &[f64], rows: usize, m: &StepMatrix) -> Vec<f64> {
    let inner = m.rows;
    let mut out = vec![0.0f64; rows * m.cols];
    out.par_chunks_mut(m.cols.max(1))
        .enumerate()
        .for_each(|(i, o)| {
            let row = &a[i * inner..(i + 1) * inner];
            for (x, &ax) in row.iter().enumerate() {
                if ax == 0.0 {
                    continue;
                }
                let (ix, vx) = m.row(x);
                for (&y, &wy) in ix.iter().zip(vx) {
                    o[y as usize] += ax * wy;
                }
            }
        });
    out
}

/// Diagonal of the product of `steps` (a type back to itself): Σ of the weights of the
/// closed walks at each node. Per node a sparse propagation, nodes in parallel.
fn closed_walks(mats: &[StepMatrix], steps: &[usize], n: usize) -> Vec<f64> {
    if steps.is_empty() {
        return vec![1.0; n];
    }
    (0..n)
        .into_par_iter()
        .map(|c| {
            let mut v: Vec<(u32, f64)> = vec![(c as u32, 1.0)];
            for &s in steps {
                let m = &mats[s];
                let mut next: Vec<(u32, f64)> = Vec::new();
                for &(x, a) in &v {
                    let (ix, vx) = m.row(x as usize);
                    next.extend(ix.iter().zip(vx).map(|(&y, &w)| (y, a * w)));
                }
                next.sort_by_key(|p| p.0); // stable: equal keys keep their order
                let mut merged: Vec<(u32, f64)> = Vec::with_capacity(next.len());
                for (y, a) in next {
                    match merged.last_mut() {
                        Some(l) if l.0 == y => l.1 += a,
                        _ => merged.push((y, a)),
                    }
                }
                v = merged;
            }
            v.iter()
                .find(|p| p.0 == c as u32)
                .map(|p| p.1)
                .unwrap_or(0.0)
        })
        .collect()
}

/// DWPC of every metapath (given from the `rows` type to the `cols` type), each a
/// `rows × cols` row-major `f32` matrix, with the pair's own treatment edges removed from
/// its walks (module docs).
pub fn dwpc_all(
    mats: &[StepMatrix],
    mg: &Metagraph,
    paths: &[Vec<usize>],
    rows: usize,
) -> Vec<Vec<f32>> {
    let mut out: Vec<Option<Vec<f32>>> = vec![None; paths.len()];
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by(|&a, &b| paths[a].cmp(&paths[b]));
    let start_cols = rows;
    // Identity block: each row starts at itself.
    let mut id = vec![0.0f64; rows * start_cols];
    for i in 0..rows {
        id[i * start_cols + i] = 1.0;
    }
    let mut suffix_cache: HashMap<Vec<usize>, Vec<f64>> = HashMap::new();
    let ctx = Ctx {
        mats,
        mg,
        paths,
        rows,
    };
    ctx.descend(&id, 0, &order, None, &mut suffix_cache, &mut out);
    out.into_iter()
        .map(std::option::Option::unwrap_or_default)
        .collect()
}

struct Ctx<'a> {
    mats: &'a [StepMatrix],
    mg: &'a Metagraph,
    paths: &'a [Vec<usize>],
    rows: usize,
}

/// Where the treatment step sits on the current prefix: (position, prefix diagonal).
type TreatAt = Option<(usize, Vec<f64>)>;

impl Ctx<'_> {
    fn descend(
        &self,
        state: &[f64],
        depth: usize,
        group: &[usize],
        treat: TreatAt,
        cache: &mut HashMap<Vec<usize>, Vec<f64>>,
        out: &mut [Option<Vec<f32>>],
    ) {
        let mut i = 0;
        while i < group.len() {
            let p = &self.paths[group[i]];
            if p.len() == depth {
                out[group[i]] = Some(self.finish(state, p, &treat, cache));
                i += 1;
                continue;
            }
            let s = p[depth];
            let mut j = i;
            while j < group.len()
                && self.paths[group[j]].len() > depth
                && self.paths[group[j]][depth] == s
            {
                j += 1;
            }
            let m = &self.mats[s];
            let next_treat = if self.mg.steps[s].treatment {
                // state is rows × |from type| = rows × rows (the treatment step leaves the row type).
                let diag: Vec<f64> = (0..self.rows)
                    .map(|r| {
                        if m.rows == self.rows {
                            state[r * m.rows + r]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                Some((depth, diag))
            } else {
                treat.clone()
            };
            let next = times(state, self.rows, m);
            self.descend(&next, depth + 1, &group[i..j], next_treat, cache, out);
            i = j;
        }
    }

    fn finish(
        &self,
        state: &[f64],
        p: &[usize],
        treat: &TreatAt,
        cache: &mut HashMap<Vec<usize>, Vec<f64>>,
    ) -> Vec<f32> {
        let mut v = state.to_vec();
        if let Some((k, pd)) = treat {
            let tm = &self.mats[p[*k]];
            let suffix = p[k + 1..].to_vec();
            let cols = tm.cols;
            let qc = cache
                .entry(suffix.clone())
                .or_insert_with(|| closed_walks(self.mats, &suffix, cols));
            for d in 0..self.rows.min(tm.rows) {
                if pd[d] == 0.0 {
                    continue;
                }
                let (ix, vx) = tm.row(d);
                for (&c, &w) in ix.iter().zip(vx) {
                    let x = &mut v[d * cols + c as usize];
                    *x = (*x - pd[d] * w * qc[c as usize]).max(0.0);
                }
            }
        }
        v.into_iter().map(|x| x as f32).collect()
    }
}
