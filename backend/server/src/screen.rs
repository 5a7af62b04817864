//! What a clinician needs next to each candidate before the first screen is ordered: is the
//! suggestion obvious or a new mechanism (`serenqa_model::mechanism`), and does the graph say
//! the drug causes the disease (`serenqa_graph::safety`, joined through the Disease Ontology's
//! cross-references)? Both feed the order (`serenqa_shared::screen`), the API reply and the
//! cross-validation that chose the default band (`serenqa discover cv`).

use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::safety::{Flag, SafetyIndex};
use serenqa_graph::view::node_view;
use serenqa_graph::{Graph, NodeId};
use serenqa_model::mechanism::{MechanismOf, MechanismRelations};
use serenqa_shared::api::{MechanismView, SafetyFlag};
use serenqa_shared::screen::{Mechanism, ScreenItem, ScreenRule};

/// The Disease Ontology files of the data directory, when they are there (a bad file is
/// reported and left out), and how side effects are joined to diseases with what was found,
/// in words. The plausibility model's contradiction features read the same files
/// (`serve`, `predict` and `discover cv` all find them here).
pub fn find_ontology() -> (Option<DiseaseOntology>, String) {
    match DiseaseOntology::find() {
        Some(Ok(o)) => (
            Some(o),
            "side effects joined to diseases by the Disease Ontology's UMLS cross-references (CC BY 3.0), then by name".to_string(),
        ),
        Some(Err(e)) => {
            eprintln!("warning: Disease Ontology files not used: {e}");
            (None, format!("side effects joined to diseases by name only (the Disease Ontology files could not be read: {e})"))
        }
        None => (
            None,
            "side effects joined to diseases by name only (the Disease Ontology files are not in the data directory)".to_string(),
        ),
    }
}

/// The indexes behind the clinician's labels, built once per graph.
pub struct Clinical {
    pub safety: SafetyIndex,
    pub mechanism: MechanismRelations,
    /// How the side effects were joined to diseases (said on the page).
    pub ontology_note: String,
    /// (known treatments the graph also records as causing their disease, known treatments).
    pub treatments_flagged: (usize, usize),
}

impl Clinical {
    /// Builds the indexes, reading the Disease Ontology files from the data directory when
    /// they are there (a bad file is reported and the name rule alone is used).
    pub fn load(g: &Graph) -> Clinical {
        let (ontology, note) = find_ontology();
        Clinical::with(g, ontology.as_ref(), note)
    }

    pub fn with(g: &Graph, ontology: Option<&DiseaseOntology>, note: String) -> Clinical {
        let safety = SafetyIndex::build(g, ontology);
        // How often a flag fires on a drug the graph says *treats* the disease: side-effect
        // records come from drug labels, which also name the indication.
        let mut treatments_flagged = (0, 0);
        for (r, rel) in g.relations().iter().enumerate() {
            if !rel.verb.eq_ignore_ascii_case("treats") {
                continue;
            }
            let Some(st) = rel.source_type else { continue };
            let (_, out_t, _) = g.out_csr();
            for &c in g.nodes_of_type(st) {
                for i in g.out_range_rel(c, r as u16) {
                    treatments_flagged.1 += 1;
                    treatments_flagged.0 += usize::from(!safety.flags(g, c, out_t[i]).is_empty());
                }
            }
        }
        Clinical {
            safety,
            mechanism: MechanismRelations::find(g),
            ontology_note: note,
            treatments_flagged,
        }
    }

    /// What a flag means on this graph, in words.
    pub fn flag_note(&self) -> String {
        let (f, n) = self.treatments_flagged;
        if n == 0 {
            return "A flag repeats a side-effect record; read its source before deciding.".into();
        }
        format!(
            "A flag repeats a side-effect record (SIDER, mined from drug labels). Labels also name what a drug is for: {f} of the graph's {n} known treatments ({:.0}%) carry such a record for the very disease they treat. So a flagged drug that shares a class or a target with a known treatment keeps its place, with its warning; one that shares nothing with a known treatment (no known treatment explains its record) is set aside at the end. Choose \"at the end of the list\" to set every flagged drug aside.",
            100.0 * f as f64 / n as f64
        )
    }

