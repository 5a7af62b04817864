//! Safety flags: which drugs the graph records as *causing* a disease.
//!
//! A repurposing suggestion that the graph itself says causes the disease (an antipsychotic
//! for Parkinson's disease, gentamicin for pulmonary fibrosis) is one a physician rejects at a
//! glance. Hetionet records side effects (SIDER, `Compound –causes→ Side Effect`) with UMLS
//! CUIs and diseases with Disease Ontology ids; this module joins the two:
//!
//! - **by identifier**: the side effect's CUI is among the disease's Disease Ontology UMLS
//!   cross-references (propagated from every DO term the disease subsumes,
//!   [`crate::load::disease_ontology`]);
//! - **by name**, for what identifiers miss (the DO files are optional, and SIDER often records
//!   a broader or a qualified term): after normalisation (case, possessives, a few organ-word
//!   synonyms such as lung → pulmonary, the suffixes of *parkinson-ism*/*parkinson-ian*, and
//!   qualifiers such as *aggravated*, *drug-induced*, *disease*), the side effect's words equal
//!   those of one of the disease's names (its graph name, its DO names and synonyms and those of
//!   the terms it subsumes), or are a part of at least two words of such a name ("pulmonary
//!   fibrosis" in "idiopathic pulmonary fibrosis"), or contain the whole name ("Parkinson's
//!   disease aggravated");
//! - **by a defining symptom**: the disease *presents* a symptom (MEDLINE co-occurrence,
//!   `Disease –presents→ Symptom`) that at most [`DEFINING_SYMPTOM_MAX_DISEASES`] of the graph's
//!   diseases present — specific to it, like the rigidity and dyskinesia of Parkinson's disease
//!   rather than pain or fatigue — and the side effect bears that symptom's name (same words).
//!
//! A flag carries its evidence: the side effect, how it was matched, and the edge (whose
//! source and license the API attaches). The index is built once per graph (a few ms).
//!
//! It lives in the graph crate, the one home of this join, because two crates above it read it:
//! the server's Discover labels (through `server::screen`) and the plausibility model's
//! contradiction features (`serenqa_predict::contra`), which must not depend on each other.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::load::disease_ontology::DiseaseOntology;
use crate::{Graph, NodeId, RelId};

/// How a condition was matched to a disease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// The condition's identifier (a UMLS CUI) is a DO cross-reference of the disease.
    Identifier(String),
    /// The condition's name matches this name of the disease.
    Name(String),
    /// The condition's name is that of a symptom specific to the disease.
    Symptom(String),
}

/// A symptom presented by more diseases than this does not define any of them.
pub const DEFINING_SYMPTOM_MAX_DISEASES: usize = 2;

impl MatchedBy {
    /// `identifier` or `name`.
    pub fn kind(&self) -> &'static str {
        match self {
            MatchedBy::Identifier(_) => "identifier",
            MatchedBy::Name(_) => "name",
            MatchedBy::Symptom(_) => "symptom",
        }
    }
    /// In words, for the page.
    pub fn describe(&self, g: &Graph, disease: NodeId) -> String {
        match self {
            MatchedBy::Identifier(cui) => format!(
                "UMLS {cui} is a Disease Ontology cross-reference of {}",
                g.name(disease)
            ),
            MatchedBy::Name(n) => format!("its name matches \"{n}\", a name of {}", g.name(disease)),
            MatchedBy::Symptom(n) => format!(
                "it is the symptom {n}, which {} presents and at most {DEFINING_SYMPTOM_MAX_DISEASES} diseases of the graph do",
                g.name(disease)
            ),
        }
    }
}

/// One flag: `compound` causes `condition`, matched to the disease as `by`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    pub condition: NodeId,
    pub by: MatchedBy,
    /// The `causes` edge (out-CSR position).
    pub edge: u32,
}

/// Conditions matched to each disease, and the relations that say a drug causes one.
#[derive(Clone, Debug, Default)]
pub struct SafetyIndex {
    /// disease → (condition, how), sorted by condition.
    by_disease: HashMap<NodeId, Vec<(NodeId, MatchedBy)>>,
    /// Relations whose verb is "causes" (compound → side effect).
    causes: Vec<RelId>,
}

/// Words dropped before comparing names: qualifiers that do not change what the condition is.
const QUALIFIERS: &[&str] = &[
    "disease",
    "disorder",
    "disorders",
    "syndrome",
    "aggravated",
    "exacerbated",
    "exacerbation",
    "worsened",
    "drug",
    "induced",
    "secondary",
    "acute",
    "chronic",
    "nos",
    "of",
    "the",
    "and",
    "in",
    "with",
];

