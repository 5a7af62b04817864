//! The three partitions of a candidate set Ac into (Ae, As), |As| = b = max(1, ⌊0.2|Ac|⌋):
//!
//! - **Ensemble** ([`ensemble`]): every configured [`Scorer`] gives each candidate a 0–20
//!   serendipity score; scores are averaged and the top b form As (ties: lower node id
//!   first). Scorers are LLMs behind an OpenAI-compatible API (`serenqa_pipeline::ensemble`
//!   renders the pipeline's `ensemble_score.txt` prompt and validates the reply with
//!   [`parse_score_list`]: distinct integers 0–20, one per answer; a model whose replies
//!   stay invalid after its retries is dropped for that question, [`DroppedScorer`], and the
//!   mean is over the others) or, offline, the [`Obviousness`] scorers — graph statistics,
//!   **not an LLM**, labelled "offline proxy" everywhere. ([`scoring_prompt`] /
//!   [`parse_scores`] are a JSON variant of the same rubric for other clients.)
//! - **Expert** ([`ExpertRankings`]): read from an expert-rankings JSON file (format below).
//! - **RNS-guided** ([`rns_guided`]): Algorithm 1 (greedy swap, `serenqa_shared::rns`)
//!   started from the ensemble partition, so its RNS is never below the ensemble's.
//!
//! ## Expert-rankings file (written by the annotation app)
//! ```json
//! { "format": "serenqa-expert-rankings", "version": 1,
//!   "questions": [
//!     { "qid": 12, "question": "Which compounds treat asthma?",
//!       "ranking": ["Compound::DB01001", "Compound::DB00332"], "annotators": 3 } ] }
//! ```
//! `ranking` lists candidates as `Type::identifier` keys, most serendipitous first; it must
//! hold at least b of the question's candidates (others are ignored and counted). `question`
//! is optional; when present it must equal the benchmark's text, so rankings never attach to
//! a different question after a rebuild. Questions without an entry have no expert partition.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId};
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::Model;
use serenqa_shared::rns::{self, Weights};

pub use serenqa_shared::rns::budget;

/// One partition of Ac. Both sides sorted by node id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    pub existing: Vec<NodeId>,
    pub serendipity: Vec<NodeId>,
    /// RNS of this partition on Gc (when the model was available).
    pub rns: Option<f64>,
}

impl Partition {
    /// The partition with `serendipity` (a subset of `ac`) as As.
    pub fn from_serendipity(ac: &[NodeId], serendipity: &[NodeId]) -> Partition {
        let mut s = serendipity.to_vec();
        s.sort_unstable();
        let existing = ac
            .iter()
            .copied()
            .filter(|x| s.binary_search(x).is_err())
            .collect();
        Partition {
            existing,
            serendipity: s,
            rns: None,
        }
    }
}

/// One candidate answer as a scorer sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub node: NodeId,
    pub id: String,
    pub name: String,
    pub kind: String,
}

/// What a scorer is asked: one question and its candidate answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoringRequest {
    pub qid: u32,
    pub question: String,
    pub candidates: Vec<Candidate>,
}

