//! The top lists: built by one pass over the diseases, stored as a snapshot file of their own
//! (named after the graph's content hash, as [`crate::store`] names the all-pairs file).
//!
//! Sections: `topk.info` (JSON [`TopkInfo`]), `topk.compounds`, `topk.diseases` (u32 node
//! ids), and per side `topk.{d,c}_off` (u64, one more than the entities), `topk.{d,c}_other`
//! (u32 local index of the other side), `topk.{d,c}_score` (f32 probability). Reading checks
//! every size, index and score against the graph, so a stale or crafted file is refused.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use rayon::prelude::*;
use serenqa_graph::snapshot::{SnapshotReader, SnapshotWriter};
use serenqa_graph::{Graph, NodeId};

use super::features::{positives_and_known, Layout, Scorer, Space};
use super::info::TopkInfo;
use super::walk::Sparse;
use super::walk::{Scratch, Walker};
use crate::learn::sigmoid;
use crate::task::Task;
use crate::PredictError;

/// Version of the top-k file's model and layout; part of its file name.
pub const FORMAT: u32 = 1;

/// Where the top lists of `g` are cached: `topk-v<FORMAT>-<graph hash>.snap`.
pub fn default_path(g: &Graph) -> PathBuf {
    serenqa_graph::datadir::cache_dir().join(format!("topk-v{FORMAT}-{}.snap", g.content_hash()))
}

/// One side's lists: entity `i`'s entries are `offsets[i]..offsets[i + 1]`, best first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lists {
    pub offsets: Vec<u64>,
    /// Local index of the other side (a compound in a disease's list and vice versa).
    pub other: Vec<u32>,
    /// Probability of the pair (treats label), on the scale of all pairs.
    pub score: Vec<f32>,
}

impl Lists {
    pub fn of(&self, i: usize) -> impl Iterator<Item = (u32, f32)> + '_ {
        let (a, b) = match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        self.other[a..b]
            .iter()
            .copied()
            .zip(self.score[a..b].iter().copied())
    }
    fn from_sorted(lists: Vec<Vec<(u32, f64)>>) -> Lists {
        let mut out = Lists {
            offsets: vec![0],
            ..Lists::default()
        };
        for l in lists {
            for (o, z) in l {
                out.other.push(o);
                out.score.push(sigmoid(z) as f32);
            }
            out.offsets.push(out.other.len() as u64);
        }
        out
    }
}

/// The top lists of a graph and what the run did.
#[derive(Clone, Debug, PartialEq)]
pub struct TopK {
    pub info: TopkInfo,
    pub compounds: Vec<NodeId>,
    pub diseases: Vec<NodeId>,
    pub by_disease: Lists,
    pub by_compound: Lists,
}

impl TopK {
    /// (is a compound, local index) of node `n`, when it is one of the task's entities.
    pub fn locate(&self, n: NodeId) -> Option<(bool, usize)> {
        if let Ok(i) = self.compounds.binary_search(&n) {
            return Some((true, i));
        }
        self.diseases.binary_search(&n).ok().map(|i| (false, i))
    }

    /// Discover's proposal: the located entity's list (node id, probability), best first,
    /// leaving out `known` (sorted node ids), at most `limit`.
    pub fn propose(
        &self,
        (is_compound, local): (bool, usize),
        known: &[NodeId],
        limit: usize,
    ) -> Vec<(NodeId, f64)> {
        let (lists, other) = if is_compound {
            (&self.by_compound, &self.diseases)
        } else {
            (&self.by_disease, &self.compounds)
        };
        lists
            .of(local)
            .filter_map(|(o, s)| other.get(o as usize).map(|&n| (n, f64::from(s))))
            .filter(|(n, _)| known.binary_search(n).is_err())
            .take(limit)
            .collect()
    }