/// Organ words written two ways (a lay and a Latin-rooted form): one form kept.
const SYNONYMS: &[(&str, &str)] = &[
    ("lung", "pulmonary"),
    ("kidney", "renal"),
    ("heart", "cardiac"),
    ("liver", "hepatic"),
    ("stomach", "gastric"),
    ("brain", "cerebral"),
];

/// The words of a name as compared: lower case, possessives and qualifiers dropped, organ
/// synonyms unified, `-ism` / `-ian` stripped from long words. Sorted, distinct.
pub fn name_words(name: &str) -> Vec<String> {
    let lower = name.to_lowercase().replace("'s", "").replace('’', "");
    let mut out: BTreeSet<String> = BTreeSet::new();
    for w in lower.split(|c: char| !c.is_alphanumeric()) {
        if w.is_empty() || QUALIFIERS.contains(&w) {
            continue;
        }
        let w = SYNONYMS
            .iter()
            .find(|(a, _)| *a == w)
            .map_or(w, |(_, b)| *b);
        let stem = ["ism", "ian"]
            .iter()
            .find_map(|s| w.strip_suffix(s).filter(|r| r.len() >= 5))
            .unwrap_or(w);
        // Plurals ("dyskinesias"), not words ending in -ss, -is, -us.
        let stem = match stem.strip_suffix('s') {
            Some(r) if r.len() >= 4 && !r.ends_with(['s', 'i', 'u']) => r,
            _ => stem,
        };
        out.insert(stem.to_string());
    }
    out.into_iter().collect()
}

/// The names of the symptoms `d` presents that few diseases present.
fn defining_symptoms(g: &Graph, d: NodeId) -> Vec<String> {
    let presents: Vec<RelId> = (0..g.relation_count() as RelId)
        .filter(|&r| g.relation(r).verb.eq_ignore_ascii_case("presents"))
        .collect();
    let (_, out_t, _) = g.out_csr();
    let mut out = Vec::new();
    for &r in &presents {
        for i in g.out_range_rel(d, r) {
            let s = out_t[i];
            if g.in_range_rel(s, r).len() <= DEFINING_SYMPTOM_MAX_DISEASES {
                out.push(g.name(s).to_string());
            }
        }
    }
    out
}

/// Does a condition named with words `c` match a disease name with words `d`?
fn words_match(c: &[String], d: &[String]) -> bool {
    if c.is_empty() || d.is_empty() {
        return false;
    }
    let sub = |a: &[String], b: &[String]| a.iter().all(|w| b.binary_search(w).is_ok());
    c == d || (c.len() >= 2 && sub(c, d)) || sub(d, c)
}

impl SafetyIndex {
    /// Builds the index for every disease of `g` (nodes at the other end of a treatment
    /// relation from a compound, or of type `Disease`); `ontology` adds identifiers and names.
    pub fn build(g: &Graph, ontology: Option<&DiseaseOntology>) -> SafetyIndex {
        let causes: Vec<RelId> = (0..g.relation_count() as RelId)
            .filter(|&r| g.relation(r).verb.eq_ignore_ascii_case("causes"))
            .collect();
        if causes.is_empty() {
            return SafetyIndex::default();
        }
        // The conditions: every target of a causes edge, by identifier and by words.
        let (_, out_t, _) = g.out_csr();
        let mut conditions: BTreeSet<NodeId> = BTreeSet::new();
        for &r in &causes {
            if let Some(st) = g.relation(r).source_type {
                for &c in g.nodes_of_type(st) {
                    conditions.extend(g.out_range_rel(c, r).map(|i| out_t[i]));
                }
            }
        }
        let mut by_ident: HashMap<&str, Vec<NodeId>> = HashMap::new();
        let mut by_word: HashMap<String, Vec<NodeId>> = HashMap::new();
        let mut words: HashMap<NodeId, Vec<String>> = HashMap::new();
        for &c in &conditions {
            by_ident.entry(g.ident(c)).or_default().push(c);
            let w = name_words(g.name(c));
            for x in &w {
                by_word.entry(x.clone()).or_default().push(c);
            }
            words.insert(c, w);
        }
        let diseases = g
            .type_id("Disease")
            .map(|t| g.nodes_of_type(t).to_vec())
            .unwrap_or_default();
        let mut by_disease = HashMap::new();
        for d in diseases {
            let mut found: BTreeMap<NodeId, MatchedBy> = BTreeMap::new();
            if let Some(cuis) = ontology.and_then(|o| o.umls.get(g.ident(d))) {
                for cui in cuis {
                    for &c in by_ident.get(cui.as_str()).into_iter().flatten() {
                        found.insert(c, MatchedBy::Identifier(cui.clone()));
                    }
                }
            }
            let mut names: Vec<String> = vec![g.name(d).to_string()];
            if let Some(n) = ontology.and_then(|o| o.names.get(g.ident(d))) {
                names.extend(n.iter().cloned());
            }
            for name in &names {
                let dw = name_words(name);
                let mut seen: BTreeSet<NodeId> = BTreeSet::new();
                for x in &dw {
                    seen.extend(by_word.get(x).into_iter().flatten().copied());
                }
                for c in seen {
                    if found.contains_key(&c) {
                        continue;
                    }
                    if words.get(&c).is_some_and(|cw| words_match(cw, &dw)) {
                        found.insert(c, MatchedBy::Name(name.clone()));
                    }
                }
            }
            for sym_name in defining_symptoms(g, d) {
                let sw = name_words(&sym_name);
                let mut seen: BTreeSet<NodeId> = BTreeSet::new();
                for x in &sw {
                    seen.extend(by_word.get(x).into_iter().flatten().copied());
                }
                for c in seen {
                    if !found.contains_key(&c) && words.get(&c).is_some_and(|cw| *cw == sw) {
                        found.insert(c, MatchedBy::Symptom(sym_name.clone()));
                    }
                }
            }
            if !found.is_empty() {
                by_disease.insert(d, found.into_iter().collect());
            }
        }
        SafetyIndex { by_disease, causes }
    }

