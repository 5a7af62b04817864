//! The long pull lists cut into cache-sized source windows ("CSR segmenting"), for the
//! marginals' whole-graph passes.
//!
//! Why: a pull pass gathers one value per list entry from a |V|-long vector. On a CKG-sized
//! graph that vector is 123 MB (f64), four times the 32 MB L3, and the long lists (a protein's
//! hundreds of variants, publications and partners) gather from all over it, so most of their
//! gathers go to DRAM. Sorting nodes by type ([`crate::reorder`]) keeps short lists cheap (a
//! variant pulls from genes and proteins: 9 MB), not long ones.
//!
//! What: the source indices are cut into windows of `window` nodes (8 MiB of f64 by
//! default). Every list at least `long_min` entries long is split at the window boundaries
//! (lists are sorted, so each piece is one run), and the pieces are stored window by window:
//! window 0's runs of every long list, one after the other, then window 1's, and so on. A pass
//! first sweeps the windows in order; within one, every gather lands in the same 8 MiB, which
//! stays in cache, and the runs are read as one sequential stream. Each long node's partial
//! sums are added in window order into [`Segmented::sum`]; the ordinary pass then takes that
//! sum for long nodes and gathers the short lists itself.
//!
//! Invariants: the result does not depend on the thread count (one thread sums a run; runs are
//! added in window order). It differs from the unsegmented pass only in the order of the
//! additions (last bits). A graph of at most one window has nothing segmented: small graphs
//! (Hetionet) run exactly the unsegmented pass.
//!
//! Measured at CKG scale (15.4M nodes, 400M list entries; `serenqa-model-bench --graph
//! <snapshot> --only marginals --skip-embeddings`, which also times the same solver without
//! windows in the same run): the shifted Lanczos solve takes 22–25 s with windows against
//! 33–42 s without (1.5–1.9×, four runs), and the power iteration 53–58 s against 120–150 s
//! earlier. `--window N --long-min L` time other settings: windows of 2¹⁹ to 2²¹ nodes and
//! bounds of 16 or 32 were within the noise of each other (24–25 s); 64 was slower (26 s).
//!
//! Cost: a copy of the long lists (4 bytes per entry; ~65% of the entries at CKG scale), 12
//! bytes per (long list, window) run and one f64 per node, built in about a second.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::gather::{sum4_pf, Elem};
use crate::reorder::WalkCsr;

/// Default window: 2²⁰ source nodes (8 MiB of f64; a quarter of this machine's L3, so both
/// cores' windows and the streamed runs fit beside each other).
pub const WINDOW_NODES: usize = 1 << 20;

/// Default bound: lists of at least this many entries are segmented. Shorter lists cost more
/// as a run of their own (a node id and an end per window they touch) than their gathers save.
pub const LONG_MIN: usize = 32;

/// The high bit of a run's node id: the node's first run (its sum starts from zero).
const FIRST: u32 = 1 << 31;

/// The build cuts the long lists this many nodes at a time, in parallel.
const BUILD_CHUNK: usize = 1 << 16;

/// One source window: the runs of the long lists that fall in it.
#[derive(Default)]
struct Window {
    /// The node of each run (new index), [`FIRST`] on its first run.
    nodes: Vec<u32>,
    /// The end of each run in `entries` (its start is the previous run's end).
    ends: Vec<u64>,
    /// The runs' source indices, one run after the other.
    entries: Vec<u32>,
}

pub(crate) struct Segmented {
    long_min: usize,
    windows: Vec<Window>,
    /// Σ over a long node's list, by new index, after [`Segmented::gather`] (f64 bits).
    sums: Vec<AtomicU64>,
}