    /// The pair (compound `c`, disease `d`, local) when it is in either entity's list: its
    /// probability and its percentile among the disease's compounds and among the compound's
    /// diseases, read off its rank (`100 · (1 − (rank − 1) / n)`); a pair outside one side's
    /// list gets that side's bound for rank `k + 1` (its percentile is at most that).
    pub fn pair(&self, c: usize, d: usize) -> Option<(f32, f64, f64)> {
        let in_d = self
            .by_disease
            .of(d)
            .enumerate()
            .find(|(_, (o, _))| *o as usize == c);
        let in_c = self
            .by_compound
            .of(c)
            .enumerate()
            .find(|(_, (o, _))| *o as usize == d);
        let score = in_d.map(|x| x.1 .1).or(in_c.map(|x| x.1 .1))?;
        let k = self.info.params.k;
        let pct = |rank: Option<usize>, n: usize| {
            let r = rank.map_or(k + 1, |r| r + 1) as f64;
            (100.0 * (1.0 - (r - 1.0) / n.max(1) as f64)).clamp(0.0, 100.0)
        };
        Some((
            score,
            pct(in_d.map(|x| x.0), self.compounds.len()),
            pct(in_c.map(|x| x.0), self.diseases.len()),
        ))
    }

    pub fn save(&self, path: &Path) -> Result<(), PredictError> {
        let mut w = SnapshotWriter::new();
        w.add_json("topk.info", &self.info)?;
        w.add_pod("topk.compounds", &self.compounds);
        w.add_pod("topk.diseases", &self.diseases);
        w.add_pod("topk.d_off", &self.by_disease.offsets);
        w.add_pod("topk.d_other", &self.by_disease.other);
        w.add_pod("topk.d_score", &self.by_disease.score);
        w.add_pod("topk.c_off", &self.by_compound.offsets);
        w.add_pod("topk.c_other", &self.by_compound.other);
        w.add_pod("topk.c_score", &self.by_compound.score);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| PredictError::Invalid(format!("{}: {e}", dir.display())))?;
        }
        w.write_to(path)?;
        Ok(())
    }

    /// Loads top lists and checks them against `g`.
    pub fn load(path: &Path, g: &Graph) -> Result<TopK, PredictError> {
        let mut r = SnapshotReader::open(path)?;
        let bad = |m: &str| PredictError::Invalid(format!("{}: {m}", path.display()));
        let info: TopkInfo = r.read_json("topk.info")?;
        if info.graph_hash != g.content_hash() {
            return Err(bad("the top lists were computed for another graph"));
        }
        let compounds: Vec<u32> = r.read_pod("topk.compounds")?;
        let diseases: Vec<u32> = r.read_pod("topk.diseases")?;
        let task = Task::detect_any(g)?;
        if compounds != task.compounds || diseases != task.diseases {
            return Err(bad("compound or disease list does not match the graph"));
        }
        let mut side = |p: &str, n: usize, others: usize| -> Result<Lists, PredictError> {
            let l = Lists {
                offsets: r.read_pod(&format!("topk.{p}_off"))?,
                other: r.read_pod(&format!("topk.{p}_other"))?,
                score: r.read_pod(&format!("topk.{p}_score"))?,
            };
            let ok = l.offsets.len() == n + 1
                && l.offsets.first() == Some(&0)
                && l.offsets.windows(2).all(|w| w[0] <= w[1])
                && l.offsets.last().copied() == Some(l.other.len() as u64)
                && l.score.len() == l.other.len()
                && l.other.iter().all(|&o| (o as usize) < others)
                && l.score.iter().all(|s| (0.0..=1.0).contains(s));
            if !ok {
                return Err(bad(&format!(
                    "the {p} lists are malformed (sizes, indexes or scores)"
                )));
            }
            Ok(l)
        };
        let by_disease = side("d", diseases.len(), compounds.len())?;
        let by_compound = side("c", compounds.len(), diseases.len())?;
        Ok(TopK {
            info,
            compounds,
            diseases,
            by_disease,
            by_compound,
        })
    }
}

/// (other side's local index, logit) pairs: a list, or a disease's offers to the compounds.
type List = Vec<(u32, f64)>;

