//! How well RNS agrees with real rankings: the SerenQA questionnaire's LLM-ensemble ranks
//! (`llm_rank`, 1 = most serendipitous), the fit of α, β, γ to them, the held-out table and
//! the spread of the terms. The CLI is `serenqa rns fit | heldout | spread`.
//!
//! - **Questions used**: every questionnaire question with at least [`MIN_LINKED`] distinct
//!   candidates linked to the graph ([`crate::questionnaire::link`]: DrugBank id → Compound,
//!   GeneCards symbol → Gene, UniProt accession → the Gene named by the entry's symbol, which
//!   is the candidate's name; by-name links count). Ac = the linked candidates; the ensemble
//!   order is their `llm_rank` order, and the ensemble's As is its first
//!   b = max(1, ⌊0.2|Ac|⌋).
//! - **Split**: batches 1–10 fit (and tune) — [`FIT_BATCHES`]; batches 11–14 are held out and
//!   only ever reported ([`is_heldout`]).
//! - **Per question**, for a method that gives every candidate a score (higher = more
//!   serendipitous) and picks an As of size b: top-b agreement |As ∩ As_ens| / b, Spearman's
//!   ρ (average ranks for ties) and Kendall's τ-b between the scores and the ensemble order.
//!   A question where a correlation is undefined (all scores equal) counts as 0.
//!   RNS scores each candidate by RNS(Ac∖{c}, {c}) and picks As by the greedy swap (the
//!   RNS-guided partition); the baselines rank by a node statistic and take the top b
//!   (ties by node index): random (mean over [`RANDOM_DRAWS`] seeded draws), least- and
//!   most-connected (degree), lowest and highest marginal probability P(x).
//! - **Means and 95% CIs**: the mean over questions with a percentile bootstrap over
//!   questions ([`BOOTSTRAP`] resamples, fixed seed); the difference to the best baseline is
//!   bootstrapped paired (the same resampled questions for both methods).
//! - **Fit**: grid over |α| + |β| + |γ| = 1 (step 0.05; signs free, so a term the reference
//!   disfavours can get a negative weight), maximising mean top-b + mean Spearman on batches
//!   1–10; ties by the grid order (α, then β, ascending).

use serde::{Deserialize, Serialize};
use serenqa_graph::{Graph, NodeId};
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::Model;
use serenqa_shared::rns::{budget, Scorer, Slice, Terms, Weights};

use crate::questionnaire::{link, Item, Link, Questionnaire};
use crate::rng::Rng;

/// Questions need at least this many linked candidates.
pub const MIN_LINKED: usize = 3;
/// Batches used for fitting; every other batch is held out.
pub const FIT_BATCHES: std::ops::RangeInclusive<u32> = 1..=10;
pub const RANDOM_DRAWS: usize = 100;
pub const BOOTSTRAP: usize = 2000;
pub const GRID_STEP: f64 = 0.05;

pub fn is_heldout(batch: u32) -> bool {
    !FIT_BATCHES.contains(&batch)
}

/// What a question's Ae holds besides the candidates left in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum AeRule {
    /// Ae = the other candidates only (the paper's partition of Ac).
    #[default]
    Candidates,
    /// Ae = the other candidates + the entities the question names (its `resource`, linked
    /// like the candidates; those that are also candidates stay candidates): what the asker
    /// already has in mind. The greedy swap keeps them in Ae ([`Scorer::greedy_swap_anchored`]).
    WithNamed,
}

/// One question's linked candidates with their terms.
#[derive(Clone, Debug)]
pub struct LinkedQuestion {
    pub batch: u32,
    pub qid: u32,
    /// Linked candidates, distinct, in ensemble order (best first).
    pub nodes: Vec<NodeId>,
    /// Entities always in Ae besides the candidates (empty under [`AeRule::Candidates`]).
    pub anchors: Vec<NodeId>,
    /// RNS(Ac∖{c} ∪ anchors, {c}) terms per candidate (weights applied later).
    pub terms: Vec<Terms>,
    /// The slice of `nodes` followed by `anchors` (for the greedy swap under any weights).
    pub slice: Slice,
}

/// The entities a questionnaire item names (its `resource`), linked like the candidates,
/// distinct and not among `candidates`.
pub fn named_entities(g: &Graph, item: &Item, candidates: &[NodeId]) -> Vec<NodeId> {
    link_named(
        g,
        item.resource
            .iter()
            .map(|r| (r.entity_name.as_str(), r.entity_link.as_deref())),
        candidates,
    )
}

