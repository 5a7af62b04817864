//! Aggregation of the expert rankings.
//!
//! Only *complete* responses count (validated order + confidence), and of those not the skips
//! (every candidate marked unsure: `Response::skipped`). Per question, every
//! candidate's **mean rank** is the mean of its average ranks (ties split) over the
//! annotators who ranked it without marking it "unsure"; candidates are ordered by mean rank
//! (ties by their position in the question), and the first b = max(1, ⌊0.2|Ac|⌋) form the
//! expert serendipity set As (paper §4.2).
//!
//! Agreement per question: Kendall's W over the candidates no annotator marked unsure
//! (re-ranked within that subset), and Krippendorff's α (ordinal) with units = candidates,
//! values = each annotator's average rank (unsure values missing). Per batch: the mean of the
//! questions' W (over questions where W is defined) and α pooled over all units of the batch.

use std::collections::BTreeMap;

use crate::agreement::{kendall_w, krippendorff_alpha_ordinal};
use crate::ranking::average_ranks;
use crate::repo::{Repo, Result, StoreError};
use crate::types::*;
pub use serenqa_shared::annotate::{ExpertRanking, ExpertRankings, EXPERT_FORMAT};

/// b = max(1, ⌊0.2·n⌋), the size of As (same rule as `serenqa_shared::rns::budget`).
pub fn budget(n: usize) -> usize {
    serenqa_shared::rns::budget(n)
}

/// The aggregate of one question from its responses.
pub fn aggregate_question(q: &Question, responses: &[Response]) -> QuestionAggregate {
    let complete: Vec<&Response> = responses
        .iter()
        .filter(|r| r.status == Status::Complete && !r.skipped() && r.question_id == q.id)
        .collect();
    let n = q.candidates.len();
    // avg[j][i]: annotator j's average rank of candidate i, None when unranked or unsure.
    let avg: Vec<Vec<Option<f64>>> = complete
        .iter()
        .map(|r| {
            let dense: Vec<Option<u32>> = q
                .candidates
                .iter()
                .map(|c| {
                    r.ranking
                        .iter()
                        .find(|e| e.candidate == c.id)
                        .and_then(|e| e.rank)
                })
                .collect();
            let a = average_ranks(&dense);
            q.candidates
                .iter()
                .zip(a)
                .map(|(c, v)| {
                    if r.ranking.iter().any(|e| e.candidate == c.id && e.unsure) {
                        None
                    } else {
                        v
                    }
                })
                .collect()
        })
        .collect();
    let mut cands: Vec<CandidateAggregate> = q
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let vals: Vec<f64> = avg.iter().filter_map(|a| a[i]).collect();
            let unsure = complete
                .iter()
                .filter(|r| r.ranking.iter().any(|e| e.candidate == c.id && e.unsure))
                .count();
            CandidateAggregate {
                candidate: c.id,
                key: c.key.clone(),
                name: c.name.clone(),
                mean_rank: if vals.is_empty() {
                    None
                } else {
                    Some(vals.iter().sum::<f64>() / vals.len() as f64)
                },
                ranked_by: vals.len(),
                unsure,
                serendipitous: false,
            }
        })
        .collect();
    // Stable sort keeps question order among equal means.
    cands.sort_by(|a, b| match (a.mean_rank, b.mean_rank) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    if !complete.is_empty() {
        for c in cands
            .iter_mut()
            .take(budget(n))
            .filter(|c| c.mean_rank.is_some())
        {
            c.serendipitous = true;
        }
    }
    // W over candidates nobody marked unsure, re-ranked within that subset.
    let keep: Vec<usize> = (0..n)
        .filter(|&i| avg.iter().all(|a| a[i].is_some()))
        .collect();
    let w_input: Vec<Vec<f64>> = avg
        .iter()
        .map(|a| {
            let sub: Vec<Option<u32>> = keep
                .iter()
                .map(|&i| a[i].map(|v| (v * 2.0).round() as u32))
                .collect();
            average_ranks(&sub).into_iter().flatten().collect()
        })
        .collect();
    let kw = if keep.len() >= 2 {
        kendall_w(&w_input)
    } else {
        None
    };
    let units: Vec<Vec<f64>> = (0..n)
        .map(|i| avg.iter().filter_map(|a| a[i]).collect())
        .collect();
    let confs: Vec<f64> = complete
        .iter()
        .filter_map(|r| r.confidence.map(f64::from))
        .collect();
    QuestionAggregate {
        question_id: q.id,
        batch_id: q.batch_id,
        source: q.source,
        qid: q.qid,
        text: q.text.clone(),
        annotators: complete.len(),
        drafts: responses
            .iter()
            .filter(|r| r.status == Status::Draft)
            .count(),
        mean_confidence: if confs.is_empty() {
            None
        } else {
            Some(confs.iter().sum::<f64>() / confs.len() as f64)
        },
        kendall_w: kw,
        alpha: krippendorff_alpha_ordinal(&units),
        candidates: cands,
    }
}