/// A list entry ordered so that the heap's top is the *worst* entry: lower logit, then larger
/// index, is greater.
#[derive(Clone, Copy, Debug)]
struct Entry {
    logit: f64,
    other: u32,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        o.logit
            .total_cmp(&self.logit)
            .then(self.other.cmp(&o.other))
    }
}

fn offer(heap: &mut BinaryHeap<Entry>, k: usize, e: Entry) {
    if heap.len() < k {
        heap.push(e);
    } else if heap.peek().is_some_and(|w| e < *w) {
        heap.pop();
        heap.push(e);
    }
}

fn sorted(heap: BinaryHeap<Entry>) -> Vec<(u32, f64)> {
    let mut v = heap.into_vec();
    v.sort();
    v.into_iter().map(|e| (e.other, e.logit)).collect()
}

pub(super) struct Built {
    pub by_disease: Lists,
    pub by_compound: Lists,
    pub visits: u64,
    pub reached_pairs: u64,
    pub exact_compounds: usize,
}

/// Diseases per block: each block's offers to the compound lists are merged in disease order
/// before the next block starts (bounded memory; a list is a unique top `k`, so the merge
/// order does not change it).
const BLOCK: usize = 2048;

/// The compounds `vecs` reach, each once, in first-reached order; marks them in `flag` (the
/// caller clears it).
fn reached_unsorted(vecs: &[Sparse], flag: &mut [bool]) -> Vec<u32> {
    let mut out = Vec::new();
    for v in vecs {
        for &c in &v.idx {
            if !flag[c as usize] {
                flag[c as usize] = true;
                out.push(c);
            }
        }
    }
    out
}

