//! Leaderboard (reviewers): every stored evaluation run in the paper's Table 2 and Table 3
//! layouts — sortable, best value bold and second underlined (equal values share a place and
//! are marked as a tie), each value with its n and 95% exact interval, "–" where a cell
//! has no question, judge proxies of the offline pipeline in their own labelled columns, runs
//! labelled with their settings (models, beam, nodes, depth, limit, date), a partition toggle,
//! CSV export — plus a compass chart per model, retrieval by query pattern, a model × metric
//! heatmap, the correlation of the three partition strategies (the paper's Figure 3) with its
//! n, a run-vs-run comparison (Δ with a paired-bootstrap interval, the questions each run
//! wins) and each run's questions linked to their trace pages (`crate::trace`).

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::api::{RunQuestion, RunsReply};
use serenqa_shared::paper;
use serenqa_shared::results::{
    group_title, marks, metric_title, partition_title, partition_title_for, pearson, t1_row_label,
    Aggregate, Ci, Comparison, Place, GRAMMAR_ORACLE, GROUPS, PARTITIONS, RANK_MIN_N,
};

use crate::api;
use crate::charts::{Compass, CorrelationMatrix, GroupedBars, Heatmap, LogScatter};

/// One shown value: NaN when the cell has no question (n = 0) or the run lacks the column.
#[derive(Clone, Debug)]
struct Cell {
    v: f64,
    n: usize,
    ci: Option<Ci>,
}

impl Cell {
    fn none() -> Cell {
        Cell {
            v: f64::NAN,
            n: 0,
            ci: None,
        }
    }
    /// A published figure: a value with no n and no interval here.
    fn published(v: f64) -> Cell {
        Cell { v, n: 0, ci: None }
    }
    fn of(v: f64, n: usize, ci: Option<&Ci>) -> Cell {
        if n == 0 {
            Cell::none()
        } else {
            Cell {
                v,
                n,
                ci: ci.copied(),
            }
        }
    }
}

/// Which kind of result a row is. Only language-model rows are ranked (best / second marks);
/// the offline agents (a grammar oracle for retrieval, code-based proxy judges) and the paper's
/// published figures are shown in their own groups, never ranked against them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowGroup {
    Models,
    Offline,
    Paper,
}

impl RowGroup {
    const ALL: [RowGroup; 3] = [RowGroup::Models, RowGroup::Offline, RowGroup::Paper];
    fn key(self) -> &'static str {
        match self {
            RowGroup::Models => "models",
            RowGroup::Offline => "offline",
            RowGroup::Paper => "paper",
        }
    }
    fn title(self) -> &'static str {
        match self {
            RowGroup::Models => "Language models — ranked: best bold, second underlined (cells with n ≥ 10)",
            RowGroup::Offline => "Offline agents — a grammar oracle for retrieval, code-based proxies for judging; not ranked against models",
            RowGroup::Paper => "The SerenQA paper's published figures — another graph, question set and judges; for reference, not ranked",
        }
    }
}

/// One row: its label, its group, a cell per column.
#[derive(Clone, Debug)]
struct Row {
    label: String,
    /// The run's id (its page is `/runs/<id>`); None for the paper's rows.
    run: Option<String>,
    group: RowGroup,
    cells: Vec<Cell>,
}

/// A table: a label per row, a cell per (row, column).
#[derive(Clone, Debug)]
struct Table {
    columns: Vec<(String, String)>, // (group heading, column title)
    rows: Vec<Row>,
    digits: usize,
}

impl Table {
    fn csv(&self, name: &str) -> String {
        let mut head = Vec::new();
        for (g, c) in &self.columns {
            let t = format!("{g} {c}").trim().to_string();
            head.extend([
                csv_field(&t),
                csv_field(&format!("{t} CI low")),
                csv_field(&format!("{t} CI high")),
                csv_field(&format!("{t} n")),
            ]);
        }
        let mut s = format!("table,row,group,{}\n", head.join(","));
        for row in &self.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .map(|c| {
                    if c.v.is_finite() {
                        let ci =
                            c.ci.map(|ci| format!("{:.4},{:.4}", ci.lo, ci.hi))
                                .unwrap_or_else(|| ",".into());
                        format!("{:.4},{ci},{}", c.v, c.n)
                    } else {
                        ",,,0".to_string()
                    }
                })
                .collect();
            s.push_str(&format!(
                "{},{},{},{}\n",
                csv_field(name),
                csv_field(&row.label),
                row.group.key(),
                cells.join(",")
            ));
        }
        s
    }
}

/// A CSV cell, quoted and neutralised against spreadsheet formulas (`serenqa_shared::csv`).
pub(crate) fn csv_field(s: &str) -> String {
    serenqa_shared::csv::cell(s)
}

/// A run as listed: its row label (settings), id and aggregate.
#[derive(Clone, Debug)]
struct Run {
    label: String,
    id: String,
    agg: Aggregate,
    /// Size of the explorer model (billions of parameters), when the models file says.
    params_b: Option<f64>,
}

