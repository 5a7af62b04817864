//! The tidy (long-format) CSV of evaluation results: one line per run × table × row × column
//! (Table 2 query pattern or Table 3 partition) × metric, with its value, 95% interval, n and
//! failed items. The one home of that format: the pipeline writes it as a run's
//! `aggregate.csv`, and the leaderboard offers every run's lines in one download.
//!
//! Columns: `run,group,table,model,row,column,metric,value,ci_lo,ci_hi,n,failed`.
//! - `group`: `model`, or `offline` for the offline agents' rows (the grammar oracle's Table 2,
//!   proxy-judged Table 3) — the leaderboard never ranks the two together;
//! - `row`: `retrieval`, `reasoning`, `with_summary` or `without_summary`;
//! - value and interval are empty when n = 0; proxy judge metrics are named `<metric>_proxy`;
//! - labels (models files, run ids) are quoted and neutralised against spreadsheet formulas.

use crate::csv::cell;
use crate::results::{is_judged, t1_row_label, Aggregate, Ci, GRAMMAR_ORACLE};

/// The header line (with its newline).
pub const HEADER: &str = "run,group,table,model,row,column,metric,value,ci_lo,ci_hi,n,failed\n";

/// The header and one run's lines.
pub fn csv(run: &str, a: &Aggregate) -> String {
    let mut s = HEADER.to_string();
    s.push_str(&lines(run, a));
    s
}

/// One run's lines, without the header (to concatenate runs).
pub fn lines(run: &str, a: &Aggregate) -> String {
    let mut s = String::new();
    let run = cell(run);
    let num = |v: f64, n: usize| {
        if n > 0 && v.is_finite() {
            format!("{v:.4}")
        } else {
            String::new()
        }
    };
    let ci = |c: Option<&Ci>, n: usize| match c {
        Some(c) if n > 0 => format!("{:.4},{:.4}", c.lo, c.hi),
        _ => ",".into(),
    };
    let proxy = a.judge == "proxy";
    let metric_name = |m: &str| {
        if is_judged(m) && proxy {
            format!("{m}_proxy")
        } else {
            m.to_string()
        }
    };
    let mut line = |group: &str,
                    table: &str,
                    model: &str,
                    row: &str,
                    column: &str,
                    metric: &str,
                    (v, c, n, failed): (f64, Option<&Ci>, usize, usize)| {
        s.push_str(&format!(
            "{run},{group},{table},{},{row},{},{metric},{},{},{n},{failed}\n",
            cell(model),
            cell(column),
            num(v, n),
            ci(c, n),
        ));
    };
    if let Some(t) = &a.table2 {
        let model = t1_row_label(&a.label, &a.retrieval);
        let group = if model.ends_with(GRAMMAR_ORACLE) {
            "offline"
        } else {
            "model"
        };
        for (g, c) in t {
            for (m, v) in [("hit", c.hit), ("f1", c.f1), ("exe", c.exe)] {
                line(
                    group,
                    "table2",
                    &model,
                    "retrieval",
                    g,
                    m,
                    (v, c.ci.get(m), c.n, c.failed),
                );
            }
        }
    }
    let group = if proxy { "offline" } else { "model" };
    if let Some(t) = &a.table3_reasoning {
        for (p, c) in t {
            for (m, v) in [
                ("faithfulness", c.faithfulness),
                ("comprehensiveness", c.comprehensiveness),
                ("seren_cov", c.seren_cov),
            ] {
                line(
                    group,
                    "table3_reasoning",
                    &a.label,
                    "reasoning",
                    p,
                    &metric_name(m),
                    (v, c.ci.get(m), c.n, c.failed),
                );
            }
        }
    }
    for (row, t) in [
        ("with_summary", &a.table3_exploration),
        ("without_summary", &a.table3_exploration_wo_summary),
    ] {
        for (p, c) in t.iter().flatten() {
            for (m, v) in [
                ("relevance", c.relevance),
                ("type_match", c.type_match),
                ("seren_hit", c.seren_hit),
            ] {
                // The judge averages rational samples only.
                let n = if m == "relevance" {
                    c.n_rational.unwrap_or(c.n)
                } else {
                    c.n
                };
                line(
                    group,
                    "table3_exploration",
                    &a.label,
                    row,
                    p,
                    &metric_name(m),
                    (v, c.ci.get(m), n, c.failed),
                );
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::T1Cell;

    #[test]
    fn labels_cannot_become_formulas_and_every_line_has_every_column() {
        let a = Aggregate {
            label: "=HYPERLINK(\"http://x\",\"m\")".into(),
            table2: Some(
                [(
                    "all".to_string(),
                    T1Cell {
                        hit: 50.0,
                        f1: -0.5,
                        exe: 100.0,
                        n: 2,
                        failed: 1,
                        ..Default::default()
                    },
                )]
                .into(),
            ),
            retrieval: "m".into(),
            ..Default::default()
        };
        let text = csv("-run1", &a);
        assert!(text.starts_with(HEADER));
        let row = text.lines().nth(2).unwrap();
        assert_eq!(row, "'-run1,model,table2,\"'=HYPERLINK(\"\"http://x\"\",\"\"m\"\")\",retrieval,all,f1,-0.5000,,,2,1");
        assert!(text
            .lines()
            .skip(1)
            .all(|l| !l.starts_with(['=', '+', '-', '@'])));
        // The offline retrieval agent is the grammar oracle, in the offline group.
        let offline = Aggregate {
            label: "offline".into(),
            retrieval: "offline".into(),
            ..a
        };
        assert!(lines("r", &offline)
            .lines()
            .all(|l| l.starts_with("r,offline,table2,")));
    }
}
