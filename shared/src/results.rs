//! Evaluation results as the leaderboard reads them: the `aggregate.json` of a run in the
//! paper's Table 2 / Table 3 layouts. The pipeline writes these; the browser reads them; both
//! use these types. Percentages are 0–100; judge scores are 1–5.
//!
//! Statistics, the same in the CLI and the browser: every cell carries its `n` and, per metric,
//! a 95% interval over questions — exact (Clopper–Pearson) on the metric's bounded range
//! ([`crate::interval::bounded_mean_ci`]), so a small cell is never zero-width; a cell with
//! n = 0 has no value (shown "–", never 0); two runs
//! are compared question by question ([`Comparison`], Δ with a paired bootstrap interval
//! from [`paired_delta`]); [`marks`] gives best / second with ties marked as ties.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::rng::SplitMix64;

/// Table 2 pattern groups: (key, title).
pub const GROUPS: &[(&str, &str)] = &[
    ("one_hop", "One-Hop"),
    ("two_hop", "Two-Hop"),
    ("multi_hop", "Multiple(3+)-Hop"),
    ("intersection", "Intersection"),
];

/// Partition strategies: (key, title).
pub const PARTITIONS: &[(&str, &str)] = &[
    ("llm", "LLM Ensemble"),
    ("expert", "Expert Crowdsourced"),
    ("sscore", "RNS Guided"),
];

pub fn partition_title(key: &str) -> &'static str {
    PARTITIONS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, t)| *t)
        .unwrap_or("?")
}

pub fn group_title(key: &str) -> &'static str {
    GROUPS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, t)| *t)
        .unwrap_or(if key == "all" { "All" } else { "?" })
}

/// A 95% confidence interval (same unit as its metric).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ci {
    pub lo: f64,
    pub hi: f64,
}

/// Per metric of a cell: the metric's key (`hit`, `f1`, …) → its 95% interval.
/// Empty in files written before intervals existed.
pub type Cis = BTreeMap<String, Ci>;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// T1 knowledge retrieval, one pattern group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct T1Cell {
    pub hit: f64,
    pub f1: f64,
    pub exe: f64,
    pub n: usize,
    /// Work items of the cell that failed (a model call failed): left out of the means and `n`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: usize,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ci: Cis,
}

/// T2 subgraph reasoning, one partition: averaged over rational samples (questions with a
/// ground-truth path), whose count `n` is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct T2Cell {
    pub faithfulness: f64,
    pub comprehensiveness: f64,
    pub seren_cov: f64,
    pub n: usize,
    /// Work items of the cell that failed (a model call failed): left out of the means and `n`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: usize,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ci: Cis,
}

/// T3 serendipity exploration, one partition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct T3Cell {
    pub relevance: f64,
    pub type_match: f64,
    pub seren_hit: f64,
    pub n: usize,
    /// Work items of the cell that failed (a model call failed): left out of the means and `n`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: usize,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ci: Cis,
    /// Rational samples (questions with a ground-truth path) behind `relevance`, which the
    /// judge averages over; None in files written before it was recorded (then `n`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_rational: Option<usize>,
}

/// What the offline T1 agent is on generated questions: it parses the generator's own
/// sentence shapes, so its Table 2 row is not a retrieval result like a model's.
pub const GRAMMAR_ORACLE: &str = "grammar oracle (shares the generator's templates)";

/// The Table 2 row label of a run: the grammar-oracle note when the offline agent retrieved.
/// `retrieval` is the T1 agent (empty in old files: then the run label decides).
pub fn t1_row_label(label: &str, retrieval: &str) -> String {
    let offline = if retrieval.is_empty() {
        label.starts_with("offline")
    } else {
        retrieval == "offline"
    };
    if offline {
        format!("{label} — {GRAMMAR_ORACLE}")
    } else {
        label.to_string()
    }
}

