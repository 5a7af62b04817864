//! Building slices of answer sets, and the scoring / partitioning services the CLI and HTTP
//! layers call (ids in, JSON-ready results out).

use std::sync::{Arc, Mutex};

use serenqa_graph::view::node_view;
use serenqa_graph::{Graph, NodeId};
use serenqa_shared::api::{PartitionResponse, RnsResponse, SliceResponse};
use serenqa_shared::rns::{Scorer, Slice, WeightsInForce};

use crate::transition::{FastMap, Transition};
use crate::{Model, ModelError};

/// Largest entity set a slice / score / partition request may name (a 500 × 500 block is
/// 250k numbers, a few MB of JSON).
pub const MAX_ENTITIES: usize = 500;

/// Cache of exact P3 blocks keyed by the sorted node set (shared by requests; bounded).
pub struct BlockCache {
    inner: Mutex<FastMap<Vec<NodeId>, Arc<Vec<f64>>>>,
    capacity: usize,
}

impl Default for BlockCache {
    fn default() -> Self {
        BlockCache::new(256)
    }
}

impl BlockCache {
    pub fn new(capacity: usize) -> Self {
        BlockCache {
            inner: Mutex::new(FastMap::default()),
            capacity,
        }
    }

    /// P3[nodes][nodes] in the order of `nodes` (distinct).
    pub fn block(&self, t: &Transition, nodes: &[NodeId]) -> Vec<f64> {
        let mut sorted = nodes.to_vec();
        sorted.sort_unstable();
        let hit = self.inner.lock().ok().and_then(|m| m.get(&sorted).cloned());
        let block = match hit {
            Some(b) => b,
            None => {
                let b = Arc::new(t.block(&sorted));
                if let Ok(mut m) = self.inner.lock() {
                    // Crude bound: forget everything when full (sets rarely repeat for long).
                    if m.len() >= self.capacity {
                        m.clear();
                    }
                    m.insert(sorted.clone(), b.clone());
                }
                b
            }
        };
        let n = nodes.len();
        let at: Vec<usize> = nodes
            .iter()
            .map(|x| sorted.partition_point(|y| y < x))
            .collect();
        let mut out = vec![0.0; n * n];
        for r in 0..n {
            for c in 0..n {
                out[r * n + c] = block[at[r] * n + at[c]];
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Resolves `Type::identifier` or an unambiguous bare identifier.
pub fn resolve(g: &Graph, id: &str) -> Result<NodeId, ModelError> {
    let id = id.trim();
    if id.is_empty() {
        return Err(ModelError::UnknownNode(String::new()));
    }
    if id.contains("::") {
        return g
            .find_by_key(id)
            .ok_or_else(|| ModelError::UnknownNode(id.to_string()));
    }
    match g.find_by_ident(id) {
        [] => Err(ModelError::UnknownNode(id.to_string())),
        [n] => Ok(*n),
        many => Err(ModelError::AmbiguousNode(
            id.to_string(),
            many.iter().map(|&n| g.key(n)).collect(),
        )),
    }
}

/// Resolves a list; rejects repeats.
pub fn resolve_all(g: &Graph, ids: &[String]) -> Result<Vec<NodeId>, ModelError> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let n = resolve(g, id)?;
        if out.contains(&n) {
            return Err(ModelError::Overlap(g.key(n)));
        }
        out.push(n);
    }
    Ok(out)
}

/// The slice of distinct `nodes` (in that order).
pub fn build_slice(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    nodes: &[NodeId],
) -> Result<Slice, ModelError> {
    if nodes.len() > MAX_ENTITIES {
        return Err(ModelError::TooLarge {
            got: nodes.len(),
            max: MAX_ENTITIES,
        });
    }
    let n = g.node_count();
    if let Some(&bad) = nodes.iter().find(|&&x| x as usize >= n) {
        return Err(ModelError::UnknownNode(format!("#{bad}")));
    }
    let mut sorted = nodes.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(ModelError::Overlap(g.key(w[0])));
    }
    let t = Transition::new(g, model.params.directed);
    let block = cache.block(&t, nodes);
    let d = model.embeddings.dim();
    let mut embeddings = Vec::with_capacity(nodes.len() * d);
    for &x in nodes {
        embeddings.extend_from_slice(model.embeddings.row(x));
    }
    Ok(Slice {
        ids: nodes.to_vec(),
        keys: nodes.iter().map(|&x| g.key(x)).collect(),
        dim: d,
        embeddings,
        marginals: nodes.iter().map(|&x| model.marginals[x as usize]).collect(),
        block,
    })
}

/// `GET /api/slice?ids=…`.
pub fn slice_for(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    ids: &[String],
) -> Result<SliceResponse, ModelError> {
    if ids.is_empty() {
        return Err(ModelError::EmptySet("ids"));
    }
    if ids.len() > MAX_ENTITIES {
        return Err(ModelError::TooLarge {
            got: ids.len(),
            max: MAX_ENTITIES,
        });
    }
    let nodes = resolve_all(g, ids)?;
    let slice = build_slice(g, model, cache, &nodes)?;
    Ok(SliceResponse {
        nodes: nodes.iter().map(|&x| node_view(g, x)).collect(),
        slice,
    })
}

/// Scores (Ae, As) given as ids.
pub fn score(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    existing: &[String],
    serendipity: &[String],
    w: &WeightsInForce,
) -> Result<RnsResponse, ModelError> {
    let weights = w.weights;
    weights.validate()?;
    if existing.is_empty() {
        return Err(ModelError::EmptySet("existing"));
    }
    if serendipity.is_empty() {
        return Err(ModelError::EmptySet("serendipity"));
    }
    if existing.len() + serendipity.len() > MAX_ENTITIES {
        return Err(ModelError::TooLarge {
            got: existing.len() + serendipity.len(),
            max: MAX_ENTITIES,
        });
    }
    let ae = resolve_all(g, existing)?;
    let as_ = resolve_all(g, serendipity)?;
    if let Some(&x) = as_.iter().find(|x| ae.contains(x)) {
        return Err(ModelError::Overlap(g.key(x)));
    }
    let all: Vec<NodeId> = ae.iter().chain(&as_).copied().collect();
    let slice = build_slice(g, model, cache, &all)?;
    let sc = Scorer::new(&slice)?;
    let pe: Vec<usize> = (0..ae.len()).collect();
    let ps: Vec<usize> = (ae.len()..all.len()).collect();
    let terms = sc.score(&pe, &ps, &weights)?;
    Ok(RnsResponse {
        existing: ae.iter().map(|&x| node_view(g, x)).collect(),
        serendipity: as_.iter().map(|&x| node_view(g, x)).collect(),
        weights,
        weights_source: w.source.clone(),
        terms,
    })
}

/// RNS-guided partition of candidates (greedy swap from the default initial partition).
pub fn partition(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    candidates: &[String],
    w: &WeightsInForce,
) -> Result<PartitionResponse, ModelError> {
    let weights = w.weights;
    weights.validate()?;
    if candidates.len() < 2 {
        return Err(ModelError::Invalid(
            "partitioning needs at least 2 distinct candidates".into(),
        ));
    }
    if candidates.len() > MAX_ENTITIES {
        return Err(ModelError::TooLarge {
            got: candidates.len(),
            max: MAX_ENTITIES,
        });
    }
    let nodes = resolve_all(g, candidates)?;
    let slice = build_slice(g, model, cache, &nodes)?;
    let sc = Scorer::new(&slice)?;
    let ac: Vec<usize> = (0..nodes.len()).collect();
    let res = sc.greedy_swap(&ac, None, &weights)?;
    Ok(PartitionResponse {
        existing: res
            .existing
            .iter()
            .map(|&p| node_view(g, nodes[p]))
            .collect(),
        serendipity: res
            .serendipity
            .iter()
            .map(|&p| node_view(g, nodes[p]))
            .collect(),
        weights,
        weights_source: w.source.clone(),
        initial: res.initial,
        terms: res.terms,
        swaps: res.swaps,
        evaluations: res.evaluations,
    })
}