/// Links (name, URL) pairs a question names like the questionnaire's candidates
/// ([`link`]); the distinct linked nodes not among `candidates`, in order. The one home of
/// "the entities a question names" for the questionnaire and the annotation store alike.
pub fn link_named<'a>(
    g: &Graph,
    named: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    candidates: &[NodeId],
) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::new();
    for (name, url) in named {
        if let Link::ById(x) | Link::ByName(x) = link(g, name, url) {
            if !candidates.contains(&x) && !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

/// Link rate of one batch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BatchLinks {
    pub batch: u32,
    pub questions: usize,
    pub candidate_mentions: usize,
    pub linked_by_id: usize,
    pub linked_by_name: usize,
    /// Questions with ≥ MIN_LINKED distinct linked candidates (the ones used).
    pub questions_used: usize,
}

impl BatchLinks {
    pub fn link_rate(&self) -> f64 {
        if self.candidate_mentions == 0 {
            0.0
        } else {
            (self.linked_by_id + self.linked_by_name) as f64 / self.candidate_mentions as f64
        }
    }
}

/// Links every question and computes its candidates' terms. Errors only for slices that
/// cannot be built (which a linked node set cannot cause short of > 500 candidates).
pub fn linked_questions(
    g: &Graph,
    model: &Model,
    cache: &BlockCache,
    q: &Questionnaire,
    rule: AeRule,
) -> (Vec<LinkedQuestion>, Vec<BatchLinks>) {
    let mut out = Vec::new();
    let mut links = Vec::new();
    for b in &q.batches {
        let mut bl = BatchLinks {
            batch: b.info.batch_id,
            ..Default::default()
        };
        for it in &b.items {
            bl.questions += 1;
            let mut ranked: Vec<(u32, NodeId)> = Vec::new();
            for c in &it.llm_ranking {
                bl.candidate_mentions += 1;
                let n = match link(g, &c.entity_name, c.entity_link.as_deref()) {
                    Link::ById(n) => {
                        bl.linked_by_id += 1;
                        n
                    }
                    Link::ByName(n) => {
                        bl.linked_by_name += 1;
                        n
                    }
                    Link::Unlinked => continue,
                };
                ranked.push((c.llm_rank, n));
            }
            // Best rank first; a node linked twice keeps its best rank.
            ranked.sort();
            let mut nodes: Vec<NodeId> = Vec::new();
            for (_, n) in ranked {
                if !nodes.contains(&n) {
                    nodes.push(n);
                }
            }
            if nodes.len() < MIN_LINKED {
                continue;
            }
            let anchors = match rule {
                AeRule::Candidates => Vec::new(),
                AeRule::WithNamed => named_entities(g, it, &nodes),
            };
            let all: Vec<NodeId> = nodes.iter().chain(&anchors).copied().collect();
            let Ok(slice) = build_slice(g, model, cache, &all) else {
                continue;
            };
            let Some(terms) = candidate_terms(&slice, nodes.len()) else {
                continue;
            };
            bl.questions_used += 1;
            out.push(LinkedQuestion {
                batch: b.info.batch_id,
                qid: it.qid,
                nodes,
                anchors,
                terms,
                slice,
            });
        }
        links.push(bl);
    }
    (out, links)
}

/// RNS(A∖{c}, {c}) for each of the slice's first `candidates` entities c (A = the whole
/// slice: the entities after the candidates are anchors, always in Ae).
pub fn candidate_terms(slice: &Slice, candidates: usize) -> Option<Vec<Terms>> {
    let sc = Scorer::new(slice).ok()?;
    let m = slice.len();
    let w = Weights::default();
    (0..candidates.min(m))
        .map(|c| {
            let others: Vec<usize> = (0..m).filter(|&x| x != c).collect();
            sc.score(&others, &[c], &w).ok()
        })
        .collect()
}

/// Agreement of one method on one question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionScore {
    pub top_b: f64,
    pub spearman: f64,
    pub kendall: f64,
}

/// Average ranks (1-based) of `x`, ties sharing their mean rank.
fn avg_ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = avg;
        }
        i = j + 1;
    }
    r
}