impl ScoringRequest {
    pub fn new(g: &Graph, qid: u32, question: &str, ac: &[NodeId]) -> Self {
        let candidates = ac
            .iter()
            .map(|&n| Candidate {
                node: n,
                id: g.ident(n).to_string(),
                name: g.name(n).to_string(),
                kind: g.type_display(g.node_type(n)).to_string(),
            })
            .collect();
        ScoringRequest {
            qid,
            question: question.to_string(),
            candidates,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PartitionError {
    #[error("scorer {scorer}: {message}")]
    Scorer { scorer: String, message: String },
    #[error("expert rankings {path}: {message}")]
    Expert { path: String, message: String },
    #[error("RNS for question {qid}: {message}")]
    Rns { qid: u32, message: String },
}

/// A serendipity scorer: 0 (obvious) … 20 (highly unexpected) per candidate.
pub trait Scorer: Send + Sync {
    /// Shown in the manifest, e.g. `offline:degree (not an LLM)` or `llm:gpt-4o@host`.
    fn label(&self) -> String;
    /// True only for language models; the manifest reports it so offline runs are never
    /// mistaken for the paper's LLM ensemble.
    fn is_llm(&self) -> bool;
    /// One score per candidate, in the request's order.
    fn score(&self, req: &ScoringRequest) -> Result<Vec<f64>, String>;
}

/// The scoring instructions for a language model, in our words (the paper's B.1 rubric):
/// (system message, user message). The reply is parsed by [`parse_scores`].
pub fn scoring_prompt(req: &ScoringRequest) -> (String, String) {
    let system = "You assess candidate answers for drug-discovery questions. Every candidate \
        below was retrieved from a curated biomedical knowledge graph, so all of them are \
        factually supported. Your job is to judge how serendipitous each one is: how far it \
        goes beyond what a specialist would name first.\n\
        Give every candidate an integer between 0 and 20:\n\
        - 20: surprising, non-obvious and scientifically interesting for this question;\n\
        - 0: the textbook answer any specialist would expect, adding nothing new;\n\
        - values in between for intermediate degrees of novelty.\n\
        Compare the candidates with each other in the context of the question, use different \
        values for different candidates even when they are close, and ignore the order in \
        which they are listed.\n\
        Reply with JSON only: {\"scores\": [{\"id\": \"<candidate id>\", \"score\": <0-20>}, ...]}."
        .to_string();
    let mut user = format!("Question: {}\nCandidates:\n", req.question);
    for c in &req.candidates {
        user.push_str(&format!(
            "- id: {} | name: {} | type: {}\n",
            c.id, c.name, c.kind
        ));
    }
    (system, user)
}

/// Parses a model reply `{"scores": [{"id", "score"}]}` (optionally inside a code fence or
/// surrounding prose) into scores in the request's order; each must lie in 0..=20.
pub fn parse_scores(req: &ScoringRequest, reply: &str) -> Result<Vec<f64>, String> {
    let start = reply.find('{').ok_or("the reply holds no JSON object")?;
    let end = reply.rfind('}').ok_or("the reply holds no JSON object")?;
    if end < start {
        return Err("the reply holds no JSON object".into());
    }
    #[derive(Deserialize)]
    struct Item {
        id: serde_json::Value,
        score: f64,
    }
    #[derive(Deserialize)]
    struct Reply {
        scores: Vec<Item>,
    }
    let r: Reply = serde_json::from_str(&reply[start..=end])
        .map_err(|e| format!("the reply is not the expected JSON: {e}"))?;
    let mut by_id: BTreeMap<String, f64> = BTreeMap::new();
    for it in r.scores {
        let id = match it.id {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        if !(0.0..=20.0).contains(&it.score) {
            return Err(format!("score {} for {id} is outside 0–20", it.score));
        }
        by_id.insert(id, it.score);
    }
    req.candidates
        .iter()
        .map(|c| {
            by_id
                .get(&c.id)
                .copied()
                .ok_or_else(|| format!("the reply gives no score for candidate {}", c.id))
        })
        .collect()
}

/// What the offline scorer measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObviousnessSignal {
    /// Node degree in Gc: well-connected entities are the well-studied, expected ones.
    Degree,
    /// Stationary probability of the 3-hop walk (the model's marginals).
    Marginal,
}

/// Offline stand-in for an LLM judge — **not an LLM**. Candidates are ranked by how
/// "obvious" they are (degree or marginal probability in Gc, higher = more obvious; ties by
/// node id) and scored 0 (most obvious) … 20 (least obvious), evenly spaced, so scores are
/// distinct as the rubric asks.
pub struct Obviousness<'a> {
    pub graph: &'a Graph,
    pub signal: ObviousnessSignal,
    pub marginals: Option<&'a [f64]>,
}

impl Scorer for Obviousness<'_> {
    fn label(&self) -> String {
        match self.signal {
            ObviousnessSignal::Degree => "offline proxy: degree obviousness (not an LLM)".into(),
            ObviousnessSignal::Marginal => {
                "offline proxy: marginal obviousness (not an LLM)".into()
            }
        }
    }
    fn is_llm(&self) -> bool {
        false
    }
    fn score(&self, req: &ScoringRequest) -> Result<Vec<f64>, String> {
        let value = |n: NodeId| -> f64 {
            match (self.signal, self.marginals) {
                (ObviousnessSignal::Marginal, Some(m)) => m.get(n as usize).copied().unwrap_or(0.0),
                _ => self.graph.degree(n) as f64,
            }
        };
        let n = req.candidates.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&req.candidates[a], &req.candidates[b]);
            value(cb.node)
                .total_cmp(&value(ca.node))
                .then(ca.node.cmp(&cb.node))
        });
        let mut scores = vec![10.0; n];
        if n > 1 {
            for (rank, &i) in order.iter().enumerate() {
                scores[i] = 20.0 * rank as f64 / (n - 1) as f64;
            }
        }
        Ok(scores)
    }
}

