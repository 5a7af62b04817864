//! Aggregate tables in the paper's layouts: Table 2 (T1 Hit/F1/Exe per pattern group, in %)
//! and Table 3 (T2 Faithful./Compre./SerenCov and T3 Relevance/TypeMatch/SerenHit per
//! partition, with a "w.o. summary" row), as JSON ([`Aggregate`]), CSV (long format) and
//! Markdown. Judge columns carry the judge's name, `proxy` for the offline proxies. Every cell
//! has its n and, per metric, a 95% exact interval over questions ([`Series`]); a cell
//! with n = 0 prints "–"; the offline T1 row is labelled a grammar oracle.

use std::collections::BTreeMap;

use crate::bench::GROUPS;
use crate::failures::FailedItem;
use crate::metrics::mean;
use crate::run::{T1Record, T2Scores, T3Record, T3Scores};

// The result types are shared with the web app's leaderboard (`serenqa_shared::results`).
use serenqa_shared::interval::bounded_mean_ci;
use serenqa_shared::results::is_judged;
pub use serenqa_shared::results::{
    bootstrap_ci, metric_title, seed_for, t1_row_label, Aggregate, Ci, Cis, T1Cell, T2Cell, T3Cell,
    BOOTSTRAP_REPS,
};

/// One metric of one table cell, question by question: what a cell's mean, its bootstrap
/// interval and a run-vs-run comparison are computed from.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// `table2`, `table3_reasoning` or `table3_exploration`.
    pub table: &'static str,
    /// `t1`, or the summary mode `with` / `without`.
    pub row: &'static str,
    /// Pattern group or partition key.
    pub column: String,
    /// `hit`, `f1`, `exe`, `faithfulness`, `comprehensiveness`, `seren_cov`, `relevance`,
    /// `type_match`, `seren_hit`.
    pub metric: &'static str,
    /// qid → the question's value (T1 in %, judges 1–5, the rest 0–1).
    pub values: BTreeMap<u32, f64>,
}

impl Series {
    /// `table/row/column/metric`: the series' name.
    pub fn name(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.table, self.row, self.column, self.metric
        )
    }
    /// The bootstrap seed: from the name without the row, so identical rows (the offline
    /// explorer's with / w.o. summary) get identical intervals.
    pub fn seed(&self) -> u64 {
        seed_for(&format!("{}/{}/{}", self.table, self.column, self.metric))
    }
    pub fn values(&self) -> Vec<f64> {
        self.values.values().copied().collect()
    }
    pub fn mean(&self) -> f64 {
        mean(&self.values())
    }
    /// The range a question's value lies in: T1 in %, judges 1–5, the rest 0–1.
    pub fn range(&self) -> (f64, f64) {
        if self.table == "table2" {
            (0.0, 100.0)
        } else if is_judged(self.metric) {
            (1.0, 5.0)
        } else {
            (0.0, 1.0)
        }
    }
    /// The cell's 95% interval over its questions: exact (Clopper–Pearson) on the bounded
    /// values, so a small cell is never zero-width (`serenqa_shared::interval`).
    pub fn ci(&self) -> Option<Ci> {
        let (lo, hi) = self.range();
        bounded_mean_ci(&self.values(), lo, hi)
    }
}

/// A rational sample: an exploration whose question has a ground-truth path (T2 metrics and
/// the T3 judge average over these only).
pub fn rational(r: &T3Record) -> bool {
    !r.gold_paths.is_empty()
}

