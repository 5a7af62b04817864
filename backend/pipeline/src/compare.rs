//! Two runs compared question by question (`serenqa compare A B`, `GET /api/runs/compare`).
//!
//! For every metric series both runs have (the same table, row, column and metric; see
//! [`crate::report::Series`]), only the questions present in both count: Δ = mean(B) − mean(A)
//! over those pairs with a paired-bootstrap 95% interval (questions resampled, each pair kept
//! together; seed from the series' name, so the same runs always give the same interval), and
//! the questions where A wins (scores higher) and B loses, and the reverse. A judged metric
//! (Faithfulness, Comprehensiveness, Relevance) whose judges differ — a code-based proxy
//! against an LLM, or two LLMs — carries a note: its Δ measures the judges as much as the runs.

use std::collections::BTreeMap;
use std::path::Path;

use serenqa_shared::results::{is_judged, paired_delta, CompareRow, Comparison, BOOTSTRAP_REPS};

use crate::report::{series, Series};
use crate::runs_dir::{check_run_id, Manifest};
use crate::trace::{T1Record, T3Record, T1_FILE, T3_FILE};

/// Question ids listed per direction at most (the counts are always complete).
pub const MAX_LISTED: usize = 200;

/// A finished run's manifest and metric series, read from its directory.
pub struct LoadedRun {
    pub manifest: Manifest,
    pub judge: String,
    pub series: Vec<Series>,
}

/// Reads a run's manifest and traces (read-only: a torn last line is ignored, not cut).
pub fn load_run(runs_dir: &Path, id: &str) -> Result<LoadedRun, String> {
    check_run_id(id)?;
    let dir = runs_dir.join(id);
    let text =
        std::fs::read_to_string(dir.join("manifest.json")).map_err(|_| format!("no run {id:?}"))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| format!("run {id}: manifest.json: {e}"))?;
    let t1: Vec<T1Record> = read_records(&dir.join(T1_FILE), id)?;
    let t3: Vec<T3Record> = read_records(&dir.join(T3_FILE), id)?;
    // Manifests name their tasks; without a list (older files), the traces tell.
    let has = |t: &str| {
        if manifest.tasks.is_empty() {
            match t {
                "t1" => !t1.is_empty(),
                "t2" => t3.iter().any(|r| r.t2.is_some()),
                _ => t3.iter().any(|r| r.t3.is_some()),
            }
        } else {
            manifest.tasks.iter().any(|x| x == t)
        }
    };
    // The offline explorer's w.o.-summary rows are its with-summary rows (see `run::plan`).
    let wo_equals_with = !t3.iter().any(|r| r.mode == "without");
    let judge = t3
        .iter()
        .find_map(|r| {
            r.t3.as_ref()
                .map(|s| s.relevance.judge.clone())
                .or_else(|| r.t2.as_ref().map(|s| s.faithfulness.judge.clone()))
        })
        .unwrap_or_else(|| "proxy".into());
    let series = series(
        &t1,
        &t3,
        &manifest.partitions,
        wo_equals_with,
        has("t1"),
        has("t2"),
        has("t3"),
    );
    Ok(LoadedRun {
        manifest,
        judge,
        series,
    })
}

/// The complete lines of a trace file (none when it is missing). A last line without its
/// newline is a record still being written and is left out; any other line that does not
/// parse is an error naming the file and line (a comparison never drops records silently).
fn read_records<T: serde::de::DeserializeOwned>(path: &Path, id: &str) -> Result<Vec<T>, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Vec::new());
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..i],
        None => "",
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    complete
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("run {id}: {name} line {}: {e}", i + 1))
        })
        .collect()
}

/// Runs `a` and `b` of `runs_dir` compared.
pub fn compare_runs(runs_dir: &Path, a: &str, b: &str) -> Result<Comparison, String> {
    let ra = load_run(runs_dir, a)?;
    let rb = load_run(runs_dir, b)?;
    Ok(compare(&ra, &rb))
}

