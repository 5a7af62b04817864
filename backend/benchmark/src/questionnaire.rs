//! The real SerenQA expert questionnaire (1,529 CKG questions in 14 batches, read in place
//! from `../shared/data/serenqa-questionnaire/`) as a read-only question set for annotation,
//! with its entities linked to the loaded graph where the identifiers allow.
//!
//! Linking rules, by the host of an `entity_link`:
//! - `go.drugbank.com/drugs/DB…` → `Compound::DB…` (Hetionet compounds are DrugBank ids);
//! - `disease-ontology.org/?id=DOID:…` → `Disease::DOID:…`;
//! - `genecards.org/…?gene=SYMBOL` → the Gene named SYMBOL (gene names are HGNC symbols);
//! - `uniprot.org/…` → no identifier mapping in the graph (UniProt → Entrez needs an
//!   external table), so the entity's *name* is tried as a gene symbol and reported
//!   separately as a by-name link;
//! - anything else (Reactome, HPO, SMPDB, HMDB, Pfam) stays unlinked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankedEntity {
    pub entity_name: String,
    pub llm_rank: u32,
    #[serde(default)]
    pub entity_link: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    pub entity_name: String,
    #[serde(default)]
    pub entity_link: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub question_number: u32,
    pub qid: u32,
    pub text: String,
    pub category: String,
    pub llm_ranking: Vec<RankedEntity>,
    pub resource: Vec<Resource>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchInfo {
    pub batch_id: u32,
    pub batch_name: String,
    pub total: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    pub info: BatchInfo,
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Questionnaire {
    pub batches: Vec<Batch>,
    /// Inconsistencies in the release that do not stop the import (e.g. a batch whose size
    /// differs from the index).
    pub warnings: Vec<String>,
}

impl Questionnaire {
    /// Reads `categories.json` and `batch<N>.json` for every batch it lists. A batch whose
    /// size differs from the index is kept and reported in `warnings` (the public release
    /// has such a mismatch).
    pub fn load(dir: &Path) -> Result<Questionnaire, String> {
        let read = |name: &str| -> Result<String, String> {
            let p = dir.join(name);
            std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
        };
        let infos: Vec<BatchInfo> = serde_json::from_str(&read("categories.json")?)
            .map_err(|e| format!("{}: {e}", dir.join("categories.json").display()))?;
        let mut batches = Vec::new();
        let mut warnings = Vec::new();
        for info in infos {
            let name = format!("batch{}.json", info.batch_id);
            let items: Vec<Item> = serde_json::from_str(&read(&name)?)
                .map_err(|e| format!("{}: {e}", dir.join(&name).display()))?;
            if items.len() != info.total {
                warnings.push(format!(
                    "{name}: {} questions, categories.json says {}",
                    items.len(),
                    info.total
                ));
            }
            batches.push(Batch { info, items });
        }
        Ok(Questionnaire { batches, warnings })
    }

    pub fn items(&self) -> impl Iterator<Item = (&BatchInfo, &Item)> {
        self.batches
            .iter()
            .flat_map(|b| b.items.iter().map(move |i| (&b.info, i)))
    }
}

/// How an entity was linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    ById(NodeId),
    ByName(NodeId),
    Unlinked,
}

pub use serenqa_shared::links::source_of;

fn node_of_type(g: &Graph, nodes: &[NodeId], ty: &str) -> Option<NodeId> {
    nodes
        .iter()
        .copied()
        .find(|&n| g.type_display(g.node_type(n)) == ty)
}

/// The graph node of a stored annotation candidate (calibration, the annotation page's
/// context): by `Type::identifier` key, or — for genes (GeneCards
/// symbols) and proteins (UniProt accessions, which Hetionet does not hold) — a Gene node
/// whose name is the candidate's name (Hetionet names genes by HGNC symbol).
pub fn resolve_candidate(g: &Graph, c: &serenqa_shared::annotate::Candidate) -> Option<NodeId> {
    g.find_by_key(&c.key).or_else(|| {
        (c.kind == "Gene" || c.kind == "Protein")
            .then(|| {
                g.find_by_name(&c.name)
                    .iter()
                    .copied()
                    .find(|&n| g.type_display(g.node_type(n)) == "Gene")
            })
            .flatten()
    })
}

