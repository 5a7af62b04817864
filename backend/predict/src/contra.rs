//! Contradiction features: does the graph record the compound as *causing* the disease?
//!
//! "Failed is not the same as unknown": a pair whose drug the graph says causes the disease (or
//! its defining symptoms) is not a pair without evidence. The join of side effects to diseases
//! is [`serenqa_graph::safety`] (its one home, shared with Discover's safety flags): a SIDER
//! side effect `Compound –causes→ Side Effect` matched to the disease by identifier (the side
//! effect's UMLS CUI among the disease's Disease Ontology cross-references), by name, or by a
//! symptom specific to the disease. Per pair, one feature per way of matching:
//!
//! - `causes the disease (identifier)`: `asinh` of the number of the compound's side effects
//!   matched to the disease by a DO cross-reference (0 everywhere without the DO files);
//! - `causes the disease (name)`: matched by name (the graph's name of the disease, and with
//!   the DO files its DO names and synonyms);
//! - `causes a defining symptom`: the side effect bears the name of a symptom the disease
//!   presents and at most two of the graph's diseases do.
//!
//! A side effect counts once, under the first way that matched it (identifier, name, symptom).
//! **What the features say on Hetionet is not what their name promises**: SIDER mines drug
//! labels, and labels list the indication among the side effects, so 36 % of the known
//! treatments carry such a record for the disease they treat against 0.9 % of the other pairs.
//! The learner is free to weigh them either way; the explanation shows the weight it learned
//! and says which record fired (`GET /api/predictions/explain`).
//!
//! **No leakage**: the features read `causes` and `presents` edges and the DO files, never a
//! treatment edge, and edges in the fold's [`EdgeMask`] are skipped like everywhere else; a
//! pair's values do not change when its own treatment edges are removed
//! (`tests/no_leakage.rs`).

use serde::{Deserialize, Serialize};
use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::safety::{Flag, MatchedBy, SafetyIndex};
use serenqa_graph::{Graph, NodeId};

use crate::dwpc::{EdgeMask, LocalIndex};
use crate::task::Task;

/// The features' names, in column order (identifier, name, symptom).
pub const NAMES: [&str; 3] = [
    "causes the disease (identifier)",
    "causes the disease (name)",
    "causes a defining symptom",
];

/// The feature (column, [`NAMES`] index) of a way of matching.
pub fn kind(by: &MatchedBy) -> usize {
    match by {
        MatchedBy::Identifier(_) => 0,
        MatchedBy::Name(_) => 1,
        MatchedBy::Symptom(_) => 2,
    }
}

/// The join of side effects to diseases, built once per graph.
pub struct Contradiction {
    pub index: SafetyIndex,
    /// Whether the Disease Ontology's cross-references were available (identifier matches).
    pub ontology: bool,
}

impl Contradiction {
    pub fn build(g: &Graph, ontology: Option<&DiseaseOntology>) -> Contradiction {
        Contradiction {
            index: SafetyIndex::build(g, ontology),
            ontology: ontology.is_some(),
        }
    }

    /// The feature values of a pair from its flags ([`SafetyIndex::flags`]): the same values
    /// [`Contradiction::columns`] gives the pair on the unmasked graph.
    pub fn values(flags: &[Flag]) -> [f32; 3] {
        let mut n = [0f32; 3];
        for f in flags {
            n[kind(&f.by)] += 1.0;
        }
        n.map(f32::asinh)
    }

    /// The three columns for every pair (compound-major), on the graph without `mask`'s edges.
    pub fn columns(
        &self,
        g: &Graph,
        task: &Task,
        li: &LocalIndex,
        mask: &EdgeMask,
    ) -> [Vec<f32>; 3] {
        let nd = task.diseases.len();
        let npairs = task.pairs();
        let mut cols = [vec![0f32; npairs], vec![0f32; npairs], vec![0f32; npairs]];
        let (_, in_s, _, in_e) = g.in_csr();
        for (di, &d) in task.diseases.iter().enumerate() {
            for (x, by) in self.index.conditions(d) {
                let col = &mut cols[kind(by)];
                for &r in self.index.causes_relations() {
                    for i in g.in_range_rel(*x, r) {
                        let c: NodeId = in_s[i];
                        if mask.contains(in_e[i]) || g.node_type(c) != task.compound_type {
                            continue;
                        }
                        col[li.local[c as usize] as usize * nd + di] += 1.0;
                    }
                }
            }
        }
        for col in &mut cols {
            for v in col.iter_mut() {
                *v = v.asinh();
            }
        }
        cols
    }

    /// How often the features fire: (pairs with any record, known treatments of `label` with
    /// one, known treatments).
    pub fn coverage(&self, cols: &[&Vec<f32>], positive: &[bool]) -> (usize, usize, usize) {
        let any = |p: usize| cols.iter().any(|c| c[p] > 0.0);
        let pairs = (0..positive.len()).filter(|&p| any(p)).count();
        let treatments = positive.iter().filter(|&&b| b).count();
        let flagged = (0..positive.len())
            .filter(|&p| positive[p] && any(p))
            .count();
        (pairs, flagged, treatments)
    }
}

/// What a run knew and learned about contradictions (stored with the predictions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContradictionInfo {
    /// Whether the Disease Ontology's cross-references were available when the features were
    /// computed (without them, only name and symptom matches count).
    pub ontology: bool,
    /// Whether the features were in the fit (`false`: computed and shown as evidence only).
    pub fitted: bool,
    /// Per feature ([`NAMES`] order): the treats head's logistic coefficient on the
    /// standardised feature, and the feature's mean and deviation over the training rows.
    pub features: Vec<ContradictionFeature>,
    /// Pairs with at least one record, known treatments with one, known treatments.
    pub pairs_flagged: usize,
    pub treatments_flagged: usize,
    pub treatments: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContradictionFeature {
    pub name: String,
    pub beta: f64,
    pub mean: f64,
    pub std: f64,
}