/// Spearman's ρ (Pearson on average ranks); 0 when undefined.
pub fn spearman(x: &[f64], y: &[f64]) -> f64 {
    let (rx, ry) = (avg_ranks(x), avg_ranks(y));
    let n = rx.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// Kendall's τ-b; 0 when undefined.
pub fn kendall(x: &[f64], y: &[f64]) -> f64 {
    let (mut conc, mut disc, mut tx, mut ty) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (dx, dy) = (x[i].total_cmp(&x[j]) as i64, y[i].total_cmp(&y[j]) as i64);
            if dx == 0 && dy == 0 {
                // Tied in both: counts for neither.
            } else if dx == 0 {
                tx += 1;
            } else if dy == 0 {
                ty += 1;
            } else if dx == dy {
                conc += 1;
            } else {
                disc += 1;
            }
        }
    }
    let d = (((conc + disc + tx) as f64) * ((conc + disc + ty) as f64)).sqrt();
    if d > 0.0 {
        (conc - disc) as f64 / d
    } else {
        0.0
    }
}

/// Scores a method on one question: `scores` per candidate (ensemble order), `chosen` its As.
pub fn question_score(scores: &[f64], chosen: &[usize]) -> QuestionScore {
    let m = scores.len();
    let b = budget(m);
    // Ensemble order: candidate k has ensemble score m − k (rank 1 = highest).
    let ens: Vec<f64> = (0..m).map(|k| (m - k) as f64).collect();
    let hits = chosen.iter().filter(|&&k| k < b).count();
    QuestionScore {
        top_b: hits as f64 / b as f64,
        spearman: spearman(scores, &ens),
        kendall: kendall(scores, &ens),
    }
}

/// The top b of `scores` (ties by node index).
pub fn top_b(scores: &[f64], nodes: &[NodeId]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then(nodes[a].cmp(&nodes[b]))
    });
    idx.truncate(budget(scores.len()));
    idx
}

/// A method compared on the questionnaire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    Rns,
    Random,
    LeastConnected,
    MostConnected,
    LowestMarginal,
    HighestMarginal,
}

impl Method {
    pub const BASELINES: [Method; 5] = [
        Method::Random,
        Method::LeastConnected,
        Method::MostConnected,
        Method::LowestMarginal,
        Method::HighestMarginal,
    ];
    pub fn name(&self) -> &'static str {
        match self {
            Method::Rns => "RNS",
            Method::Random => "random",
            Method::LeastConnected => "least-connected",
            Method::MostConnected => "most-connected",
            Method::LowestMarginal => "lowest marginal P(x)",
            Method::HighestMarginal => "highest marginal P(x)",
        }
    }
}

/// Per-question scores of `method` over `questions` (RNS with weights `w`).
pub fn evaluate(
    g: &Graph,
    model: &Model,
    questions: &[&LinkedQuestion],
    method: Method,
    w: &Weights,
) -> Vec<QuestionScore> {
    questions
        .iter()
        .map(|q| {
            let m = q.nodes.len();
            match method {
                Method::Rns => {
                    let scores: Vec<f64> =
                        q.terms.iter().map(|t| w.combine(t.r, t.n, t.s)).collect();
                    let chosen = rns_partition(q, w).unwrap_or_else(|| top_b(&scores, &q.nodes));
                    question_score(&scores, &chosen)
                }
                Method::Random => {
                    let mut rng = Rng::new(0x5EED ^ ((q.batch as u64) << 32) ^ q.qid as u64);
                    let mut acc = QuestionScore::default();
                    for _ in 0..RANDOM_DRAWS {
                        let scores: Vec<f64> = (0..m).map(|_| rng.unit()).collect();
                        let s = question_score(&scores, &top_b(&scores, &q.nodes));
                        acc.top_b += s.top_b;
                        acc.spearman += s.spearman;
                        acc.kendall += s.kendall;
                    }
                    let k = RANDOM_DRAWS as f64;
                    QuestionScore {
                        top_b: acc.top_b / k,
                        spearman: acc.spearman / k,
                        kendall: acc.kendall / k,
                    }
                }
                _ => {
                    let scores: Vec<f64> = q
                        .nodes
                        .iter()
                        .map(|&n| match method {
                            Method::LeastConnected => -(g.degree(n) as f64),
                            Method::MostConnected => g.degree(n) as f64,
                            Method::LowestMarginal => -model.marginals[n as usize],
                            _ => model.marginals[n as usize],
                        })
                        .collect();
                    question_score(&scores, &top_b(&scores, &q.nodes))
                }
            }
        })
        .collect()
}

