//! One question of an evaluation run, readable, at its own address
//! (`/runs/<run>/trace/<qid>`, `?vs=<run>` for a second run beside it): the question, the
//! Cypher, predicted vs gold answers with the hits marked, each metric of the question, and
//! per partition and summary mode the beam's paths as a tree and the summaries, and every
//! model call's prompt and reply, folded (`GET /api/runs/{id}/trace/{qid}`, typed
//! `serenqa_shared::api::QuestionTrace`).

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};
use serenqa_shared::api::{
    ExplorationTrace, QuestionTrace, RetrievalTrace, TraceCall, TraceEntity, TraceFailure,
    TraceMetric, TraceTreeNode,
};

use crate::api;
use serenqa_shared::api::RunsReply;

/// Entities shown before the rest folds away.
const SHOWN: usize = 25;

/// The address of a question's trace (`vs`: a second run beside it).
pub fn trace_href(run: &str, qid: u32, vs: Option<&str>) -> String {
    let mut h = format!("/runs/{}/trace/{qid}", api::enc(run));
    if let Some(v) = vs.filter(|v| !v.is_empty()) {
        h.push_str(&format!("?vs={}", api::enc(v)));
    }
    h
}

#[component]
pub fn TracePage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let run = Memo::new(move |_| params.read().get("run").unwrap_or_default());
    let qid = Memo::new(move |_| params.read().get("qid").unwrap_or_default());
    let vs = Memo::new(move |_| query.read().get("vs").unwrap_or_default());
    // The runs to compare with (labels as the leaderboard shows them).
    let (runs, set_runs) = signal(Vec::<(String, String)>::new());
    spawn_local(async move {
        if let Ok(r) = api::get_json::<RunsReply>("/api/runs").await {
            set_runs.set(
                r.runs
                    .into_iter()
                    .filter(|e| e.aggregate.is_some())
                    .map(|e| (e.id.clone(), e.settings.summary()))
                    .collect(),
            );
        }
    });
    // Which exploration (partition and summary mode) both columns show.
    let selected = RwSignal::new(None::<(String, bool)>);
    let navigate = use_navigate();
    let pick_vs = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        let q: u32 = qid.get_untracked().parse().unwrap_or(0);
        navigate(
            &trace_href(&run.get_untracked(), q, Some(&v)),
            Default::default(),
        );
    };
    let picker = move || {
        let here = run.get();
        let other = vs.get();
        let options = runs
            .get()
            .into_iter()
            .filter(|(id, _)| *id != here)
            .map(|(id, label)| {
                let sel = id == other;
                view! { <option value=id.clone() selected=sel>{format!("{label} · {id}")}</option> }
            })
            .collect_view();
        view! {
            <label class="compare-pick">"Compare with run "
                <select data-testid="trace-vs" on:change=pick_vs.clone()>
                    <option value="" selected=other.is_empty()>"— none —"</option>
                    {options}
                </select>
            </label>
        }
    };
    view! {
        <div class="crumbs row-between"><a href="/leaderboard#traces">"← Leaderboard"</a>{picker}</div>
        {move || {
            let (r, q, v) = (run.get(), qid.get(), vs.get());
            match q.parse::<u32>() {
                Err(_) => view! { <p class="error" role="alert">{format!("“{q}” is not a question number.")}</p> }.into_any(),
                Ok(q) => view! { <TraceLoader run=r vs=v qid=q selected=selected /> }.into_any(),
            }
        }}
    }
}

