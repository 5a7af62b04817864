//! Calibration of the RNS weights against the stored expert rankings, for `serenqa
//! calibrate` and `POST /api/admin/calibrations`.
//!
//! A question takes part when at least `min_annotators` complete responses exist and at least
//! two of its candidates are nodes of the loaded graph ([`resolve_candidate`]; the real
//! questionnaire comes from CKG: DrugBank compounds match Hetionet by id, genes and proteins
//! by symbol). Its expert As is taken among
//! the candidates in the graph, by mean rank; its LLM-ensemble As (start of the greedy swap,
//! and the third strategy of the correlations) from the questionnaire's LLM rank, rank 1 being
//! the most serendipitous, when every candidate in the graph has one.

use anyhow::{bail, Result};
use serenqa_graph::{Graph, NodeId};
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::Model;
use serenqa_shared::annotate::{CalibrateRequest, CalibrationReport, Source};
use serenqa_shared::rns::budget;
use serenqa_store::aggregate::aggregate_question;
use serenqa_store::calibrate::{calibrate, Item};
use serenqa_store::{CalibrationRecord, Repo};

/// The graph node of a candidate: by `Type::identifier` key, or — for genes (GeneCards
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

/// Questions usable for calibration, and how many were skipped.
pub fn items(
    repo: &dyn Repo,
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    source: Source,
    min_annotators: usize,
) -> Result<(Vec<Item>, usize)> {
    let mut out = Vec::new();
    let mut skipped = 0;
    for q in repo.questions_of_source(source)? {
        let rs = repo.responses_for_question(q.id)?;
        let agg = aggregate_question(&q, &rs);
        if agg.annotators < min_annotators.max(1) {
            continue;
        }
        // Candidates in the graph, each node once, in question order.
        let mut nodes: Vec<NodeId> = Vec::new();
        let mut cand_ids = Vec::new();
        for c in &q.candidates {
            if let Some(n) = resolve_candidate(g, c) {
                if !nodes.contains(&n) {
                    nodes.push(n);
                    cand_ids.push(c.id);
                }
            }
        }
        let b = budget(nodes.len());
        let expert: Vec<usize> = agg
            .candidates
            .iter()
            .filter(|c| c.mean_rank.is_some())
            .filter_map(|c| cand_ids.iter().position(|&id| id == c.candidate))
            .take(b)
            .collect();
        if nodes.len() < 2 || expert.len() < b {
            skipped += 1;
            continue;
        }
        let mut by_llm: Vec<(i64, usize)> = Vec::new();
        for (pos, id) in cand_ids.iter().enumerate() {
            if let Some(r) = q
                .candidates
                .iter()
                .find(|c| c.id == *id)
                .and_then(|c| c.llm_rank)
            {
                by_llm.push((r, pos));
            }
        }
        by_llm.sort();
        let ensemble =
            (by_llm.len() == nodes.len()).then(|| by_llm.iter().take(b).map(|&(_, p)| p).collect());
        let Ok(slice) = build_slice(g, model, cache, &nodes) else {
            skipped += 1;
            continue;
        };
        out.push(Item {
            slice,
            ac: (0..nodes.len()).collect(),
            expert,
            ensemble,
        });
    }
    Ok((out, skipped))
}

/// Fits, stores with provenance and returns (stored id, report).
pub fn run(
    repo: &dyn Repo,
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    req: &CalibrateRequest,
    who: &str,
) -> Result<(i64, CalibrationReport)> {
    let (items, skipped) = items(repo, g, model, cache, req.source, req.min_annotators)?;
    if items.is_empty() {
        bail!("no {} question has {} complete response(s) and ≥ 2 candidates in the loaded graph ({skipped} skipped)", req.source.as_str(), req.min_annotators.max(1));
    }
    let report = calibrate(&items, req.step).map_err(anyhow::Error::msg)?;
    let provenance = serde_json::json!({
        "source": req.source.as_str(),
        "min_annotators": req.min_annotators,
        "grid_step": req.step,
        "questions_used": items.len(),
        "questions_skipped": skipped,
        "graph": { "name": g.meta().name, "nodes": g.node_count(), "edges": g.edge_count() },
        "model": { "embedding_dim": model.embeddings.dim() },
        "by": who,
        "program": concat!("serenqa ", env!("CARGO_PKG_VERSION")),
        "report": report,
    });
    let id = repo.add_calibration(&CalibrationRecord {
        id: 0,
        created_at: serenqa_store::now(),
        alpha: report.alpha,
        beta: report.beta,
        gamma: report.gamma,
        agreement: report.agreement,
        questions: items.len() as i64,
        provenance,
    })?;
    Ok((id, report))
}