fn table2(runs: &[Run]) -> Table {
    let mut columns = Vec::new();
    for (_, title) in GROUPS {
        for m in ["hit", "f1", "exe"] {
            columns.push((title.to_string(), metric_title(m).to_string()));
        }
    }
    let rows: Vec<Row> = runs
        .iter()
        .filter(|r| r.agg.table2.is_some())
        .map(|r| {
            let t2 = r.agg.table2.clone().unwrap_or_default();
            let mut vals = Vec::new();
            for (k, _) in GROUPS {
                match t2.get(*k) {
                    Some(c) => vals.extend([
                        Cell::of(c.hit, c.n, c.ci.get("hit")),
                        Cell::of(c.f1, c.n, c.ci.get("f1")),
                        Cell::of(c.exe, c.n, c.ci.get("exe")),
                    ]),
                    None => vals.extend([Cell::none(), Cell::none(), Cell::none()]),
                }
            }
            // The offline retrieval agent parses the generator's own sentence shapes: say so,
            // and keep it out of the models' ranking.
            let label = t1_row_label(&r.label, &r.agg.retrieval);
            let group = if label.ends_with(GRAMMAR_ORACLE) {
                RowGroup::Offline
            } else {
                RowGroup::Models
            };
            Row {
                label,
                run: Some(r.id.clone()),
                group,
                cells: vals,
            }
        })
        .chain(paper::TABLE2.iter().map(|(model, v)| Row {
            label: paper::row_label(model, false),
            run: None,
            group: RowGroup::Paper,
            cells: v.iter().map(|&x| Cell::published(x)).collect(),
        }))
        .collect();
    Table {
        columns,
        rows,
        digits: 2,
    }
}

/// A run's group in Table 3: scored by the offline pipeline's code-based proxies, or by a model.
fn group_of(r: &Run) -> RowGroup {
    if r.agg.judge == "proxy" {
        RowGroup::Offline
    } else {
        RowGroup::Models
    }
}

/// Table 3 for one partition. Judge metrics get two columns each — by an LLM judge and by the
/// offline code-based proxy — so proxy scores are never ranked against LLM judgments; a
/// column appears only when some run fills it.
fn table3(runs: &[Run], partition: &str) -> (Table, Table) {
    let any_proxy = runs.iter().any(|r| r.agg.judge == "proxy");
    // The paper's rows are judged by LLMs: their columns are always shown.
    let any_llm = true;
    let judged = |name: &str| {
        let mut cols = Vec::new();
        if any_llm {
            cols.push(("LLM judge".to_string(), name.to_string()));
        }
        if any_proxy {
            cols.push((
                "offline proxy (not an LLM)".to_string(),
                format!("{name} (proxy)"),
            ));
        }
        cols
    };
    // A judge score in its column: the LLM column for an LLM-judged run, the proxy column else.
    let place = |r: &Run, c: Cell| {
        let proxy = r.agg.judge == "proxy";
        let mut out = Vec::new();
        if any_llm {
            out.push(if proxy { Cell::none() } else { c.clone() });
        }
        if any_proxy {
            out.push(if proxy { c } else { Cell::none() });
        }
        out
    };
    let mut reasoning_cols = judged(metric_title("faithfulness"));
    reasoning_cols.extend(judged(metric_title("comprehensiveness")));
    reasoning_cols.push(("".into(), metric_title("seren_cov").into()));
    let mut explore_cols = judged(metric_title("relevance"));
    explore_cols.extend([
        ("".to_string(), metric_title("type_match").to_string()),
        ("".into(), metric_title("seren_hit").into()),
    ]);
    let mut r_rows = Vec::new();
    let mut e_rows = Vec::new();
    for r in runs {
        if let Some(c) = r
            .agg
            .table3_reasoning
            .as_ref()
            .and_then(|t| t.get(partition))
        {
            let mut v = place(r, Cell::of(c.faithfulness, c.n, c.ci.get("faithfulness")));
            v.extend(place(
                r,
                Cell::of(c.comprehensiveness, c.n, c.ci.get("comprehensiveness")),
            ));
            v.push(Cell::of(c.seren_cov, c.n, c.ci.get("seren_cov")));
            r_rows.push(Row {
                label: r.label.clone(),
                run: Some(r.id.clone()),
                group: group_of(r),
                cells: v,
            });
        }
        for (suffix, t) in [
            ("", &r.agg.table3_exploration),
            (" (w.o. summary)", &r.agg.table3_exploration_wo_summary),
        ] {
            if let Some(c) = t.as_ref().and_then(|t| t.get(partition)) {
                // The judge averages rational samples (questions with a ground-truth path).
                let mut v = place(
                    r,
                    Cell::of(
                        c.relevance,
                        c.n_rational.unwrap_or(c.n),
                        c.ci.get("relevance"),
                    ),
                );
                v.extend([
                    Cell::of(c.type_match, c.n, c.ci.get("type_match")),
                    Cell::of(c.seren_hit, c.n, c.ci.get("seren_hit")),
                ]);
                e_rows.push(Row {
                    label: format!("{}{suffix}", r.label),
                    run: Some(r.id.clone()),
                    group: group_of(r),
                    cells: v,
                });
            }
        }
    }
    // The paper's figures for this partition, in the LLM-judge columns.
    let part = PARTITIONS.iter().position(|(k, _)| *k == partition);
    if let Some(pi) = part {
        let proxy_gap = || any_proxy.then(Cell::none);
        for (model, v) in paper::TABLE3_REASONING {
            let x = |m: usize| Cell::published(v[3 * pi + m]);
            let mut cells = vec![x(0)];
            cells.extend(proxy_gap());
            cells.push(x(1));
            cells.extend(proxy_gap());
            cells.push(x(2));
            r_rows.push(Row {
                label: paper::row_label(model, false),
                run: None,
                group: RowGroup::Paper,
                cells,
            });
        }
        for (model, wo, v) in paper::TABLE3_EXPLORATION {
            let x = |m: usize| Cell::published(v[3 * pi + m]);
            let mut cells = vec![x(0)];
            cells.extend(proxy_gap());
            cells.extend([x(1), x(2)]);
            e_rows.push(Row {
                label: paper::row_label(model, *wo),
                run: None,
                group: RowGroup::Paper,
                cells,
            });
        }
    }
    (
        Table {
            columns: reasoning_cols,
            rows: r_rows,
            digits: 3,
        },
        Table {
            columns: explore_cols,
            rows: e_rows,
            digits: 3,
        },
    )
}