/// `aggregate.json` of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Aggregate {
    /// Models of the run's roles joined by `+`, or `offline`.
    pub label: String,
    /// Judge of the 1–5 scores: a model name or `proxy` (code-based, not an LLM).
    pub judge: String,
    /// Table 2: group key (`one_hop`, `two_hop`, `multi_hop`, `intersection`, `all`) → cell.
    pub table2: Option<BTreeMap<String, T1Cell>>,
    /// Table 3 upper: partition key → cell.
    pub table3_reasoning: Option<BTreeMap<String, T2Cell>>,
    /// Table 3 lower: partition key → cell, with and without summaries.
    pub table3_exploration: Option<BTreeMap<String, T3Cell>>,
    pub table3_exploration_wo_summary: Option<BTreeMap<String, T3Cell>>,
    pub partitions: Vec<String>,
    /// The T1 agent (`offline` = the grammar oracle, or a model name); empty in old files.
    #[serde(default)]
    pub retrieval: String,
    /// Who scored the benchmark's `llm` partition: `llm`, `offline proxy`, `mixed`, or empty
    /// / `unknown` when not recorded.
    #[serde(default)]
    pub ensemble: String,
}

/// A partition's title for a run whose `llm` partition was scored by `ensemble`: the LLM
/// Ensemble of an offline build says it is an offline proxy.
pub fn partition_title_for(key: &str, ensemble: &str) -> String {
    match (key, ensemble) {
        ("llm", "offline proxy") => "LLM Ensemble (offline proxy)".into(),
        ("llm", "mixed") => "LLM Ensemble (LLMs + offline proxies)".into(),
        _ => partition_title(key).into(),
    }
}

/// A run's settings as the leaderboard labels it (from its `manifest.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct RunSettings {
    pub id: String,
    /// Models of the roles joined by `+`, or `offline`.
    pub label: String,
    /// Role → model (or `offline`).
    pub roles: BTreeMap<String, String>,
    /// Beam width n, depth h, relations per node m, nodes per node k.
    pub beam: usize,
    pub depth: usize,
    pub relations: usize,
    pub nodes: usize,
    /// `--limit` (None: every question in scope).
    pub limit: Option<usize>,
    pub split: Option<String>,
    pub questions: usize,
    /// Who scored the benchmark's `llm` partition (see [`Aggregate::ensemble`]).
    pub ensemble: String,
    /// Size in billions of parameters of the model choosing the explored nodes (the models
    /// file's `params_b`), for the model-scale figure; None offline or when not declared.
    pub explorer_params_b: Option<f64>,
    pub created_unix: u64,
    pub status: String,
}

impl RunSettings {
    /// One line: `offline · beam 30 · nodes 10 · depth 3 · limit 45 · 2026-12-01 23:10 UTC`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} · beam {} · nodes {} · depth {}",
            if self.label.is_empty() {
                "?"
            } else {
                &self.label
            },
            self.beam,
            self.nodes,
            self.depth
        );
        match self.limit {
            Some(l) => s.push_str(&format!(" · limit {l}")),
            None => s.push_str(&format!(" · all {} questions", self.questions)),
        }
        if let Some(sp) = &self.split {
            s.push_str(&format!(" · {sp} split"));
        }
        if self.ensemble == "offline proxy" {
            s.push_str(" · ensemble: offline proxy");
        }
        if self.created_unix > 0 {
            s.push_str(&format!(" · {}", date_utc(self.created_unix)));
        }
        s
    }
}

/// `YYYY-MM-DD HH:MM UTC` of a Unix time (proleptic Gregorian calendar).
pub fn date_utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Days since 1970-01-01 → civil date (H. Hinnant's algorithm, written out).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// Resamples per bootstrap interval.
pub const BOOTSTRAP_REPS: usize = 2000;

/// A fixed seed from a name (FNV-1a), so every cell's resamples are reproducible.
pub fn seed_for(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The 2.5th and 97.5th percentiles (linear interpolation) of `xs`.
fn percentile_ci(mut xs: Vec<f64>) -> Ci {
    xs.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let h = p * (xs.len() - 1) as f64;
        let (i, f) = (h.floor() as usize, h - h.floor());
        if i + 1 < xs.len() {
            xs[i] + f * (xs[i + 1] - xs[i])
        } else {
            xs[i]
        }
    };
    Ci {
        lo: q(0.025),
        hi: q(0.975),
    }
}

/// 95% percentile-bootstrap interval of the mean of `xs` (questions resampled with
/// replacement, `reps` times, from `seed`); None for no values.
pub fn bootstrap_ci(xs: &[f64], reps: usize, seed: u64) -> Option<Ci> {
    let n = xs.len();
    if n == 0 || reps == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let means: Vec<f64> = (0..reps)
        .map(|_| (0..n).map(|_| xs[rng.below_mul_shift(n)]).sum::<f64>() / n as f64)
        .collect();
    Some(percentile_ci(means))
}

/// Paired comparison of two runs on the same questions (`a[i]`, `b[i]` are one question):
/// Δ = mean(b) − mean(a) and its 95% bootstrap interval, resampling questions (pairs kept
/// together). None when there is no pair or the lengths differ.
pub fn paired_delta(a: &[f64], b: &[f64], reps: usize, seed: u64) -> Option<(f64, Ci)> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    bootstrap_ci(&d, reps, seed).map(|ci| (mean, ci))
}

