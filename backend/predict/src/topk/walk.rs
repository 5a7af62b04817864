//! Degree-weighted walk counts from one node at a time, read straight off the graph's
//! adjacency: the sparse counterpart of [`crate::dwpc`]'s dense products.
//!
//! An edge `u → v` of step `s` weighs `(deg_s(u) · deg_rev(v))^-w`, the degrees counted on
//! the graph *as masked*, exactly as [`crate::dwpc::StepMatrix`] weighs it; only `deg^-w` per
//! node of the steps in use is stored (no per-edge matrix: at CKG size that would be gigabytes).
//! A push from one disease along a metapath touches only the walks' support, so the cost of a
//! disease is the size of its neighbourhood, never a pass over the graph.
//!
//! Determinism: a push visits its input in index order and each node's edges in stored order;
//! every sum is therefore taken in a fixed order, whatever thread runs it.

use rayon::prelude::*;
use serenqa_graph::{Graph, NodeId};

use crate::dwpc::{EdgeMask, LocalIndex};
use crate::metagraph::{Metagraph, Step};

/// A sparse vector over one node type's local indices, in the order a push first reached
/// them (deterministic; [`Sparse::sorted`] sorts by index for lookups).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sparse {
    pub idx: Vec<u32>,
    pub val: Vec<f64>,
}

impl Sparse {
    pub fn unit(i: u32) -> Self {
        Sparse {
            idx: vec![i],
            val: vec![1.0],
        }
    }
    /// The value at `i` (a scan: for a few lookups).
    pub fn get(&self, i: u32) -> f64 {
        self.idx
            .iter()
            .position(|&x| x == i)
            .map_or(0.0, |k| self.val[k])
    }
    /// Sorted by index, for [`Sparse::get_sorted`].
    pub fn sorted(&self) -> Sparse {
        let mut pairs: Vec<(u32, f64)> = self
            .idx
            .iter()
            .copied()
            .zip(self.val.iter().copied())
            .collect();
        pairs.sort_unstable_by_key(|p| p.0);
        Sparse {
            idx: pairs.iter().map(|p| p.0).collect(),
            val: pairs.iter().map(|p| p.1).collect(),
        }
    }
    /// The value at `i` of a [`Sparse::sorted`] vector.
    pub fn get_sorted(&self, i: u32) -> f64 {
        self.idx.binary_search(&i).map_or(0.0, |k| self.val[k])
    }
    pub fn sum(&self) -> f64 {
        self.val.iter().sum()
    }
}

/// Per-thread scratch: one dense accumulator per node type, allocated on first use.
#[derive(Default)]
pub struct Scratch {
    acc: Vec<Vec<f64>>,
    touched: Vec<u32>,
    /// Edge visits since the last [`Scratch::take_work`].
    work: u64,
}

impl Scratch {
    pub fn take_work(&mut self) -> u64 {
        std::mem::take(&mut self.work)
    }
}

/// The graph with a mask, its steps' degree terms, and pushes along steps.
pub struct Walker<'a> {
    pub g: &'a Graph,
    pub mg: &'a Metagraph,
    pub li: &'a LocalIndex,
    pub mask: &'a EdgeMask,
    /// Per step (when in use): the step degree of each `from` node (local index), masked.
    pub deg: Vec<Option<Vec<u32>>>,
    /// Per step (when in use): `deg^-w` (0 where the degree is 0).
    dinv: Vec<Option<Vec<f64>>>,
    /// Per step a push runs along: its unmasked edges as local indices, rows = `from` nodes.
    csr: Vec<Option<StepCsr>>,
}

/// One step's adjacency between two types' local indices, masked edges left out: the push's
/// inner loop reads it sequentially instead of searching each node's relation range.
struct StepCsr {
    offsets: Vec<u64>,
    idx: Vec<u32>,
}

impl StepCsr {
    fn build(g: &Graph, mg: &Metagraph, li: &LocalIndex, mask: &EdgeMask, s: usize) -> StepCsr {
        let st = &mg.steps[s];
        let rows: Vec<Vec<u32>> = g
            .nodes_of_type(st.from)
            .par_iter()
            .with_min_len(4096)
            .map(|&u| {
                neighbours(g, st, mask, u)
                    .map(|v| li.local[v as usize])
                    .collect()
            })
            .collect();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0u64);
        let total: usize = rows.iter().map(Vec::len).sum();
        let mut idx = Vec::with_capacity(total);
        for r in rows {
            idx.extend_from_slice(&r);
            offsets.push(idx.len() as u64);
        }
        StepCsr { offsets, idx }
    }
    fn row(&self, r: usize) -> &[u32] {
        &self.idx[self.offsets[r] as usize..self.offsets[r + 1] as usize]
    }
    fn degrees(&self) -> Vec<u32> {
        self.offsets
            .windows(2)
            .map(|w| (w[1] - w[0]) as u32)
            .collect()
    }
}