/// A sortable table: the best value per column bold, the second underlined, ties marked;
/// each value with its 95% interval and n; "–" where there is no value.
#[component]
fn ResultTable(table: Table, caption: String, testid: &'static str) -> impl IntoView {
    let (sort, set_sort) = signal(None::<(usize, bool)>); // (column, descending)
    let table = StoredValue::new(table);
    let ncols = table.with_value(|t| t.columns.len());
    // Only model rows with n ≥ RANK_MIN_N compete for best / second.
    let marks: Vec<Vec<serenqa_shared::results::Mark>> = table.with_value(|t| {
        (0..ncols)
            .map(|c| {
                marks(
                    &t.rows
                        .iter()
                        .map(|r| {
                            let cell = &r.cells[c];
                            if r.group == RowGroup::Models && cell.n >= RANK_MIN_N {
                                cell.v
                            } else {
                                f64::NAN
                            }
                        })
                        .collect::<Vec<_>>(),
                    t.digits,
                )
            })
            .collect()
    });
    let marks = StoredValue::new(marks);
    let groups = table.with_value(|t| {
        let mut out: Vec<(String, usize)> = Vec::new();
        for (g, _) in &t.columns {
            match out.last_mut() {
                Some((last, n)) if last == g => *n += 1,
                _ => out.push((g.clone(), 1)),
            }
        }
        out
    });
    let has_groups = groups.iter().any(|(g, _)| !g.is_empty());
    let group_head = has_groups.then(|| {
        let cells = groups
            .iter()
            .map(|(g, n)| view! { <th class="group-head" colspan=*n>{g.clone()}</th> })
            .collect_view();
        view! { <tr><th></th>{cells}</tr> }
    });
    let head = (0..ncols)
        .map(|c| {
            let title = table.with_value(|t| t.columns[c].1.clone());
            let arrow = move || match sort.get() {
                Some((sc, true)) if sc == c => " ▼",
                Some((sc, false)) if sc == c => " ▲",
                _ => "",
            };
            let aria = move || match sort.get() {
                Some((sc, true)) if sc == c => "descending",
                Some((sc, false)) if sc == c => "ascending",
                _ => "none",
            };
            view! {
                <th class="num" aria-sort=aria>
                    <button class="sort" on:click=move |_| set_sort.update(|s| *s = match *s {
                        Some((sc, true)) if sc == c => Some((c, false)),
                        _ => Some((c, true)),
                    })>{title}{arrow}</button>
                </th>
            }
        })
        .collect_view();
    // One row's cells: a published figure has no n or interval here; a model cell below
    // RANK_MIN_N says it is not ranked.
    let row_view = move |ri: usize| {
        let (row, digits) = table.with_value(|t| (t.rows[ri].clone(), t.digits));
        let cells = row
            .cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let m = marks.with_value(|m| m[c][ri]);
                let mut class = match m.place {
                    Place::Best => "num best".to_string(),
                    Place::Second => "num second".to_string(),
                    Place::Other => "num".to_string(),
                };
                if m.tie && m.place != Place::Other {
                    class.push_str(" tie");
                }
                let tip = match (m.place, m.tie, row.group) {
                    (Place::Best, true, _) => "best (tie)",
                    (Place::Best, false, _) => "best",
                    (Place::Second, true, _) => "second (tie)",
                    (Place::Second, false, _) => "second",
                    (_, _, RowGroup::Paper) => "published in the paper; not ranked",
                    (_, _, RowGroup::Offline) => "offline agent; not ranked against models",
                    (_, _, RowGroup::Models) if cell.n < RANK_MIN_N => "n < 10: shown, not ranked",
                    _ => "",
                };
                if !cell.v.is_finite() {
                    let why = if row.group == RowGroup::Paper { "not in the paper's table" } else { "no question in this cell (n = 0)" };
                    return view! { <td class="num empty" title=why>"–"</td> }.into_any();
                }
                let ci = cell.ci.map(|ci| format!("[{:.digits$}, {:.digits$}]", ci.lo, ci.hi));
                let n = (row.group != RowGroup::Paper).then(|| format!("n={}", cell.n));
                view! {
                    <td class=class title=tip>
                        <span class="v">{format!("{:.digits$}", cell.v)}</span>
                        {(m.tie && m.place != Place::Other).then(|| view! { <span class="tie-mark" aria-label="tie">"="</span> })}
                        {ci.map(|t| view! { <span class="ci" data-testid="ci">{t}</span> })}
                        {n.map(|n| view! { <span class="n">{n}</span> })}
                    </td>
                }
                .into_any()
            })
            .collect_view();
        let label = match &row.run {
            Some(id) => view! { <a href=format!("/runs/{}", api::enc(id)) title="What this run was: models, settings, costs, failures">{row.label.clone()}</a> }.into_any(),
            None => row.label.clone().into_any(),
        };
        view! { <tr data-row=row.label.clone()><th scope="row">{label}</th>{cells}</tr> }
    };
    // Rows by group (models, offline agents, the paper), each group sorted on its own.
    let body = move || {
        RowGroup::ALL
            .into_iter()
            .filter_map(|group| {
                let mut idx: Vec<usize> = table.with_value(|t| {
                    (0..t.rows.len()).filter(|&i| t.rows[i].group == group).collect()
                });
                if idx.is_empty() {
                    return None;
                }
                if let Some((c, desc)) = sort.get() {
                    table.with_value(|t| {
                        idx.sort_by(|&a, &b| {
                            let (x, y) = (t.rows[a].cells[c].v, t.rows[b].cells[c].v);
                            // Missing values last in either direction.
                            match (x.is_finite(), y.is_finite()) {
                                (true, false) => std::cmp::Ordering::Less,
                                (false, true) => std::cmp::Ordering::Greater,
                                _ => {
                                    let o = x.total_cmp(&y);
                                    if desc {
                                        o.reverse()
                                    } else {
                                        o
                                    }
                                }
                            }
                        });
                    });
                }
                let note = (group == RowGroup::Paper).then(|| view! { <span class="muted group-note">{paper::NOTE}</span> });
                Some(view! {
                    <tbody data-group=group.key()>
                        <tr class="row-group"><th scope="rowgroup" colspan=ncols + 1><span class="group-title">{group.title()}{note}</span></th></tr>
                        {idx.into_iter().map(row_view).collect_view()}
                    </tbody>
                })
            })
            .collect_view()
    };
    view! {
        <div class="scroll-x">
            <table class="results" data-testid=testid>
                <caption>{caption}</caption>
                <thead>{group_head}<tr><th>"Model"</th>{head}</tr></thead>
                {body}
            </table>
        </div>
    }
}