/// One metric of one cell compared between two runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct CompareRow {
    /// `table2`, `table3_reasoning` or `table3_exploration`.
    pub table: String,
    /// `t1`, or the summary mode `with` / `without`.
    pub row: String,
    /// Pattern group or partition key.
    pub column: String,
    /// Metric key (`hit`, `f1`, `exe`, `faithfulness`, …).
    pub metric: String,
    /// Questions with a value in A, in B, and in both (the pairs Δ is computed on).
    pub n_a: usize,
    pub n_b: usize,
    pub n: usize,
    /// Means over the paired questions.
    pub mean_a: f64,
    pub mean_b: f64,
    /// mean_b − mean_a and its paired-bootstrap 95% interval (None without pairs).
    pub delta: Option<f64>,
    pub ci: Option<Ci>,
    /// Questions where A scores higher than B (A wins, B loses), and the reverse: how many,
    /// and their ids (the first ones, by qid, when there are very many).
    pub a_wins_n: usize,
    pub b_wins_n: usize,
    pub a_wins: Vec<u32>,
    pub b_wins: Vec<u32>,
    /// Paired questions with equal scores.
    pub ties: usize,
    /// Why the numbers are not comparable, when they are not (e.g. a proxy against an LLM judge).
    pub note: Option<String>,
    /// The sign test's p, Holm-adjusted over the comparison's tested cells ([`verdict`]).
    #[serde(default)]
    pub p_holm: Option<f64>,
}

/// Two runs compared question by question (`GET /api/runs/compare?a=…&b=…`, `serenqa compare`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct Comparison {
    pub a: RunSettings,
    pub b: RunSettings,
    /// Judges of A and B (`proxy` or a model).
    pub judge_a: String,
    pub judge_b: String,
    pub reps: usize,
    pub rows: Vec<CompareRow>,
    /// One line a reviewer can quote: which cells differ once the number of comparisons is
    /// accounted for ([`verdict`]). Empty in replies written before it existed.
    #[serde(default)]
    pub verdict: String,
}

/// Two-sided exact sign test: the probability, under "neither run is better", of a split of
/// the questions one run wins at least as uneven as `wins_a` : `wins_b` (ties left out).
pub fn sign_test_p(wins_a: usize, wins_b: usize) -> f64 {
    let n = wins_a + wins_b;
    if n == 0 {
        return 1.0;
    }
    let k = wins_a.min(wins_b);
    // Σ_{i ≤ k} C(n, i) / 2^n, in logs (n may be in the thousands).
    let mut ln_c = 0.0_f64;
    let mut tail = 0.0_f64;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_c - n as f64 * std::f64::consts::LN_2).exp();
    }
    (2.0 * tail).min(1.0)
}

/// Holm's step-down adjustment of `ps` (same order out as in): the family-wise error rate
/// stays at the level for any dependence between the tests.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut out = vec![1.0; m];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * ps[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