/// The default offline ensemble: degree and (with a model) marginal obviousness.
pub fn offline_scorers<'a>(
    g: &'a Graph,
    marginals: Option<&'a [f64]>,
) -> Vec<Box<dyn Scorer + 'a>> {
    let mut v: Vec<Box<dyn Scorer + 'a>> = vec![Box::new(Obviousness {
        graph: g,
        signal: ObviousnessSignal::Degree,
        marginals: None,
    })];
    if marginals.is_some() {
        v.push(Box::new(Obviousness {
            graph: g,
            signal: ObviousnessSignal::Marginal,
            marginals,
        }));
    }
    v
}

/// Parses and validates an ensemble model's reply in the list format of the ensemble prompt
/// (`backend/pipeline/prompts/ensemble_score.txt`): `n` comma-separated integers in answer
/// order, each in 0..=20, all distinct. Tolerates surrounding whitespace, a code fence, square
/// brackets and a final full stop; anything else is an error saying what is wrong (one line).
pub fn parse_score_list(n: usize, reply: &str) -> Result<Vec<f64>, String> {
    let mut t = reply.trim();
    if let Some(inner) = t.strip_prefix("```") {
        // ```[lang]\n … ```
        let inner = inner.split_once('\n').map(|(_, r)| r).unwrap_or("");
        t = inner.trim_end().strip_suffix("```").unwrap_or(inner).trim();
    }
    let t = t.trim_end_matches('.').trim();
    let t = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(t)
        .trim();
    if t.is_empty() {
        return Err("the reply is empty".into());
    }
    let mut out = Vec::with_capacity(n);
    let mut seen = [false; 21];
    for (i, tok) in t.split(',').map(str::trim).enumerate() {
        let shown: String = tok.chars().take(20).collect();
        let v: u32 = tok
            .parse()
            .map_err(|_| format!("item {} ({shown:?}) is not an integer", i + 1))?;
        if v > 20 {
            return Err(format!("score {v} is outside 0–20"));
        }
        if seen[v as usize] {
            return Err(format!(
                "score {v} is given twice (scores must be distinct)"
            ));
        }
        seen[v as usize] = true;
        out.push(f64::from(v));
    }
    if out.len() != n {
        return Err(format!("{} scores for {n} answers", out.len()));
    }
    Ok(out)
}

/// A scorer left out of one question's ensemble: a language model whose replies stayed
/// invalid after its retries (recorded in the benchmark manifest).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedScorer {
    pub qid: u32,
    pub scorer: String,
    pub reason: String,
}