/// Normalised metric vector of a run (all in [0, 1], in `METRICS` order) for the compass and
/// the heatmap; NaN where a cell has no question.
fn metric_vector(a: &Aggregate, partition: &str) -> Vec<f64> {
    serenqa_shared::results::METRICS
        .iter()
        .map(|m| serenqa_shared::results::metric_value(a, partition, m.key).unwrap_or(f64::NAN))
        .collect()
}

/// The heatmap's rows, columns and values: one column per metric, except that a judge metric
/// scored by an LLM for some runs and by the offline proxy for others gets two columns — an
/// LLM judge's score never shares a column with a proxy's.
fn heatmap_grid(runs: &[Run], partition: &str) -> (Vec<String>, Vec<String>, Vec<Vec<f64>>) {
    use serenqa_shared::results::{is_judged, METRICS};
    let proxy = |r: &Run| r.agg.judge == "proxy";
    let (any_proxy, any_llm) = (runs.iter().any(proxy), runs.iter().any(|r| !proxy(r)));
    let mut cols = Vec::new();
    // Per column: the metric, and which runs fill it (None: all; Some(p): proxy-judged = p).
    let mut spec: Vec<(usize, Option<bool>)> = Vec::new();
    for (m, info) in METRICS.iter().enumerate() {
        if is_judged(info.key) && any_proxy {
            if any_llm {
                cols.push(info.title.to_string());
                spec.push((m, Some(false)));
            }
            cols.push(format!("{} (proxy)", info.title));
            spec.push((m, Some(true)));
        } else {
            cols.push(info.title.to_string());
            spec.push((m, None));
        }
    }
    let rows = runs.iter().map(|r| r.label.clone()).collect();
    let values = runs
        .iter()
        .map(|r| {
            let v = metric_vector(&r.agg, partition);
            spec.iter()
                .map(|&(m, who)| match who {
                    Some(p) if p != proxy(r) => f64::NAN,
                    _ => v[m],
                })
                .collect()
        })
        .collect();
    (rows, cols, values)
}

/// The metrics' titles in table order (the one list: `serenqa_shared::results::METRICS`).
fn metric_titles() -> Vec<&'static str> {
    serenqa_shared::results::METRICS
        .iter()
        .map(|m| m.title)
        .collect()
}

/// Partition keys, the correlation matrix (None: too few runs) and the runs behind each cell.
type Correlation = (Vec<String>, Vec<Vec<Option<f64>>>, Vec<Vec<usize>>);

