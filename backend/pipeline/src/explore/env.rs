//! What an exploration reads ([`Env`]) and how candidate edges are scored: type-level walk
//! statistics, the graph score, per-relation normalisation.

use std::collections::{BTreeMap, BTreeSet};

use serenqa_benchmark::query::EdgeMask;
use serenqa_edges::{EdgeSource, Incident};
use serenqa_graph::{EdgeId, Graph, NodeId, RelId, TypeId};
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;

use super::types::Step;

/// Type-level walk statistics: how likely a walk from a type reaches the target types.
pub struct TypeStats {
    /// W[a][b]: share of a's edge ends that lead to type b.
    walk: Vec<Vec<f64>>,
    /// Edges per relation (rarity).
    pub rel_counts: Vec<u64>,
}

impl TypeStats {
    pub fn new(g: &Graph) -> TypeStats {
        let nt = g.type_count();
        let mut c = vec![vec![0f64; nt]; nt];
        let mut rel_counts = vec![0u64; g.relation_count()];
        for (r, n) in g.relation_counts() {
            rel_counts[r as usize] = n;
        }
        // Type pairs per relation from the schema when known, else by scanning the edges.
        let (off, tgt, rel) = g.out_csr();
        for u in 0..g.node_count() {
            let tu = g.node_type(u as NodeId) as usize;
            for i in off[u] as usize..off[u + 1] as usize {
                let tv = g.node_type(tgt[i]) as usize;
                let _ = rel[i];
                c[tu][tv] += 1.0;
                c[tv][tu] += 1.0;
            }
        }
        let walk = c
            .into_iter()
            .map(|row| {
                let s: f64 = row.iter().sum();
                row.into_iter()
                    .map(|x| if s > 0.0 { x / s } else { 0.0 })
                    .collect()
            })
            .collect();
        TypeStats { walk, rel_counts }
    }

    /// f_h(a): probability-like reach of `targets` from type a within h more hops
    /// (1 when a is already a target type).
    pub fn reach(&self, a: TypeId, targets: &BTreeSet<TypeId>, hops: usize) -> f64 {
        if targets.contains(&a) {
            return 1.0;
        }
        if hops == 0 {
            return 0.0;
        }
        let row = &self.walk[a as usize];
        row.iter()
            .enumerate()
            .filter(|(_, &w)| w > 0.0)
            .map(|(b, w)| w * self.reach(b as TypeId, targets, hops - 1))
            .sum()
    }
}

/// What an exploration reads.
///
/// In a benchmark run the explorer must see only G = Gc − R of its partition, never the
/// removed edges that hide the serendipity set. So `g` (with `removed` masking the edges the
/// store returns) gives only labels, types and edge ids, while everything *computed* from the
/// graph — degrees of far ends (the graph score shown to models), the model's marginals and
/// embeddings, P3 slices and their cache, type-level walk statistics — comes from `walk`, G
/// built as a graph of its own with the same node ids, and a model computed on it.
pub struct Env<'a> {
    /// Node labels and types, and the edge ids the edge store speaks in (Gc).
    pub g: &'a Graph,
    pub edges: &'a dyn EdgeSource,
    /// R of the partition (None = Gc).
    pub removed: Option<&'a EdgeMask>,
    /// The graph degrees, slices and statistics are computed on: G (`g` itself outside a
    /// benchmark partition). Same node ids as `g`.
    pub walk: &'a Graph,
    /// The model of `walk`.
    pub model: Option<&'a Model>,
    pub blocks: &'a BlockCache,
    /// Type statistics of `walk`.
    pub stats: &'a TypeStats,
    /// RNS weights for ranking candidates (the weights in force: shipped or calibrated).
    pub weights: serenqa_shared::rns::Weights,
}