pub fn link(g: &Graph, name: &str, url: Option<&str>) -> Link {
    let url = url.unwrap_or("");
    // What the link names is read by `shared::links`, the one home of source-database URLs.
    let (kind, id) = serenqa_shared::links::entity_from_link(url, name);
    match kind.as_str() {
        "Compound" | "Disease" => {
            if let Some(n) = g.find_by_key(&format!("{kind}::{id}")) {
                return Link::ById(n);
            }
        }
        "Gene" => {
            if let Some(n) = node_of_type(g, g.find_by_name(&id), "Gene") {
                return Link::ById(n);
            }
        }
        // UniProt accessions have no mapping in the graph: the Gene of the candidate's name.
        _ if source_of(url) == "uniprot" => {
            if let Some(n) = node_of_type(g, g.find_by_name(name.trim()), "Gene") {
                return Link::ByName(n);
            }
        }
        _ => {}
    }
    Link::Unlinked
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceOverlap {
    pub mentions: usize,
    pub linked_by_id: usize,
    pub linked_by_name: usize,
    pub distinct_linked: usize,
}

/// How much of the questionnaire the loaded graph covers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    pub batches: usize,
    pub questions: usize,
    pub candidate_mentions: usize,
    pub resource_mentions: usize,
    pub by_source: BTreeMap<String, SourceOverlap>,
    /// Questions with at least one / all candidate answers linked.
    pub questions_any_candidate_linked: usize,
    pub questions_all_candidates_linked: usize,
    /// Questions whose named entities (resources) are all linked.
    pub questions_all_resources_linked: usize,
    pub distinct_linked_nodes: usize,
}

pub fn overlap(g: &Graph, q: &Questionnaire) -> Overlap {
    let mut o = Overlap {
        batches: q.batches.len(),
        ..Default::default()
    };
    let mut distinct: BTreeMap<String, BTreeSet<NodeId>> = BTreeMap::new();
    let mut all = BTreeSet::new();
    let mut tally = |o: &mut Overlap, name: &str, url: Option<&str>| -> bool {
        let src = url.map(source_of).unwrap_or_else(|| "none".into());
        let l = link(g, name, url);
        let e = o.by_source.entry(src.clone()).or_default();
        e.mentions += 1;
        match l {
            Link::ById(n) => {
                e.linked_by_id += 1;
                distinct.entry(src).or_default().insert(n);
                all.insert(n);
                true
            }
            Link::ByName(n) => {
                e.linked_by_name += 1;
                distinct.entry(src).or_default().insert(n);
                all.insert(n);
                true
            }
            Link::Unlinked => false,
        }
    };
    for (_, it) in q.items() {
        o.questions += 1;
        let mut linked = 0;
        for c in &it.llm_ranking {
            o.candidate_mentions += 1;
            linked += tally(&mut o, &c.entity_name, c.entity_link.as_deref()) as usize;
        }
        let mut res_linked = 0;
        for r in &it.resource {
            o.resource_mentions += 1;
            res_linked += tally(&mut o, &r.entity_name, r.entity_link.as_deref()) as usize;
        }
        o.questions_any_candidate_linked += (linked > 0) as usize;
        o.questions_all_candidates_linked +=
            (linked == it.llm_ranking.len() && linked > 0) as usize;
        o.questions_all_resources_linked +=
            (res_linked == it.resource.len() && res_linked > 0) as usize;
    }
    for (src, set) in distinct {
        if let Some(e) = o.by_source.get_mut(&src) {
            e.distinct_linked = set.len();
        }
    }
    o.distinct_linked_nodes = all.len();
    o
}
