//! The served predictions checked against an indication list from outside the graph — the way
//! Project Rephetio was validated (DrugCentral indications, ClinicalTrials.gov pairs, repoDB's
//! approved and failed pairs) and the way a reviewer checks this model.
//!
//! Input is a tab-separated file with a header; the compound and disease columns are found by
//! name ([`COMPOUND_COLUMNS`], [`DISEASE_COLUMNS`]) and hold either a bare identifier
//! (`DB00843`, `DOID:10652`) or a graph key (`Compound::DB00843`). Rows are deduplicated by pair.
//!
//! What is measured, on the pairs the graph's predictions cover:
//! - the **candidates** are every pair that is *not* a known treatment in the graph (the
//!   treats label): a known treatment is not a prediction. With `exclude_second` also not a
//!   known palliation (Rephetio's validation sets left out every pair PharmacotherapyDB
//!   classifies, symptomatic ones included);
//! - the **positives** are the listed pairs among the candidates; listed pairs that are
//!   already known treatments are counted and set aside;
//! - the figures: AUROC, AUPRC, the number of positives among the best 100, 1,000 and
//!   [`TOP_BUDGET`] candidates overall (Rephetio's published list size), and precision and
//!   recall at 10 per disease (mean over diseases with a listed pair) — the same for a
//!   **baseline** that ranks by treatment degrees alone (`(1 + known treatments of the
//!   compound) · (1 + known treatments of the disease)`), so a reader sees what the metapaths
//!   add over "popular drugs for well-treated diseases";
//! - with a second list (`against`, e.g. repoDB's failed pairs next to its approved ones):
//!   the AUROC of the model's score separating the first list's candidates from the second's.
//!
//! Nothing here fits anything: the lists are read after the model is built and never reach
//! it.

use std::collections::HashSet;

use serde::Serialize;
use serenqa_graph::{Graph, NodeId};

use crate::dwpc::LocalIndex;
use crate::metrics::{auprc, auroc, per_group_at, ranked, TOP_BUDGET};
use crate::task::Task;
use crate::{PredictError, Predictions};

/// Header names accepted for the compound column, first match wins (case-insensitive).
pub const COMPOUND_COLUMNS: [&str; 5] = [
    "compound_id",
    "drugbank_id",
    "compound",
    "drug_id",
    "source",
];
/// Header names accepted for the disease column, first match wins (case-insensitive).
pub const DISEASE_COLUMNS: [&str; 6] = [
    "disease_id",
    "doid_id",
    "slim_id",
    "doid_code",
    "disease",
    "target",
];

/// Most rows read from one list: far above any published indication set, and a bound on what
/// a wrong file can cost.
pub const MAX_ROWS: usize = 5_000_000;

/// The distinct (compound, disease) identifier pairs of a list, in first-seen order.
pub fn read_pairs(text: &str) -> Result<Vec<(String, String)>, PredictError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .ok_or_else(|| PredictError::Invalid("the list is empty (no header line)".into()))?;
    let cols: Vec<String> = header
        .split('\t')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let find = |names: &[&str]| names.iter().find_map(|n| cols.iter().position(|c| c == n));
    let (ci, di) = match (find(&COMPOUND_COLUMNS), find(&DISEASE_COLUMNS)) {
        (Some(c), Some(d)) if c != d => (c, d),
        _ => {
            return Err(PredictError::Invalid(format!(
                "the header needs a compound column ({}) and a disease column ({}), tab-separated; it has: {}",
                COMPOUND_COLUMNS.join(", "),
                DISEASE_COLUMNS.join(", "),
                cols.join(", ")
            )))
        }
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        if i >= MAX_ROWS {
            return Err(PredictError::Invalid(format!(
                "the list has more than {MAX_ROWS} rows"
            )));
        }
        let f: Vec<&str> = line.split('\t').collect();
        let (Some(c), Some(d)) = (f.get(ci), f.get(di)) else {
            return Err(PredictError::Invalid(format!(
                "line {}: {} fields, the header has {}",
                i + 2,
                f.len(),
                cols.len()
            )));
        };
        let pair = (c.trim().to_string(), d.trim().to_string());
        if pair.0.is_empty() || pair.1.is_empty() {
            continue;
        }
        if seen.insert(pair.clone()) {
            out.push(pair);
        }
    }
    Ok(out)
}

/// Settings of a check.
#[derive(Clone, Debug)]
pub struct CheckParams {
    /// Also leave known palliations (the second label) out of the candidates.
    pub exclude_second: bool,
}

/// The figures of one ranking of the candidates.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    pub auroc: f64,
    pub auprc: f64,
    /// (k, listed pairs among the best k candidates) for k = 100, 1,000, [`TOP_BUDGET`].
    pub hits: Vec<(usize, usize)>,
    /// Mean over diseases with a listed candidate of precision and recall among its best 10.
    pub p_at_10_disease: f64,
    pub r_at_10_disease: f64,
}