/// The RNS-guided As (greedy swap) as positions in `q.nodes`.
pub fn rns_partition(q: &LinkedQuestion, w: &Weights) -> Option<Vec<usize>> {
    let sc = Scorer::new(&q.slice).ok()?;
    let n = q.nodes.len();
    let ac: Vec<usize> = (0..n).collect();
    let anchors: Vec<usize> = (n..n + q.anchors.len()).collect();
    sc.greedy_swap_anchored(&ac, &anchors, None, w)
        .ok()
        .map(|r| r.serendipity)
}

/// Mean with a percentile-bootstrap 95% CI.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// Bootstrap of the mean of `x` (resampling indices with a fixed seed).
pub fn bootstrap(x: &[f64], seed: u64) -> Estimate {
    let n = x.len();
    if n == 0 {
        return Estimate::default();
    }
    let mut rng = Rng::new(seed);
    let mut means: Vec<f64> = (0..BOOTSTRAP)
        .map(|_| {
            let mut s = 0.0;
            for _ in 0..n {
                s += x[(rng.next_u64() % n as u64) as usize];
            }
            s / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (BOOTSTRAP - 1) as f64).round() as usize).min(BOOTSTRAP - 1)];
    Estimate {
        mean: mean(x),
        lo: at(0.025),
        hi: at(0.975),
    }
}

/// One method's row of the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MethodRow {
    pub method: String,
    pub top_b: Estimate,
    pub spearman: Estimate,
    pub kendall: Estimate,
}

pub fn row(method: &str, s: &[QuestionScore]) -> MethodRow {
    let col = |f: fn(&QuestionScore) -> f64| s.iter().map(f).collect::<Vec<f64>>();
    MethodRow {
        method: method.to_string(),
        top_b: bootstrap(&col(|q| q.top_b), 11),
        spearman: bootstrap(&col(|q| q.spearman), 12),
        kendall: bootstrap(&col(|q| q.kendall), 13),
    }
}

/// Paired bootstrap of mean(a − b).
pub fn paired_difference(a: &[f64], b: &[f64], seed: u64) -> Estimate {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    bootstrap(&d, seed)
}

/// The fit objective: mean top-b + mean Spearman.
pub fn objective(s: &[QuestionScore]) -> f64 {
    mean(&s.iter().map(|q| q.top_b).collect::<Vec<_>>())
        + mean(&s.iter().map(|q| q.spearman).collect::<Vec<_>>())
}

/// The grid |α| + |β| + |γ| = 1 with step `step`, signs free (one home:
/// `serenqa_shared::rns::signed_weight_grid`).
pub fn weight_grid(step: f64) -> Vec<Weights> {
    serenqa_shared::rns::signed_weight_grid(step)
}

/// Fits the weights on `questions` (callers pass batches 1–10 only); returns the best
/// weights and their objective. The greedy swap runs for each grid point.
pub fn fit(g: &Graph, model: &Model, questions: &[&LinkedQuestion], step: f64) -> (Weights, f64) {
    let f = fit_with_cv(g, model, questions, step);
    (f.weights, f.objective)
}

/// A fit with its leave-one-batch-out cross-validation on the fitting questions.
#[derive(Clone, Debug)]
pub struct Fit {
    pub weights: Weights,
    /// In-sample objective (mean top-b + mean Spearman) of `weights`.
    pub objective: f64,
    /// Leave-one-batch-out: each batch scored with the weights fitted on the other batches
    /// (pooled over questions). The honest estimate of how a fit generalises to unseen
    /// batches, computed from the fitting batches alone — the criterion for choosing between
    /// variants of a term, never the held-out batches. Parallel to the questions fitted on
    /// (empty when they hold a single batch).
    pub cv: Vec<QuestionScore>,
    /// The weights each leave-one-batch-out fold picked (held-out batch, weights). How much
    /// they move between folds is the selection noise any comparison of LOBO scores carries.
    pub folds: Vec<(u32, Weights)>,
}

