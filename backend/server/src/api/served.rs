//! The plausibility the server holds, in one of two forms: every pair's scores (`serenqa
//! predict`, graphs up to `serenqa_predict::task::MAX_PAIRS` pairs) or the top lists of every
//! disease and compound (`serenqa predict --top-k`, any size). The one home of "which form
//! answers", so Discover, Ask's repurposing answers and `GET /api/predictions` read them alike.

use std::sync::Arc;

use serenqa_graph::{Graph, NodeId};
use serenqa_predict::topk::TopK;
use serenqa_predict::Predictions;
use serenqa_shared::api::{MetapathContribution, Palliation, Prediction};

use super::AppState;
use serenqa_graph::view::node_view;

#[derive(Clone)]
pub enum Served {
    All(Arc<Predictions>),
    Top(Arc<TopK>),
}

impl Served {
    /// The all-pairs predictions when loaded, else the top lists, else none.
    pub fn of(s: &AppState) -> Option<Served> {
        s.predictions
            .clone()
            .map(Served::All)
            .or_else(|| s.top_k.clone().map(Served::Top))
    }

    /// (is a compound, local index) of `n` in the model.
    pub fn locate(&self, n: NodeId) -> Option<(bool, usize)> {
        match self {
            Served::All(p) => p.locate(n),
            Served::Top(t) => t.locate(n),
        }
    }

    /// The other side of the located entity's pairs, best first, without `known` (sorted).
    pub fn propose(
        &self,
        loc: (bool, usize),
        known: &[NodeId],
        limit: usize,
    ) -> Vec<(NodeId, f64)> {
        match self {
            Served::All(p) => p.propose(loc, known, limit),
            Served::Top(t) => t.propose(loc, known, limit),
        }
    }

    /// The pair of the entity located at `loc` and `other`, as the API shows it; `None` when
    /// `other` is not of the model's other side or, for top lists, in neither entity's list.
    pub fn prediction(&self, g: &Graph, loc: (bool, usize), other: NodeId) -> Option<Prediction> {
        let (is_c, local) = loc;
        match self {
            Served::All(p) => {
                let o = p.locate(other)?;
                if o.0 == is_c {
                    return None;
                }
                let (c, d) = if is_c { (local, o.1) } else { (o.1, local) };
                Some(prediction(g, p, c, d, false))
            }
            Served::Top(t) => {
                let o = t.locate(other)?;
                if o.0 == is_c {
                    return None;
                }
                let (c, d) = if is_c { (local, o.1) } else { (o.1, local) };
                let (score, disease_pct, compound_pct) = t.pair(c, d)?;
                Some(Prediction {
                    compound: node_view(g, t.compounds[c]),
                    disease: node_view(g, t.diseases[d]),
                    score: f64::from(score),
                    disease_percentile: disease_pct,
                    compound_percentile: compound_pct,
                    known: false,
                    top_metapaths: Vec::new(),
                    explained: false,
                    palliates: None,
                })
            }
        }
    }
}

/// Whether the graph has an edge of the relation abbreviated `abbrev` between `c` and `d`.
pub(super) fn has_edge(g: &Graph, c: NodeId, d: NodeId, abbrev: &str) -> bool {
    let (_, out_t, _) = g.out_csr();
    let (_, in_s, _, _) = g.in_csr();
    (0..g.relation_count() as u16)
        .filter(|&r| g.relation(r).abbrev == abbrev)
        .any(|r| {
            g.out_range_rel(c, r).any(|i| out_t[i] == d)
                || g.in_range_rel(c, r).any(|i| in_s[i] == d)
        })
}

/// What `GET /api/predictions` says it shows when the server holds top lists.
pub const METHOD_TOP: &str = "Plausibility from the top lists (a graph past the all-pairs model's size): an L2 logistic regression on degree-weighted walk counts (DWPC, w = 0.4) of the compound–disease metapaths that fit the run's work budget plus degree terms, fitted on a sample of diseases; each disease's and compound's best 100 unknown pairs, known treatments left out; percentiles are read off a pair's rank in each list (outside a list: at most the rank after its last entry).";

/// One pair as the API shows it.
pub fn prediction(g: &Graph, p: &Predictions, c: usize, d: usize, known: bool) -> Prediction {
    let i = p.pair(c, d);
    let palliates = p.palliates(i).map(|(score, dp, cp)| Palliation {
        score: score as f64,
        disease_percentile: dp as f64,
        compound_percentile: cp as f64,
        known: p
            .info
            .palliates
            .as_ref()
            .is_some_and(|h| has_edge(g, p.compounds[c], p.diseases[d], &h.relation)),
    });
    Prediction {
        palliates,
        explained: true,
        compound: node_view(g, p.compounds[c]),
        disease: node_view(g, p.diseases[d]),
        score: p.scores[i] as f64,
        disease_percentile: p.disease_pct[i] as f64,
        compound_percentile: p.compound_pct[i] as f64,
        known,
        top_metapaths: p
            .top(i)
            .into_iter()
            .map(|(m, v)| MetapathContribution {
                metapath: m.to_string(),
                contribution: v as f64,
            })
            .collect(),
    }
}