impl Env<'_> {
    fn visible(&self, e: EdgeId) -> bool {
        !self.removed.is_some_and(|m| m.contains(e))
    }

    /// Visible edges at each frontier node (self-loops dropped), in one batched lookup.
    pub async fn incident_many(&self, frontier: &[NodeId]) -> Result<Vec<Vec<Hop>>, String> {
        let lists = self
            .edges
            .incident_many(frontier)
            .await
            .map_err(|e| e.to_string())?;
        Ok(frontier
            .iter()
            .zip(lists)
            .map(|(&u, list)| {
                list.into_iter()
                    .filter(|i: &Incident| self.visible(i.edge) && i.other != u)
                    // The far end's degree in G: the store's count includes removed edges.
                    .map(|i| Hop {
                        step: Step { from: u, rel: i.rel, to: i.other, forward: i.forward, edge: i.edge },
                        score: i.score,
                        far_degree: if std::ptr::eq(self.walk, self.g) { i.other_degree } else { self.walk.degree(i.other) as u32 },
                    })
                    .collect()
            })
            .collect())
    }
}

/// A visible edge at a frontier node with what scoring it needs.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub step: Step,
    /// Edge confidence, where the graph has one.
    pub score: Option<f32>,
    /// Degree of the far end.
    pub far_degree: u32,
}

/// The documented graph score of an edge without confidence: the Adamic–Adar weight of its
/// far end, 1 / ln(e + degree): specific entities carry more information than hubs.
pub fn graph_score(far_degree: u32) -> f64 {
    1.0 / (std::f64::consts::E + f64::from(far_degree)).ln()
}

/// D.3's neighbour scores made comparable: within each relation, the scores that exist are
/// min-max normalised to [0, 1] (all equal → 1), so one relation's raw confidences and
/// another's graph scores rank on the same scale before the top k are kept. Edges without a
/// score get −1 (ranked last; when no edge at a frontier node has one, the caller samples
/// uniformly).
pub fn normalise_per_relation(edges: Vec<(Step, Option<f64>)>) -> Vec<(Step, f64)> {
    let mut range: BTreeMap<RelId, (f64, f64)> = BTreeMap::new();
    for (s, sc) in &edges {
        if let Some(x) = sc.filter(|x| x.is_finite()) {
            let e = range.entry(s.rel).or_insert((x, x));
            e.0 = e.0.min(x);
            e.1 = e.1.max(x);
        }
    }
    edges
        .into_iter()
        .map(|(s, sc)| {
            let v = match (sc.filter(|x| x.is_finite()), range.get(&s.rel)) {
                (Some(x), Some(&(lo, hi))) if hi > lo => (x - lo) / (hi - lo),
                (Some(_), Some(_)) => 1.0,
                _ => -1.0,
            };
            (s, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rel: RelId, to: NodeId) -> Step {
        Step {
            from: 0,
            rel,
            to,
            forward: true,
            edge: to,
        }
    }

    #[test]
    fn neighbour_scores_are_min_max_normalised_per_relation() {
        // Relation 1 has raw confidences 0.2..0.8, relation 2 graph-score-like values
        // 0.30..0.35: raw, relation 1's 0.5 would outrank all of relation 2.
        let out = normalise_per_relation(vec![
            (step(1, 10), Some(0.2)),
            (step(1, 11), Some(0.8)),
            (step(1, 12), Some(0.5)),
            (step(2, 20), Some(0.30)),
            (step(2, 21), Some(0.35)),
            (step(3, 30), Some(7.0)),
            (step(3, 31), None),
        ]);
        let v: Vec<f64> = out.iter().map(|x| x.1).collect();
        assert!(
            (v[0] - 0.0).abs() < 1e-12 && (v[1] - 1.0).abs() < 1e-12 && (v[2] - 0.5).abs() < 1e-12,
            "{v:?}"
        );
        assert!(
            (v[3] - 0.0).abs() < 1e-12 && (v[4] - 1.0).abs() < 1e-12,
            "{v:?}"
        );
        assert_eq!(
            v[5], 1.0,
            "a single scored edge of its relation is its maximum"
        );
        assert_eq!(v[6], -1.0, "no score: ranked last");
        assert!(
            normalise_per_relation(vec![(step(1, 1), None), (step(2, 2), Some(f64::NAN))])
                .iter()
                .all(|x| x.1 < 0.0)
        );
    }
}