/// [`fit`] plus the leave-one-batch-out CV. Every grid point is evaluated once per question;
/// each fold then picks its best point on the other batches (ties by grid order).
pub fn fit_with_cv(g: &Graph, model: &Model, questions: &[&LinkedQuestion], step: f64) -> Fit {
    use rayon::prelude::*;
    let grid = weight_grid(step);
    let per: Vec<Vec<QuestionScore>> = grid
        .par_iter()
        .map(|w| evaluate(g, model, questions, Method::Rns, w))
        .collect();
    let best_on = |keep: &dyn Fn(usize) -> bool| -> usize {
        let mut best = (0usize, f64::NEG_INFINITY);
        for (k, scores) in per.iter().enumerate() {
            let kept: Vec<QuestionScore> = scores
                .iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, s)| *s)
                .collect();
            let v = objective(&kept);
            if v > best.1 + 1e-12 {
                best = (k, v);
            }
        }
        best.0
    };
    let all = best_on(&|_| true);
    let mut batches: Vec<u32> = questions.iter().map(|q| q.batch).collect();
    batches.sort_unstable();
    batches.dedup();
    let mut cv = Vec::new();
    let mut folds = Vec::new();
    if batches.len() > 1 {
        cv = vec![QuestionScore::default(); questions.len()];
        for &b in &batches {
            let k = best_on(&|i| questions[i].batch != b);
            folds.push((b, grid[k]));
            for (i, q) in questions.iter().enumerate() {
                if q.batch == b {
                    cv[i] = per[k][i];
                }
            }
        }
    }
    Fit {
        weights: grid[all],
        objective: objective(&per[all]),
        cv,
        folds,
    }
}

/// Distribution of one term over many values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
    pub std: f64,
}