/// One pass over every disease (module docs of [`super`]).
pub(super) fn build(
    sp: &Space,
    w: &Walker,
    lay: &Layout,
    sc: &Scorer,
    k: usize,
    progress: bool,
) -> Built {
    let t = std::time::Instant::now();
    let (nc, nd) = (sp.task.compounds.len(), sp.task.diseases.len());
    // Compounds by their own term, best first: the unreached candidates of every disease.
    let mut g_order: Vec<u32> = (0..nc as u32).collect();
    g_order.sort_by(|&a, &b| {
        sc.gc[b as usize]
            .total_cmp(&sc.gc[a as usize])
            .then(a.cmp(&b))
    });
    // Diseases by their own term: the first `k` give every compound's list all their pairs.
    let mut h_order: Vec<u32> = (0..nd as u32).collect();
    h_order.sort_by(|&a, &b| {
        sc.hd[b as usize]
            .total_cmp(&sc.hd[a as usize])
            .then(a.cmp(&b))
    });
    let mut full = vec![false; nd];
    for &d in h_order.iter().take(k) {
        full[d as usize] = true;
    }
    let visits = AtomicU64::new(0);
    let reached_pairs = AtomicU64::new(0);
    let mut heaps: Vec<BinaryHeap<Entry>> = (0..nc).map(|_| BinaryHeap::new()).collect();
    let mut by_disease: Vec<Vec<(u32, f64)>> = vec![Vec::new(); nd];
    // The `full` diseases first: they offer every compound a pair, so after the first block
    // every compound's list is full and its threshold keeps the later offers few.
    let order: Vec<u32> = h_order
        .iter()
        .take(k)
        .copied()
        .chain((0..nd as u32).filter(|&d| !full[d as usize]))
        .collect();
    let mut threshold: Vec<f64> = vec![f64::NEG_INFINITY; nc];
    let mut start = 0;
    while start < nd {
        let end = (start + if start == 0 { k.min(nd) } else { BLOCK }).min(nd);
        let results: Vec<(List, List)> = order[start..end]
            .par_iter()
            .map(|&d| d as usize)
            .map_init(
                || (Scratch::default(), vec![false; nc], vec![0.0f64; nc]),
                |(scr, flag, acc), d| {
                    let d32 = d as u32;
                    let (vecs, _) = w.from_disease(&lay.paths, d32, scr);
                    let entries: usize = vecs.iter().map(|v| v.idx.len()).sum();
                    visits.fetch_add(scr.take_work() + entries as u64, AtomicOrdering::Relaxed);
                    let (_, known) = positives_and_known(sp, w.mask, d);
                    let reach = reached_unsorted(&vecs, flag);
                    reached_pairs.fetch_add(reach.len() as u64, AtomicOrdering::Relaxed);
                    let mut heap = BinaryHeap::with_capacity(k + 1);
                    let mut offers = Vec::new();
                    let logits = sc.reached_all(lay, &vecs, &reach, d32, acc);
                    for (&c, &z) in reach.iter().zip(&logits) {
                        if known.binary_search(&c).is_ok() {
                            continue;
                        }
                        offer(&mut heap, k, Entry { logit: z, other: c });
                        if z >= threshold[c as usize] {
                            offers.push((c, z));
                        }
                    }
                    let mut taken = 0;
                    for &c in &g_order {
                        if taken == k {
                            break;
                        }
                        if flag[c as usize] || known.binary_search(&c).is_ok() {
                            continue;
                        }
                        let z = sc.unreached(c, d32);
                        offer(&mut heap, k, Entry { logit: z, other: c });
                        taken += 1;
                    }
                    if full[d] {
                        for c in 0..nc as u32 {
                            if flag[c as usize] || known.binary_search(&c).is_ok() {
                                continue;
                            }
                            let z = sc.unreached(c, d32);
                            if z >= threshold[c as usize] {
                                offers.push((c, z));
                            }
                        }
                    }
                    for &c in &reach {
                        flag[c as usize] = false;
                    }
                    (sorted(heap), offers)
                },
            )
            .collect();
        // The offers go to the compounds' lists in disease order, one range of compounds
        // per thread (each reads every offer and keeps its own).
        let span = nc.div_ceil(rayon::current_num_threads().max(1)).max(1);
        heaps
            .par_chunks_mut(span)
            .zip(threshold.par_chunks_mut(span))
            .enumerate()
            .for_each(|(part, (hs, th))| {
                let lo = part * span;
                for (i, (_, offers)) in results.iter().enumerate() {
                    let d = order[start + i];
                    for &(c, z) in offers {
                        let Some(j) = (c as usize).checked_sub(lo).filter(|&j| j < hs.len()) else {
                            continue;
                        };
                        let h = &mut hs[j];
                        offer(h, k, Entry { logit: z, other: d });
                        if h.len() == k {
                            th[j] = h.peek().map_or(f64::NEG_INFINITY, |e| e.logit);
                        }
                    }
                }
            });
        for (i, (list, _)) in results.into_iter().enumerate() {
            by_disease[order[start + i] as usize] = list;
        }
        if progress && (end / BLOCK != start / BLOCK || end == nd) {
            eprintln!(
                "top-k lists: {end} of {nd} diseases, {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
        start = end;
    }
    // A compound's list is exact when its worst entry beats every pair left out: an unreached
    // pair of a disease outside the first `k` of `h_order`.
    let next_h = h_order.get(k).map(|&d| sc.hd[d as usize]);
    let mut exact_compounds = 0;
    let by_compound: Vec<Vec<(u32, f64)>> = heaps
        .into_iter()
        .enumerate()
        .map(|(c, h)| {
            let exact = match next_h {
                None => true,
                Some(hd) => {
                    h.len() == k
                        && h.peek()
                            .is_some_and(|wst| wst.logit > sc.base + sc.z0 + sc.gc[c] + hd)
                }
            };
            exact_compounds += usize::from(exact);
            sorted(h)
        })
        .collect();
    Built {
        by_disease: Lists::from_sorted(by_disease),
        by_compound: Lists::from_sorted(by_compound),
        visits: visits.into_inner(),
        reached_pairs: reached_pairs.into_inner(),
        exact_compounds,
    }
}
