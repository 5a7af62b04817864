//! Aggregate tables in the paper's layouts: Table 2 (T1 Hit/F1/Exe per pattern group, in %)
//! and Table 3 (T2 Faithful./Compre./SerenCov and T3 Relevance/TypeMatch/SerenHit per
//! partition, with a "w.o. summary" row), as JSON ([`Aggregate`]), CSV (long format) and
//! Markdown. Judge columns carry the judge's name, `proxy` for the offline proxies.

use std::collections::BTreeMap;

use crate::bench::{partition_title, GROUPS};
use crate::metrics::mean;
use crate::run::{T1Record, T3Record};

// The result types are shared with the web app's leaderboard (`serenqa_shared::results`).
pub use serenqa_shared::results::{Aggregate, T1Cell, T2Cell, T3Cell};

#[allow(clippy::too_many_arguments)]
pub fn aggregate(label: &str, t1: &[T1Record], t3: &[T3Record], partitions: &[String], wo_equals_with: bool, want_t1: bool, want_t2: bool, want_t3: bool) -> Aggregate {
    let mut agg = Aggregate { label: label.into(), partitions: partitions.to_vec(), judge: "proxy".into(), ..Default::default() };
    // Sorted by key so the result does not depend on completion order.
    let mut t1: Vec<&T1Record> = t1.iter().collect();
    t1.sort_by(|a, b| a.key.cmp(&b.key));
    let mut t3: Vec<&T3Record> = t3.iter().collect();
    t3.sort_by(|a, b| a.key.cmp(&b.key));
    if want_t1 {
        let mut cells = BTreeMap::new();
        let groups = GROUPS.iter().map(|(k, _)| *k).chain(["all"]);
        for gk in groups {
            let rs: Vec<&&T1Record> = t1.iter().filter(|r| gk == "all" || r.group == gk).collect();
            let pct = |xs: Vec<f64>| 100.0 * mean(&xs);
            cells.insert(
                gk.to_string(),
                T1Cell {
                    hit: pct(rs.iter().map(|r| r.hit).collect()),
                    f1: pct(rs.iter().map(|r| r.f1).collect()),
                    exe: pct(rs.iter().map(|r| if r.retrieved.executable { 1.0 } else { 0.0 }).collect()),
                    n: rs.len(),
                },
            );
        }
        agg.table2 = Some(cells);
    }
    if let Some(j) = t3.iter().find_map(|r| r.t3.as_ref().map(|s| s.relevance.judge.clone()).or_else(|| r.t2.as_ref().map(|s| s.faithfulness.judge.clone()))) {
        agg.judge = j;
    }
    let done = |r: &&&T3Record| r.error.is_none();
    if want_t2 {
        let mut cells = BTreeMap::new();
        for p in partitions {
            let rs: Vec<&crate::run::T2Scores> = t3.iter().filter(done).filter(|r| &r.partition == p && r.mode == "with").filter_map(|r| r.t2.as_ref()).collect();
            cells.insert(
                p.clone(),
                T2Cell {
                    faithfulness: mean(&rs.iter().map(|s| s.faithfulness.score).collect::<Vec<_>>()),
                    comprehensiveness: mean(&rs.iter().map(|s| s.comprehensiveness.score).collect::<Vec<_>>()),
                    seren_cov: mean(&rs.iter().map(|s| s.seren_cov).collect::<Vec<_>>()),
                    n: rs.len(),
                },
            );
        }
        agg.table3_reasoning = Some(cells);
    }
    if want_t3 {
        let cell = |p: &str, mode: &str| {
            let rs: Vec<&crate::run::T3Scores> = t3.iter().filter(done).filter(|r| r.partition == p && r.mode == mode).filter_map(|r| r.t3.as_ref()).collect();
            T3Cell {
                relevance: mean(&rs.iter().map(|s| s.relevance.score).collect::<Vec<_>>()),
                type_match: mean(&rs.iter().map(|s| s.type_match).collect::<Vec<_>>()),
                seren_hit: mean(&rs.iter().map(|s| s.seren_hit).collect::<Vec<_>>()),
                n: rs.len(),
            }
        };
        let with: BTreeMap<String, T3Cell> = partitions.iter().map(|p| (p.clone(), cell(p, "with"))).collect();
        let without: BTreeMap<String, T3Cell> = if wo_equals_with { with.clone() } else { partitions.iter().map(|p| (p.clone(), cell(p, "without"))).collect() };
        agg.table3_exploration = Some(with);
        agg.table3_exploration_wo_summary = Some(without);
    }
    agg
}

fn judged(name: &str, judge: &str) -> String {
    if judge == "proxy" {
        format!("{name} (proxy)")
    } else {
        name.to_string()
    }
}

