//! Question generation: sample pattern instances with a seeded RNG, compute their answer
//! sets, keep those with 2–20 answers, phrase them, and meet the per-type quotas.
//!
//! Answer sets come from direct evaluation of the query structure ([`crate::query`]); the
//! rendered Cypher is checked against the Cypher executor in the tests, so both agree.
//!
//! Size shaping: a random seed answer tends to sit in large answer sets, so a kept instance
//! with n answers is accepted with probability min(1, (k/n)^γ) — this pulls the mean answer
//! set size towards the paper's ≈ 4 without forbidding larger sets.

use std::collections::BTreeSet;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId};

use crate::patterns::{sample, PatternType, Schema};
use crate::phrasing;
use crate::query::{Query, View};
use crate::rng::Rng;

/// Smallest and largest kept answer set (the paper's 2–20).
pub const MIN_ANSWERS: usize = 2;
pub const MAX_ANSWERS: usize = 20;
/// Edge visits allowed for one evaluation while sampling; broader instances are skipped.
pub const SAMPLE_BUDGET: u64 = 150_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenConfig {
    pub questions: usize,
    pub seed: u64,
    /// Size shaping: accept n answers with probability min(1, (k/n)^γ).
    pub shape_k: f64,
    pub shape_gamma: f64,
    /// Sampling attempts per wanted question before a type gives up.
    pub attempts_per_question: usize,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            questions: 1529,
            seed: 42,
            shape_k: 3.0,
            shape_gamma: 1.5,
            attempts_per_question: 3000,
        }
    }
}

/// A generated question (before partitioning).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub qid: u32,
    pub pattern: PatternType,
    pub query: Query,
    pub text: String,
    /// Which phrasing of the pattern type was used.
    pub variant: usize,
    /// Ac on Gc, sorted by node id.
    pub answers: Vec<NodeId>,
    pub category: String,
}

/// What happened while sampling one pattern type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenReport {
    pub pattern: String,
    pub wanted: usize,
    pub kept: usize,
    pub attempts: usize,
    pub dead_ends: usize,
    pub unfocused: usize,
    pub too_few: usize,
    pub too_many: usize,
    pub over_budget: usize,
    pub shaped_out: usize,
    pub duplicates: usize,
    pub bad_text: usize,
    /// Kept samples whose Cypher, run by the executor, disagreed with the direct evaluation
    /// (dropped; expected 0).
    pub executor_mismatch: usize,
    /// First disagreement or executor error, for the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_mismatch: Option<String>,
}

/// Samples `wanted` questions of one type. Deterministic in (graph, seed, type).
pub fn generate_type(
    g: &Graph,
    schema: &Schema,
    p: PatternType,
    wanted: usize,
    cfg: &GenConfig,
) -> (Vec<Question>, GenReport) {
    let mut rng = Rng::derive(cfg.seed, &format!("questions/{p}"));
    let mut rep = GenReport {
        pattern: p.code().into(),
        wanted,
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut seen: BTreeSet<(Vec<NodeId>, Vec<u16>, Vec<NodeId>)> = BTreeSet::new();
    let max_attempts = wanted.saturating_mul(cfg.attempts_per_question).max(1000);
    while out.len() < wanted && rep.attempts < max_attempts {
        rep.attempts += 1;
        let Some(q) = sample(g, schema, p, &mut rng) else {
            rep.dead_ends += 1;
            continue;
        };
        if !schema.is_focused(g, &q) {
            rep.unfocused += 1;
            continue;
        }
        let Ok(answers) = q.answers_upto(View::full(g), SAMPLE_BUDGET, MAX_ANSWERS) else {
            rep.over_budget += 1;
            continue;
        };
        let n = answers.len();
        if n < MIN_ANSWERS {
            rep.too_few += 1;
            continue;
        }
        if n > MAX_ANSWERS {
            rep.too_many += 1;
            continue;
        }
        let accept = (cfg.shape_k / n as f64).powf(cfg.shape_gamma).min(1.0);
        if rng.unit() >= accept {
            rep.shaped_out += 1;
            continue;
        }
        // The same entities and relations asking for the same answers is one question.
        let mut ents: Vec<NodeId> = q.entities().collect();
        ents.sort_unstable();
        let mut rels: Vec<u16> = q.edges.iter().map(|e| e.rel).collect();
        rels.sort_unstable();
        if !seen.insert((ents, rels, answers.clone())) {
            rep.duplicates += 1;
            continue;
        }
        let variant = rng.below(phrasing::variants(p));
        let Ok(text) = phrasing::render(g, p, &q, variant) else {
            rep.bad_text += 1;
            continue;
        };
        out.push(Question {
            qid: 0,
            pattern: p,
            query: q,
            text,
            variant,
            answers,
            category: String::new(),
        });
    }
    rep.kept = out.len();
    (out, rep)
}

/// Generates the whole question set: per-type quotas in the paper's proportions, types in
/// parallel (each with its own RNG stream, so the result does not depend on scheduling),
/// qids 1.. in type order.
pub fn generate(g: &Graph, cfg: &GenConfig) -> (Vec<Question>, Vec<GenReport>) {
    let schema = Schema::new(g);
    let quotas = PatternType::quotas(cfg.questions);
    let parts: Vec<(Vec<Question>, GenReport)> = quotas
        .par_iter()
        .map(|&(p, n)| generate_type(g, &schema, p, n, cfg))
        .collect();
    let mut questions = Vec::new();
    let mut reports = Vec::new();
    for (qs, mut rep) in parts {
        // Ac is what the Cypher executor returns for the rendered query; the direct
        // evaluation must agree, else the question is dropped and counted.
        let checked: Vec<Result<(), String>> = qs
            .par_iter()
            .map(|q| {
                let text = crate::cypher::render(g, &q.query);
                match crate::exec::run_question_cypher(View::full(g), &q.query, &text) {
                    Ok(a) if a == q.answers => Ok(()),
                    Ok(a) => Err(format!(
                        "{}: executor returned {} answers, direct evaluation {}",
                        text.replace('\n', " "),
                        a.len(),
                        q.answers.len()
                    )),
                    Err(e) => Err(format!("{}: {e}", text.replace('\n', " "))),
                }
            })
            .collect();
        for (q, c) in qs.into_iter().zip(checked) {
            match c {
                Ok(()) => questions.push(q),
                Err(e) => {
                    rep.executor_mismatch += 1;
                    rep.kept -= 1;
                    rep.first_mismatch.get_or_insert(e);
                }
            }
        }
        reports.push(rep);
    }
    for (i, q) in questions.iter_mut().enumerate() {
        q.qid = i as u32 + 1;
        q.category = crate::category::category(g, &q.query, &q.answers);
    }
    (questions, reports)
}