/// One question's ensemble result.
#[derive(Clone, Debug, PartialEq)]
pub struct EnsembleOutcome {
    /// Mean score per candidate over the scorers that remained (0 when none did).
    pub mean: Vec<f64>,
    /// The top b by mean score; None when every scorer was dropped for this question.
    pub partition: Option<Partition>,
    pub dropped: Vec<DroppedScorer>,
}

/// Mean scores of the scorers, and the ensemble partition: the top b by mean score (ties:
/// lower node id first). A language model that fails a question (its scorer gave up after
/// retrying) is dropped for that question and averaged out; an offline scorer failing is a
/// bug and an error.
pub fn ensemble(
    scorers: &[Box<dyn Scorer + '_>],
    req: &ScoringRequest,
) -> Result<EnsembleOutcome, PartitionError> {
    let n = req.candidates.len();
    let mut sum = vec![0.0; n];
    let mut used = 0usize;
    let mut dropped = Vec::new();
    for s in scorers {
        let v = match s.score(req) {
            Ok(v) if v.len() == n => v,
            Ok(v) => Err(format!("returned {} scores for {n} candidates", v.len())).map_err(
                |message| PartitionError::Scorer {
                    scorer: s.label(),
                    message,
                },
            )?,
            Err(reason) if s.is_llm() => {
                dropped.push(DroppedScorer {
                    qid: req.qid,
                    scorer: s.label(),
                    reason,
                });
                continue;
            }
            Err(message) => {
                return Err(PartitionError::Scorer {
                    scorer: s.label(),
                    message,
                })
            }
        };
        used += 1;
        for (m, x) in sum.iter_mut().zip(v) {
            *m += x;
        }
    }
    if used == 0 {
        return Ok(EnsembleOutcome {
            mean: vec![0.0; n],
            partition: None,
            dropped,
        });
    }
    let mean: Vec<f64> = sum.iter().map(|x| x / used as f64).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        mean[b]
            .total_cmp(&mean[a])
            .then(req.candidates[a].node.cmp(&req.candidates[b].node))
    });
    let mut ac_sorted: Vec<NodeId> = req.candidates.iter().map(|c| c.node).collect();
    ac_sorted.sort_unstable();
    let top: Vec<NodeId> = order
        .iter()
        .take(budget(n))
        .map(|&i| req.candidates[i].node)
        .collect();
    Ok(EnsembleOutcome {
        mean,
        partition: Some(Partition::from_serendipity(&ac_sorted, &top)),
        dropped,
    })
}

/// RNS scoring context for one question: the slice of Ac and of the entities the question
/// names on Gc. The named entities (`anchors`) are in Ae in every partition scored here —
/// the rule the shipped weights were fitted with (docs/RNS.md, "What Ae holds").
pub struct RnsContext {
    slice: rns::Slice,
    /// Slice positions of the anchors.
    anchors: Vec<usize>,
    weights: Weights,
}

impl RnsContext {
    /// `named`: the entities the question names (those among `ac` stay candidates).
    pub fn new(
        g: &Graph,
        model: &Model,
        cache: &BlockCache,
        ac: &[NodeId],
        named: &[NodeId],
        weights: Weights,
    ) -> Result<Self, String> {
        let mut nodes = ac.to_vec();
        for &x in named {
            if !nodes.contains(&x) {
                nodes.push(x);
            }
        }
        let slice = build_slice(g, model, cache, &nodes).map_err(|e| e.to_string())?;
        let anchors = (ac.len()..nodes.len())
            .filter_map(|k| slice.position(nodes[k]))
            .collect();
        Ok(RnsContext {
            slice,
            anchors,
            weights,
        })
    }

    fn positions(&self, xs: &[NodeId]) -> Result<Vec<usize>, String> {
        xs.iter()
            .map(|&x| {
                self.slice
                    .position(x)
                    .ok_or_else(|| format!("node {x} is not in the slice"))
            })
            .collect()
    }