/// The paper's Figure 3 per metric: for one T2/T3 metric (index into [`metric_vector`]),
/// the Pearson correlation between partition strategies over the runs, with the number of
/// runs behind each coefficient (both partitions must have a value).
fn partition_correlation(runs: &[Run], metric: usize) -> Correlation {
    let keys: Vec<&str> = PARTITIONS.iter().map(|(k, _)| *k).collect();
    let vectors: Vec<Vec<f64>> = keys
        .iter()
        .map(|p| {
            runs.iter()
                .map(|r| metric_vector(&r.agg, p)[metric])
                .collect()
        })
        .collect();
    let n = keys.len();
    let mut m = vec![vec![None; n]; n];
    let mut counts = vec![vec![0; n]; n];
    for i in 0..n {
        for j in 0..n {
            let (x, y): (Vec<f64>, Vec<f64>) = vectors[i]
                .iter()
                .zip(&vectors[j])
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .map(|(a, b)| (*a, *b))
                .unzip();
            counts[i][j] = x.len();
            m[i][j] = pearson(&x, &y);
        }
    }
    (
        PARTITIONS.iter().map(|(_, t)| t.to_string()).collect(),
        m,
        counts,
    )
}

/// The runs with an aggregate, labelled with their settings (models, beam, nodes, depth,
/// limit, date); two runs with the same settings also get their id.
fn labelled(r: &RunsReply) -> Vec<Run> {
    let mut out: Vec<Run> = r
        .runs
        .iter()
        .filter_map(|e| {
            let agg = e.aggregate.clone()?;
            let base = if !e.settings.label.is_empty() || e.settings.beam > 0 {
                let mut s = e.settings.clone();
                if s.label.is_empty() {
                    s.label = agg.label.clone();
                }
                s.summary()
            } else if agg.label.is_empty() {
                e.id.clone()
            } else {
                agg.label.clone()
            };
            let status = e.manifest.status.clone();
            // An incomplete run's cells leave its failed items out: the row says so.
            let label = if status == "running" {
                format!("{base} (running)")
            } else if status == "incomplete" || e.manifest.failed > 0 {
                format!("{base} (incomplete: {} failed)", e.manifest.failed)
            } else {
                base
            };
            Some(Run {
                label,
                id: e.id.clone(),
                agg,
                params_b: e.settings.explorer_params_b,
            })
        })
        .collect();
    let labels: Vec<String> = out.iter().map(|r| r.label.clone()).collect();
    for (i, r) in out.iter_mut().enumerate() {
        if labels.iter().filter(|l| **l == labels[i]).count() > 1 {
            r.label = format!("{} · {}", r.label, r.id);
        }
    }
    out
}

#[component]
pub fn Leaderboard() -> impl IntoView {
    let (runs, set_runs) = signal(None::<Result<RunsReply, String>>);
    spawn_local(async move {
        // A fresh server computes an offline baseline run in the background: while the list
        // is empty, look again every 10 s (at most 30 times).
        for _ in 0..30 {
            let r = api::get_json::<RunsReply>("/api/runs").await;
            let empty = matches!(&r, Ok(x) if x.runs.iter().all(|e| e.aggregate.is_none()));
            set_runs.set(Some(r));
            if !empty {
                break;
            }
            api::sleep_ms(10_000).await;
        }
    });
    let (partition, set_partition) = signal("llm".to_string());
    view! {
        <h1>"Leaderboard"</h1>
        <p class="muted">"Every stored evaluation run, labelled with its settings. Click a column to sort; the best value is bold, the second underlined, equal values are marked “=” as a tie. Brackets: 95% exact interval over questions (never zero-width, wide when n is small); n: questions in the cell; –: none."</p>
        {move || match runs.get() {
            None => view! { <p class="loading">"Loading runs…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            Some(Ok(r)) => {
                let done = labelled(&r);
                if done.is_empty() {
                    let dir = if r.runs_dir.is_empty() { "runs".to_string() } else { r.runs_dir.clone() };
                    return view! {
                        <div class="notice" data-testid="no-runs">
                            <p>"No evaluation run in the server's runs directory "<code>{dir.clone()}</code>" yet. A fresh server computes an offline baseline run in the background (about a minute on Hetionet); this page looks again every 10 seconds."</p>
                            <p>"To add runs yourself: "<code>{format!("serenqa eval --runs {dir}")}</code>" (offline agents), or with "<code>"--models models.json"</code>" for language models."</p>
                        </div>
                    }.into_any();
                }
                let proxy = done.iter().any(|r| r.agg.judge == "proxy");
                let ids: Vec<(String, String)> = done.iter().map(|r| (r.id.clone(), r.label.clone())).collect();
                view! { <Boards runs=done proxy=proxy partition=partition set_partition=set_partition run_ids=ids /> }.into_any()
            }
        }}
        <crate::t1_score::IndependentT1 />
    }
}