impl ContradictionInfo {
    /// The logistic part's contribution (logit units) of each feature for a pair with these
    /// values: `β·(x − mean)/std`, 0 when the features were not fitted.
    pub fn contributions(&self, values: &[f32; 3]) -> [f64; 3] {
        let mut out = [0.0; 3];
        if !self.fitted {
            return out;
        }
        for (k, f) in self.features.iter().enumerate().take(3) {
            if f.std > 0.0 {
                out[k] = f.beta * (values[k] as f64 - f.mean) / f.std;
            }
        }
        out
    }
}

/// A contribution this small reads as "about nothing" (logit units).
const NEGLIGIBLE: f64 = 0.005;

/// In plain words: feature `k` fired for the pair's disease `disease` through the side effects
/// `side_effects` (quoted names), and added `contribution` to the logistic half of the logit.
pub fn describe(
    info: &ContradictionInfo,
    k: usize,
    disease: &str,
    side_effects: &[String],
    contribution: f64,
) -> String {
    let list = side_effects.join(", ");
    let (effect, symptom) = if side_effects.len() > 1 {
        ("side effects", "symptoms")
    } else {
        ("side effect", "a symptom")
    };
    let what = match k {
        0 => format!("Recorded as causing {disease} (SIDER {effect} {list}, the same condition by a Disease Ontology cross-reference)"),
        1 => format!("Recorded as causing {disease} (SIDER {effect} {list}, the same condition by name)"),
        _ => format!("Recorded as causing {list}, {symptom} specific to {disease} (SIDER)"),
    };
    if !info.fitted {
        return format!("{what}.");
    }
    if contribution > NEGLIGIBLE {
        format!("{what}: {contribution:+.2} to the linear half of the score; the model counts the record for the pair.")
    } else if contribution < -NEGLIGIBLE {
        format!("{what}: {contribution:+.2} to the linear half of the score; the model counts the record against the pair.")
    } else {
        format!("{what}: about 0 to the linear half of the score.")
    }
}

/// What every group of a pair's records shares, said once above them (not once per group):
/// that the model does not read them, or why a record can count *for* a pair. `None` when
/// there is nothing to add (every contribution against the pair or about 0).
pub fn caveat(info: &ContradictionInfo, contributions: &[f64]) -> Option<String> {
    if !info.fitted {
        return Some(
            "The model does not read these records: they are shown as evidence only.".to_string(),
        );
    }
    if !contributions.iter().any(|&c| c > NEGLIGIBLE) {
        return None;
    }
    let share = if info.treatments > 0 {
        format!(
            " ({} of the graph's {} known treatments carry such a record for the disease they treat)",
            info.treatments_flagged, info.treatments
        )
    } else {
        String::new()
    };
    Some(format!("Why a record can raise the score: on this graph such records go with treatment more often than against it, because drug labels list the indication among the side effects{share}. It may still be a true adverse effect: read the records before trusting the score."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(fitted: bool) -> ContradictionInfo {
        ContradictionInfo {
            ontology: true,
            fitted,
            features: NAMES
                .iter()
                .map(|n| ContradictionFeature {
                    name: (*n).to_string(),
                    beta: 0.2,
                    mean: 0.01,
                    std: 0.1,
                })
                .collect(),
            pairs_flagged: 10,
            treatments_flagged: 3,
            treatments: 7,
        }
    }

    #[test]
    fn the_words_say_what_the_weight_did() {
        let se = vec!["\"Parkinsonism\"".to_string()];
        let up = describe(&info(true), 1, "Parkinson's disease", &se, 0.56);
        assert!(up.starts_with("Recorded as causing Parkinson's disease (SIDER side effect \"Parkinsonism\", the same condition by name): +0.56"), "{up}");
        assert!(up.contains("for the pair"), "{up}");
        // The shared explanation is said once per pair, not in each group.
        assert!(!up.contains("known treatments"), "{up}");
        let note = caveat(&info(true), &[0.0, 0.56, -0.3]).unwrap_or_default();
        assert!(
            note.contains("3 of the graph's 7 known treatments"),
            "{note}"
        );
        assert_eq!(caveat(&info(true), &[0.0, -0.3, 0.0]), None);
        let down = describe(&info(true), 0, "asthma", &se, -0.3);
        assert!(
            down.contains("-0.30") && down.contains("against the pair"),
            "{down}"
        );
        let two = vec!["\"Dyskinesia\"".to_string(), "\"Hypokinesia\"".to_string()];
        let sym = describe(&info(true), 2, "Parkinson's disease", &two, 0.0);
        assert!(
            sym.contains("symptoms specific to Parkinson's disease") && sym.contains("about 0"),
            "{sym}"
        );
        let off = describe(&info(false), 1, "asthma", &se, 0.0);
        assert!(!off.contains("does not read"), "{off}");
        let unread = caveat(&info(false), &[0.0; 3]).unwrap_or_default();
        assert!(unread.contains("does not read"), "{unread}");
        // Contributions: β·(x − mean)/std, none when not fitted.
        let c = info(true).contributions(&[0.0, 1.01, 0.01]);
        assert!((c[1] - 2.0).abs() < 1e-6 && c[2].abs() < 1e-6 && (c[0] + 0.02).abs() < 1e-6);
        assert_eq!(info(false).contributions(&[1.0; 3]), [0.0; 3]);
    }
}