/// The Markdown tables (what `serenqa eval` prints).
pub fn markdown(a: &Aggregate, notes: &[String]) -> String {
    let mut s = String::new();
    if let Some(t2) = &a.table2 {
        s.push_str("### Table 2 — Knowledge Retrieval (T1)\n\n| Model |");
        for (_, title) in GROUPS {
            s.push_str(&format!(" {title} Hit(%) | F1(%) | Exe.(%) |"));
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(GROUPS.len() * 3));
        s.push_str(&format!("\n| {} |", a.label));
        for (k, _) in GROUPS {
            match t2.get(*k).filter(|c| c.n > 0) {
                Some(c) => s.push_str(&format!(" {:.2} | {:.2} | {:.2} |", c.hit, c.f1, c.exe)),
                None => s.push_str(" – | – | – |"),
            }
        }
        s.push_str("\n\nQuestions per group: ");
        s.push_str(&GROUPS.iter().map(|(k, t)| format!("{t} {}", t2.get(*k).map(|c| c.n).unwrap_or(0))).collect::<Vec<_>>().join(", "));
        if let Some(all) = t2.get("all") {
            s.push_str(&format!("; all {}: Hit {:.2}, F1 {:.2}, Exe. {:.2}.\n\n", all.n, all.hit, all.f1, all.exe));
        }
    }
    let titles = |s: &mut String, cols: &[&str]| {
        s.push_str("| Models |");
        for p in &a.partitions {
            for (i, c) in cols.iter().enumerate() {
                if i == 0 {
                    s.push_str(&format!(" {} {c} |", partition_title(p)));
                } else {
                    s.push_str(&format!(" {c} |"));
                }
            }
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(a.partitions.len() * cols.len()));
        s.push('\n');
    };
    if let Some(t) = &a.table3_reasoning {
        s.push_str("### Table 3 (upper) — Subgraph Reasoning (T2)\n\n");
        titles(&mut s, &[&judged("Faithful.", &a.judge), &judged("Compre.", &a.judge), "SerenCov"]);
        s.push_str(&format!("| {} |", a.label));
        for p in &a.partitions {
            match t.get(p).filter(|c| c.n > 0) {
                Some(c) => s.push_str(&format!(" {:.3} | {:.3} | {:.3} |", c.faithfulness, c.comprehensiveness, c.seren_cov)),
                None => s.push_str(" – | – | – |"),
            }
        }
        s.push_str("\n\n");
    }
    if let (Some(w), Some(wo)) = (&a.table3_exploration, &a.table3_exploration_wo_summary) {
        s.push_str("### Table 3 (lower) — Serendipity Exploration (T3)\n\n");
        titles(&mut s, &[&judged("Relevance", &a.judge), "TypeMatch", "SerenHit"]);
        for (name, t) in [(a.label.clone(), w), ("↳ w.o. summary".to_string(), wo)] {
            s.push_str(&format!("| {name} |"));
            for p in &a.partitions {
                match t.get(p).filter(|c| c.n > 0) {
                    Some(c) => s.push_str(&format!(" {:.3} | {:.3} | {:.3} |", c.relevance, c.type_match, c.seren_hit)),
                    None => s.push_str(" – | – | – |"),
                }
            }
            s.push('\n');
        }
        s.push_str("\nQuestions per partition: ");
        s.push_str(&a.partitions.iter().map(|p| format!("{} {}", partition_title(p), w.get(p).map(|c| c.n).unwrap_or(0))).collect::<Vec<_>>().join(", "));
        s.push_str(".\n\n");
    }
    for n in notes {
        s.push_str(&format!("Note: {n}\n"));
    }
    s
}

/// Long-format CSV: `table,model,row,column,metric,value,n`.
pub fn csv(a: &Aggregate) -> String {
    let mut s = String::from("table,model,row,column,metric,value,n\n");
    // Labels come from users (models files, run ids): quoted and neutralised against formulas.
    let q = serenqa_shared::csv::cell;
    if let Some(t) = &a.table2 {
        for (g, c) in t {
            for (m, v) in [("hit", c.hit), ("f1", c.f1), ("exe", c.exe)] {
                s.push_str(&format!("table2,{},{},{g},{m},{v:.4},{}\n", q(&a.label), q(&a.label), c.n));
            }
        }
    }
    if let Some(t) = &a.table3_reasoning {
        for (p, c) in t {
            for (m, v) in [("faithfulness", c.faithfulness), ("comprehensiveness", c.comprehensiveness), ("seren_cov", c.seren_cov)] {
                s.push_str(&format!("table3_reasoning,{},{},{p},{m},{v:.4},{}\n", q(&a.label), q(&a.label), c.n));
            }
        }
    }
    for (row, t) in [("with_summary", &a.table3_exploration), ("without_summary", &a.table3_exploration_wo_summary)] {
        if let Some(t) = t {
            for (p, c) in t {
                for (m, v) in [("relevance", c.relevance), ("type_match", c.type_match), ("seren_hit", c.seren_hit)] {
                    s.push_str(&format!("table3_exploration,{},{row},{p},{m},{v:.4},{}\n", q(&a.label), c.n));
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_labels_cannot_become_formulas() {
        let a = Aggregate {
            label: "=HYPERLINK(\"http://x\",\"m\")".into(),
            table2: Some([("all".to_string(), serenqa_shared::results::T1Cell { hit: 50.0, f1: -0.5, exe: 100.0, n: 2 })].into()),
            ..Default::default()
        };
        let text = csv(&a);
        let row = text.lines().nth(2).unwrap();
        assert_eq!(row, "table2,\"'=HYPERLINK(\"\"http://x\"\",\"\"m\"\")\",\"'=HYPERLINK(\"\"http://x\"\",\"\"m\"\")\",all,f1,-0.5000,2");
        assert!(text.lines().skip(1).all(|l| !l.starts_with(['=', '+', '-', '@'])));
    }
}