#[component]
fn Boards(
    runs: Vec<Run>,
    proxy: bool,
    partition: ReadSignal<String>,
    set_partition: WriteSignal<String>,
    run_ids: Vec<(String, String)>,
) -> impl IntoView {
    let runs = StoredValue::new(runs);
    // Who scored the `llm` partition, when every run agrees (else each row label says it).
    let ensemble = runs.with_value(|r| {
        let first = r
            .first()
            .map(|x| x.agg.ensemble.clone())
            .unwrap_or_default();
        if r.iter().all(|x| x.agg.ensemble == first) {
            first
        } else {
            String::new()
        }
    });
    let ensemble = StoredValue::new(ensemble);
    let t2 = runs.with_value(|r| table2(r));
    let csv = move || {
        let p = partition.get();
        runs.with_value(|r| {
            let (tr, te) = table3(r, &p);
            format!(
                "{}{}{}",
                table2(r).csv("table2"),
                tr.csv(&format!("table3_reasoning_{p}")),
                te.csv(&format!("table3_exploration_{p}"))
            )
        })
    };
    let href = move || format!("data:text/csv;charset=utf-8,{}", api::enc(&csv()));
    // Every cell of every run, one line each (the runs' `aggregate.csv`, concatenated).
    let tidy = runs.with_value(|r| {
        let mut s = serenqa_shared::tidy::HEADER.to_string();
        for run in r {
            s.push_str(&serenqa_shared::tidy::lines(&run.id, &run.agg));
        }
        format!("data:text/csv;charset=utf-8,{}", api::enc(&s))
    });
    let chips = PARTITIONS
        .iter()
        .map(|(k, t)| {
            let k = k.to_string();
            let k2 = k.clone();
            let k3 = k.clone();
            let title = if k == "llm" { ensemble.with_value(|e| partition_title_for(&k, e)) } else { t.to_string() };
            view! { <button class="chip" class:on=move || partition.get() == k aria-pressed=move || (partition.get() == k2).to_string() on:click=move |_| set_partition.set(k3.clone())>{title}</button> }
        })
        .collect_view();
    let groups: Vec<String> = GROUPS.iter().map(|(_, t)| t.to_string()).collect();
    let bars = |hit: bool| -> Vec<(String, Vec<f64>)> {
        runs.with_value(|r| {
            r.iter()
                .filter_map(|r| {
                    r.agg.table2.as_ref().map(|t| {
                        (
                            r.label.clone(),
                            GROUPS
                                .iter()
                                .map(|(k, _)| {
                                    t.get(*k)
                                        .filter(|c| c.n > 0)
                                        .map(|c| if hit { c.hit } else { c.f1 })
                                        .unwrap_or(0.0)
                                })
                                .collect(),
                        )
                    })
                })
                .collect()
        })
    };
    let (bars_f1, bars_hit) = (bars(false), bars(true));
    let groups_hit = groups.clone();
    // Figure 3: one lower-triangle matrix per T2/T3 metric (they depend on the partition).
    let corr: Vec<(usize, Correlation)> = runs.with_value(|r| {
        (0..metric_titles().len())
            .filter(|&m| serenqa_shared::results::METRICS[m].task > 1)
            .map(|m| (m, partition_correlation(r, m)))
            .collect()
    });
    let corr_views = corr
        .into_iter()
        .map(|(m, (labels, matrix, counts))| {
            let key = metric_titles()[m].trim_end_matches('.').to_lowercase();
            view! {
                <div class="corr">
                    <h3>{metric_titles()[m]}</h3>
                    <CorrelationMatrix labels=labels matrix=matrix counts=counts lower=true testid=format!("correlation-{key}") />
                </div>
            }
        })
        .collect_view();
    let n_runs = runs.with_value(std::vec::Vec::len);
    view! {
        {proxy.then(|| view! { <div class="notice" role="note">"Judge scores of the offline pipeline (Faithful., Compre., Relevance) come from code-based proxies, not from LLM judges: they have their own columns, marked (proxy), and are never ranked against LLM judgments."</div> })}
        <section class="panel">
            <h2>"Knowledge retrieval (Table 2)"</h2>
            <ResultTable table=t2 caption="Hit / F1 / Executability (%) per query pattern".to_string() testid="table2" />
        </section>
        <section class="panel">
            <div class="row-between">
                <h2>"Reasoning and exploration (Table 3)"</h2>
                <span class="row">
                    <a class="button" download="serenqa-leaderboard.csv" href=href data-testid="csv" title="The tables as shown, for the selected partition">"Export CSV"</a>
                    <a class="button" download="serenqa-all-cells.csv" href=tidy data-testid="tidy-csv" title="One line per run, table, row, partition or pattern and metric, with n, interval and failed items">"All cells (tidy CSV)"</a>
                </span>
            </div>
            <div class="chips" role="group" aria-label="Partition strategy">{chips}</div>
            {move || {
                let p = partition.get();
                let (tr, te) = runs.with_value(|r| table3(r, &p));
                view! {
                    <ResultTable table=tr caption=format!("Subgraph reasoning · {}", ensemble.with_value(|e| partition_title_for(&p, e))) testid="table3-reasoning" />
                    <ResultTable table=te caption=format!("Serendipity exploration · {}", ensemble.with_value(|e| partition_title_for(&p, e))) testid="table3-exploration" />
                }
            }}
        </section>
        <CompareRuns run_ids=run_ids.clone() />
        <section class="panel">
            <h2>"Compass"</h2>
            <p class="muted">"Each metric scaled to 0–1 (percentages / 100, judge scores / 5) for the selected partition."</p>
            {move || {
                let p = partition.get();
                let series: Vec<(String, Vec<f64>)> = runs.with_value(|r| r.iter().map(|r| (r.label.clone(), metric_vector(&r.agg, &p).into_iter().map(|v| if v.is_finite() { v } else { 0.0 }).collect())).collect());
                view! { <Compass axes=metric_titles().iter().map(std::string::ToString::to_string).collect() series=series /> }
            }}
        </section>
        <section class="panel" data-testid="fig7">
            <h2>"Query pattern vs retrieval (Figure 7)"</h2>
            <h3>"F1"</h3>
            <GroupedBars categories=groups series=bars_f1 max=100.0 unit="% F1" />
            <h3>"Hit"</h3>
            <GroupedBars categories=groups_hit series=bars_hit max=100.0 unit="% Hit" />
        </section>
        <section class="panel" data-testid="fig5">
            <h2>"Model scale vs exploration (Figure 5)"</h2>
            {move || {
                let p = partition.get();
                let points: Vec<(String, f64, f64)> = runs.with_value(|r| r.iter().filter_map(|r| {
                    let size = r.params_b?;
                    let hit = r.agg.table3_exploration.as_ref().and_then(|t| t.get(&p)).filter(|c| c.n > 0)?.seren_hit;
                    Some((r.label.clone(), size, hit))
                }).collect());
                if points.is_empty() {
                    view! { <p class="muted" data-testid="fig5-empty">"No run here declares the size of its explorer model: add \"params_b\" (billions of parameters) to the model in the models file."</p> }.into_any()
                } else {
                    view! { <p class="muted">{format!("SerenHit ({}) against the explorer model's size (log scale).", partition_title(&p))}</p><LogScatter points=points x_unit="B" y_label="SerenHit".to_string() y_max=1.0 /> }.into_any()
                }
            }}
        </section>
        <section class="panel">
            <h2>"Model × metric heatmap"</h2>
            {move || {
                let p = partition.get();
                let (rows, cols, values) = runs.with_value(|r| heatmap_grid(r, &p));
                view! { <Heatmap rows=rows cols=cols values=values unit="each metric scaled to 0–1 (percentages / 100, judge scores / 5)" /> }
            }}
        </section>
        <section class="panel">
            <h2>"Partition strategies (Figure 3)"</h2>
            <p class="muted">{format!("Per metric, the Pearson correlation between partition strategies over the {n_runs} run(s) (lower triangles); n = runs behind each coefficient (n/a: fewer than two runs with both values, or no variation).")}</p>
            <div class="corr-grid">{corr_views}</div>
        </section>
        <TraceViewer run_ids=run_ids />
    }
}