impl Spread {
    pub fn of(x: &[f64]) -> Spread {
        if x.is_empty() {
            return Spread::default();
        }
        let mut v = x.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let pos = p * (v.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
        };
        let m = mean(&v);
        let var = v.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / v.len() as f64;
        Spread {
            min: v[0],
            q1: q(0.25),
            median: q(0.5),
            q3: q(0.75),
            max: v[v.len() - 1],
            std: var.sqrt(),
        }
    }
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// The largest share of one list's values that are equal (to 1e-9) — 0 when no two are.
pub fn constant_share(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let (mut best, mut run) = (1usize, 1usize);
    for w in v.windows(2) {
        if (w[1] - w[0]).abs() <= 1e-9 {
            run += 1;
            best = best.max(run);
        } else {
            run = 1;
        }
    }
    if best < 2 {
        0.0
    } else {
        best as f64 / v.len() as f64
    }
}

/// Per-term spread over a set of candidate lists.
#[derive(Clone, Debug, Serialize)]
pub struct SpreadReport {
    pub lists: usize,
    pub candidates: usize,
    /// Lists whose view shows S (`rns::surprise_informative`); S's row covers these only.
    pub s_lists: usize,
    pub r: Spread,
    pub n: Spread,
    pub s: Spread,
    /// RNS as the views compute it (γ left out where S is not shown).
    pub rns: Spread,
    /// Per term: IQR / the widest term's IQR.
    pub iqr_ratio: [f64; 3],
    /// Per term: the largest share of one list's candidates with the same value, worst list.
    pub worst_constant_share: [f64; 3],
    /// Per term: lists where more than 10% of the candidates share one value.
    pub lists_over_10pct_constant: [usize; 3],
}

/// The spread of the terms over candidate lists, each with whether its view shows S: S is
/// counted on those lists only — elsewhere no one sees it and RNS leaves it out.
pub fn spread_of(lists: &[(&[Terms], bool)], w: &Weights) -> SpreadReport {
    let all: Vec<(&Terms, bool)> = lists
        .iter()
        .flat_map(|(l, shown)| l.iter().map(move |t| (t, *shown)))
        .collect();
    let col = |f: &dyn Fn(&Terms) -> f64, only_shown: bool| {
        all.iter()
            .filter(|(_, shown)| *shown || !only_shown)
            .map(|(t, _)| f(t))
            .collect::<Vec<f64>>()
    };
    let (r, n, s) = (
        Spread::of(&col(&|t| t.r, false)),
        Spread::of(&col(&|t| t.n, false)),
        Spread::of(&col(&|t| t.s, true)),
    );
    let rns = Spread::of(
        &all.iter()
            .map(|(t, shown)| {
                if *shown {
                    w.combine(t.r, t.n, t.s)
                } else {
                    t.without_s(w).rns
                }
            })
            .collect::<Vec<f64>>(),
    );
    let widest = r.iqr().max(n.iqr()).max(s.iqr()).max(1e-300);
    let mut worst = [0.0f64; 3];
    let mut over = [0usize; 3];
    for &(l, shown) in lists {
        for (k, f) in [|t: &Terms| t.r, |t: &Terms| t.n, |t: &Terms| t.s]
            .iter()
            .enumerate()
        {
            if k == 2 && !shown {
                continue;
            }
            let v: Vec<f64> = l.iter().map(f).collect();
            // 0 unless some value repeats, so a short list of distinct values never counts.
            let share = constant_share(&v);
            worst[k] = worst[k].max(share);
            if share > 0.1 {
                over[k] += 1;
            }
        }
    }
    SpreadReport {
        lists: lists.len(),
        candidates: all.len(),
        s_lists: lists.iter().filter(|(_, shown)| *shown).count(),
        r,
        n,
        s,
        rns,
        iqr_ratio: [r.iqr() / widest, n.iqr() / widest, s.iqr() / widest],
        worst_constant_share: worst,
        lists_over_10pct_constant: over,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(r: f64, n: f64, s: f64, w: &Weights) -> Terms {
        Terms {
            r,
            n,
            s,
            rns: w.combine(r, n, s),
        }
    }

    /// S is counted only on the lists whose view shows it, RNS is what those views compute
    /// (γ left out where S is hidden), and ties are counted per list.
    #[test]
    fn spread_counts_s_only_where_shown() {
        let w = Weights::new(0.2, 0.3, 0.5).unwrap();
        let shown: Vec<Terms> = (0..8)
            .map(|k| terms(0.1 * k as f64, 0.05 * k as f64, 0.5, &w))
            .collect();
        // A hidden list: S sits at 1 for all, which must not reach S's row or RNS.
        let hidden: Vec<Terms> = (0..4)
            .map(|k| terms(0.2 + 0.1 * k as f64, 0.3, 1.0, &w))
            .collect();
        let rep = spread_of(&[(&shown, true), (&hidden, false)], &w);
        assert_eq!((rep.lists, rep.candidates, rep.s_lists), (2, 12, 1));
        assert_eq!((rep.s.min, rep.s.max), (0.5, 0.5));
        // S is constant on its one shown list; N is constant on the hidden list; R never.
        assert_eq!(rep.worst_constant_share, [0.0, 1.0, 1.0]);
        assert_eq!(rep.lists_over_10pct_constant, [0, 1, 1]);
        // RNS of a hidden list's candidate: renormalised over α and β only.
        let top_hidden: f64 = (0.2 * 0.5 + 0.3 * 0.3) / 0.5;
        let top_shown = w.combine(0.7, 0.35, 0.5);
        assert!((rep.rns.max - top_hidden.max(top_shown)).abs() < 1e-12);
        let all_rns: Vec<f64> = shown
            .iter()
            .map(|t| t.rns)
            .chain(hidden.iter().map(|t| t.without_s(&w).rns))
            .collect();
        assert_eq!(rep.rns, Spread::of(&all_rns));
        // The widest IQR is R's here, so R's ratio is 1.
        assert_eq!(rep.iqr_ratio[0], 1.0);
    }

    #[test]
    fn correlations_match_hand_values() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((spearman(&x, &[4.0, 3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert!((kendall(&x, &[1.0, 2.0, 3.0, 4.0]) - 1.0).abs() < 1e-12);
        // One swapped pair of four: τ = (5 − 1)/6, ρ = 1 − 6·2/(4·15) = 0.8.
        assert!((kendall(&x, &[2.0, 1.0, 3.0, 4.0]) - 4.0 / 6.0).abs() < 1e-12);
        assert!((spearman(&x, &[2.0, 1.0, 3.0, 4.0]) - 0.8).abs() < 1e-12);
        assert_eq!(spearman(&x, &[1.0, 1.0, 1.0, 1.0]), 0.0);
    }

    #[test]
    fn top_b_and_question_score() {
        // 5 candidates in ensemble order: b = 1; the best score at position 0 is a hit.
        let s = question_score(&[0.9, 0.1, 0.2, 0.3, 0.4], &[0]);
        assert_eq!(s.top_b, 1.0);
        assert_eq!(top_b(&[0.5, 0.5, 0.1], &[7, 3, 1]), vec![1]);
        assert_eq!(weight_grid(0.5).len(), 18);
        assert!(weight_grid(0.05)
            .iter()
            .all(|w| (w.alpha.abs() + w.beta.abs() + w.gamma.abs() - 1.0).abs() < 1e-12));
        let sp = Spread::of(&[0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            (sp.min, sp.q1, sp.median, sp.q3, sp.max),
            (0.0, 1.0, 2.0, 3.0, 4.0)
        );
        assert_eq!(constant_share(&[1.0, 1.0, 2.0, 3.0]), 0.5);
        assert_eq!(constant_share(&[1.0, 2.0, 3.0]), 0.0);
    }
}
