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

use serenqa_shared::links::entity_from_link;

use crate::repo::{NewBatch, NewCandidate, NewQuestion};
use crate::types::Source;

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