/// Two runs compared question by question (`GET /api/runs/compare`): Δ = B − A per metric
/// and cell, its paired-bootstrap 95% interval, and the questions where one run wins and the
/// other loses.
#[component]
fn CompareRuns(run_ids: Vec<(String, String)>) -> impl IntoView {
    // `?a=&b=` in the address picks the two runs (a comparison can be linked); otherwise the
    // first two runs.
    let known = |id: Option<String>| id.filter(|id| run_ids.iter().any(|r| r.0 == *id));
    let first = known(crate::url_state::get("a"))
        .or_else(|| run_ids.first().map(|r| r.0.clone()))
        .unwrap_or_default();
    let second = known(crate::url_state::get("b"))
        .or_else(|| run_ids.get(1).map(|r| r.0.clone()))
        .unwrap_or_else(|| first.clone());
    let (a, set_a) = signal(first.clone());
    let (b, set_b) = signal(second.clone());
    // The address follows the choice once the user makes one.
    let pick = move |which: &'static str, id: String| {
        crate::url_state::set(&[(which, Some(id.clone()))]);
        if which == "a" {
            set_a.set(id);
        } else {
            set_b.set(id);
        }
    };
    let (reply, set_reply) = signal(None::<Result<Comparison, String>>);
    Effect::new(move |_| {
        let (x, y) = (a.get(), b.get());
        set_reply.set(None);
        if x.is_empty() || y.is_empty() {
            return;
        }
        spawn_local(async move {
            set_reply.set(Some(
                api::get_json(&format!(
                    "/api/runs/compare?a={}&b={}",
                    api::enc(&x),
                    api::enc(&y)
                ))
                .await,
            ));
        });
    });
    let options = move |selected: String| {
        run_ids.iter().map(|(id, label)| view! { <option value=id.clone() selected=*id == selected>{label.clone()}</option> }).collect_view()
    };
    let opts_a = options.clone()(first);
    let opts_b = options(second);
    view! {
        <section class="panel" data-testid="compare" id="compare">
            <h2>"Compare two runs"</h2>
            <p class="muted">"Δ = B − A over the questions both runs answered, with a paired-bootstrap 95% interval (questions resampled together); an interval that excludes 0 is a difference the questions support. A wins / B wins: questions where one run scores higher and the other lower."</p>
            <div class="row">
                <label>"Run A " <select data-testid="compare-a" on:change=move |ev| pick("a", event_target_value(&ev))>{opts_a}</select></label>
                <label>"Run B " <select data-testid="compare-b" on:change=move |ev| pick("b", event_target_value(&ev))>{opts_b}</select></label>
                <a data-testid="compare-link" href=move || format!("/leaderboard?a={}&b={}#compare", api::enc(&a.get()), api::enc(&b.get()))>"Link to this comparison"</a>
            </div>
            {move || match reply.get() {
                None => view! { <p class="loading">"Comparing…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                Some(Ok(c)) => view! { <CompareTable c=c /> }.into_any(),
            }}
        </section>
    }
}