/// Every metric series of a run's traces (records with an `error` are left out of T2/T3, as
/// in the means; non-executable T1 queries count with Hit = F1 = 0).
#[allow(clippy::too_many_arguments)]
pub fn series(
    t1: &[T1Record],
    t3: &[T3Record],
    partitions: &[String],
    wo_equals_with: bool,
    want_t1: bool,
    want_t2: bool,
    want_t3: bool,
) -> Vec<Series> {
    let mut out = Vec::new();
    let mk = |table, row, column: &str, metric, values| Series {
        table,
        row,
        column: column.to_string(),
        metric,
        values,
    };
    if want_t1 {
        for gk in GROUPS.iter().map(|(k, _)| *k).chain(["all"]) {
            let rs: Vec<&T1Record> = t1.iter().filter(|r| gk == "all" || r.group == gk).collect();
            let col = |f: &dyn Fn(&T1Record) -> f64| {
                rs.iter()
                    .map(|r| (r.qid, 100.0 * f(r)))
                    .collect::<BTreeMap<u32, f64>>()
            };
            out.push(mk("table2", "t1", gk, "hit", col(&|r| r.hit)));
            out.push(mk("table2", "t1", gk, "f1", col(&|r| r.f1)));
            out.push(mk(
                "table2",
                "t1",
                gk,
                "exe",
                col(&|r| if r.retrieved.executable { 1.0 } else { 0.0 }),
            ));
        }
    }
    let done = |p: &str, mode: &str| {
        t3.iter()
            .filter(move |r| r.error.is_none() && r.partition == p && r.mode == mode)
            .collect::<Vec<&T3Record>>()
    };
    if want_t2 {
        for p in partitions {
            // Rational samples only: a question without a ground-truth path has nothing to
            // cover or to judge against (the paper averages these).
            let rs: Vec<(u32, &T2Scores)> = done(p, "with")
                .into_iter()
                .filter(|r| rational(r))
                .filter_map(|r| r.t2.as_ref().map(|s| (r.qid, s)))
                .collect();
            let col = |f: &dyn Fn(&T2Scores) -> f64| {
                rs.iter()
                    .map(|(q, s)| (*q, f(s)))
                    .collect::<BTreeMap<u32, f64>>()
            };
            out.push(mk(
                "table3_reasoning",
                "with",
                p,
                "faithfulness",
                col(&|s| s.faithfulness.score),
            ));
            out.push(mk(
                "table3_reasoning",
                "with",
                p,
                "comprehensiveness",
                col(&|s| s.comprehensiveness.score),
            ));
            out.push(mk(
                "table3_reasoning",
                "with",
                p,
                "seren_cov",
                col(&|s| s.seren_cov),
            ));
        }
    }
    if want_t3 {
        for mode in ["with", "without"] {
            for p in partitions {
                let source = if wo_equals_with { "with" } else { mode };
                let rs: Vec<(u32, &T3Scores, bool)> = done(p, source)
                    .into_iter()
                    .filter_map(|r| r.t3.as_ref().map(|s| (r.qid, s, rational(r))))
                    .collect();
                let col = |f: &dyn Fn(&T3Scores) -> f64| {
                    rs.iter()
                        .map(|(q, s, _)| (*q, f(s)))
                        .collect::<BTreeMap<u32, f64>>()
                };
                // The judge over rational samples; TypeMatch and SerenHit over every question.
                let judged: BTreeMap<u32, f64> = rs
                    .iter()
                    .filter(|r| r.2)
                    .map(|(q, s, _)| (*q, s.relevance.score))
                    .collect();
                out.push(mk("table3_exploration", mode, p, "relevance", judged));
                out.push(mk(
                    "table3_exploration",
                    mode,
                    p,
                    "type_match",
                    col(&|s| s.type_match),
                ));
                out.push(mk(
                    "table3_exploration",
                    mode,
                    p,
                    "seren_hit",
                    col(&|s| s.seren_hit),
                ));
            }
        }
    }
    out
}

/// The tables of a run from its traces: means, n and a 95% exact interval per metric.
#[allow(clippy::too_many_arguments)]
pub fn aggregate(
    label: &str,
    t1: &[T1Record],
    t3: &[T3Record],
    partitions: &[String],
    wo_equals_with: bool,
    want_t1: bool,
    want_t2: bool,
    want_t3: bool,
) -> Aggregate {
    let mut agg = Aggregate {
        label: label.into(),
        partitions: partitions.to_vec(),
        judge: "proxy".into(),
        ..Default::default()
    };
    // Sorted by key so the result does not depend on completion order.
    let mut t1: Vec<T1Record> = t1.to_vec();
    t1.sort_by(|a, b| a.key.cmp(&b.key));
    let mut t3: Vec<T3Record> = t3.to_vec();
    t3.sort_by(|a, b| a.key.cmp(&b.key));
    if let Some(r) = t1.first() {
        agg.retrieval = r.agent.clone();
    }
    if let Some(j) = t3.iter().find_map(|r| {
        r.t3.as_ref()
            .map(|s| s.relevance.judge.clone())
            .or_else(|| r.t2.as_ref().map(|s| s.faithfulness.judge.clone()))
    }) {
        agg.judge = j;
    }
    let all = series(
        &t1,
        &t3,
        partitions,
        wo_equals_with,
        want_t1,
        want_t2,
        want_t3,
    );
    let find = |table: &str, row: &str, column: &str, metric: &str| {
        all.iter()
            .find(|s| s.table == table && s.row == row && s.column == column && s.metric == metric)
    };
    // (mean, n, intervals) of the named metrics of one cell.
    let cell = |table: &str, row: &str, column: &str, metrics: &[&str]| {
        let mut means = Vec::new();
        let mut cis = Cis::new();
        let mut n = 0;
        for m in metrics {
            let s = find(table, row, column, m);
            means.push(s.map(Series::mean).unwrap_or(0.0));
            n = n.max(s.map(|s| s.values.len()).unwrap_or(0));
            if let Some(ci) = s.and_then(Series::ci) {
                cis.insert(m.to_string(), ci);
            }
        }
        (means, n, cis)
    };
    if want_t1 {
        let mut cells = BTreeMap::new();
        for gk in GROUPS.iter().map(|(k, _)| *k).chain(["all"]) {
            let (m, n, ci) = cell("table2", "t1", gk, &["hit", "f1", "exe"]);
            cells.insert(
                gk.to_string(),
                T1Cell {
                    hit: m[0],
                    f1: m[1],
                    exe: m[2],
                    n,
                    failed: 0,
                    ci,
                },
            );
        }
        agg.table2 = Some(cells);
    }
    if want_t2 {
        let mut cells = BTreeMap::new();
        for p in partitions {
            let (m, n, ci) = cell(
                "table3_reasoning",
                "with",
                p,
                &["faithfulness", "comprehensiveness", "seren_cov"],
            );
            cells.insert(
                p.clone(),
                T2Cell {
                    faithfulness: m[0],
                    comprehensiveness: m[1],
                    seren_cov: m[2],
                    n,
                    failed: 0,
                    ci,
                },
            );
        }
        agg.table3_reasoning = Some(cells);
    }
    if want_t3 {
        let row = |mode: &str| -> BTreeMap<String, T3Cell> {
            partitions
                .iter()
                .map(|p| {
                    let (m, n, ci) = cell(
                        "table3_exploration",
                        mode,
                        p,
                        &["relevance", "type_match", "seren_hit"],
                    );
                    let n_rational =
                        find("table3_exploration", mode, p, "relevance").map(|s| s.values.len());
                    (
                        p.clone(),
                        T3Cell {
                            relevance: m[0],
                            type_match: m[1],
                            seren_hit: m[2],
                            n,
                            failed: 0,
                            ci,
                            n_rational,
                        },
                    )
                })
                .collect()
        };
        agg.table3_exploration = Some(row("with"));
        agg.table3_exploration_wo_summary = Some(row("without"));
    }
    agg
}