impl<'a> Walker<'a> {
    /// A walker along `steps` (their adjacency is copied per step, masked edges left out)
    /// that also knows the degrees of `degree_steps`, on `g` without the `mask`ed edges.
    pub fn new(
        g: &'a Graph,
        mg: &'a Metagraph,
        li: &'a LocalIndex,
        mask: &'a EdgeMask,
        w: f64,
        steps: &[usize],
    ) -> Self {
        Self::with_degrees(g, mg, li, mask, w, steps, &[])
    }

    /// [`Walker::new`], plus the degrees of `degree_steps` (no adjacency copied for them).
    pub fn with_degrees(
        g: &'a Graph,
        mg: &'a Metagraph,
        li: &'a LocalIndex,
        mask: &'a EdgeMask,
        w: f64,
        steps: &[usize],
        degree_steps: &[usize],
    ) -> Self {
        let mut walk = vec![false; mg.steps.len()];
        let mut need = vec![false; mg.steps.len()];
        for &s in steps {
            walk[s] = true;
            need[s] = true;
            need[mg.steps[s].reverse] = true;
        }
        for &s in degree_steps {
            need[s] = true;
        }
        let csr: Vec<Option<StepCsr>> = walk
            .iter()
            .enumerate()
            .map(|(s, &n)| n.then(|| StepCsr::build(g, mg, li, mask, s)))
            .collect();
        let deg: Vec<Option<Vec<u32>>> = need
            .iter()
            .enumerate()
            .map(|(s, &n)| {
                n.then(|| match &csr[s] {
                    Some(c) => c.degrees(),
                    None => step_degrees(g, mg, mask, s),
                })
            })
            .collect();
        let dinv = deg
            .iter()
            .map(|d| {
                d.as_ref().map(|d| {
                    d.iter()
                        .map(|&x| if x == 0 { 0.0 } else { (x as f64).powf(-w) })
                        .collect()
                })
            })
            .collect();
        Walker {
            g,
            mg,
            li,
            mask,
            deg,
            dinv,
            csr,
        }
    }

    /// `x` (over step `s`'s `from` type) pushed one step: `Σ_u x[u] · weight(u → v)` per `v`.
    pub fn push(&self, s: usize, x: &Sparse, sc: &mut Scratch) -> Sparse {
        let st = &self.mg.steps[s];
        let (Some(du), Some(dv)) = (&self.dinv[s], &self.dinv[st.reverse]) else {
            return Sparse::default();
        };
        let to = st.to as usize;
        let cols = self.g.nodes_of_type(st.to).len();
        if sc.acc.len() <= to {
            sc.acc.resize_with(to + 1, Vec::new);
        }
        if sc.acc[to].len() != cols {
            sc.acc[to] = vec![0.0; cols];
        }
        let acc = &mut sc.acc[to];
        let touched = &mut sc.touched;
        touched.clear();
        let Some(csr) = &self.csr[s] else {
            return Sparse::default();
        };
        let mut work = 0u64;
        for (&ul, &a) in x.idx.iter().zip(&x.val) {
            let d = du[ul as usize];
            if d == 0.0 {
                continue;
            }
            let a = a * d;
            let row = csr.row(ul as usize);
            work += row.len() as u64;
            for &vl in row {
                let slot = &mut acc[vl as usize];
                if *slot == 0.0 {
                    touched.push(vl);
                }
                *slot += a * dv[vl as usize];
            }
        }
        sc.work += work;
        let mut out = Sparse {
            idx: Vec::with_capacity(touched.len()),
            val: Vec::with_capacity(touched.len()),
        };
        for &t in touched.iter() {
            let v = std::mem::take(&mut acc[t as usize]);
            if v != 0.0 {
                out.idx.push(t);
                out.val.push(v);
            }
        }
        out
    }

    /// `x` pushed along `steps`.
    pub fn along(&self, steps: &[usize], x: Sparse, sc: &mut Scratch) -> Sparse {
        steps.iter().fold(x, |v, &s| self.push(s, &v, sc))
    }

    /// Weight of the unmasked edges between `a` (local, `from` type of step `s`) and `b`
    /// (local, `to` type): what one step from `a` puts on `b`.
    pub fn edge_weight(&self, s: usize, a: u32, b: u32) -> f64 {
        let st = &self.mg.steps[s];
        let (Some(du), Some(dv)) = (&self.dinv[s], &self.dinv[st.reverse]) else {
            return 0.0;
        };
        let n = self.edges_between(s, a, b);
        n as f64 * du[a as usize] * dv[b as usize]
    }

