//! The prediction task: which types are the compounds and the diseases, which relations are
//! the labels and the treatments, and the largest all-pairs table the model takes.

use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use crate::dwpc::LocalIndex;
use crate::PredictError;

/// Which types are compounds and diseases, which relations are the labels.
#[derive(Clone, Debug)]
pub struct Task {
    pub compound_type: TypeId,
    pub disease_type: TypeId,
    /// The first label relation (`TREATS_CtD`): the served plausibility.
    pub label: RelId,
    /// The second label (`PALLIATES_CpD`), when the graph has one: a second model on the same
    /// features, served as the palliation score next to the plausibility.
    pub second: Option<RelId>,
    /// Every relation joining the two types directly (`CtD`, `CpD`): never a feature on its
    /// own, crossed at most once inside a metapath.
    pub treatment: Vec<RelId>,
    pub compounds: Vec<NodeId>,
    pub diseases: Vec<NodeId>,
}

/// Most compound × disease pairs the all-pairs model takes: its feature table holds a row
/// per pair, so past this it would need more memory than the machine has (refused up front
/// with the reason rather than run out of memory).
pub const MAX_PAIRS: u64 = 20_000_000;

impl Task {
    /// Compound (or Drug) × Disease, labelled by the treats relation, refused past
    /// [`MAX_PAIRS`] (the all-pairs model; [`crate::topk`] takes any size).
    pub fn detect(g: &Graph) -> Result<Task, PredictError> {
        let task = Self::detect_any(g)?;
        let pairs = task.pairs() as u64;
        if pairs > MAX_PAIRS {
            return Err(PredictError::Task(format!(
                "{} compounds × {} diseases = {pairs} pairs: the all-pairs model scores every pair and is built for graphs of up to {MAX_PAIRS} pairs (Hetionet: 212,624); `serenqa predict --top-k` builds the top of each list instead",
                task.compounds.len(),
                task.diseases.len()
            )));
        }
        Ok(task)
    }

    /// [`Task::detect`] without the size limit.
    pub fn detect_any(g: &Graph) -> Result<Task, PredictError> {
        let ct = ["Compound", "Drug"]
            .iter()
            .find_map(|l| g.type_id(l))
            .ok_or_else(|| PredictError::Task("the graph has no Compound (or Drug) type".into()))?;
        let dt = g
            .type_id("Disease")
            .ok_or_else(|| PredictError::Task("the graph has no Disease type".into()))?;
        let mut joining: Vec<RelId> = Vec::new();
        for (r, n) in g.relation_counts() {
            if n == 0 {
                continue;
            }
            let rel = g.relation(r);
            let ends = (rel.source_type, rel.target_type);
            let joins = ends == (Some(ct), Some(dt))
                || ends == (Some(dt), Some(ct))
                || Self::joins_by_edges(g, r, ct, dt);
            if joins {
                joining.push(r);
            }
        }
        joining.sort_unstable();
        let is_label = |r: RelId| {
            let rel = g.relation(r);
            rel.abbrev == "CtD"
                || rel.verb.to_lowercase().contains("treat")
                || rel.name.to_uppercase().contains("INDICATED")
        };
        let label = joining
            .iter()
            .copied()
            .find(|&r| is_label(r))
            .ok_or_else(|| {
                PredictError::Task("no treats relation joins compounds and diseases".into())
            })?;
        let is_second = |r: RelId| {
            let rel = g.relation(r);
            rel.abbrev == "CpD"
                || rel.verb.to_lowercase().contains("palliat")
                || rel.name.to_uppercase().contains("PALLIAT")
        };
        let second = joining
            .iter()
            .copied()
            .find(|&r| r != label && is_second(r));
        Ok(Task {
            compound_type: ct,
            disease_type: dt,
            label,
            second,
            treatment: joining,
            compounds: g.nodes_of_type(ct).to_vec(),
            diseases: g.nodes_of_type(dt).to_vec(),
        })
    }

    fn joins_by_edges(g: &Graph, r: RelId, a: TypeId, b: TypeId) -> bool {
        g.nodes_of_type(a)
            .iter()
            .take(5000)
            .any(|&n| g.out_range_rel(n, r).len() + g.in_range_rel(n, r).len() > 0)
            && g.nodes_of_type(b)
                .iter()
                .take(5000)
                .any(|&n| g.out_range_rel(n, r).len() + g.in_range_rel(n, r).len() > 0)
    }

    pub fn pairs(&self) -> usize {
        self.compounds.len() * self.diseases.len()
    }

    /// The label relations: the treats label, then the second label if any. Index `h` here is
    /// the model head `h` everywhere in the crate.
    pub fn labels(&self) -> Vec<RelId> {
        std::iter::once(self.label).chain(self.second).collect()
    }

    /// One positive flag per pair for each label ([`Task::labels`] order).
    pub fn positives(&self, g: &Graph, li: &LocalIndex) -> Vec<Vec<bool>> {
        self.labels()
            .into_iter()
            .map(|r| {
                let mut pos = vec![false; self.pairs()];
                for (p, _) in self.edges_of(g, li, &[r]) {
                    pos[p] = true;
                }
                pos
            })
            .collect()
    }

    /// Edges of relation `rels` between the task's compounds and diseases, as
    /// (pair index, edge id), sorted.
    pub fn edges_of(&self, g: &Graph, li: &LocalIndex, rels: &[RelId]) -> Vec<(usize, u32)> {
        let nd = self.diseases.len();
        let mut out = Vec::new();
        for &c in &self.compounds {
            for e in g.edges(c, serenqa_graph::Direction::Both) {
                if !rels.contains(&e.rel) {
                    continue;
                }
                let other = if e.source == c { e.target } else { e.source };
                if g.node_type(other) == self.disease_type {
                    out.push((
                        li.local[c as usize] as usize * nd + li.local[other as usize] as usize,
                        e.id,
                    ));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