/// The comparison of two loaded runs.
pub fn compare(a: &LoadedRun, b: &LoadedRun) -> Comparison {
    let by_name: BTreeMap<String, &Series> = b.series.iter().map(|s| (s.name(), s)).collect();
    let mut rows = Vec::new();
    for sa in &a.series {
        let Some(sb) = by_name.get(&sa.name()) else {
            continue;
        };
        let pairs: Vec<(u32, f64, f64)> = sa
            .values
            .iter()
            .filter_map(|(q, x)| sb.values.get(q).map(|y| (*q, *x, *y)))
            .collect();
        let xs: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        let ys: Vec<f64> = pairs.iter().map(|p| p.2).collect();
        let (delta, ci) = match paired_delta(&xs, &ys, BOOTSTRAP_REPS, sa.seed()) {
            Some((d, ci)) => (Some(d), Some(ci)),
            None => (None, None),
        };
        let a_wins: Vec<u32> = pairs.iter().filter(|p| p.1 > p.2).map(|p| p.0).collect();
        let b_wins: Vec<u32> = pairs.iter().filter(|p| p.2 > p.1).map(|p| p.0).collect();
        let note = (is_judged(sa.metric) && a.judge != b.judge).then(|| {
            let who = |j: &str| {
                if j == "proxy" {
                    "a code-based proxy".to_string()
                } else {
                    format!("the LLM judge {j}")
                }
            };
            format!(
                "judged by {} in A and by {} in B: not the same measurement",
                who(&a.judge),
                who(&b.judge)
            )
        });
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        rows.push(CompareRow {
            table: sa.table.into(),
            row: sa.row.into(),
            column: sa.column.clone(),
            metric: sa.metric.into(),
            n_a: sa.values.len(),
            n_b: sb.values.len(),
            n: pairs.len(),
            mean_a: mean(&xs),
            mean_b: mean(&ys),
            delta,
            ci,
            ties: pairs.len() - a_wins.len() - b_wins.len(),
            a_wins_n: a_wins.len(),
            b_wins_n: b_wins.len(),
            a_wins: a_wins.into_iter().take(MAX_LISTED).collect(),
            b_wins: b_wins.into_iter().take(MAX_LISTED).collect(),
            note,
            p_holm: None,
        });
    }
    let verdict = serenqa_shared::results::verdict(&mut rows);
    Comparison {
        a: a.manifest.settings(),
        b: b.manifest.settings(),
        judge_a: a.judge.clone(),
        judge_b: b.judge.clone(),
        reps: BOOTSTRAP_REPS,
        rows,
        verdict,
    }
}

/// The comparison as text tables (what `serenqa compare` prints).
pub fn markdown(c: &Comparison) -> String {
    use serenqa_shared::results::{group_title, metric_title, partition_title};
    let mut s = format!(
        "A: {} ({})\nB: {} ({})\n",
        c.a.id,
        c.a.summary(),
        c.b.id,
        c.b.summary()
    );
    if !c.verdict.is_empty() {
        s.push_str(&format!("Verdict: {}\n", c.verdict));
    }
    for (side, r) in [("A", &c.a), ("B", &c.b)] {
        if r.roles.get("retrieval").is_some_and(|m| m == "offline") {
            s.push_str(&format!(
                "{side}'s Table 2 rows: offline — {}\n",
                serenqa_shared::results::GRAMMAR_ORACLE
            ));
        }
    }
    s.push('\n');
    s.push_str("| Table | Row | Cell | Metric | n (pairs) | A | B | Δ = B − A [95% CI] | A wins | B wins | ties |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &c.rows {
        let cell = if r.table == "table2" {
            group_title(&r.column)
        } else {
            partition_title(&r.column)
        };
        let d = if r.table == "table2" { 2 } else { 3 };
        let delta = match (r.delta, r.ci) {
            (Some(x), Some(ci)) => format!("{x:+.d$} [{:+.d$}, {:+.d$}]", ci.lo, ci.hi),
            _ => "–".into(),
        };
        let (ma, mb) = if r.n > 0 {
            (format!("{:.d$}", r.mean_a), format!("{:.d$}", r.mean_b))
        } else {
            ("–".into(), "–".into())
        };
        let metric = if r.note.is_some() {
            format!("{} ⚠", metric_title(&r.metric))
        } else {
            metric_title(&r.metric).to_string()
        };
        s.push_str(&format!(
            "| {} | {} | {cell} | {metric} | {} | {ma} | {mb} | {delta} | {} | {} | {} |\n",
            r.table, r.row, r.n, r.a_wins_n, r.b_wins_n, r.ties
        ));
    }
    s.push_str(&format!("\nΔ intervals: paired bootstrap over the questions both runs answered ({} resamples, fixed seeds).\n", c.reps));
    if let Some(n) = c.rows.iter().find_map(|r| r.note.clone()) {
        s.push_str(&format!("⚠ {n}.\n"));
    }
    for r in c
        .rows
        .iter()
        .filter(|r| r.table != "table2" && r.row == "with" && r.metric == "seren_hit" && r.n > 0)
    {
        let list = |v: &[u32], total: usize| {
            let mut t = v
                .iter()
                .take(30)
                .map(|q| format!("Q{q}"))
                .collect::<Vec<_>>()
                .join(", ");
            if total > 30 {
                t.push_str(&format!(", … ({total} in all)"));
            }
            if t.is_empty() {
                "none".to_string()
            } else {
                t
            }
        };
        s.push_str(&format!(
            "\nSerenHit, {}: A wins on {}; B wins on {}.\n",
            partition_title(&r.column),
            list(&r.a_wins, r.a_wins_n),
            list(&r.b_wins, r.b_wins_n)
        ));
    }
    s
}