    /// The pair's mechanism label and safety flags; `known` = the drugs known for the disease.
    pub fn pair(
        &self,
        g: &Graph,
        compound: NodeId,
        disease: NodeId,
        known: &[NodeId],
    ) -> (MechanismOf, Vec<Flag>) {
        (
            self.mechanism.of(g, compound, known),
            self.safety.flags(g, compound, disease),
        )
    }
}

/// The API's view of a mechanism label.
pub fn mechanism_view(g: &Graph, m: &MechanismOf) -> MechanismView {
    let views = |v: &[NodeId]| v.iter().map(|&n| node_view(g, n)).collect();
    MechanismView {
        kind: m.kind,
        classes: views(&m.classes),
        targets: views(&m.targets),
        like: views(&m.like),
    }
}

/// The API's view of safety flags, with each edge's source and license.
pub fn flag_views(g: &Graph, disease: NodeId, flags: &[Flag]) -> Vec<SafetyFlag> {
    flags
        .iter()
        .map(|f| {
            let rel = g.relation(g.edge(f.edge).rel);
            let (source, license) = crate::attribution::metaedge_source(&rel.abbrev);
            SafetyFlag {
                side_effect: node_view(g, f.condition),
                matched: f.by.describe(g, disease),
                by: f.by.kind().to_string(),
                source: source.to_string(),
                license: license.to_string(),
            }
        })
        .collect()
}

/// Orders `(candidate, plausibility, flagged, mechanism)` by the first-screen rule.
pub fn order(cands: &[(NodeId, f64, bool, Mechanism)], rule: &ScreenRule) -> Vec<usize> {
    let items: Vec<ScreenItem> = cands
        .iter()
        .map(|&(n, p, flagged, mechanism)| ScreenItem {
            plausibility: p,
            flagged,
            mechanism,
            key: n,
        })
        .collect();
    serenqa_shared::screen::order(&items, rule)
}

/// The first screen's rule in one sentence (the reply's `screen.reason`).
pub fn reason(rule: &ScreenRule, drug_page: bool) -> String {
    use serenqa_shared::screen::Flagged;
    let (who, flagged) = if drug_page {
        ("diseases", "a disease the drug is recorded as causing")
    } else {
        ("drugs", "a drug recorded as causing the disease")
    };
    let new = if rule.favour_new {
        "a new mechanism comes before a known treatment's class or target"
    } else {
        "the more plausible comes first"
    };
    let flags = match rule.flagged {
        Flagged::InBand => format!(", and {flagged} comes after the others"),
        Flagged::Last => format!("; {flagged} comes last"),
        Flagged::UnexplainedLast => format!(
            "; {flagged} comes last unless it shares a class or a target with a known treatment, or nothing is known to compare (then it keeps its place, with its warning)"
        ),
        Flagged::InPlace => String::new(),
    };
    format!(
        "Most plausible first; among {who} within {:.0}% of the best remaining plausibility, {new}{flags}.",
        rule.band * 100.0
    )
}

/// Why these defaults, and what the RNS columns use (the reply's `screen.details`).
pub fn details(weights_label: &str, ontology_note: &str) -> String {
    format!(
        "The band and the placement of flagged drugs were chosen by cross-validation on held-out treatments (serenqa discover cv; docs/DISCOVER.md): on disease pages they keep 99% of the held-out treatments plausibility order puts in the top 10 (369 of its 372 with edges held out, 166 of 166 with whole diseases held out), with fewer obvious drugs there, and no flagged drug that shares nothing with a known treatment in the top 20. Putting every flagged drug last would lose about a third of the held-out treatments: 41% of the graph's known treatments carry a side-effect record of the disease they treat. RNS (R, N, S) is shown beside each candidate with {weights_label}; it orders the list only when you sort by RNS or Blend. Safety flags: {ontology_note}."
    )
}