/// Counts the failed items of a run in its cells (`failed`; they are in no mean and no `n`):
/// a T1 item in its pattern group and `all`, a T2+T3 item in its partition's reasoning cell
/// (with summaries) and exploration cell of its mode (both rows when the w.o. summary row is
/// the with-summary one, `wo_equals_with`).
pub fn count_failed(agg: &mut Aggregate, failed: &[FailedItem], wo_equals_with: bool) {
    for f in failed {
        if f.key.starts_with("t1:") {
            if let Some(t) = agg.table2.as_mut() {
                for g in [f.group.as_str(), "all"] {
                    if let Some(c) = t.get_mut(g) {
                        c.failed += 1;
                    }
                }
            }
            continue;
        }
        if f.mode == "with" {
            if let Some(c) = agg
                .table3_reasoning
                .as_mut()
                .and_then(|t| t.get_mut(&f.partition))
            {
                c.failed += 1;
            }
        }
        let rows: &[&str] = match (f.mode.as_str(), wo_equals_with) {
            ("with", true) => &["with", "without"],
            ("with", false) => &["with"],
            _ => &["without"],
        };
        for row in rows {
            let table = if *row == "with" {
                agg.table3_exploration.as_mut()
            } else {
                agg.table3_exploration_wo_summary.as_mut()
            };
            if let Some(c) = table.and_then(|t| t.get_mut(&f.partition)) {
                c.failed += 1;
            }
        }
    }
}

/// A cell's `n`, with its failed items when it has any: `12 (3 failed)`.
fn n_text(n: impl std::fmt::Display, failed: usize) -> String {
    if failed > 0 {
        format!("{n} ({failed} failed)")
    } else {
        n.to_string()
    }
}

/// `0.319 [0.245, 0.394]`: a value with its interval, when it has one.
fn with_ci(v: f64, ci: Option<&Ci>, digits: usize) -> String {
    match ci {
        Some(c) => format!("{v:.digits$} [{:.digits$}, {:.digits$}]", c.lo, c.hi),
        None => format!("{v:.digits$}"),
    }
}

fn judged(name: &str, judge: &str) -> String {
    if judge == "proxy" {
        format!("{name} (proxy)")
    } else {
        name.to_string()
    }
}

