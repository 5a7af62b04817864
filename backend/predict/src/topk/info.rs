//! What a top-k run is given ([`TopkParams`]) and what it reports ([`TopkInfo`]).

use serde::{Deserialize, Serialize};

use crate::learn::FitParams;

/// Settings of a top-k run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopkParams {
    /// List length per disease and per compound.
    pub k: usize,
    pub max_len: usize,
    /// DWPC damping exponent w.
    pub damping: f64,
    /// Diseases sampled for the fit (all of them when the graph has fewer).
    pub train_diseases: usize,
    pub neg_per_pos: usize,
    pub seed: u64,
    /// Most work the scoring pass may take (edge visits plus entries scored), estimated
    /// before it starts.
    pub budget: f64,
    /// Diseases the cost and support estimates are read on.
    pub cost_sample: usize,
    /// A metapath is kept when at least this share of the sampled pairs has a walk of it.
    pub min_support: f64,
    /// Share of the sampled diseases held out in the smoke test (0: none).
    pub holdout: f64,
    pub fit: FitParams,
    /// Say each phase on stderr as it ends.
    #[serde(skip)]
    pub progress: bool,
}

impl Default for TopkParams {
    fn default() -> Self {
        TopkParams {
            k: 100,
            max_len: 3,
            damping: 0.4,
            train_diseases: 4000,
            neg_per_pos: 20,
            seed: 0,
            budget: 2e10,
            cost_sample: 256,
            min_support: 1e-4,
            holdout: 0.2,
            fit: FitParams::default(),
            progress: false,
        }
    }
}

/// One metapath's estimate on the cost sample.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PathEstimate {
    pub name: String,
    pub len: usize,
    /// Cost of a push from every disease: edge visits plus entries scored (sample mean ×
    /// diseases; infinite when the sample alone passed the budget).
    pub visits: f64,
    /// Share of pairs with a walk.
    pub support: f64,
    pub kept: bool,
}

/// The held-out check: treatments of held-out diseases, masked before any feature.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Holdout {
    pub train_diseases: usize,
    pub test_diseases: usize,
    /// Held-out treatments (positives) and random unknown pairs of the same diseases.
    pub positives: usize,
    pub negatives: usize,
    pub auroc: f64,
    /// Share of held-out treatments in their disease's top `k` (of all compounds).
    pub recall_at_k: f64,
    /// The same for 10.
    pub recall_at_10: f64,
    /// Median rank of a held-out treatment among all compounds of its disease.
    pub median_rank: f64,
    /// Compounds per disease (the rank's scale).
    pub compounds: usize,
}

/// What a run did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TopkInfo {
    pub graph_hash: String,
    pub params: TopkParams,
    pub compound_type: String,
    pub disease_type: String,
    pub label: String,
    pub estimates: Vec<PathEstimate>,
    /// Kept metapaths (compound → disease reading) with their coefficient (standardised).
    pub metapaths: Vec<(String, f64)>,
    pub degree_features: Vec<(String, f64)>,
    pub positives: usize,
    pub negatives: usize,
    pub fit_diseases: usize,
    pub iterations: usize,
    pub converged: bool,
    pub grad_max: f64,
    /// Edge visits the scoring pass took, and its estimate.
    pub visits: u64,
    pub estimated_visits: f64,
    /// Candidate pairs scored one by one (reached by a metapath).
    pub reached_pairs: u64,
    /// Compound lists proved exact (module docs), of all compounds.
    pub exact_compound_lists: usize,
    pub holdout: Option<Holdout>,
    /// Seconds per phase.
    pub timings: Vec<(String, f64)>,
}

impl PartialEq for TopkParams {
    fn eq(&self, o: &Self) -> bool {
        serde_json::to_string(self).ok() == serde_json::to_string(o).ok()
    }
}
