//! What a clinician needs next to each candidate before the first screen is ordered: is the
//! suggestion obvious or a new mechanism (`serenqa_model::mechanism`), and does the graph say
//! the drug causes the disease (`serenqa_model::safety`, joined through the Disease Ontology's
//! cross-references)? Both feed the order (`serenqa_shared::screen`), the API reply and the
//! cross-validation that chose the default band (`serenqa discover cv`).

use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::view::node_view;
use serenqa_graph::{Graph, NodeId};
use serenqa_model::mechanism::{MechanismOf, MechanismRelations};
use serenqa_model::safety::{Flag, SafetyIndex};
use serenqa_shared::api::{MechanismView, SafetyFlag};
use serenqa_shared::screen::{ScreenItem, ScreenRule};

/// The indexes behind the clinician's labels, built once per graph.
pub struct Clinical {
    pub safety: SafetyIndex,
    pub mechanism: MechanismRelations,
    /// How the side effects were joined to diseases (said on the page).
    pub ontology_note: String,
}

impl Clinical {
    /// Builds the indexes, reading the Disease Ontology files from the data directory when
    /// they are there (a bad file is reported and the name rule alone is used).
    pub fn load(g: &Graph) -> Clinical {
        let (ontology, note) = match DiseaseOntology::find() {
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
        };
        Clinical::with(g, ontology.as_ref(), note)
    }

    pub fn with(g: &Graph, ontology: Option<&DiseaseOntology>, note: String) -> Clinical {
        Clinical {
            safety: SafetyIndex::build(g, ontology),
            mechanism: MechanismRelations::find(g),
            ontology_note: note,
        }
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

/// Orders `(candidate, plausibility, flagged, obvious)` by the first-screen rule.
pub fn order(cands: &[(NodeId, f64, bool, bool)], rule: &ScreenRule) -> Vec<usize> {
    let items: Vec<ScreenItem> = cands
        .iter()
        .map(|&(n, p, flagged, obvious)| ScreenItem {
            plausibility: p,
            flagged,
            obvious,
            key: n,
        })
        .collect();
    serenqa_shared::screen::order(&items, rule)
}

/// Why the first screen is ordered as it is (the reply's `screen.reason`).
pub fn reason(rule: &ScreenRule, weights_label: &str) -> String {
    format!(
        "First screen: the most plausible drugs first; among those within {:.0}% of the best remaining plausibility, a new mechanism comes before another drug of a known treatment's class or target{}. The band was chosen by cross-validation on held-out treatments (serenqa discover cv: as many held-out treatments in the top 10 as plausibility order, fewer obvious ones). RNS (R, N, S) is shown beside it with {weights_label}; it orders the list only when you sort by RNS or Blend.",
        rule.band * 100.0,
        if rule.demote_flagged {
            "; drugs the graph records as causing the disease come last"
        } else {
            ""
        }
    )
}