/// The verdict of a comparison: per cell with paired questions and the same measurement in
/// both runs (no `note`), an exact sign test on the questions one run wins, Holm-corrected
/// over those cells; `p_holm` is set on each tested row.
pub fn verdict(rows: &mut [CompareRow]) -> String {
    let tested: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].n > 0 && rows[i].note.is_none())
        .collect();
    if tested.is_empty() {
        return "No cell has questions answered by both runs: nothing to compare.".into();
    }
    let ps: Vec<f64> = tested
        .iter()
        .map(|&i| sign_test_p(rows[i].a_wins_n, rows[i].b_wins_n))
        .collect();
    let adj = holm(&ps);
    let (mut a_better, mut b_better) = (Vec::new(), Vec::new());
    for (&i, &p) in tested.iter().zip(&adj) {
        rows[i].p_holm = Some(p);
        if p < 0.05 {
            let r = &rows[i];
            let col = if r.table == "table2" {
                group_title(&r.column)
            } else {
                partition_title(&r.column)
            };
            let mode = match r.row.as_str() {
                "with" => " (with summary)",
                "without" => " (without summary)",
                _ => "",
            };
            let name = format!("{col} {}{mode}", metric_title(&r.metric));
            if r.b_wins_n > r.a_wins_n {
                b_better.push(name);
            } else {
                a_better.push(name);
            }
        }
    }
    let most = tested.iter().map(|&i| rows[i].n).max().unwrap_or(0);
    let how = format!(
        "exact sign test on the questions both runs answered, at most {most} per cell; Holm-corrected over {} cells",
        tested.len()
    );
    if a_better.is_empty() && b_better.is_empty() {
        return format!("No cell differs at a family-wise 5% level. Test: {how}.");
    }
    let mut parts = Vec::new();
    if !b_better.is_empty() {
        parts.push(format!("B higher on {}", b_better.join("; ")));
    }
    if !a_better.is_empty() {
        parts.push(format!("A higher on {}", a_better.join("; ")));
    }
    format!(
        "{} of {} cells differ at a family-wise 5% level: {}. Test: {how}.",
        a_better.len() + b_better.len(),
        tested.len(),
        parts.join(". ")
    )
}

/// What the project knows about one metric, in one place: the leaderboard, the reports, the
/// trace view and the comparison all read it from [`METRICS`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetricInfo {
    /// The task it scores: 1 (retrieval, Table 2), 2 (reasoning) or 3 (exploration, Table 3).
    pub task: u8,
    /// Field name in the cells (`T1Cell::f1`, …), the CSV `metric` column and `ci` keys.
    pub key: &'static str,
    /// As the tables head it (the paper's Table 2/3 titles).
    pub title: &'static str,
    /// The largest value (1 for shares, 5 for judge scores).
    pub max: f64,
    /// A 1–5 judge score (a proxy offline, an LLM otherwise).
    pub judged: bool,
    /// What it measures, in one sentence (shown next to the value in a question's trace).
    pub meaning: &'static str,
}

const fn share(
    task: u8,
    key: &'static str,
    title: &'static str,
    meaning: &'static str,
) -> MetricInfo {
    MetricInfo {
        task,
        key,
        title,
        max: 1.0,
        judged: false,
        meaning,
    }
}

const fn judge(
    task: u8,
    key: &'static str,
    title: &'static str,
    meaning: &'static str,
) -> MetricInfo {
    MetricInfo {
        task,
        key,
        title,
        max: 5.0,
        judged: true,
        meaning,
    }
}

/// Every metric, in the order of the paper's tables: T1 (Table 2), T2 and T3 (Table 3).
pub const METRICS: &[MetricInfo] = &[
    share(
        1,
        "hit",
        "Hit",
        "Share of the gold answers the query returned.",
    ),
    share(
        1,
        "f1",
        "F1",
        "Harmonic mean of precision and recall of the returned answers against the gold answers.",
    ),
    share(
        1,
        "exe",
        "Exe.",
        "1 if the query ran without error (a query that fails scores Hit = F1 = 0).",
    ),
    judge(
        2,
        "faithfulness",
        "Faithful.",
        "Judge score 1–5: the summaries say only what the explored subgraph supports.",
    ),
    judge(
        2,
        "comprehensiveness",
        "Compre.",
        "Judge score 1–5: the summaries cover what the explored subgraph holds.",
    ),
    share(
        2,
        "seren_cov",
        "SerenCov",
        "Share of the gold serendipity paths whose two ends the summaries name.",
    ),
    judge(
        3,
        "relevance",
        "Relevance",
        "Judge score 1–5: the entities reached bear on the question.",
    ),
    share(
        3,
        "type_match",
        "TypeMatch",
        "1 if any entity reached has the type of a gold serendipity answer.",
    ),
    share(
        3,
        "seren_hit",
        "SerenHit",
        "1 if any entity reached is in the partition's serendipity set.",
    ),
];

