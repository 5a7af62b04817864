//! Importers of question sets into annotation batches.
//!
//! - The real SerenQA expert questionnaire is read by `serenqa_benchmark::questionnaire` (one
//!   reader for the release); [`serenqa_batch`] and [`candidate`] turn its batches into store
//!   batches: one batch per file, named from `categories.json`; candidates in the
//!   questionnaire's order with their LLM-ensemble rank, typed from their links
//!   (DrugBank → `Compound`, UniProt → `Protein`, GeneCards → `Gene` symbol, Reactome/SMPDB →
//!   `Pathway`, HPO → `Phenotype`, Disease Ontology → `Disease`, HMDB → `Metabolite`, Pfam →
//!   `Protein family`), so `Compound::DB…` keys match Hetionet compounds directly.
//! - [`read_benchmark`]: generated benchmark records (`kgqa.jsonl` of `serenqa bench
//!   build`), batched by the top level of their category (`class:subclass` → `class`).
//!
//! The annotator is never shown the LLM rank (the paper pre-filled it, which anchors
//! judgments); it is kept for the ensemble partition and the correlations.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::repo::{NewBatch, NewCandidate, NewQuestion};
use crate::types::Source;

/// (type, identifier) of an entity from its source-database link.
pub fn entity_from_link(link: &str, name: &str) -> (String, String) {
    let after = |marker: &str| link.split_once(marker).map(|(_, r)| r.to_string());
    let first_segment = |s: String| {
        s.split(['/', '?', '#', '&'])
            .next()
            .unwrap_or("")
            .to_string()
    };
    let found = if link.contains("drugbank") {
        after("/drugs/")
            .map(first_segment)
            .map(|id| ("Compound", id))
    } else if link.contains("uniprot.org") {
        after("/uniprotkb/")
            .or_else(|| after("/uniprot/"))
            .map(first_segment)
            .map(|id| ("Protein", id))
    } else if link.contains("genecards.org") {
        after("gene=").map(first_segment).map(|id| ("Gene", id))
    } else if link.contains("reactome.org") {
        link.find("R-HSA-")
            .map(|i| first_segment(link[i..].to_string()))
            .map(|id| ("Pathway", id))
    } else if link.contains("smpdb.ca") {
        after("/view/").map(first_segment).map(|id| ("Pathway", id))
    } else if link.contains("monarchinitiative.org") {
        link.rsplit('/')
            .next()
            .filter(|s| s.starts_with("HP:"))
            .map(|s| ("Phenotype", s.to_string()))
    } else if link.contains("disease-ontology.org") {
        after("id=").map(first_segment).map(|id| ("Disease", id))
    } else if link.contains("hmdb.ca") {
        after("/metabolites/")
            .map(first_segment)
            .map(|id| ("Metabolite", id))
    } else if link.contains("/pfam/") {
        after("/pfam/")
            .map(first_segment)
            .map(|id| ("Protein family", id))
    } else {
        None
    };
    match found {
        Some((k, id)) if !id.is_empty() => (k.to_string(), id),
        _ => ("Entity".to_string(), name.to_string()),
    }
}

/// One questionnaire candidate (as read by `serenqa_benchmark::questionnaire`, the one
/// reader of the release) as a store candidate, typed from its link.
pub fn candidate(name: &str, llm_rank: Option<i64>, link: Option<&str>) -> NewCandidate {
    let (kind, ident) = entity_from_link(link.unwrap_or(""), name);
    NewCandidate {
        name: name.to_string(),
        kind,
        ident,
        link: link.map(str::to_string),
        llm_rank,
    }
}

/// A questionnaire batch (`batch<N>`) with its questions, ready to import.
pub fn serenqa_batch(batch_id: u32, name: &str, questions: Vec<NewQuestion>) -> NewBatch {
    NewBatch {
        source: Source::Serenqa,
        key: format!("batch{batch_id}"),
        name: name.to_string(),
        questions,
    }
}

#[derive(Deserialize)]
struct BAnswer {
    answer_type: String,
    answer_argument: String,
    entity_name: String,
}

#[derive(Deserialize)]
struct BRecord {
    qid: i64,
    question: String,
    answer: Vec<BAnswer>,
    #[serde(default)]
    pattern_type: Option<String>,
    #[serde(default)]
    category: String,
}

/// Reads generated benchmark records (`kgqa.jsonl`) into batches by top-level category.
/// `link` gives a candidate's source link from (type, id).
pub fn read_benchmark(
    path: &Path,
    link: impl Fn(&str, &str) -> Option<String>,
) -> Result<Vec<NewBatch>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut by_cat: BTreeMap<String, Vec<NewQuestion>> = BTreeMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let r: BRecord = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
        let class = r.category.split(':').next().unwrap_or("").trim();
        let class = if class.is_empty() {
            "uncategorised"
        } else {
            class
        }
        .to_string();
        by_cat.entry(class).or_default().push(NewQuestion {
            qid: r.qid,
            text: r.question,
            category: r.category,
            pattern: r.pattern_type,
            resources: Vec::new(),
            candidates: r
                .answer
                .into_iter()
                .map(|a| NewCandidate {
                    link: link(&a.answer_type, &a.answer_argument),
                    name: a.entity_name,
                    kind: a.answer_type,
                    ident: a.answer_argument,
                    llm_rank: None,
                })
                .collect(),
        });
    }
    Ok(by_cat
        .into_iter()
        .map(|(class, questions)| NewBatch {
            source: Source::Benchmark,
            key: class.clone(),
            name: format!("{class} (benchmark)"),
            questions,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_give_types_and_ids() {
        assert_eq!(
            entity_from_link("https://go.drugbank.com/drugs/DB01593", "Zinc"),
            ("Compound".into(), "DB01593".into())
        );
        assert_eq!(
            entity_from_link("https://www.uniprot.org/uniprotkb/P01106/entry", "MYC"),
            ("Protein".into(), "P01106".into())
        );
        assert_eq!(
            entity_from_link(
                "https://www.genecards.org/cgi-bin/carddisp.pl?gene=BOLA2",
                "BOLA2"
            ),
            ("Gene".into(), "BOLA2".into())
        );
        assert_eq!(
            entity_from_link("https://reactome.org/PathwayBrowser/#/R-HSA-110312", "x"),
            ("Pathway".into(), "R-HSA-110312".into())
        );
        assert_eq!(
            entity_from_link("http://smpdb.ca/view/SMP0111853", "x"),
            ("Pathway".into(), "SMP0111853".into())
        );
        assert_eq!(
            entity_from_link("https://disease-ontology.org/?id=DOID:162", "cancer"),
            ("Disease".into(), "DOID:162".into())
        );
        assert_eq!(
            entity_from_link("https://monarchinitiative.org/HP:0002664", "x"),
            ("Phenotype".into(), "HP:0002664".into())
        );
        assert_eq!(
            entity_from_link("https://hmdb.ca/metabolites/HMDB0011649", "x"),
            ("Metabolite".into(), "HMDB0011649".into())
        );
        assert_eq!(
            entity_from_link("https://www.ebi.ac.uk/interpro/entry/pfam/PF00653/", "x"),
            ("Protein family".into(), "PF00653".into())
        );
        assert_eq!(
            entity_from_link("", "Thing"),
            ("Entity".into(), "Thing".into())
        );
    }
}
