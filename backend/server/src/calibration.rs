//! Calibration of the RNS weights against the stored expert rankings, for `serenqa
//! calibrate` and `POST /api/admin/calibrations`: the orchestration only (read the store,
//! build slices, fit, store the result with provenance). The domain rules live in their
//! crates: linking a candidate to the graph is `serenqa_benchmark::questionnaire::
//! resolve_candidate` (DrugBank compounds match Hetionet by id, genes and proteins by
//! symbol); choosing a question's expert and LLM-ensemble As is
//! `serenqa_store::calibrate::partitions`; the fit is `serenqa_store::calibrate::calibrate`.
//!
//! A question takes part when at least `min_annotators` complete responses (skips excluded)
//! exist and at least two of its candidates are nodes of the loaded graph. A calibration is
//! stored, never put in force here: an admin does that (`Repo::use_weights`, gated by
//! `serenqa_shared::annotate::calibration_gate`) after reading its held-out comparison against
//! the weights in force now.

use anyhow::{bail, Result};
use serenqa_benchmark::agreement::link_named;
use serenqa_benchmark::questionnaire::resolve_candidate;
use serenqa_graph::Graph;
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::Model;
use serenqa_shared::annotate::{CalibrateRequest, CalibrationReport, Source};
use serenqa_store::aggregate::aggregate_question;
use serenqa_store::calibrate::{calibrate, partitions, Before, Item};
use serenqa_store::{CalibrationRecord, Repo};

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
        let Some((nodes, expert, ensemble)) = partitions(&q, &agg, |c| resolve_candidate(g, c))
        else {
            skipped += 1;
            continue;
        };
        // The entities the question names stay in Ae.
        let named = link_named(
            g,
            q.resources
                .iter()
                .map(|r| (r.name.as_str(), r.link.as_deref())),
            &nodes,
        );
        let all: Vec<u32> = nodes.iter().chain(&named).copied().collect();
        let Ok(slice) = build_slice(g, model, cache, &all) else {
            skipped += 1;
            continue;
        };
        let annotators = rs
            .iter()
            .filter(|r| r.status == serenqa_store::Status::Complete && !r.skipped())
            .map(|r| r.user_id)
            .collect();
        out.push(Item {
            slice,
            ac: (0..nodes.len()).collect(),
            anchors: (nodes.len()..all.len()).collect(),
            expert,
            ensemble,
            annotators,
            kendall_w: agg.kendall_w,
        });
    }
    Ok((out, skipped))
}

/// Fits, stores with provenance (not in force) and returns (stored id, report).
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
    let now = crate::weights::in_force(Some(repo));
    let before = Before {
        weights: now.weights,
        label: now.source.label.clone(),
    };
    let mut report = calibrate(&items, req.step, &before).map_err(anyhow::Error::msg)?;
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
        questions: report.questions as i64,
        annotators: report.annotators as i64,
        provenance,
    })?;
    report.id = Some(id);
    Ok((id, report))
}