/// Units (candidates × annotator values) of a question for pooled α.
fn alpha_units(q: &Question, responses: &[Response]) -> Vec<Vec<f64>> {
    let complete: Vec<&Response> = responses
        .iter()
        .filter(|r| r.status == Status::Complete && !r.skipped())
        .collect();
    let mut units = vec![Vec::new(); q.candidates.len()];
    for r in complete {
        let dense: Vec<Option<u32>> = q
            .candidates
            .iter()
            .map(|c| {
                r.ranking
                    .iter()
                    .find(|e| e.candidate == c.id)
                    .and_then(|e| e.rank)
            })
            .collect();
        for (i, v) in average_ranks(&dense).into_iter().enumerate() {
            let unsure = r
                .ranking
                .iter()
                .any(|e| e.candidate == q.candidates[i].id && e.unsure);
            if let (Some(v), false) = (v, unsure) {
                units[i].push(v);
            }
        }
    }
    units
}

/// Aggregates of every question of a batch.
pub fn batch_questions(repo: &dyn Repo, batch_id: i64) -> Result<Vec<QuestionAggregate>> {
    let summaries = repo.questions_in_batch(batch_id, -1)?;
    let mut out = Vec::with_capacity(summaries.len());
    for s in summaries {
        let q = repo
            .question(s.id)?
            .ok_or(StoreError::NotFound("question"))?;
        let rs = repo.responses_for_question(q.id)?;
        out.push(aggregate_question(&q, &rs));
    }
    Ok(out)
}

/// Per-batch agreement and counts, for every batch.
pub fn batch_aggregates(repo: &dyn Repo) -> Result<Vec<BatchAggregate>> {
    let mut out = Vec::new();
    for b in repo.batches()? {
        let mut ws = Vec::new();
        let mut units = Vec::new();
        let mut answered = 0;
        let mut responses = 0;
        let mut who = std::collections::BTreeSet::new();
        for s in repo.questions_in_batch(b.id, -1)? {
            let q = repo
                .question(s.id)?
                .ok_or(StoreError::NotFound("question"))?;
            let rs = repo.responses_for_question(q.id)?;
            let done: Vec<&Response> = rs
                .iter()
                .filter(|r| r.status == Status::Complete && !r.skipped())
                .collect();
            if done.is_empty() {
                continue;
            }
            answered += 1;
            responses += done.len();
            who.extend(done.iter().map(|r| r.user_id));
            let a = aggregate_question(&q, &rs);
            if let Some(w) = a.kendall_w {
                ws.push(w);
            }
            units.extend(alpha_units(&q, &rs));
        }
        out.push(BatchAggregate {
            batch: b,
            answered,
            responses,
            annotators: who.len(),
            mean_kendall_w: if ws.is_empty() {
                None
            } else {
                Some(ws.iter().sum::<f64>() / ws.len() as f64)
            },
            w_questions: ws.len(),
            alpha: krippendorff_alpha_ordinal(&units),
        });
    }
    Ok(out)
}

/// Expert rankings of every question of `source` with at least `min_annotators` complete
/// responses. Rankings list the candidates each annotator ranked, by mean rank.
pub fn expert_rankings(
    repo: &dyn Repo,
    source: Source,
    min_annotators: usize,
) -> Result<ExpertRankings> {
    let mut questions = Vec::new();
    for q in repo.questions_of_source(source)? {
        let rs = repo.responses_for_question(q.id)?;
        let a = aggregate_question(&q, &rs);
        if a.annotators < min_annotators.max(1) {
            continue;
        }
        let qid = u32::try_from(q.qid).map_err(|_| {
            StoreError::Invalid(format!(
                "question id {} does not fit the file format",
                q.qid
            ))
        })?;
        questions.push(ExpertRanking {
            qid,
            question: Some(q.text.clone()),
            ranking: a
                .candidates
                .iter()
                .filter(|c| c.mean_rank.is_some())
                .map(|c| c.key.clone())
                .collect(),
            annotators: Some(a.annotators as u32),
        });
    }
    questions.sort_by_key(|q| q.qid);
    Ok(ExpertRankings {
        format: EXPERT_FORMAT.into(),
        version: 1,
        questions,
    })
}