/// One metric of a run's aggregate on a 0–1 scale (T1 percentages / 100, judge scores / 5):
/// T1 over all questions, T2 and T3 in `partition`; None when the run has no such cell.
pub fn metric_value(a: &Aggregate, partition: &str, key: &str) -> Option<f64> {
    let info = metric_info(key)?;
    let v = match info.task {
        1 => {
            let c = a.table2.as_ref()?.get("all").filter(|c| c.n > 0)?;
            let percent = match key {
                "hit" => c.hit,
                "f1" => c.f1,
                "exe" => c.exe,
                _ => return None,
            };
            percent / 100.0
        }
        2 => {
            let c = a
                .table3_reasoning
                .as_ref()?
                .get(partition)
                .filter(|c| c.n > 0)?;
            match key {
                "faithfulness" => c.faithfulness,
                "comprehensiveness" => c.comprehensiveness,
                "seren_cov" => c.seren_cov,
                _ => return None,
            }
        }
        _ => {
            let c = a
                .table3_exploration
                .as_ref()?
                .get(partition)
                .filter(|c| c.n > 0)?;
            match key {
                "relevance" => c.relevance,
                "type_match" => c.type_match,
                "seren_hit" => c.seren_hit,
                _ => return None,
            }
        }
    };
    Some(if info.judged { v / info.max } else { v })
}

/// A metric by its key.
pub fn metric_info(key: &str) -> Option<&'static MetricInfo> {
    METRICS.iter().find(|m| m.key == key)
}

/// A metric key's title (`seren_hit` → `SerenHit`; `?` for an unknown key).
pub fn metric_title(key: &str) -> &'static str {
    metric_info(key).map_or("?", |m| m.title)
}

/// Whether a metric is a 1–5 judge score (a proxy offline, an LLM otherwise).
pub fn is_judged(metric: &str) -> bool {
    metric_info(metric).is_some_and(|m| m.judged)
}

/// Pearson correlation of two equally long series (None when undefined).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 2 || y.len() != n {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// The smallest n at which a leaderboard cell is ranked (marked best or second): below it the
/// value is shown with its interval but its place among the models means little.
pub const RANK_MIN_N: usize = 10;

/// A value's place in its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Best,
    Second,
    Other,
}

/// A value's mark: its place and whether another value shares it (a tie).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub place: Place,
    pub tie: bool,
}