impl Segmented {
    /// The long lists of `w` cut into windows of `window` sources; `None` when the graph fits
    /// in one window (nothing to gain) or has too many nodes for the run encoding.
    pub(crate) fn build(w: &WalkCsr, window: usize, long_min: usize) -> Option<Segmented> {
        let n = w.len();
        let window = window.max(1);
        let long_min = long_min.max(1);
        if n <= window || n >= FIRST as usize {
            return None;
        }
        let count = n.div_ceil(window);
        // Each chunk of nodes cuts its own lists; the chunks are then joined in node order.
        let parts: Vec<Vec<Window>> = (0..n)
            .into_par_iter()
            .step_by(BUILD_CHUNK)
            .map(|start| {
                let mut part: Vec<Window> = (0..count).map(|_| Window::default()).collect();
                for j in start..(start + BUILD_CHUNK).min(n) {
                    let list = w.list(j);
                    if list.len() < long_min {
                        continue;
                    }
                    let mut flag = FIRST;
                    let mut rest = list;
                    while let Some(&head) = rest.first() {
                        let s = head as usize / window;
                        let cut = rest.partition_point(|&i| (i as usize) < (s + 1) * window);
                        let win = &mut part[s];
                        win.nodes.push(j as u32 | flag);
                        win.entries.extend_from_slice(&rest[..cut]);
                        win.ends.push(win.entries.len() as u64);
                        flag = 0;
                        rest = &rest[cut..];
                    }
                }
                part
            })
            .collect();
        // Regroup the pieces by window (moves, no copy), then join each window's pieces in
        // node order, freeing them as they are copied: the build holds the long lists about
        // once, not twice.
        let mut by_window: Vec<Vec<Window>> = (0..count).map(|_| Vec::new()).collect();
        for part in parts {
            for (s, piece) in part.into_iter().enumerate() {
                by_window[s].push(piece);
            }
        }
        let windows: Vec<Window> = by_window
            .into_par_iter()
            .map(|pieces| {
                let runs: usize = pieces.iter().map(|p| p.nodes.len()).sum();
                let len: usize = pieces.iter().map(|p| p.entries.len()).sum();
                let mut win = Window {
                    nodes: Vec::with_capacity(runs),
                    ends: Vec::with_capacity(runs),
                    entries: Vec::with_capacity(len),
                };
                for p in pieces {
                    let base = win.entries.len() as u64;
                    win.nodes.extend_from_slice(&p.nodes);
                    win.ends.extend(p.ends.iter().map(|e| e + base));
                    win.entries.extend_from_slice(&p.entries);
                }
                win
            })
            .collect();
        let sums = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
        Some(Segmented {
            long_min,
            windows,
            sums,
        })
    }

    /// Whether a list of `len` entries is summed by [`Segmented::gather`].
    #[inline(always)]
    pub(crate) fn is_long(&self, len: usize) -> bool {
        len >= self.long_min
    }

    /// The sum of z over long node j's list, from the last [`Segmented::gather`].
    #[inline(always)]
    pub(crate) fn sum(&self, j: usize) -> f64 {
        f64::from_bits(self.sums[j].load(Relaxed))
    }

    /// Σ z over every long list, window by window (sums in f64 whatever z holds).
    pub(crate) fn gather<T: Elem>(&self, z: &[T]) {
        let sums = &self.sums;
        for win in &self.windows {
            let entries = &win.entries[..];
            (0..win.nodes.len())
                .into_par_iter()
                .with_min_len(64)
                .for_each(|k| {
                    let a = if k == 0 { 0 } else { win.ends[k - 1] as usize };
                    let b = win.ends[k] as usize;
                    let v = sum4_pf(z, entries, a, b);
                    let node = win.nodes[k];
                    let j = (node & !FIRST) as usize;
                    // Relaxed is enough: each node has one run per window, so within a window
                    // no two tasks touch the same sum, and the windows are sequential.
                    let total = if node & FIRST != 0 {
                        v
                    } else {
                        f64::from_bits(sums[j].load(Relaxed)) + v
                    };
                    sums[j].store(total.to_bits(), Relaxed);
                });
        }
    }
}