/// Fetches one or two runs' trace of a question and lays them out (side by side, stacked on
/// a phone).
#[component]
fn TraceLoader(
    run: String,
    vs: String,
    qid: u32,
    selected: RwSignal<Option<(String, bool)>>,
) -> impl IntoView {
    let (main, set_main) = signal(None::<Result<QuestionTrace, String>>);
    let (other, set_other) = signal(None::<Result<QuestionTrace, String>>);
    let pair = !vs.is_empty();
    {
        let run = run.clone();
        spawn_local(async move {
            set_main.set(Some(
                api::get_json(&format!("/api/runs/{}/trace/{qid}", api::enc(&run))).await,
            ));
        });
    }
    if pair {
        let vs = vs.clone();
        spawn_local(async move {
            set_other.set(Some(
                api::get_json(&format!("/api/runs/{}/trace/{qid}", api::enc(&vs))).await,
            ));
        });
    }
    let vs_nav = vs.clone();
    let head = move || {
        main.get().and_then(std::result::Result::ok).map(|t| {
            let other = (!vs_nav.is_empty()).then_some(vs_nav.as_str());
            let prev = t.prev_qid.map(|p| view! { <a href=trace_href(&t.run_id, p, other) data-testid="trace-prev">{format!("← previous question (Q{p})")}</a> });
            let next = t.next_qid.map(|n| view! { <a href=trace_href(&t.run_id, n, other) data-testid="trace-next">{format!("next question (Q{n}) →")}</a> });
            view! {
                <header class="trace-head">
                    <h1 data-testid="trace-question">{t.question.clone()}</h1>
                    <p class="muted">{format!("Question {} · pattern {} · ", t.qid, t.pattern)}<a href=format!("/api/runs/{}/questions/{}", api::enc(&t.run_id), t.qid) target="_blank">"raw trace (JSON)"</a></p>
                    <nav class="row" aria-label="Questions of this run">{prev}{next}</nav>
                </header>
            }
        })
    };
    let column = move |t: ReadSignal<Option<Result<QuestionTrace, String>>>, side: &'static str| {
        move || match t.get() {
            None => view! { <p class="loading">"Loading the trace…"</p> }.into_any(),
            Some(Err(e)) => {
                view! { <p class="error" role="alert" data-testid="trace-error">{e}</p> }.into_any()
            }
            Some(Ok(t)) => {
                view! { <TraceColumn t=t side=if pair { side } else { "" } selected=selected /> }
                    .into_any()
            }
        }
    };
    view! {
        {head}
        <div class="trace-cols" class:pair=pair data-testid="trace">
            <div class="trace-col" data-testid="trace-a">{column(main, "A")}</div>
            {pair.then(|| view! { <div class="trace-col" data-testid="trace-b">{column(other, "B")}</div> })}
        </div>
    }
}

fn metric_chips(ms: &[TraceMetric]) -> impl IntoView {
    let chips = ms
        .iter()
        .map(|m| {
            let d = if m.max > 1.0 { 1 } else { 2 };
            let share = if m.max > 0.0 { (m.value / m.max).clamp(0.0, 1.0) } else { 0.0 };
            let judge = match m.judge.as_str() {
                "" => String::new(),
                "proxy" => " · offline proxy judge".into(),
                j => format!(" · judge {j}"),
            };
            view! {
                <li class="metric" data-metric=m.key.clone() title=format!("{}{judge}", m.meaning)>
                    <span class="metric-name">{m.label.clone()}</span>
                    <span class="metric-value">{format!("{:.d$}", m.value)}<span class="muted">{format!(" / {}", m.max)}</span></span>
                    <span class="metric-bar"><span style=format!("width:{:.0}%", share * 100.0)></span></span>
                </li>
            }
        })
        .collect_view();
    view! { <ul class="metrics" data-testid="trace-metrics">{chips}</ul> }
}

fn entity_label(e: &TraceEntity) -> AnyView {
    let text = if e.name.is_empty() {
        e.id.clone()
    } else {
        e.name.clone()
    };
    let dot = view! { <span class="kind-dot" style=format!("background:{}", crate::kind_colour(&e.kind)) title=e.kind.clone()></span> };
    if e.name.is_empty() || e.kind.is_empty() {
        view! { {dot}<span title=format!("{} (not in this server's graph)", e.id)>{text}</span> }
            .into_any()
    } else {
        view! { {dot}<a href=format!("/entity/{}", api::enc(&format!("{}::{}", e.kind, e.id))) title=format!("{} · {}", e.kind, e.id)>{text}</a> }.into_any()
    }
}

/// A list of entities with the hits marked (`mark`: what a hit means here).
fn entity_list(
    title: &str,
    items: &[TraceEntity],
    mark: &'static str,
    testid: &'static str,
) -> impl IntoView {
    let hits = items.iter().filter(|e| e.hit).count();
    // Hits first, then the rest, each in the recorded order.
    let mut ordered: Vec<&TraceEntity> = items.iter().filter(|e| e.hit).collect();
    ordered.extend(items.iter().filter(|e| !e.hit));
    let li = |e: &TraceEntity| {
        let hit = e.hit;
        view! { <li class:hit=hit>{hit.then(|| view! { <span class="tick" aria-label=mark title=mark>"✓"</span> })}{entity_label(e)}</li> }
    };
    let first = ordered.iter().take(SHOWN).map(|&e| li(e)).collect_view();
    let rest: Vec<&TraceEntity> = ordered.iter().skip(SHOWN).copied().collect();
    let more = (!rest.is_empty()).then(|| {
        let n = rest.len();
        let items = rest.into_iter().map(li).collect_view();
        view! { <details><summary>{format!("{n} more")}</summary><ul class="entities">{items}</ul></details> }
    });
    view! {
        <div class="entity-list" data-testid=testid>
            <h4>{format!("{title} ({}", items.len())}{(hits > 0).then(|| format!(", {hits} ✓"))}")"</h4>
            {if items.is_empty() { view! { <p class="muted">"none"</p> }.into_any() } else { view! { <ul class="entities">{first}</ul> }.into_any() }}
            {more}
        </div>
    }
}