/// Best and second-best per position (higher is better), comparing values as shown with
/// `digits` decimals: equal values share a place and are marked as a tie (two 100.00 are
/// both best, and the next lower value is second). NaN (no value) is never marked.
pub fn marks(values: &[f64], digits: usize) -> Vec<Mark> {
    let scale = 10f64.powi(digits.min(12) as i32);
    let shown: Vec<Option<i64>> = values
        .iter()
        .map(|v| v.is_finite().then(|| (v * scale).round() as i64))
        .collect();
    let mut distinct: Vec<i64> = shown.iter().flatten().copied().collect();
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    distinct.dedup();
    shown
        .iter()
        .map(|v| match v {
            None => Mark {
                place: Place::Other,
                tie: false,
            },
            Some(x) => {
                let place = if distinct.first() == Some(x) {
                    Place::Best
                } else if distinct.get(1) == Some(x) {
                    Place::Second
                } else {
                    Place::Other
                };
                Mark {
                    place,
                    tie: shown.iter().filter(|y| **y == Some(*x)).count() > 1,
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric a table cell carries is described once in `METRICS`, and nothing else is.
    #[test]
    fn every_cell_metric_is_in_the_table() {
        let mut keys = Vec::new();
        for cell in [
            serde_json::to_value(T1Cell::default()).unwrap(),
            serde_json::to_value(T2Cell::default()).unwrap(),
            serde_json::to_value(T3Cell::default()).unwrap(),
        ] {
            let obj = cell.as_object().unwrap().clone();
            keys.extend(obj.into_iter().filter(|(_, v)| v.is_f64()).map(|(k, _)| k));
        }
        let mut table: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        keys.sort();
        table.sort_unstable();
        assert_eq!(keys, table, "cells and METRICS list the same metrics");
        for m in METRICS {
            assert!(
                !m.meaning.is_empty() && m.max > 0.0,
                "{} is described",
                m.key
            );
            assert_eq!(
                is_judged(m.key),
                m.max == 5.0,
                "{}: judge scores are 1–5",
                m.key
            );
        }
        let mut agg = Aggregate::default();
        assert!(METRICS
            .iter()
            .all(|m| metric_value(&agg, "x", m.key).is_none()));
        // Each cell with every metric of its task at the middle of its scale, read from
        // METRICS (T1 cells hold percentages), so a new metric needs no change here.
        let cell = |task: u8| {
            let mut obj = serde_json::Map::new();
            obj.insert("n".into(), 1.into());
            for m in METRICS.iter().filter(|m| m.task == task) {
                let mid = if task == 1 { 50.0 } else { m.max / 2.0 };
                obj.insert(m.key.into(), mid.into());
            }
            serde_json::Value::Object(obj)
        };
        agg.table2 = Some(BTreeMap::from([(
            "all".to_string(),
            serde_json::from_value(cell(1)).unwrap(),
        )]));
        agg.table3_reasoning = Some(BTreeMap::from([(
            "x".to_string(),
            serde_json::from_value(cell(2)).unwrap(),
        )]));
        agg.table3_exploration = Some(BTreeMap::from([(
            "x".to_string(),
            serde_json::from_value(cell(3)).unwrap(),
        )]));
        for m in METRICS {
            assert_eq!(
                metric_value(&agg, "x", m.key),
                Some(0.5),
                "{} on a 0–1 scale",
                m.key
            );
        }
        assert_eq!(metric_title("seren_hit"), "SerenHit");
        assert_eq!(metric_title("nope"), "?");
    }

    #[test]
    fn pearson_by_hand() {
        assert!((pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        // x = 1,2,3,4; y = 1,3,2,4: cov = 4/4, var = 5/4 each -> 0.8
        assert!(
            (pearson(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap() - 0.8).abs() < 1e-12
        );
        assert_eq!(pearson(&[1.0, 1.0], &[2.0, 3.0]), None);
        assert_eq!(pearson(&[1.0], &[2.0]), None);
    }

    fn places(v: &[f64], digits: usize) -> Vec<(Place, bool)> {
        marks(v, digits)
            .into_iter()
            .map(|m| (m.place, m.tie))
            .collect()
    }

    #[test]
    fn best_and_second_with_ties() {
        use Place::*;
        assert_eq!(
            places(&[0.2, 0.9, f64::NAN, 0.5], 3),
            vec![
                (Other, false),
                (Best, false),
                (Other, false),
                (Second, false)
            ]
        );
        // Two equal best values: both best, marked as a tie; the next value is second.
        assert_eq!(
            places(&[100.0, 100.0, 90.0], 2),
            vec![(Best, true), (Best, true), (Second, false)]
        );
        // Equal as shown (3 decimals) is equal.
        assert_eq!(
            places(&[0.5001, 0.4999, 0.2], 3),
            vec![(Best, true), (Best, true), (Second, false)]
        );
        assert_eq!(
            places(&[0.9, 0.5, 0.5], 3),
            vec![(Best, false), (Second, true), (Second, true)]
        );
        assert_eq!(places(&[0.3], 3), vec![(Best, false)]);
        assert!(marks(&[], 2).is_empty());
        assert_eq!(
            places(&[f64::NAN, f64::NAN], 2),
            vec![(Other, false), (Other, false)]
        );
    }

    #[test]
    fn bootstrap_interval_is_reproducible_and_covers_the_mean() {
        let xs: Vec<f64> = (0..200)
            .map(|i| if i % 4 == 0 { 1.0 } else { 0.0 })
            .collect();
        let a = bootstrap_ci(&xs, BOOTSTRAP_REPS, seed_for("x")).unwrap();
        let b = bootstrap_ci(&xs, BOOTSTRAP_REPS, seed_for("x")).unwrap();
        assert_eq!(a, b, "same seed, same interval");
        assert!(a.lo < 0.25 && 0.25 < a.hi, "{a:?}");
        // Binomial SE = sqrt(.25·.75/200) ≈ 0.0306: the 95% half-width is ≈ 0.06.
        assert!((a.hi - a.lo - 2.0 * 1.96 * 0.0306).abs() < 0.02, "{a:?}");
        let c = bootstrap_ci(&xs, BOOTSTRAP_REPS, seed_for("y")).unwrap();
        assert_ne!(a, c, "another seed resamples differently");
        assert_eq!(bootstrap_ci(&[0.7], 100, 1), Some(Ci { lo: 0.7, hi: 0.7 }));
        assert_eq!(bootstrap_ci(&[], 100, 1), None);
    }

    #[test]
    fn sign_test_and_holm_by_hand() {
        // 10 wins to 0: 2 / 2^10.
        assert!((sign_test_p(10, 0) - 2.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test_p(0, 10) - 2.0 / 1024.0).abs() < 1e-12);
        // 5 to 5 and no wins at all: nothing.
        assert_eq!(sign_test_p(5, 5), 1.0);
        assert_eq!(sign_test_p(0, 0), 1.0);
        // 8 to 2: 2 · (1 + 10 + 45) / 1024 = 0.109375.
        assert!((sign_test_p(8, 2) - 0.109_375).abs() < 1e-12);
        // Large n stays finite: 600 to 400.
        let p = sign_test_p(600, 400);
        assert!(p > 0.0 && p < 1e-9, "{p}");
        // Holm: sorted 0.01, 0.03, 0.04 → 0.03, 0.06, 0.06 (monotone), in the input order.
        let adj = holm(&[0.01, 0.04, 0.03]);
        assert!(
            (adj[0] - 0.03).abs() < 1e-12
                && (adj[1] - 0.06).abs() < 1e-12
                && (adj[2] - 0.06).abs() < 1e-12,
            "{adj:?}"
        );
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn paired_delta_uses_the_pairs() {
        // B is A + 0.1 on every question: Δ = 0.1 with a zero-width interval, although the
        // questions differ wildly (an unpaired interval would be wide).
        let a: Vec<f64> = (0..50).map(|i| (i % 7) as f64 / 7.0).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 0.1).collect();
        let (d, ci) = paired_delta(&a, &b, 500, 3).unwrap();
        assert!(
            (d - 0.1).abs() < 1e-12 && (ci.lo - 0.1).abs() < 1e-9 && (ci.hi - 0.1).abs() < 1e-9,
            "{d} {ci:?}"
        );
        // One win of B on 40 questions: the interval includes 0.
        let a = vec![0.0; 40];
        let mut b = vec![0.0; 40];
        b[3] = 1.0;
        let (d, ci) = paired_delta(&a, &b, BOOTSTRAP_REPS, 3).unwrap();
        assert!(
            (d - 0.025).abs() < 1e-12 && ci.lo <= 0.0 && ci.hi > 0.0,
            "{d} {ci:?}"
        );
        assert_eq!(paired_delta(&[1.0], &[], 10, 1), None);
    }

    #[test]
    fn dates_and_labels() {
        assert_eq!(date_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(date_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(date_utc(1_796_166_000), "2026-12-01 23:00 UTC");
        let s = RunSettings {
            label: "offline".into(),
            beam: 10,
            nodes: 5,
            depth: 3,
            limit: Some(45),
            created_unix: 1_796_166_000,
            ..Default::default()
        };
        assert_eq!(
            s.summary(),
            "offline · beam 10 · nodes 5 · depth 3 · limit 45 · 2026-12-01 23:00 UTC"
        );
        assert_eq!(
            t1_row_label("offline", "offline"),
            format!("offline — {GRAMMAR_ORACLE}")
        );
        assert_eq!(t1_row_label("gpt-4o", "gpt-4o"), "gpt-4o");
        assert_eq!(
            t1_row_label("offline", ""),
            format!("offline — {GRAMMAR_ORACLE}")
        );
    }
}