    /// The conditions matched to `disease`, sorted by node.
    pub fn conditions(&self, disease: NodeId) -> &[(NodeId, MatchedBy)] {
        self.by_disease.get(&disease).map_or(&[], Vec::as_slice)
    }

    /// The relations whose verb is "causes" (compound → side effect) that flags follow.
    pub fn causes_relations(&self) -> &[RelId] {
        &self.causes
    }

    /// Diseases with at least one matched condition.
    pub fn diseases_covered(&self) -> usize {
        self.by_disease.len()
    }

    /// What the graph says `compound` causes of `disease`'s conditions (empty when nothing).
    pub fn flags(&self, g: &Graph, compound: NodeId, disease: NodeId) -> Vec<Flag> {
        let conds = self.conditions(disease);
        if conds.is_empty() {
            return Vec::new();
        }
        let (_, out_t, _) = g.out_csr();
        let mut out = Vec::new();
        for &r in &self.causes {
            for i in g.out_range_rel(compound, r) {
                let t = out_t[i];
                if let Ok(k) = conds.binary_search_by_key(&t, |x| x.0) {
                    out.push(Flag {
                        condition: t,
                        by: conds[k].1.clone(),
                        edge: i as u32,
                    });
                }
            }
        }
        // Identifier matches first, then by condition.
        out.sort_by_key(|f| {
            let rank = match f.by {
                MatchedBy::Identifier(_) => 0,
                MatchedBy::Name(_) => 1,
                MatchedBy::Symptom(_) => 2,
            };
            (rank, f.condition)
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        name_words(s)
    }

    #[test]
    fn names_match_through_qualifiers_synonyms_and_suffixes() {
        assert!(words_match(&w("Parkinsonism"), &w("Parkinson's disease")));
        assert!(words_match(
            &w("Drug-induced parkinsonism"),
            &w("Parkinson's disease")
        ));
        assert!(words_match(
            &w("Parkinson's disease aggravated"),
            &w("Parkinson's disease")
        ));
        assert!(words_match(
            &w("Pulmonary fibrosis"),
            &w("idiopathic pulmonary fibrosis")
        ));
        assert!(words_match(
            &w("Lung fibrosis"),
            &w("idiopathic pulmonary fibrosis")
        ));
        assert!(words_match(
            &w("Systemic lupus erythematosus"),
            &w("systemic lupus erythematosus")
        ));
        // A single broader word is not enough; unrelated conditions do not match.
        assert!(!words_match(
            &w("Fibrosis"),
            &w("idiopathic pulmonary fibrosis")
        ));
        assert!(words_match(
            &w("Parkinsonian gait"),
            &w("Parkinson's disease")
        ));
        assert!(!words_match(
            &w("Gait disturbance"),
            &w("Parkinson's disease")
        ));
        assert!(!words_match(&w("Sclerosis"), &w("multiple sclerosis")));
        assert!(!words_match(&w("Disease"), &w("Parkinson's disease")));
        assert!(!words_match(&w("Tremor"), &w("Parkinson's disease")));
        assert_eq!(w("Dyskinesias"), w("Dyskinesia"));
        assert_eq!(w("Diabetes mellitus"), vec!["diabete", "mellitus"]);
    }
}