fn retrieval_view(r: RetrievalTrace) -> impl IntoView {
    let status = if r.executable {
        format!("ran · {} rows", r.rows)
    } else {
        "did not run".to_string()
    };
    view! {
        <section class="trace-part" data-testid="trace-retrieval">
            <h3>"Knowledge retrieval (T1)"</h3>
            <p class="muted">{format!("agent {} · {status}", r.agent)}</p>
            {metric_chips(&r.metrics)}
            <pre class="cypher" data-testid="trace-cypher">{r.cypher.clone().unwrap_or_else(|| "(no query)".into())}</pre>
            {r.error.clone().map(|e| view! { <p class="error">{e}</p> })}
            <div class="versus">
                {entity_list("Predicted", &r.predicted, "a gold answer", "trace-predicted")}
                {entity_list("Gold", &r.gold, "found by the query", "trace-gold")}
            </div>
            {calls_view(&r.model_calls)}
        </section>
    }
}

/// The question's items whose model call failed: what they would have counted in, why they
/// failed, and that they are not scored.
fn failed_view(failed: &[TraceFailure]) -> Option<AnyView> {
    if failed.is_empty() {
        return None;
    }
    let items = failed
        .iter()
        .map(|f| {
            view! {
                <li data-testid="trace-failed-item" data-key=f.key.clone()>
                    <strong>{f.cell.clone()}</strong>
                    {format!(" · {} · {} of {} model calls failed ({})", f.role, f.failed_calls, f.calls, f.error_kind)}
                    <br/><span class="muted">{f.error.clone()}</span>
                </li>
            }
        })
        .collect_view();
    Some(
        view! {
            <section class="trace-part failed-items" role="note" data-testid="trace-failed">
                <h3>{format!("Not scored: {} failed item{}", failed.len(), if failed.len() == 1 { "" } else { "s" })}</h3>
                <p class="muted">"A model call of these items failed, so they count in no table; resuming the run retries exactly them."</p>
                <ul>{items}</ul>
            </section>
        }
        .into_any(),
    )
}

/// The model calls of a part, folded: one line each (role, model, latency, cache, failure),
/// opening to the prompt's messages and the reply as they were sent and received.
fn calls_view(calls: &[TraceCall]) -> Option<AnyView> {
    if calls.is_empty() {
        return None;
    }
    let items = calls
        .iter()
        .map(|c| {
            let how = if c.cached { "cached".to_string() } else { format!("{:.0} ms", c.latency_ms) };
            let failed = c.error_kind.clone().map(|k| format!(" · failed ({k})")).unwrap_or_default();
            let line = format!("{} · {} · {how}{failed}", c.role, c.model);
            let messages = c
                .prompt
                .iter()
                .map(|m| view! { <div class="message"><span class="who">{m.role.clone()}</span><pre>{m.content.clone()}</pre></div> })
                .collect_view();
            let reply = match (&c.reply, &c.error) {
                (Some(r), _) => view! { <div class="message reply"><span class="who">"reply"</span><pre data-testid="trace-call-reply">{r.clone()}</pre></div> }.into_any(),
                (None, Some(e)) => view! { <p class="error" data-testid="trace-call-error">{e.clone()}</p> }.into_any(),
                (None, None) => view! { <p class="muted">"no reply recorded"</p> }.into_any(),
            };
            let issues = (!c.issues.is_empty()).then(|| view! { <p class="notice">{format!("Reply issues: {}", c.issues.join("; "))}</p> });
            view! {
                <li>
                    <details data-testid="trace-call" class:failed=c.error_kind.is_some()>
                        <summary>{line}</summary>
                        {messages}
                        {reply}
                        {issues}
                    </details>
                </li>
            }
        })
        .collect_view();
    Some(
        view! {
            <details class="model-calls" data-testid="trace-calls">
                <summary>{format!("Model calls: prompts and replies ({})", calls.len())}</summary>
                <ol class="calls">{items}</ol>
            </details>
        }
        .into_any(),
    )
}

/// The beam's paths as an indented tree: each node with the relation it was reached by.
fn tree_view(nodes: &[TraceTreeNode]) -> impl IntoView {
    let items = nodes
        .iter()
        .map(|n| {
            let rel = (!n.relation.is_empty()).then(|| {
                let arrow = if n.forward { format!("—{}→ ", n.relation) } else { format!("←{}— ", n.relation) };
                view! { <span class="rel">{arrow}</span> }
            });
            let hit = n.entity.hit;
            view! {
                <li class:hit=hit class:root=n.parent.is_none() style=format!("--depth:{}", n.depth) data-depth=n.depth.to_string()>
                    {rel}{hit.then(|| view! { <span class="tick" title="in the serendipity set">"✓"</span> })}{entity_label(&n.entity)}
                </li>
            }
        })
        .collect_view();
    view! { <ul class="beam-tree" data-testid="trace-tree">{items}</ul> }
}

