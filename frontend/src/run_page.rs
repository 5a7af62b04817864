//! One evaluation run described at its own address (`/runs/<run>`): what was run (models and
//! their endpoint hosts, roles, sampling), on what (questions, benchmark and graph hashes),
//! how (exploration settings, seeds, prompts hash, code version with its git commit), what it
//! cost (model calls, tokens, latency, duration) and what failed — everything a reviewer
//! needs before trusting its row on the leaderboard. Read from `GET /api/runs`, whose
//! manifests carry endpoint hosts only, never a full URL or a server path.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use serenqa_shared::api::{RunEntry, RunsReply};
use serenqa_shared::results::date_utc;

use crate::api;

#[component]
pub fn RunPage() -> impl IntoView {
    let params = use_params_map();
    let run = Memo::new(move |_| params.read().get("run").unwrap_or_default());
    let (reply, set_reply) = signal(None::<Result<RunsReply, String>>);
    spawn_local(async move {
        set_reply.set(Some(api::get_json::<RunsReply>("/api/runs").await));
    });
    move || match reply.get() {
        None => {
            view! { <section class="panel"><p class="loading">"Loading the run…"</p></section> }
                .into_any()
        }
        Some(Err(e)) => {
            view! { <section class="panel"><p class="error" role="alert">{e}</p></section> }
                .into_any()
        }
        Some(Ok(r)) => {
            let id = run.get();
            match r.runs.into_iter().find(|e| e.id == id) {
                Some(e) => view! { <RunView e=e /> }.into_any(),
                None => view! {
                    <section class="panel" data-testid="run-missing">
                        <h1>"Run not found"</h1>
                        <p>{format!("No run \"{id}\" in this server's runs directory. ")}<a href="/leaderboard">"The leaderboard"</a>" lists the runs there are."</p>
                    </section>
                }
                .into_any(),
            }
        }
    }
}

/// A `<dt>`/`<dd>` pair.
fn item(term: &'static str, value: String) -> impl IntoView {
    view! { <dt>{term}</dt><dd>{value}</dd> }
}

#[component]
fn RunView(e: RunEntry) -> impl IntoView {
    let m = e.manifest.clone();
    let status = if m.status == "incomplete" || m.failed > 0 {
        let kinds: Vec<String> = m
            .failed_by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        format!(
            "incomplete: {} failed item(s){} — their cells leave them out; running the same `serenqa eval` again retries exactly these",
            m.failed,
            if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) }
        )
    } else {
        m.status.clone()
    };
    let models = m
        .models
        .iter()
        .map(|x| {
            let s = |k: &str| x[k].as_str().unwrap_or("").to_string();
            let num = |k: &str| {
                x[k].as_f64()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "default".into())
            };
            view! {
                <tr>
                    <th scope="row">{s("name")}</th>
                    <td>{s("model")}</td>
                    <td data-testid="run-host">{s("endpoint_host")}</td>
                    <td class="num">{num("temperature")}</td>
                    <td class="num">{num("max_tokens")}</td>
                </tr>
            }
        })
        .collect_view();
    let has_models = !m.models.is_empty();
    let roles = m
        .roles
        .iter()
        .map(|(r, model)| format!("{r}: {model}"))
        .collect::<Vec<_>>()
        .join(" · ");
    let x = &m.explore;
    let explore = format!(
        "beam {} · depth {} · relations per node {} · nodes per node {} · summaries {} · seed {}",
        x.beam_width,
        x.depth,
        x.relations_per_node,
        x.nodes_per_node,
        if x.use_summaries { "used" } else { "not used" },
        x.seed
    );
    let l = &m.llm;
    let calls = format!(
        "{} calls ({} from the cache), {} errors, {} retries · {} prompt + {} completion tokens · mean latency {:.0} ms · at most {} in flight",
        l.calls, l.cache_hits, l.errors, l.retries, l.prompt_tokens, l.completion_tokens, l.mean_latency_ms, l.max_in_flight
    );
    let items = m
        .items
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(" · ");
    let tidy = e.aggregate.as_ref().map(|a| {
        format!(
            "data:text/csv;charset=utf-8,{}",
            api::enc(&serenqa_shared::tidy::csv(&e.id, a))
        )
    });
    let notes = m
        .notes
        .iter()
        .map(|n| view! { <li>{n.clone()}</li> })
        .collect_view();
    let questions = match (m.limit, &m.split) {
        (Some(l), _) => format!("{} (limit {l})", m.dataset.questions),
        (None, Some(s)) => format!("{} ({s} split)", m.dataset.questions),
        (None, None) => format!("{} (all in scope)", m.dataset.questions),
    };
    let status_class = if m.failed > 0 { "notice" } else { "" };
    view! {
        <section class="panel" data-testid="run-page">
            <p class="muted"><a href="/leaderboard">"Leaderboard"</a>" › run"</p>
            <h1>{format!("Run {}", e.id)}</h1>
            <p data-testid="run-status" class=status_class>{format!("Status: {status}")}</p>
            <dl class="run-facts">
                {item("Models", m.label.clone())}
                {item("Roles", roles)}
                {item("Questions", questions)}
                {item("Tasks", m.tasks.join(", "))}
                {item("Partitions", m.partitions.join(", "))}
                {item("LLM Ensemble partition scored by", if m.ensemble.is_empty() { "not recorded".into() } else { m.ensemble.clone() })}
                {item("Exploration", explore)}
                {item("Work items", items)}
                {item("Model calls", calls)}
                {item("Duration", format!("{:.1} s", m.seconds))}
                {item("Started", if m.created_unix > 0 { date_utc(m.created_unix) } else { "not recorded".into() })}
                {item("Last written", if m.updated_unix > 0 { date_utc(m.updated_unix) } else { "not recorded".into() })}
                {item("Prompts hash", m.prompts_hash.clone())}
                {item("Code version", m.code_version.clone())}
                {item("Benchmark", format!("{} · questions hash {} · graph hash {}", m.dataset.dir, m.dataset.hash, m.dataset.graph_hash))}
                {item("Models file", m.models_file.clone())}
                {item("Edge source", m.edge_source.clone())}
            </dl>
            {has_models.then(|| view! {
                <h2>"Models"</h2>
                <div class="scroll-x">
                    <table class="results" data-testid="run-models">
                        <thead><tr><th>"Name"</th><th>"Model"</th><th>"Endpoint host"</th><th class="num">"Temperature"</th><th class="num">"Max tokens"</th></tr></thead>
                        <tbody>{models}</tbody>
                    </table>
                </div>
            })}
            {tidy.map(|href| view! { <p><a class="button" download=format!("{}-aggregate.csv", e.id) href=href data-testid="run-tidy-csv">"This run's cells (tidy CSV)"</a></p> })}
            {(!m.notes.is_empty()).then(|| view! { <h2>"Notes"</h2><ul class="run-notes">{notes}</ul> })}
        </section>
    }
}