#[component]
fn CompareTable(c: Comparison) -> impl IntoView {
    // Each question links to the two runs' traces side by side.
    let (run_a, run_b) = (c.a.id.clone(), c.b.id.clone());
    let qlist = move |v: &[u32], total: usize| {
        if total == 0 {
            return view! { "none" }.into_any();
        }
        let links = v
            .iter()
            .take(12)
            .enumerate()
            .map(|(i, &q)| view! { {(i > 0).then_some(", ")}<a href=crate::trace::trace_href(&run_a, q, Some(&run_b))>{format!("Q{q}")}</a> })
            .collect_view();
        let more = (total > 12).then(|| format!(" … ({total})"));
        view! { {links}{more} }.into_any()
    };
    let rows = c
        .rows
        .iter()
        .filter(|r| r.row != "without" || c.rows.iter().any(|w| w.row == "without" && w.n > 0))
        .map(|r| {
            let d = if r.table == "table2" { 2 } else { 3 };
            let cell = if r.table == "table2" { group_title(&r.column) } else { partition_title(&r.column) };
            let row = match r.row.as_str() {
                "without" => " (w.o. summary)",
                _ => "",
            };
            let (ma, mb) = if r.n > 0 { (format!("{:.d$}", r.mean_a), format!("{:.d$}", r.mean_b)) } else { ("–".into(), "–".into()) };
            let delta = match (r.delta, r.ci) {
                (Some(x), Some(ci)) => format!("{x:+.d$} [{:+.d$}, {:+.d$}]", ci.lo, ci.hi),
                _ => "–".into(),
            };
            let sig = match r.ci {
                Some(ci) if ci.lo > 0.0 => "num delta up",
                Some(ci) if ci.hi < 0.0 => "num delta down",
                _ => "num delta",
            };
            let metric = format!("{}{}", metric_title(&r.metric), if r.note.is_some() { " ⚠" } else { "" });
            view! {
                <tr data-metric=r.metric.clone() data-column=r.column.clone() data-row=r.row.clone()>
                    <th scope="row">{format!("{cell}{row}")}</th>
                    <td title=r.note.clone().unwrap_or_default()>{metric}</td>
                    <td class="num">{r.n}</td>
                    <td class="num">{ma}</td>
                    <td class="num">{mb}</td>
                    <td class=sig data-testid="delta">{delta}</td>
                    <td class="qids">{qlist(&r.a_wins, r.a_wins_n)}</td>
                    <td class="qids">{qlist(&r.b_wins, r.b_wins_n)}</td>
                    <td class="num">{r.ties}</td>
                </tr>
            }
        })
        .collect_view();
    let note = c.rows.iter().find_map(|r| r.note.clone());
    let oracle = [&c.a, &c.b]
        .iter()
        .any(|r| r.roles.get("retrieval").is_some_and(|m| m == "offline"));
    view! {
        <p class="muted">{format!("A: {} · B: {} · {} resamples", c.a.summary(), c.b.summary(), c.reps)}</p>
        {(!c.verdict.is_empty()).then(|| view! { <p class="verdict" data-testid="compare-verdict"><strong>"Verdict: "</strong>{c.verdict.clone()}</p> })}
        {note.map(|n| view! { <p class="notice" role="note">{format!("⚠ {n}.")}</p> })}
        {oracle.then(|| view! { <p class="muted">{format!("Table 2 rows of an offline run: {}.", serenqa_shared::results::GRAMMAR_ORACLE)}</p> })}
        <div class="scroll-x">
            <table class="results compare" data-testid="compare-table">
                <thead><tr><th>"Cell"</th><th>"Metric"</th><th class="num">"n (pairs)"</th><th class="num">"A"</th><th class="num">"B"</th><th class="num">"Δ = B − A [95% CI]"</th><th>"A wins (B loses)"</th><th>"B wins (A loses)"</th><th class="num">"ties"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The questions of a run, each linked to its trace page (`/runs/<run>/trace/<qid>`).
#[component]
fn TraceViewer(run_ids: Vec<(String, String)>) -> impl IntoView {
    let first = run_ids.first().map(|r| r.0.clone()).unwrap_or_default();
    let (run, set_run) = signal(first);
    let (questions, set_questions) = signal(None::<Result<Vec<RunQuestion>, String>>);
    Effect::new(move |_| {
        let id = run.get();
        set_questions.set(None);
        if id.is_empty() {
            return;
        }
        spawn_local(async move {
            set_questions.set(Some(
                api::get_json(&format!("/api/runs/{}/questions", api::enc(&id))).await,
            ));
        });
    });
    let options = run_ids
        .iter()
        .map(|(id, label)| view! { <option value=id.clone()>{format!("{label} · {id}")}</option> })
        .collect_view();
    view! {
        <section class="panel" id="traces" data-testid="traces">
            <h2>"Question traces"</h2>
            <p class="muted">"Each question of a run on its own page: the Cypher, predicted vs gold answers, every metric, the beam's paths and the summaries, and another run beside it."</p>
            <label>"Run " <select data-testid="traces-run" on:change=move |ev| set_run.set(event_target_value(&ev))>{options}</select></label>
            {move || match questions.get() {
                None => view! { <p class="loading">"Loading questions…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error">{e}</p> }.into_any(),
                Some(Ok(qs)) => {
                    let id = run.get_untracked();
                    view! {
                        <ul class="question-list">
                            {qs.into_iter().take(300).map(|q| view! {
                                <li><a href=crate::trace::trace_href(&id, q.qid, None)>{format!("Q{}", q.qid)}</a>" "<span class="muted">{format!("[{}] ", q.pattern)}</span>{q.question}</li>
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }
            }}
        </section>
    }
}
