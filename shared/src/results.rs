//! Evaluation results as the leaderboard reads them: the `aggregate.json` of a run in the
//! paper's Table 2 / Table 3 layouts. The pipeline writes these; the browser reads them; both
//! use these types. Percentages are 0–100; judge scores are 1–5.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Table 2 pattern groups: (key, title).
pub const GROUPS: &[(&str, &str)] = &[("one_hop", "One-Hop"), ("two_hop", "Two-Hop"), ("multi_hop", "Multiple(3+)-Hop"), ("intersection", "Intersection")];

/// Partition strategies: (key, title).
pub const PARTITIONS: &[(&str, &str)] = &[("llm", "LLM Ensemble"), ("expert", "Expert Crowdsourced"), ("sscore", "RNS Guided")];

pub fn partition_title(key: &str) -> &'static str {
    PARTITIONS.iter().find(|(k, _)| *k == key).map(|(_, t)| *t).unwrap_or("?")
}

pub fn group_title(key: &str) -> &'static str {
    GROUPS.iter().find(|(k, _)| *k == key).map(|(_, t)| *t).unwrap_or(if key == "all" { "All" } else { "?" })
}

/// T1 knowledge retrieval, one pattern group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct T1Cell {
    pub hit: f64,
    pub f1: f64,
    pub exe: f64,
    pub n: usize,
}

/// T2 subgraph reasoning, one partition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct T2Cell {
    pub faithfulness: f64,
    pub comprehensiveness: f64,
    pub seren_cov: f64,
    pub n: usize,
}

/// T3 serendipity exploration, one partition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct T3Cell {
    pub relevance: f64,
    pub type_match: f64,
    pub seren_hit: f64,
    pub n: usize,
}

/// `aggregate.json` of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Aggregate {
    /// Models of the run's roles joined by `+`, or `offline`.
    pub label: String,
    /// Judge of the 1–5 scores: a model name or `proxy` (code-based, not an LLM).
    pub judge: String,
    /// Table 2: group key (`one_hop`, `two_hop`, `multi_hop`, `intersection`, `all`) → cell.
    pub table2: Option<BTreeMap<String, T1Cell>>,
    /// Table 3 upper: partition key → cell.
    pub table3_reasoning: Option<BTreeMap<String, T2Cell>>,
    /// Table 3 lower: partition key → cell, with and without summaries.
    pub table3_exploration: Option<BTreeMap<String, T3Cell>>,
    pub table3_exploration_wo_summary: Option<BTreeMap<String, T3Cell>>,
    pub partitions: Vec<String>,
}

/// Pearson correlation of two equally long series (None when undefined).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 || y.len() != n {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// Positions of the best and second-best values (higher is better), ignoring NaN.
pub fn best_two(values: &[f64]) -> (Option<usize>, Option<usize>) {
    let mut idx: Vec<usize> = (0..values.len()).filter(|&i| values[i].is_finite()).collect();
    idx.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    (idx.first().copied(), idx.get(1).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_by_hand() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        // x = 1,2,3,4; y = 1,3,2,4: cov = 4/4, var = 5/4 each -> 0.8
        assert!((pearson(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(pearson(&[1.0, 1.0], &[2.0, 3.0]), None);
        assert_eq!(pearson(&[1.0], &[2.0]), None);
    }

    #[test]
    fn best_and_second() {
        assert_eq!(best_two(&[0.2, 0.9, f64::NAN, 0.5]), (Some(1), Some(3)));
        assert_eq!(best_two(&[0.3]), (Some(0), None));
        assert_eq!(best_two(&[]), (None, None));
    }
}