/// How a list met the graph, and the model's and the baseline's figures on it.
#[derive(Clone, Debug, Serialize)]
pub struct ListReport {
    /// Distinct pairs in the file.
    pub read: usize,
    /// Pairs whose compound or disease is not among the predictions' (unknown identifier).
    pub unmatched: usize,
    /// Listed pairs that are known treatments in the graph (not predictions; set aside).
    pub known: usize,
    /// Listed pairs that are known palliations, set aside with `exclude_second`.
    pub second_excluded: usize,
    /// Listed candidates: the positives.
    pub positives: usize,
    pub candidates: usize,
    pub model: Figures,
    pub baseline: Figures,
}

/// The first list's candidates against the second's (e.g. approved against failed).
#[derive(Clone, Debug, Serialize)]
pub struct AgainstReport {
    pub list: ListReport,
    /// Pairs on both lists, left out of the comparison.
    pub on_both: usize,
    /// AUROC of the score separating the first list's candidates (positive) from the second's.
    pub model_auroc: f64,
    pub baseline_auroc: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExternalReport {
    pub graph_hash: String,
    pub exclude_second: bool,
    pub list: ListReport,
    pub against: Option<AgainstReport>,
}

/// Local (compound, disease) indices of the predictions, by graph node.
struct Space<'a> {
    g: &'a Graph,
    task: Task,
    li: LocalIndex,
    nd: usize,
    /// Per pair: 0 candidate, 1 known treatment, 2 known second label (excluded).
    status: Vec<u8>,
    baseline: Vec<f64>,
}

impl<'a> Space<'a> {
    fn new(g: &'a Graph, preds: &Predictions, p: &CheckParams) -> Result<Self, PredictError> {
        let task = Task::detect(g)?;
        if task.compounds != preds.compounds || task.diseases != preds.diseases {
            return Err(PredictError::Invalid(
                "the predictions' compound or disease list does not match the graph".into(),
            ));
        }
        let li = LocalIndex::of(g);
        let (nc, nd) = (task.compounds.len(), task.diseases.len());
        let labels = task.positives(g, &li);
        let mut status = vec![0u8; nc * nd];
        let (mut deg_c, mut deg_d) = (vec![0usize; nc], vec![0usize; nd]);
        for (pair, &t) in labels[0].iter().enumerate() {
            if t {
                status[pair] = 1;
                deg_c[pair / nd] += 1;
                deg_d[pair % nd] += 1;
            }
        }
        if p.exclude_second {
            if let Some(second) = labels.get(1) {
                for (pair, &s) in second.iter().enumerate() {
                    if s && status[pair] == 0 {
                        status[pair] = 2;
                    }
                }
            }
        }
        let baseline = (0..nc * nd)
            .map(|pair| ((1 + deg_c[pair / nd]) * (1 + deg_d[pair % nd])) as f64)
            .collect();
        Ok(Space {
            g,
            task,
            li,
            nd,
            status,
            baseline,
        })
    }

    fn node(&self, id: &str, want: serenqa_graph::TypeId) -> Option<NodeId> {
        let of_type = |n: &NodeId| self.g.node_type(*n) == want;
        if id.contains("::") {
            return self.g.find_by_key(id).filter(of_type);
        }
        self.g.find_by_ident(id).iter().copied().find(of_type)
    }

    /// Pair index of a listed pair, or `None` when either end is not in the predictions.
    fn pair(&self, c: &str, d: &str) -> Option<usize> {
        let c = self.node(c, self.task.compound_type)?;
        let d = self.node(d, self.task.disease_type)?;
        Some(self.li.local[c as usize] as usize * self.nd + self.li.local[d as usize] as usize)
    }

    /// Listed pairs sorted into unmatched / known / excluded / candidate; the candidates' pair
    /// indices.
    fn sort(&self, list: &[(String, String)]) -> (usize, usize, usize, Vec<usize>) {
        let (mut unmatched, mut known, mut excluded) = (0, 0, 0);
        let mut cand = Vec::new();
        for (c, d) in list {
            match self.pair(c, d) {
                None => unmatched += 1,
                Some(p) => match self.status[p] {
                    1 => known += 1,
                    2 => excluded += 1,
                    _ => cand.push(p),
                },
            }
        }
        cand.sort_unstable();
        cand.dedup();
        (unmatched, known, excluded, cand)
    }
}

fn figures(pairs: &[usize], scores: &[f64], labels: &[bool], nd: usize) -> Figures {
    let order = ranked(scores);
    let hits = [100, 1000, TOP_BUDGET]
        .iter()
        .map(|&k| {
            let k = k.min(order.len());
            (k, order[..k].iter().filter(|&&i| labels[i]).count())
        })
        .collect();
    let (p10, r10) = per_group_at(pairs, scores, labels, &|p| p % nd.max(1), nd, 10);
    Figures {
        auroc: auroc(scores, labels),
        auprc: auprc(scores, labels),
        hits,
        p_at_10_disease: p10,
        r_at_10_disease: r10,
    }
}

