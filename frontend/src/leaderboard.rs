//! Leaderboard (reviewers): every stored evaluation run in the paper's Table 2 and Table 3
//! layouts — sortable, best value bold and second underlined, a partition toggle, CSV export —
//! plus a compass chart per model, retrieval by query pattern, a model × metric heatmap, the
//! correlation of the three partition strategies (the paper's Figure 3), and a drill-down
//! into one question's trace.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::Deserialize;
use serenqa_shared::results::{best_two, partition_title, pearson, Aggregate, GROUPS, PARTITIONS};

use crate::api;
use crate::charts::{CorrelationMatrix, Compass, GroupedBars, Heatmap};

#[derive(Clone, Debug, Deserialize, Default)]
pub struct Manifest {
    #[serde(default)]
    pub status: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunEntry {
    pub id: String,
    #[serde(default)]
    pub manifest: Option<Manifest>,
    #[serde(default)]
    pub aggregate: Option<Aggregate>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunsReply {
    pub runs: Vec<RunEntry>,
    /// The runs directory's name (never a full server path).
    #[serde(default)]
    pub runs_dir: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct QuestionSummary {
    pub qid: u32,
    #[serde(default)]
    pub pattern: String,
    #[serde(default)]
    pub question: String,
}

/// A table: a label per row, a value per (row, column); NaN = missing.
#[derive(Clone, Debug)]
struct Table {
    columns: Vec<(String, String)>, // (group heading, column title)
    rows: Vec<(String, Vec<f64>)>,
    digits: usize,
}

impl Table {
    fn csv(&self, name: &str) -> String {
        let mut s = format!("table,row,{}\n", self.columns.iter().map(|(g, c)| csv_field(&format!("{g} {c}").trim().to_string())).collect::<Vec<_>>().join(","));
        for (label, vals) in &self.rows {
            let cells: Vec<String> = vals.iter().map(|v| if v.is_finite() { format!("{v:.4}") } else { String::new() }).collect();
            s.push_str(&format!("{},{},{}\n", csv_field(name), csv_field(label), cells.join(",")));
        }
        s
    }
}

/// A CSV cell, quoted and neutralised against spreadsheet formulas (`serenqa_shared::csv`).
pub(crate) fn csv_field(s: &str) -> String {
    serenqa_shared::csv::cell(s)
}

fn table2(runs: &[(String, Aggregate)]) -> Table {
    let mut columns = Vec::new();
    for (_, title) in GROUPS {
        for m in ["Hit", "F1", "Exe"] {
            columns.push((title.to_string(), m.to_string()));
        }
    }
    let rows = runs
        .iter()
        .filter(|(_, a)| a.table2.is_some())
        .map(|(label, a)| {
            let t2 = a.table2.clone().unwrap_or_default();
            let mut vals = Vec::new();
            for (k, _) in GROUPS {
                let c = t2.get(*k);
                vals.push(c.map(|c| c.hit).unwrap_or(f64::NAN));
                vals.push(c.map(|c| c.f1).unwrap_or(f64::NAN));
                vals.push(c.map(|c| c.exe).unwrap_or(f64::NAN));
            }
            // The offline retrieval agent parses the generator's own sentence shapes: say so.
            let label = if label.starts_with("offline") { format!("{label} — grammar oracle (shares the generator's templates)") } else { label.clone() };
            (label, vals)
        })
        .collect();
    Table { columns, rows, digits: 2 }
}

fn table3(runs: &[(String, Aggregate)], partition: &str) -> (Table, Table) {
    let reasoning_cols = vec![("".to_string(), "Faithful.".to_string()), ("".into(), "Compre.".into()), ("".into(), "SerenCov".into())];
    let explore_cols = vec![("".to_string(), "Relevance".to_string()), ("".into(), "TypeMatch".into()), ("".into(), "SerenHit".into())];
    let mut r_rows = Vec::new();
    let mut e_rows = Vec::new();
    for (label, a) in runs {
        if let Some(c) = a.table3_reasoning.as_ref().and_then(|t| t.get(partition)) {
            r_rows.push((label.clone(), vec![c.faithfulness, c.comprehensiveness, c.seren_cov]));
        }
        if let Some(c) = a.table3_exploration.as_ref().and_then(|t| t.get(partition)) {
            e_rows.push((label.clone(), vec![c.relevance, c.type_match, c.seren_hit]));
        }
        if let Some(c) = a.table3_exploration_wo_summary.as_ref().and_then(|t| t.get(partition)) {
            e_rows.push((format!("{label} (w.o. summary)"), vec![c.relevance, c.type_match, c.seren_hit]));
        }
    }
    (Table { columns: reasoning_cols, rows: r_rows, digits: 3 }, Table { columns: explore_cols, rows: e_rows, digits: 3 })
}

/// A sortable table with the best value per column bold and the second underlined.
#[component]
fn ResultTable(table: Table, caption: String, testid: &'static str) -> impl IntoView {
    let (sort, set_sort) = signal(None::<(usize, bool)>); // (column, descending)
    let table = StoredValue::new(table);
    let ncols = table.with_value(|t| t.columns.len());
    let marks: Vec<(Option<usize>, Option<usize>)> = table.with_value(|t| {
        (0..ncols).map(|c| best_two(&t.rows.iter().map(|r| r.1[c]).collect::<Vec<_>>())).collect()
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
        let cells = groups.iter().map(|(g, n)| view! { <th class="group-head" colspan=*n>{g.clone()}</th> }).collect_view();
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
    let body = move || {
        let mut idx: Vec<usize> = table.with_value(|t| (0..t.rows.len()).collect());
        if let Some((c, desc)) = sort.get() {
            table.with_value(|t| {
                idx.sort_by(|&a, &b| {
                    let (x, y) = (t.rows[a].1[c], t.rows[b].1[c]);
                    let o = x.total_cmp(&y);
                    if desc { o.reverse() } else { o }
                })
            });
        }
        idx.into_iter()
            .map(|ri| {
                let (label, vals, digits) = table.with_value(|t| (t.rows[ri].0.clone(), t.rows[ri].1.clone(), t.digits));
                let cells = vals
                    .iter()
                    .enumerate()
                    .map(|(c, v)| {
                        let (best, second) = marks.with_value(|m| m[c]);
                        let text = if v.is_finite() { format!("{v:.digits$}") } else { "–".to_string() };
                        let class = if best == Some(ri) { "num best" } else if second == Some(ri) { "num second" } else { "num" };
                        view! { <td class=class>{text}</td> }
                    })
                    .collect_view();
                view! { <tr><th scope="row">{label}</th>{cells}</tr> }
            })
            .collect_view()
    };
    view! {
        <div class="scroll-x">
            <table class="results" data-testid=testid>
                <caption>{caption}</caption>
                <thead>{group_head}<tr><th>"Model"</th>{head}</tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}

/// Normalised metric vector of a run (all in [0, 1]) for the compass and the heatmap.
fn metric_vector(a: &Aggregate, partition: &str) -> Vec<f64> {
    let t2 = a.table2.as_ref().and_then(|t| t.get("all"));
    let r = a.table3_reasoning.as_ref().and_then(|t| t.get(partition));
    let e = a.table3_exploration.as_ref().and_then(|t| t.get(partition));
    vec![
        t2.map(|c| c.hit / 100.0).unwrap_or(f64::NAN),
        t2.map(|c| c.f1 / 100.0).unwrap_or(f64::NAN),
        t2.map(|c| c.exe / 100.0).unwrap_or(f64::NAN),
        r.map(|c| c.faithfulness / 5.0).unwrap_or(f64::NAN),
        r.map(|c| c.comprehensiveness / 5.0).unwrap_or(f64::NAN),
        r.map(|c| c.seren_cov).unwrap_or(f64::NAN),
        e.map(|c| c.relevance / 5.0).unwrap_or(f64::NAN),
        e.map(|c| c.type_match).unwrap_or(f64::NAN),
        e.map(|c| c.seren_hit).unwrap_or(f64::NAN),
    ]
}

const METRICS: &[&str] = &["Hit", "F1", "Exe", "Faithful.", "Compre.", "SerenCov", "Relevance", "TypeMatch", "SerenHit"];

/// Pearson correlation between partition strategies over every (run, T2/T3 metric) value.
fn partition_correlation(runs: &[(String, Aggregate)]) -> (Vec<String>, Vec<Vec<Option<f64>>>) {
    let keys: Vec<&str> = PARTITIONS.iter().map(|(k, _)| *k).collect();
    let vectors: Vec<Vec<f64>> = keys
        .iter()
        .map(|p| runs.iter().flat_map(|(_, a)| metric_vector(a, p)[3..].to_vec()).collect())
        .collect();
    let n = keys.len();
    let mut m = vec![vec![None; n]; n];
    for i in 0..n {
        for j in 0..n {
            // Only positions where both partitions have a value.
            let (x, y): (Vec<f64>, Vec<f64>) = vectors[i].iter().zip(&vectors[j]).filter(|(a, b)| a.is_finite() && b.is_finite()).map(|(a, b)| (*a, *b)).unzip();
            m[i][j] = pearson(&x, &y);
        }
    }
    (PARTITIONS.iter().map(|(_, t)| t.to_string()).collect(), m)
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
        <p class="muted">"Every stored evaluation run. Click a column to sort; the best value is bold, the second underlined."</p>
        {move || match runs.get() {
            None => view! { <p class="loading">"Loading runs…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            Some(Ok(r)) => {
                let done: Vec<(String, Aggregate)> = r.runs.iter().filter_map(|e| e.aggregate.clone().map(|a| {
                    let label = if a.label.is_empty() { e.id.clone() } else { a.label.clone() };
                    let status = e.manifest.as_ref().map(|m| m.status.clone()).unwrap_or_default();
                    (if status == "running" { format!("{label} (running)") } else { label }, a)
                })).collect();
                // Same label twice (e.g. two offline runs with other beam settings): add the run id.
                let mut done = done;
                let labels: Vec<String> = done.iter().map(|d| d.0.clone()).collect();
                let ids: Vec<String> = r.runs.iter().filter(|e| e.aggregate.is_some()).map(|e| e.id.clone()).collect();
                for (i, d) in done.iter_mut().enumerate() {
                    if labels.iter().filter(|l| **l == labels[i]).count() > 1 {
                        if let Some(id) = ids.get(i) {
                            d.0 = format!("{} · {}", d.0, id);
                        }
                    }
                }
                if done.is_empty() {
                    let dir = if r.runs_dir.is_empty() { "runs".to_string() } else { r.runs_dir.clone() };
                    return view! {
                        <div class="notice" data-testid="no-runs">
                            <p>"No evaluation run in the server's runs directory "<code>{dir.clone()}</code>" yet. A fresh server computes an offline baseline run in the background (about a minute on Hetionet); this page looks again every 10 seconds."</p>
                            <p>"To add runs yourself: "<code>{format!("serenqa eval --runs {dir}")}</code>" (offline agents), or with "<code>"--models models.json"</code>" for language models."</p>
                        </div>
                    }.into_any();
                }
                let proxy = done.iter().any(|(_, a)| a.judge == "proxy");
                let ids: Vec<(String, String)> = r.runs.iter().map(|e| (e.id.clone(), e.aggregate.as_ref().map(|a| a.label.clone()).unwrap_or_default())).collect();
                view! { <Boards runs=done proxy=proxy partition=partition set_partition=set_partition run_ids=ids /> }.into_any()
            }
        }}
        <crate::t1_score::IndependentT1 />
    }
}

#[component]
fn Boards(runs: Vec<(String, Aggregate)>, proxy: bool, partition: ReadSignal<String>, set_partition: WriteSignal<String>, run_ids: Vec<(String, String)>) -> impl IntoView {
    let runs = StoredValue::new(runs);
    let t2 = runs.with_value(|r| table2(r));
    let csv = move || {
        let p = partition.get();
        runs.with_value(|r| {
            let (tr, te) = table3(r, &p);
            format!("{}{}{}", table2(r).csv("table2"), tr.csv(&format!("table3_reasoning_{p}")), te.csv(&format!("table3_exploration_{p}")))
        })
    };
    let href = move || format!("data:text/csv;charset=utf-8,{}", api::enc(&csv()));
    let chips = PARTITIONS
        .iter()
        .map(|(k, t)| {
            let k = k.to_string();
            let k2 = k.clone();
            let k3 = k.clone();
            view! { <button class="chip" class:on=move || partition.get() == k aria-pressed=move || (partition.get() == k2).to_string() on:click=move |_| set_partition.set(k3.clone())>{*t}</button> }
        })
        .collect_view();
    let groups: Vec<String> = GROUPS.iter().map(|(_, t)| t.to_string()).collect();
    let bars: Vec<(String, Vec<f64>)> = runs.with_value(|r| {
        r.iter()
            .filter_map(|(l, a)| a.table2.as_ref().map(|t| (l.clone(), GROUPS.iter().map(|(k, _)| t.get(*k).map(|c| c.f1).unwrap_or(0.0)).collect())))
            .collect()
    });
    let (corr_labels, corr) = runs.with_value(|r| partition_correlation(r));
    view! {
        {proxy.then(|| view! { <div class="notice" role="note">"Judge scores marked proxy (Faithful., Compre., Relevance) come from code-based proxies of the offline pipeline, not from LLM judges."</div> })}
        <section class="panel">
            <h2>"Knowledge retrieval (Table 2)"</h2>
            <ResultTable table=t2 caption="Hit / F1 / Executability (%) per query pattern".to_string() testid="table2" />
        </section>
        <section class="panel">
            <div class="row-between">
                <h2>"Reasoning and exploration (Table 3)"</h2>
                <a class="button" download="serenqa-leaderboard.csv" href=href data-testid="csv">"Export CSV"</a>
            </div>
            <div class="chips" role="group" aria-label="Partition strategy">{chips}</div>
            {move || {
                let p = partition.get();
                let (tr, te) = runs.with_value(|r| table3(r, &p));
                view! {
                    <ResultTable table=tr caption=format!("Subgraph reasoning · {}", partition_title(&p)) testid="table3-reasoning" />
                    <ResultTable table=te caption=format!("Serendipity exploration · {}", partition_title(&p)) testid="table3-exploration" />
                }
            }}
        </section>
        <section class="panel">
            <h2>"Compass"</h2>
            <p class="muted">"Each metric scaled to 0–1 (percentages / 100, judge scores / 5) for the selected partition."</p>
            {move || {
                let p = partition.get();
                let series: Vec<(String, Vec<f64>)> = runs.with_value(|r| r.iter().map(|(l, a)| (l.clone(), metric_vector(a, &p).into_iter().map(|v| if v.is_finite() { v } else { 0.0 }).collect())).collect());
                view! { <Compass axes=METRICS.iter().map(|s| s.to_string()).collect() series=series /> }
            }}
        </section>
        <section class="panel">
            <h2>"Query pattern vs retrieval"</h2>
            <GroupedBars categories=groups series=bars max=100.0 unit="% F1" />
        </section>
        <section class="panel">
            <h2>"Model × metric heatmap"</h2>
            {move || {
                let p = partition.get();
                let (rows, values): (Vec<String>, Vec<Vec<f64>>) = runs.with_value(|r| r.iter().map(|(l, a)| (l.clone(), metric_vector(a, &p))).unzip());
                view! { <Heatmap rows=rows cols=METRICS.iter().map(|s| s.to_string()).collect() values=values /> }
            }}
        </section>
        <section class="panel">
            <h2>"Partition strategies (Figure 3)"</h2>
            <p class="muted">"Pearson correlation between partition strategies over every run's reasoning and exploration metrics."</p>
            <CorrelationMatrix labels=corr_labels matrix=corr />
        </section>
        <TraceViewer run_ids=run_ids />
    }
}

/// Drill-down: pick a run and a question, see its Cypher, beam paths, summaries and scores.
#[component]
fn TraceViewer(run_ids: Vec<(String, String)>) -> impl IntoView {
    let first = run_ids.first().map(|r| r.0.clone()).unwrap_or_default();
    let (run, set_run) = signal(first);
    let (questions, set_questions) = signal(None::<Result<Vec<QuestionSummary>, String>>);
    let (trace, set_trace) = signal(None::<Result<serde_json::Value, String>>);
    Effect::new(move |_| {
        let id = run.get();
        set_trace.set(None);
        if id.is_empty() {
            return;
        }
        spawn_local(async move {
            set_questions.set(Some(api::get_json(&format!("/api/runs/{}/questions", api::enc(&id))).await));
        });
    });
    let open = move |qid: u32| {
        let id = run.get_untracked();
        spawn_local(async move {
            set_trace.set(Some(api::get_json(&format!("/api/runs/{}/questions/{qid}", api::enc(&id))).await));
        });
    };
    let options = run_ids.iter().map(|(id, label)| view! { <option value=id.clone()>{format!("{label} · {id}")}</option> }).collect_view();
    view! {
        <section class="panel" data-testid="traces">
            <h2>"Question traces"</h2>
            <label>"Run " <select on:change=move |ev| set_run.set(event_target_value(&ev))>{options}</select></label>
            {move || match questions.get() {
                None => view! { <p class="loading">"Loading questions…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error">{e}</p> }.into_any(),
                Some(Ok(qs)) => view! {
                    <ul class="question-list">
                        {qs.into_iter().take(300).map(|q| view! {
                            <li><button class="link-button" on:click=move |_| open(q.qid)>{format!("Q{} ", q.qid)}</button> <span class="muted">{format!("[{}] ", q.pattern)}</span>{q.question}</li>
                        }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            {move || trace.get().map(|t| match t {
                Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                Ok(v) => view! { <TraceView trace=v /> }.into_any(),
            })}
        </section>
    }
}

fn text(v: &serde_json::Value, key: &str) -> String {
    match v.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

#[component]
fn TraceView(trace: serde_json::Value) -> impl IntoView {
    let t1: Vec<serde_json::Value> = trace.get("t1").and_then(|x| x.as_array()).cloned().unwrap_or_default();
    let t3: Vec<serde_json::Value> = trace.get("t3").and_then(|x| x.as_array()).cloned().unwrap_or_default();
    let t1v = t1
        .into_iter()
        .map(|r| {
            view! {
                <article class="trace">
                    <h3>{format!("Q{} · {}", text(&r, "qid"), text(&r, "question"))}</h3>
                    <p class="muted">{format!("agent {} · executable {} · hit {} · F1 {}", text(&r, "agent"), text(&r, "executable"), text(&r, "hit"), text(&r, "f1"))}</p>
                    <pre data-testid="trace-cypher">{text(&r, "cypher")}</pre>
                    {(!text(&r, "error").is_empty()).then(|| view! { <p class="error">{text(&r, "error")}</p> })}
                </article>
            }
        })
        .collect_view();
    let t3v = t3
        .into_iter()
        .map(|r| {
            let paths: Vec<String> = r.get("paths").and_then(|p| p.as_array()).map(|a| a.iter().take(10).map(|p| p.as_str().map(str::to_string).unwrap_or_else(|| p.to_string())).collect()).unwrap_or_default();
            let summaries: Vec<String> = r.get("summaries").and_then(|p| p.as_array()).map(|a| a.iter().map(|p| p.as_str().map(str::to_string).unwrap_or_else(|| p.to_string())).collect()).unwrap_or_default();
            view! {
                <article class="trace">
                    <h3>{text(&r, "key")}</h3>
                    <p class="muted">{format!("T2 {} · T3 {}", r.get("t2").map(|x| x.to_string()).unwrap_or_default(), r.get("t3").map(|x| x.to_string()).unwrap_or_default())}</p>
                    <h4>"Beam paths"</h4>
                    <ol class="mono">{paths.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ol>
                    <h4>"Summaries"</h4>
                    {summaries.into_iter().map(|s| view! { <p>{s}</p> }).collect_view()}
                </article>
            }
        })
        .collect_view();
    view! { <div data-testid="trace">{t1v}{t3v}</div> }
}