    /// RNS(Ae, As).
    pub fn score(&self, p: &Partition) -> Result<f64, String> {
        let sc = rns::Scorer::new(&self.slice).map_err(|e| e.to_string())?;
        let mut ae = self.positions(&p.existing)?;
        ae.extend(&self.anchors);
        let t = sc
            .score(&ae, &self.positions(&p.serendipity)?, &self.weights)
            .map_err(|e| e.to_string())?;
        Ok(t.rns)
    }

    /// Algorithm 1 from `start`; the result's RNS is ≥ `start`'s.
    pub fn greedy_swap(&self, start: &Partition) -> Result<Partition, String> {
        let sc = rns::Scorer::new(&self.slice).map_err(|e| e.to_string())?;
        let mut all: Vec<NodeId> = start
            .existing
            .iter()
            .chain(&start.serendipity)
            .copied()
            .collect();
        all.sort_unstable();
        let ac = self.positions(&all)?;
        let init = self.positions(&start.serendipity)?;
        let r = sc
            .greedy_swap_anchored(&ac, &self.anchors, Some(&init), &self.weights)
            .map_err(|e| e.to_string())?;
        let ser: Vec<NodeId> = r.serendipity.iter().map(|&i| self.slice.ids[i]).collect();
        let mut p = Partition::from_serendipity(&all, &ser);
        p.rns = Some(r.terms.rns);
        Ok(p)
    }
}

/// RNS-guided partition started from the ensemble's; fills in both RNS values.
pub fn rns_guided(ctx: &RnsContext, ensemble: &mut Partition) -> Result<Partition, String> {
    ensemble.rns = Some(ctx.score(ensemble)?);
    ctx.greedy_swap(ensemble)
}

pub use serenqa_shared::annotate::{ExpertRanking, ExpertRankings, EXPERT_FORMAT};

/// Reading the expert-rankings file (the format is `serenqa_shared::annotate`'s, shared with
/// the annotation store that writes it).
pub trait LoadExpertRankings: Sized {
    fn load(path: &Path) -> Result<Self, PartitionError>;
}

impl LoadExpertRankings for ExpertRankings {
    fn load(path: &Path) -> Result<Self, PartitionError> {
        let err = |message: String| PartitionError::Expert {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let r: ExpertRankings = serde_json::from_str(&text)
            .map_err(|e| err(format!("not an expert-rankings file: {e}")))?;
        r.validate().map_err(err)?;
        Ok(r)
    }
}

/// An expert ranking applied to a question's candidates on the graph.
pub trait ExpertPartition {
    /// The expert partition of `ac`: the first b ranked keys that are candidates. Returns the
    /// partition and how many ranked keys were not candidates.
    fn partition(&self, g: &Graph, text: &str, ac: &[NodeId])
        -> Result<(Partition, usize), String>;
}

impl ExpertPartition for ExpertRanking {
    fn partition(
        &self,
        g: &Graph,
        text: &str,
        ac: &[NodeId],
    ) -> Result<(Partition, usize), String> {
        if let Some(t) = &self.question {
            if t.trim() != text.trim() {
                return Err(format!(
                    "the ranking for question {} was made for a different question text",
                    self.qid
                ));
            }
        }
        let b = budget(ac.len());
        let mut chosen = Vec::new();
        let mut ignored = 0;
        for key in &self.ranking {
            match g.find_by_key(key).filter(|n| ac.binary_search(n).is_ok()) {
                Some(n) if !chosen.contains(&n) => {
                    if chosen.len() < b {
                        chosen.push(n);
                    }
                }
                Some(_) => {}
                None => ignored += 1,
            }
        }
        if chosen.len() < b {
            return Err(format!(
                "the ranking for question {} names {} of its candidates; {b} are needed",
                self.qid,
                chosen.len()
            ));
        }
        Ok((Partition::from_serendipity(ac, &chosen), ignored))
    }
}
