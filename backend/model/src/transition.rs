//! The transition model P1 and P3 = Σₕ αₕ P1ʰ (αₕ = h/6), applied to vectors and evaluated
//! exactly on small blocks — never materialised.
//!
//! Walk matrix W: M + Mᵀ by default (every stored edge walkable both ways), M alone with
//! `directed`. Edge multiplicities count (two parallel edges weigh twice). A node with no
//! walkable edge gets a self-loop (P1[i][i] = 1), so P1 is row-stochastic.
//!
//! Everything reads the graph's CSR arrays directly: a node's walkable neighbours are its
//! out-list (plus its in-list when undirected), so no symmetric copy of the graph is built.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;
use serenqa_graph::{Graph, NodeId};

/// α₁, α₂, α₃ for k = 3.
pub const ALPHA: [f64; 3] = [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0];

/// Nodes per rayon task in the vector passes: big enough to amortise scheduling, small
/// enough to balance hubs.
const CHUNK: usize = 1 << 13;

/// Multiplicative hasher for u32 keys (std's SipHash costs more than the work per key here).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);
impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517C_C1B7_2722_0A95);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
/// Work units of [`Transition::block`]: at most this many, and their partial blocks together
/// at most `BLOCK_PARTIALS_F64` values. Both depend on the input only, so the float sums
/// never depend on scheduling.
const BLOCK_CHUNKS: usize = 32;
const BLOCK_PARTIALS_F64: usize = 2 << 20;

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// P1 / P3 over one graph.
#[derive(Clone, Copy)]
pub struct Transition<'g> {
    g: &'g Graph,
    directed: bool,
}

impl<'g> Transition<'g> {
    pub fn new(g: &'g Graph, directed: bool) -> Self {
        Transition { g, directed }
    }