fn exploration_view(e: ExplorationTrace) -> impl IntoView {
    let levels = e
        .levels
        .iter()
        .map(|l| view! { <tr><td class="num">{l.level}</td><td class="num">{l.frontier}</td><td class="num">{l.candidates}</td><td class="num">{l.selected}</td><td>{if l.uniform_sampled { "uniform" } else { "scored" }}</td><td>{if l.go_on { "yes" } else { "no" }}</td></tr> })
        .collect_view();
    let summaries = e.summaries.iter().enumerate().map(|(i, s)| view! { <li><span class="muted">{format!("level {} · ", i + 1)}</span>{s.clone()}</li> }).collect_view();
    view! {
        <section class="trace-part" data-testid="trace-exploration" data-key=e.key.clone()>
            <h3>{format!("Exploration (T2/T3) · {} · {}", e.partition_title, if e.with_summaries { "with summaries" } else { "without summaries" })}</h3>
            <p class="muted">{match e.calls.max(e.model_calls.len()) { 0 => "offline agents: no model calls".to_string(), n => format!("{n} model calls") }}</p>
            {e.error.clone().map(|x| view! { <p class="error">{x}</p> })}
            {metric_chips(&e.metrics)}
            <div class="versus">
                {entity_list("Reached", &e.leaves, "in the serendipity set", "trace-leaves")}
                {entity_list("Serendipity set (gold)", &e.gold, "reached", "trace-seren-gold")}
            </div>
            <h4>"The beam's paths"</h4>
            {if e.tree.is_empty() { view! { <p class="muted">"No path was explored."</p> }.into_any() } else { tree_view(&e.tree).into_any() }}
            {(!e.levels.is_empty()).then(|| view! {
                <div class="scroll-x">
                    <table class="levels"><thead><tr><th class="num">"level"</th><th class="num">"frontier"</th><th class="num">"candidates"</th><th class="num">"kept"</th><th title="uniform: no edge had a score, the explorer sampled uniformly">"edges"</th><th>"go on"</th></tr></thead><tbody>{levels}</tbody></table>
                </div>
            })}
            <h4>"Summaries"</h4>
            {if e.summaries.is_empty() { view! { <p class="muted">"none (this mode passes no summaries)"</p> }.into_any() } else { view! { <ol class="summaries" data-testid="trace-summaries">{summaries}</ol> }.into_any() }}
            {calls_view(&e.model_calls)}
        </section>
    }
}

#[component]
fn TraceColumn(
    t: QuestionTrace,
    side: &'static str,
    selected: RwSignal<Option<(String, bool)>>,
) -> impl IntoView {
    let explorations = StoredValue::new(t.explorations.clone());
    // The first exploration unless one is chosen (and this run has it).
    let current = move || {
        explorations.with_value(|ex| {
            let want = selected.get();
            want.and_then(|(p, w)| {
                ex.iter()
                    .find(|e| e.partition == p && e.with_summaries == w)
                    .cloned()
            })
            .or_else(|| ex.first().cloned())
        })
    };
    let chips = explorations.with_value(|ex| {
        ex.iter()
            .map(|e| {
                let key = (e.partition.clone(), e.with_summaries);
                let k2 = key.clone();
                let label = format!("{}{}", e.partition_title, if e.with_summaries { "" } else { " · w/o summaries" });
                let on = move || current().is_some_and(|c| (c.partition.clone(), c.with_summaries) == k2);
                view! { <button class="chip" class:on=on.clone() aria-pressed=move || on().to_string() on:click=move |_| selected.set(Some(key.clone()))>{label}</button> }
            })
            .collect_view()
    });
    view! {
        <div class="run-tag">{(!side.is_empty()).then(|| view! { <span class="side">{side}</span> })}{format!("Run {} · {}", t.run_id, t.settings.summary())}</div>
        {t.other_graph.then(|| view! { <p class="notice" role="note">"Some ids of this run are not in the server's graph (the run used another graph): they show without names."</p> })}
        {failed_view(&t.failed)}
        {t.retrieval.clone().map(retrieval_view)}
        {(!t.explorations.is_empty()).then(|| view! { <div class="chips" role="group" aria-label="Partition and summary mode">{chips}</div> })}
        {move || current().map(exploration_view)}
    }
}