/// The Markdown tables (what `serenqa eval` prints): each value with its 95% bootstrap
/// interval in brackets, an `n` column per group / partition, "–" for n = 0.
pub fn markdown(a: &Aggregate, notes: &[String]) -> String {
    let mut s = String::new();
    if let Some(t2) = &a.table2 {
        s.push_str("### Table 2 — Knowledge Retrieval (T1)\n\n| Model |");
        for (_, title) in GROUPS {
            let [hit, f1, exe] = ["hit", "f1", "exe"].map(metric_title);
            s.push_str(&format!(" {title} {hit}(%) | {f1}(%) | {exe}(%) | n |"));
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(GROUPS.len() * 4));
        s.push_str(&format!("\n| {} |", t1_row_label(&a.label, &a.retrieval)));
        for (k, _) in GROUPS {
            let failed = t2.get(*k).map_or(0, |c| c.failed);
            match t2.get(*k).filter(|c| c.n > 0) {
                Some(c) => s.push_str(&format!(
                    " {} | {} | {} | {} |",
                    with_ci(c.hit, c.ci.get("hit"), 2),
                    with_ci(c.f1, c.ci.get("f1"), 2),
                    with_ci(c.exe, c.ci.get("exe"), 2),
                    n_text(c.n, failed)
                )),
                None => s.push_str(&format!(" – | – | – | {} |", n_text(0, failed))),
            }
        }
        if let Some(all) = t2.get("all").filter(|c| c.n > 0) {
            s.push_str(&format!(
                "\n\nAll {} questions: Hit {}, F1 {}, Exe. {}.",
                n_text(all.n, all.failed),
                with_ci(all.hit, all.ci.get("hit"), 2),
                with_ci(all.f1, all.ci.get("f1"), 2),
                with_ci(all.exe, all.ci.get("exe"), 2)
            ));
        }
        s.push_str("\n\n");
    }
    let titles = |s: &mut String, cols: &[&str]| {
        s.push_str("| Models |");
        for p in &a.partitions {
            for (i, c) in cols.iter().enumerate() {
                if i == 0 {
                    s.push_str(&format!(
                        " {} {c} |",
                        serenqa_shared::results::partition_title_for(p, &a.ensemble)
                    ));
                } else {
                    s.push_str(&format!(" {c} |"));
                }
            }
            s.push_str(" n |");
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(a.partitions.len() * (cols.len() + 1)));
        s.push('\n');
    };
    if let Some(t) = &a.table3_reasoning {
        s.push_str("### Table 3 (upper) — Subgraph Reasoning (T2)\n\n");
        titles(
            &mut s,
            &[
                &judged(metric_title("faithfulness"), &a.judge),
                &judged(metric_title("comprehensiveness"), &a.judge),
                metric_title("seren_cov"),
            ],
        );
        s.push_str(&format!("| {} |", a.label));
        for p in &a.partitions {
            let failed = t.get(p).map_or(0, |c| c.failed);
            match t.get(p).filter(|c| c.n > 0) {
                Some(c) => s.push_str(&format!(
                    " {} | {} | {} | {} |",
                    with_ci(c.faithfulness, c.ci.get("faithfulness"), 3),
                    with_ci(c.comprehensiveness, c.ci.get("comprehensiveness"), 3),
                    with_ci(c.seren_cov, c.ci.get("seren_cov"), 3),
                    n_text(c.n, failed)
                )),
                None => s.push_str(&format!(" – | – | – | {} |", n_text(0, failed))),
            }
        }
        s.push_str("\n\n");
    }
    if let (Some(w), Some(wo)) = (&a.table3_exploration, &a.table3_exploration_wo_summary) {
        s.push_str("### Table 3 (lower) — Serendipity Exploration (T3)\n\n");
        titles(
            &mut s,
            &[
                &judged(metric_title("relevance"), &a.judge),
                metric_title("type_match"),
                metric_title("seren_hit"),
            ],
        );
        for (name, t) in [(a.label.clone(), w), ("↳ w.o. summary".to_string(), wo)] {
            s.push_str(&format!("| {name} |"));
            for p in &a.partitions {
                let failed = t.get(p).map_or(0, |c| c.failed);
                match t.get(p).filter(|c| c.n > 0) {
                    Some(c) => {
                        let rel = if c.n_rational == Some(0) {
                            "–".to_string()
                        } else {
                            with_ci(c.relevance, c.ci.get("relevance"), 3)
                        };
                        let n = match c.n_rational {
                            Some(r) => format!("{} ({r} rational)", c.n),
                            None => c.n.to_string(),
                        };
                        let n = n_text(n, failed);
                        s.push_str(&format!(
                            " {rel} | {} | {} | {n} |",
                            with_ci(c.type_match, c.ci.get("type_match"), 3),
                            with_ci(c.seren_hit, c.ci.get("seren_hit"), 3)
                        ));
                    }
                    None => s.push_str(&format!(" – | – | – | {} |", n_text(0, failed))),
                }
            }
            s.push('\n');
        }
        s.push('\n');
    }
    if a.table2.is_some() || a.table3_reasoning.is_some() || a.table3_exploration.is_some() {
        s.push_str("Brackets: 95% exact (Clopper–Pearson) intervals over questions, on each metric's bounded range (0–100%, 0–1, judges 1–5), never zero-width; n: questions in the cell (failed items, whose model calls failed, are left out and counted apart); –: no question. T2 (n = rational samples) and Relevance average over rational samples only: questions with a ground-truth path.\n\n");
    }
    for n in notes {
        s.push_str(&format!("Note: {n}\n"));
    }
    s
}