fn list_report(
    s: &Space,
    preds: &Predictions,
    list: &[(String, String)],
) -> (ListReport, Vec<usize>) {
    let (unmatched, known, second_excluded, positives) = s.sort(list);
    let listed: HashSet<usize> = positives.iter().copied().collect();
    let pairs: Vec<usize> = (0..s.status.len()).filter(|&p| s.status[p] == 0).collect();
    let labels: Vec<bool> = pairs.iter().map(|p| listed.contains(p)).collect();
    let model: Vec<f64> = pairs.iter().map(|&p| preds.scores[p] as f64).collect();
    let base: Vec<f64> = pairs.iter().map(|&p| s.baseline[p]).collect();
    let report = ListReport {
        read: list.len(),
        unmatched,
        known,
        second_excluded,
        positives: positives.len(),
        candidates: pairs.len(),
        model: figures(&pairs, &model, &labels, s.nd),
        baseline: figures(&pairs, &base, &labels, s.nd),
    };
    (report, positives)
}

/// Checks `preds` (made on `g`) against `list`, and optionally the list against `against`.
pub fn check(
    g: &Graph,
    preds: &Predictions,
    list: &[(String, String)],
    against: Option<&[(String, String)]>,
    params: &CheckParams,
) -> Result<ExternalReport, PredictError> {
    let s = Space::new(g, preds, params)?;
    let (report, positives) = list_report(&s, preds, list);
    let against = against.map(|other| {
        let (other_report, negatives) = list_report(&s, preds, other);
        let pos: HashSet<usize> = positives.iter().copied().collect();
        let neg: HashSet<usize> = negatives.iter().copied().collect();
        let on_both = pos.intersection(&neg).count();
        let (mut model, mut base, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for (set, label, skip) in [(&positives, true, &neg), (&negatives, false, &pos)] {
            for &p in set.iter().filter(|p| !skip.contains(p)) {
                model.push(preds.scores[p] as f64);
                base.push(s.baseline[p]);
                labels.push(label);
            }
        }
        AgainstReport {
            list: other_report,
            on_both,
            model_auroc: auroc(&model, &labels),
            baseline_auroc: auroc(&base, &labels),
        }
    });
    Ok(ExternalReport {
        graph_hash: preds.info.graph_hash.clone(),
        exclude_second: params.exclude_second,
        list: report,
        against,
    })
}

impl ExternalReport {
    /// The report as a reader reads it: how the list met the graph, then one table.
    pub fn table(&self) -> String {
        let l = &self.list;
        let mut s = format!(
            "list: {} distinct pairs; {} with an identifier not among the predictions; {} already known treatments{} (set aside); {} positives among {} candidate pairs{}\n",
            l.read,
            l.unmatched,
            l.known,
            if self.exclude_second {
                format!(", {} known palliations", l.second_excluded)
            } else {
                String::new()
            },
            l.positives,
            l.candidates,
            if self.exclude_second {
                " (known treatments and palliations left out)"
            } else {
                " (known treatments left out)"
            }
        );
        let hits_head: Vec<String> = l
            .model
            .hits
            .iter()
            .map(|(k, _)| format!("in best {k}"))
            .collect();
        s += &format!(
            "| ranking | AUROC | AUPRC | {} | P@10/disease | R@10/disease |\n|---|---:|---:|{}---:|---:|\n",
            hits_head.join(" | "),
            "---:|".repeat(hits_head.len())
        );
        for (name, f) in [
            ("model (served score)", &l.model),
            ("baseline: treatment degrees", &l.baseline),
        ] {
            let hits: Vec<String> = f.hits.iter().map(|(_, h)| h.to_string()).collect();
            s += &format!(
                "| {name} | {:.4} | {:.4} | {} | {:.3} | {:.3} |\n",
                f.auroc,
                f.auprc,
                hits.join(" | "),
                f.p_at_10_disease,
                f.r_at_10_disease
            );
        }
        if let Some(a) = &self.against {
            s += &format!(
                "against the second list ({} distinct pairs, {} unmatched, {} known treatments, {} candidates; {} on both lists, left out): AUROC of the first list over the second — model {:.4}, baseline {:.4}\n",
                a.list.read,
                a.list.unmatched,
                a.list.known,
                a.list.positives,
                a.on_both,
                a.model_auroc,
                a.baseline_auroc
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_found_by_name_and_pairs_deduplicated() {
        let t = "slim_id\tslim_name\tDRUG_NAME\tdrugbank_id\nDOID:1\tx\ty\tDB1\nDOID:1\tx\tz\tDB1\n\nDOID:2\tx\ty\tDB1\n";
        let p = read_pairs(t).unwrap();
        assert_eq!(
            p,
            vec![
                ("DB1".to_string(), "DOID:1".to_string()),
                ("DB1".to_string(), "DOID:2".to_string())
            ]
        );
    }

    #[test]
    fn a_list_without_the_columns_or_with_short_rows_is_refused_in_one_line() {
        let e = read_pairs("a\tb\nx\ty\n").unwrap_err().to_string();
        assert!(e.contains("compound column") && !e.contains('\n'), "{e}");
        assert!(read_pairs("").is_err());
        let e = read_pairs("compound_id\tdisease_id\nDB1\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 2:"), "{e}");
    }
}