    pub fn graph(&self) -> &'g Graph {
        self.g
    }

    pub fn directed(&self) -> bool {
        self.directed
    }

    /// Walkable degree Σₖ W[i][k] (0 for a dangling node).
    #[inline]
    pub fn degree(&self, i: NodeId) -> u64 {
        let (oo, _, _) = self.g.out_csr();
        let i = i as usize;
        let out = oo[i + 1] - oo[i];
        if self.directed {
            out
        } else {
            let (io, _, _, _) = self.g.in_csr();
            out + io[i + 1] - io[i]
        }
    }

    /// Walkable neighbours of `i` with multiplicity (a dangling node yields itself once),
    /// i.e. P1[i][l] = (count of l) / max(1, degree).
    #[inline]
    pub fn for_each_neighbor(&self, i: NodeId, mut f: impl FnMut(NodeId)) {
        let (_, out_t, _) = self.g.out_csr();
        let r = self.g.out_range(i);
        let mut any = !r.is_empty();
        for &l in &out_t[r] {
            f(l);
        }
        if !self.directed {
            let (_, in_s, _, _) = self.g.in_csr();
            let r = self.g.in_range(i);
            any |= !r.is_empty();
            for &l in &in_s[r] {
                f(l);
            }
        }
        if !any {
            f(i);
        }
    }

    /// Nodes l with P1[l][x] > 0, with multiplicity W[l][x] (x itself once when dangling).
    /// Undirected W is symmetric, so this is the neighbour list; directed, the in-list.
    #[inline]
    pub fn for_each_predecessor(&self, x: NodeId, mut f: impl FnMut(NodeId)) {
        if !self.directed {
            return self.for_each_neighbor(x, f);
        }
        let (_, in_s, _, _) = self.g.in_csr();
        for &l in &in_s[self.g.in_range(x)] {
            f(l);
        }
        if self.degree(x) == 0 {
            f(x);
        }
    }

    /// Row i of P1 as sorted (column, probability) pairs.
    pub fn p1_row(&self, i: NodeId) -> Vec<(NodeId, f64)> {
        let mut cols = Vec::new();
        self.for_each_neighbor(i, |l| cols.push(l));
        cols.sort_unstable();
        let inv = 1.0 / cols.len() as f64;
        let mut row: Vec<(NodeId, f64)> = Vec::new();
        for c in cols {
            match row.last_mut() {
                Some((last, p)) if *last == c => *p += inv,
                _ => row.push((c, inv)),
            }
        }
        row
    }

    /// 1 / max(1, degree) for every node: the scale that turns x into z = x ∘ (1/deg) before
    /// a pull pass.
    pub fn inv_degrees(&self) -> Vec<f64> {
        let n = self.g.node_count();
        let mut inv = vec![0.0; n];
        inv.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (k, v) in chunk.iter_mut().enumerate() {
                    let d = self.degree((c * CHUNK + k) as NodeId);
                    *v = 1.0 / d.max(1) as f64;
                }
            });
        inv
    }

    #[inline(always)]
    fn pull_one(&self, z: &[f64], j: usize) -> f64 {
        self.pull(z, j).0
    }

    /// (P1ᵀx)_j from z = x ∘ inv_deg, and 1/max(1, deg_j) (read from the same offsets).
    #[inline(always)]
    pub(crate) fn pull(&self, z: &[f64], j: usize) -> (f64, f64) {
        let (oo, out_t, _) = self.g.out_csr();
        let (io, in_s, _, _) = self.g.in_csr();
        let (ia, ib) = (io[j] as usize, io[j + 1] as usize);
        let mut acc = 0.0;
        for &i in &in_s[ia..ib] {
            acc += z[i as usize];
        }
        let (oa, ob) = (oo[j] as usize, oo[j + 1] as usize);
        if self.directed {
            if oa == ob {
                acc += z[j];
            }
            (acc, 1.0 / (ob - oa).max(1) as f64)
        } else {
            for &i in &out_t[oa..ob] {
                acc += z[i as usize];
            }
            if oa == ob && ia == ib {
                acc += z[j];
            }
            (acc, 1.0 / (ob - oa + ib - ia).max(1) as f64)
        }
    }

    /// y = P1ᵀ x (parallel). `scratch` receives z = x ∘ inv_deg.
    pub fn p1t(&self, x: &[f64], inv_deg: &[f64], scratch: &mut [f64], y: &mut [f64]) {
        scratch
            .par_iter_mut()
            .zip(x.par_iter().zip(inv_deg))
            .for_each(|(z, (x, d))| *z = x * d);
        let z: &[f64] = scratch;
        y.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
            let base = c * CHUNK;
            for (k, v) in out.iter_mut().enumerate() {
                *v = self.pull_one(z, base + k);
            }
        });
    }

    /// y = P3ᵀ x = Σₕ αₕ (P1ᵀ)ʰ x: three sparse passes.
    pub fn p3t(&self, x: &[f64], inv_deg: &[f64], y: &mut [f64]) {
        let n = x.len();
        let mut s = vec![0.0; n];
        let mut h1 = vec![0.0; n];
        let mut h2 = vec![0.0; n];
        self.p1t(x, inv_deg, &mut s, &mut h1);
        self.p1t(&h1, inv_deg, &mut s, &mut h2);
        self.p1t(&h2, inv_deg, &mut s, y);
        y.par_iter_mut()
            .zip(h1.par_iter().zip(h2.par_iter()))
            .for_each(|(y3, (a, b))| *y3 = ALPHA[0] * a + ALPHA[1] * b + ALPHA[2] * *y3);
    }

    /// (P3ᵀx)ⱼ for each j of `at`, for an x with few non-zeros (`x`: (node, mass) pairs) —
    /// exact, and without a pass over the whole graph: x is pushed forward twice (touching
    /// only the 2-hop neighbourhood of its support, with multiplicity), then each j pulls its
    /// third hop from its own predecessors. Cost: Σ deg over the 1-hop set of x, plus Σ deg
    /// over `at`; a request on a CKG-sized graph reads tens of millions of entries instead of
    /// three passes over all 400M adjacency entries. Sums run in a fixed order (x's order,
    /// then adjacency order), so the result is identical on every run.
    pub fn p3t_at(&self, x: &[(NodeId, f64)], at: &[NodeId]) -> Vec<f64> {
        let n = self.g.node_count();
        // Zeroed pages come from the OS lazily: only the touched part of the graph costs.
        let mut h1 = vec![0.0f64; n];
        let mut h2 = vec![0.0f64; n];
        let mut support: Vec<NodeId> = Vec::new();
        for &(s, m) in x {
            if m == 0.0 || s as usize >= n {
                continue;
            }
            let share = m / self.degree(s).max(1) as f64;
            self.for_each_neighbor(s, |l| {
                let v = &mut h1[l as usize];
                if *v == 0.0 {
                    support.push(l);
                }
                *v += share;
            });
        }
        let mut support2: Vec<NodeId> = Vec::new();
        for &k in &support {
            let share = h1[k as usize] / self.degree(k).max(1) as f64;
            self.for_each_neighbor(k, |l| {
                let v = &mut h2[l as usize];
                if *v == 0.0 {
                    support2.push(l);
                }
                *v += share;
            });
        }
        // z2 = h2 / deg on h2's support, so the last hop reads one value per edge (not the
        // predecessor's offsets as well: at CKG size each is a cache miss).
        let mut z2 = vec![0.0f64; n];
        for &l in &support2 {
            z2[l as usize] = h2[l as usize] / self.degree(l).max(1) as f64;
        }
        // Each j's sum runs in its own fixed order, so the parallel map is deterministic.
        at.par_iter()
            .with_min_len(1024)
            .map(|&j| {
                if j as usize >= n {
                    return 0.0;
                }
                let mut h3 = 0.0;
                self.for_each_predecessor(j, |l| h3 += z2[l as usize]);
                ALPHA[0] * h1[j as usize] + ALPHA[1] * h2[j as usize] + ALPHA[2] * h3
            })
            .collect()
    }

    /// The exact block P3[A][A] (|A| × |A|, row-major), by sparse propagation meeting in the
    /// middle: with f₁ᵢ = P1[i][·] (out of i) and b₁ₓ = P1[·][x] (into x),
    /// P1²[i][x] = Σₖ f₁ᵢ[k] b₁ₓ[k] and P1³[i][x] = Σₖ f₁ᵢ[k] Σₗ P1[k][l] b₁ₓ[l].
    /// The middle hop (k → l) runs over k in the union of the 1-hop sets of A; a low-degree k
    /// scans its neighbours, a hub k instead looks up each l of the (small) union of
    /// predecessor sets, so no 2-hop neighbourhood is ever enumerated.
    pub fn block(&self, a: &[NodeId]) -> Vec<f64> {
        let na = a.len();
        if na == 0 {
            return Vec::new();
        }
        let pos: FastMap<NodeId, Vec<u32>> = {
            let mut m: FastMap<NodeId, Vec<u32>> = FastMap::default();
            for (x, &node) in a.iter().enumerate() {
                m.entry(node).or_default().push(x as u32);
            }
            m
        };
        // k → [(i, P1[i][k])]
        let mut fmap: FastMap<NodeId, Vec<(u32, f64)>> = FastMap::default();
        for (i, &node) in a.iter().enumerate() {
            for (k, p) in self.p1_row(node) {
                fmap.entry(k).or_default().push((i as u32, p));
            }
        }
        // l → [(x, P1[l][x])], flattened in (l, x) order and found through a bitmap of the
        // predecessor set with a rank directory: a bit test and a popcount instead of a hash
        // probe (most scanned neighbours are not predecessors; 2 MB + 1 MB at CKG scale,
        // cache-resident).
        let mut triples: Vec<(NodeId, u32, f64)> = Vec::new();
        for (x, &node) in a.iter().enumerate() {
            let mut preds = Vec::new();
            self.for_each_predecessor(node, |l| preds.push(l));
            preds.sort_unstable();
            let mut k = 0;
            while k < preds.len() {
                let l = preds[k];
                let mut cnt = 0u64;
                while k < preds.len() && preds[k] == l {
                    cnt += 1;
                    k += 1;
                }
                let p = cnt as f64 / self.degree(l).max(1) as f64;
                triples.push((l, x as u32, p));
            }
        }
        // Stable: each l keeps its x in ascending order.
        triples.sort_by_key(|&(l, _, _)| l);
        let mut bkeys: Vec<NodeId> = Vec::new();
        let mut bstart: Vec<u32> = Vec::new();
        let bflat: Vec<(u32, f64)> = triples.iter().map(|&(_, x, p)| (x, p)).collect();
        for (r, &(l, _, _)) in triples.iter().enumerate() {
            if bkeys.last() != Some(&l) {
                bkeys.push(l);
                bstart.push(r as u32);
            }
        }
        bstart.push(bflat.len() as u32);
        let words = self.g.node_count().div_ceil(64);
        let mut bits = vec![0u64; words];
        for &l in &bkeys {
            bits[l as usize / 64] |= 1 << (l % 64);
        }
        let mut rank0 = vec![0u32; words];
        let mut seen = 0u32;
        for (r, &w) in rank0.iter_mut().zip(&bits) {
            *r = seen;
            seen += w.count_ones();
        }
        // The (x, P1[l][x]) of a predecessor l (empty for any other node).
        let brow_of = |l: NodeId| -> &[(u32, f64)] {
            let (w, b) = (l as usize / 64, l % 64);
            let word = bits[w];
            if word & (1 << b) == 0 {
                return &[];
            }
            let r = (rank0[w] + (word & ((1u64 << b) - 1)).count_ones()) as usize;
            &bflat[bstart[r] as usize..bstart[r + 1] as usize]
        };
        // Scanning a neighbour costs ~1 bit test; looking up one predecessor in a hub's
        // lists costs a few binary searches: scan unless the hub is much longer than that.
        let lookup_cost = bkeys.len() as u64 * 64;
        // Fixed chunks of the sorted middle nodes, summed in chunk order: the block is
        // bit-identical on every run and any thread count (rayon's fold/reduce splits where
        // threads happen to steal work, which reorders the float sums).
        let mut ks: Vec<(NodeId, &Vec<(u32, f64)>)> = fmap.iter().map(|(&k, v)| (k, v)).collect();
        ks.sort_unstable_by_key(|&(k, _)| k);
        let chunks = (BLOCK_PARTIALS_F64 / (na * na)).clamp(2, BLOCK_CHUNKS);
        let per_chunk = ks.len().div_ceil(chunks).max(1);
        let parts: Vec<Vec<f64>> = ks
            .par_chunks(per_chunk)
            .map(|chunk| {
                let mut acc = vec![0.0; na * na];
                let mut g = vec![0.0; na];
                let mut touched = Vec::<u32>::new();
                for &(k, frow) in chunk {
                    // P1 term: k ∈ A.
                    if let Some(xs) = pos.get(&k) {
                        for &(i, fv) in frow {
                            for &x in xs {
                                acc[i as usize * na + x as usize] += ALPHA[0] * fv;
                            }
                        }
                    }
                    // P1² term: k is a predecessor of some x.
                    let brow = brow_of(k);
                    for &(i, fv) in frow {
                        for &(x, bv) in brow {
                            acc[i as usize * na + x as usize] += ALPHA[1] * fv * bv;
                        }
                    }
                    // P1³ term: g[x] = Σₗ P1[k][l] b₁ₓ[l].
                    let deg = self.degree(k);
                    let inv = 1.0 / deg.max(1) as f64;
                    let add = |l: NodeId, w: f64, g: &mut [f64], touched: &mut Vec<u32>| {
                        for &(x, bv) in brow_of(l) {
                            if g[x as usize] == 0.0 {
                                touched.push(x);
                            }
                            g[x as usize] += w * bv;
                        }
                    };
                    if deg <= lookup_cost {
                        self.for_each_neighbor(k, |l| add(l, inv, &mut g, &mut touched));
                    } else {
                        for &l in &bkeys {
                            let w = self.multiplicity(k, l) as f64;
                            if w > 0.0 {
                                add(l, w * inv, &mut g, &mut touched);
                            }
                        }
                    }
                    for &x in &touched {
                        let gx = g[x as usize];
                        for &(i, fv) in frow {
                            acc[i as usize * na + x as usize] += ALPHA[2] * fv * gx;
                        }
                        g[x as usize] = 0.0;
                    }
                    touched.clear();
                }
                acc
            })
            .collect();
        let mut out = vec![0.0; na * na];
        for part in parts {
            out.iter_mut().zip(part).for_each(|(x, y)| *x += y);
        }
        out
    }

    /// W[k][l]: walkable edges k → l (edges in either stored direction when undirected), not
    /// counting the dangling self-loop. Searches the shorter of the two lists involved.
    pub fn multiplicity(&self, k: NodeId, l: NodeId) -> u64 {
        let g = self.g;
        let (_, out_t, out_r) = g.out_csr();
        let (_, in_s, in_r, _) = g.in_csr();
        // M[k][l]: l in out(k) or k in in(l).
        let fwd = {
            let (ro, ri) = (g.out_range(k), g.in_range(l));
            if ro.len() <= ri.len() {
                occurrences(&out_t[ro.clone()], &out_r[ro], l)
            } else {
                occurrences(&in_s[ri.clone()], &in_r[ri], k)
            }
        };
        if self.directed {
            return fwd;
        }
        // M[l][k]: k in out(l) or l in in(k).
        let back = {
            let (ro, ri) = (g.out_range(l), g.in_range(k));
            if ro.len() <= ri.len() {
                occurrences(&out_t[ro.clone()], &out_r[ro], k)
            } else {
                occurrences(&in_s[ri.clone()], &in_r[ri], l)
            }
        };
        fwd + back
    }
}

/// Count of `needle` in an adjacency list sorted by (relation, neighbour): a binary search in
/// each relation segment (segments found by galloping over the relation column).
fn occurrences(nbrs: &[NodeId], rels: &[u16], needle: NodeId) -> u64 {
    if nbrs.len() <= 32 {
        return nbrs.iter().filter(|&&x| x == needle).count() as u64;
    }
    let mut count = 0u64;
    let mut start = 0usize;
    while start < nbrs.len() {
        let r = rels[start];
        let end = start + rels[start..].partition_point(|&x| x <= r);
        let seg = &nbrs[start..end];
        let lo = seg.partition_point(|&x| x < needle);
        let hi = seg.partition_point(|&x| x <= needle);
        count += (hi - lo) as u64;
        start = end;
    }
    count
}