/// All responses with their questions, for export. `with_identity` adds emails (admins
/// only); otherwise annotators appear as their stable pseudonym (`A<user id>`, `pseudonym`).
pub fn export_rows(repo: &dyn Repo, with_identity: bool) -> Result<Vec<ExportRow>> {
    let users: BTreeMap<i64, User> = repo.users()?.into_iter().map(|u| (u.id, u)).collect();
    let batches: BTreeMap<i64, Batch> = repo.batches()?.into_iter().map(|b| (b.id, b)).collect();
    let mut qcache: BTreeMap<i64, Question> = BTreeMap::new();
    let mut history: BTreeMap<i64, Vec<Revision>> = BTreeMap::new();
    for h in repo.revisions()? {
        history.entry(h.response_id).or_default().push(h);
    }
    let mut out = Vec::new();
    for r in repo.all_responses()? {
        let q = match qcache.entry(r.question_id) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(
                repo.question(r.question_id)?
                    .ok_or(StoreError::NotFound("question"))?,
            ),
        };
        let q = &*q;
        let key_of = |id: i64| {
            q.candidates
                .iter()
                .find(|c| c.id == id)
                .map(|c| c.key.clone())
                .unwrap_or_else(|| format!("#{id}"))
        };
        let ranks = |ranking: &[RankEntry]| -> Vec<ExportRank> {
            ranking
                .iter()
                .map(|e| ExportRank {
                    key: key_of(e.candidate),
                    name: q
                        .candidates
                        .iter()
                        .find(|c| c.id == e.candidate)
                        .map(|c| c.name.clone())
                        .unwrap_or_default(),
                    rank: e.rank,
                    unsure: e.unsure,
                })
                .collect()
        };
        let secs = |ms: Option<u64>| ms.map(|t| t as f64 / 1000.0);
        let revisions = history
            .remove(&r.id)
            .unwrap_or_default()
            .into_iter()
            .map(|h| ExportRevision {
                revision: h.revision,
                status: h.status,
                saved_at: h.saved_at,
                confidence: h.confidence,
                ranking: ranks(&h.ranking),
                comment: h.comment,
                time_on_task_s: secs(h.time_ms),
                confirmed_shown_order: h.confirmed_shown_order,
            })
            .collect();
        out.push(ExportRow {
            skipped: r.skipped(),
            confirmed_shown_order: r.confirmed_shown_order,
            presented: r.presented.iter().map(|&id| key_of(id)).collect(),
            time_on_task_s: secs(r.time_ms),
            history: revisions,
            response_id: r.id,
            annotator: pseudonym(r.user_id),
            email: if with_identity {
                users.get(&r.user_id).map(|u| u.email.clone())
            } else {
                None
            },
            source: q.source,
            batch: batches
                .get(&q.batch_id)
                .map(|b| b.name.clone())
                .unwrap_or_default(),
            question_id: q.id,
            qid: q.qid,
            question: q.text.clone(),
            status: r.status,
            confidence: r.confidence,
            comment: r.comment.clone(),
            ranking: q
                .candidates
                .iter()
                .map(|c| {
                    let e = r.ranking.iter().find(|e| e.candidate == c.id);
                    ExportRank {
                        key: c.key.clone(),
                        name: c.name.clone(),
                        rank: e.and_then(|e| e.rank),
                        unsure: e.is_some_and(|e| e.unsure),
                    }
                })
                .collect(),
            updated_at: r.updated_at,
        });
    }
    Ok(out)
}

/// The export as CSV: one line per (response, candidate), with the candidate's place in the
/// order first shown (`shown_position`), the response's time on task and its number of stored
/// saves (the saves themselves are in the JSON export's `history`). Free text (questions, comments,
/// names, e-mails) is neutralised against spreadsheet formulas (`serenqa_shared::csv`).
pub fn export_csv(rows: &[ExportRow]) -> std::result::Result<String, String> {
    let text = |s: &str| serenqa_shared::csv::neutralise(s);
    let mut w = csv::Writer::from_writer(Vec::new());
    let with_email = rows.iter().any(|r| r.email.is_some());
    let mut header = vec!["response_id", "annotator"];
    if with_email {
        header.push("email");
    }
    header.extend([
        "source",
        "batch",
        "question_id",
        "qid",
        "question",
        "status",
        "confidence",
        "comment",
        "candidate",
        "candidate_name",
        "rank",
        "unsure",
        "updated_at",
        "skipped",
        "confirmed_shown_order",
        "shown_position",
        "time_on_task_s",
        "revisions",
    ]);
    w.write_record(&header).map_err(|e| e.to_string())?;
    for r in rows {
        for c in &r.ranking {
            let mut rec = vec![r.response_id.to_string(), text(&r.annotator)];
            if with_email {
                rec.push(text(r.email.as_deref().unwrap_or_default()));
            }
            rec.extend([
                r.source.as_str().to_string(),
                text(&r.batch),
                r.question_id.to_string(),
                r.qid.to_string(),
                text(&r.question),
                r.status.as_str().to_string(),
                r.confidence.map(|c| c.to_string()).unwrap_or_default(),
                text(&r.comment),
                text(&c.key),
                text(&c.name),
                c.rank.map(|k| k.to_string()).unwrap_or_default(),
                c.unsure.to_string(),
                r.updated_at.to_string(),
                r.skipped.to_string(),
                r.confirmed_shown_order.to_string(),
                r.presented
                    .iter()
                    .position(|k| *k == c.key)
                    .map(|p| (p + 1).to_string())
                    .unwrap_or_default(),
                r.time_on_task_s
                    .map(|t| format!("{t:.1}"))
                    .unwrap_or_default(),
                r.history.len().to_string(),
            ]);
            w.write_record(&rec).map_err(|e| e.to_string())?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}