    /// Unmasked edges of step `s` from `a` (local, `from` type) to `b` (local, `to` type).
    pub fn edges_between(&self, s: usize, a: u32, b: u32) -> u32 {
        let st = &self.mg.steps[s];
        let u = self.g.nodes_of_type(st.from)[a as usize];
        let v = self.g.nodes_of_type(st.to)[b as usize];
        neighbours(self.g, st, self.mask, u)
            .filter(|&x| x == v)
            .count() as u32
    }

    /// Every metapath of `paths` (steps from the disease type to the compound type, sorted so
    /// shared prefixes are adjacent) from disease `d` (local): the walk weights over the
    /// compounds, and for a metapath with a treatment step at position `t`, the closed walks
    /// of its prefix at `d` (what [`Walker::own_walks`] needs).
    pub fn from_disease(
        &self,
        paths: &[Vec<usize>],
        d: u32,
        sc: &mut Scratch,
    ) -> (Vec<Sparse>, Vec<f64>) {
        let mut stack: Vec<Sparse> = vec![Sparse::unit(d)];
        let mut prev: &[usize] = &[];
        let mut out = Vec::with_capacity(paths.len());
        let mut prefix = Vec::with_capacity(paths.len());
        for p in paths {
            let common = prev
                .iter()
                .zip(p)
                .take_while(|(a, b)| a == b)
                .count()
                .min(stack.len() - 1);
            stack.truncate(common + 1);
            for &s in &p[common..] {
                let next = self.push(s, stack.last().expect("stack starts non-empty"), sc);
                stack.push(next);
            }
            out.push(stack.last().cloned().unwrap_or_default());
            prefix.push(match self.treatment_at(p) {
                Some(0) | None => 1.0,
                Some(t) => stack[t].get(d),
            });
            prev = p;
        }
        (out, prefix)
    }

    /// Position of the treatment step of `path`, if any.
    pub fn treatment_at(&self, path: &[usize]) -> Option<usize> {
        path.iter().position(|&s| self.mg.steps[s].treatment)
    }

    /// The weight of the walks of `path` from `d` to `c` that cross the pair's own treatment
    /// edge (`prefix` = the prefix's closed walks at `d`, from [`Walker::from_disease`]): the
    /// prefix back to `d`, the edge `d`–`c`, the suffix back to `c`. Zero without a treatment
    /// step or without the edge. Subtracted from a known pair's features, so a treatment is
    /// never evidence for itself (as in [`crate::dwpc`]).
    pub fn own_walks(&self, path: &[usize], prefix: f64, d: u32, c: u32, sc: &mut Scratch) -> f64 {
        let Some(t) = self.treatment_at(path) else {
            return 0.0;
        };
        if prefix == 0.0 {
            return 0.0;
        }
        let w = self.edge_weight(path[t], d, c);
        if w == 0.0 {
            return 0.0;
        }
        let suffix = &path[t + 1..];
        let closed = if suffix.is_empty() {
            1.0
        } else {
            self.along(suffix, Sparse::unit(c), sc).get(c)
        };
        prefix * w * closed
    }
}

/// Step degree (unmasked edges to the step's `to` type) of every `from` node, local order.
fn step_degrees(g: &Graph, mg: &Metagraph, mask: &EdgeMask, s: usize) -> Vec<u32> {
    let st = &mg.steps[s];
    g.nodes_of_type(st.from)
        .par_iter()
        .map(|&u| neighbours(g, st, mask, u).count() as u32)
        .collect()
}

/// The nodes of step `st`'s `to` type that `u` reaches over the step's unmasked edges: its
/// stored out-edges, then its in-edges, each in stored order (the order every sum here
/// follows).
fn neighbours<'g>(
    g: &'g Graph,
    st: &'g Step,
    mask: &'g EdgeMask,
    u: NodeId,
) -> impl Iterator<Item = NodeId> + 'g {
    let (_, out_t, _) = g.out_csr();
    let (_, in_s, _, in_e) = g.in_csr();
    let outs = st
        .out
        .then(|| g.out_range_rel(u, st.rel))
        .into_iter()
        .flatten()
        .filter(move |&i| !mask.contains(i as u32))
        .map(move |i| out_t[i]);
    let ins = st
        .inn
        .then(|| g.in_range_rel(u, st.rel))
        .into_iter()
        .flatten()
        .filter(move |&i| !mask.contains(in_e[i]))
        .map(move |i| in_s[i]);
    outs.chain(ins).filter(move |&v| g.node_type(v) == st.to)
}
