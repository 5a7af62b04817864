//! Pages. Each loads what it needs and shows loading and error states.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::api::GraphInfo;

use crate::api;

/// Fetches the graph summary once; `None` while loading.
fn use_graph_info() -> ReadSignal<Option<Result<GraphInfo, String>>> {
    let (info, set_info) = signal(None);
    spawn_local(async move {
        set_info.set(Some(api::graph_info().await));
    });
    info
}

fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[component]
pub fn Overview() -> impl IntoView {
    let info = use_graph_info();
    view! {
        <h1>"Serendipity discovery for drug repurposing"</h1>
        <p class="muted">
            "serenqa looks for drugs and diseases that are relevant, novel and surprising with respect to what a knowledge graph already answers."
        </p>
        {move || match info.get() {
            None => view! { <p class="loading">"Loading the graph summary…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="error" role="alert">{format!("Could not load the graph: {e}")}</p> }.into_any(),
            Some(Ok(g)) => view! { <GraphSummary info=g /> }.into_any(),
        }}
    }
}

#[component]
fn GraphSummary(info: GraphInfo) -> impl IntoView {
    let synthetic = info.synthetic.then(|| {
        view! {
            <div class="notice synthetic" role="status">
                "This server holds a SYNTHETIC graph generated for testing. It is not real biomedical data."
            </div>
        }
    });
    view! {
        {synthetic}
        <section class="panel" aria-labelledby="graph-h">
            <h2 id="graph-h">"Loaded graph: " {info.name.clone()}</h2>
            <p>
                <strong data-testid="node-count">{fmt_count(info.nodes)}</strong> " nodes, "
                <strong data-testid="edge-count">{fmt_count(info.edges)}</strong> " edges"
            </p>
            <p class="muted" data-testid="graph-source">{info.source.clone()}</p>
            <div class="grid">
                <table>
                    <caption class="muted">"Nodes by type"</caption>
                    <thead><tr><th>"Type"</th><th class="num">"Nodes"</th></tr></thead>
                    <tbody>
                        {info.node_types.iter().map(|t| view! {
                            <tr><td>{t.name.clone()}</td><td class="num">{fmt_count(t.count)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
                <table>
                    <caption class="muted">"Edges by relation"</caption>
                    <thead><tr><th>"Relation"</th><th class="num">"Edges"</th></tr></thead>
                    <tbody>
                        {info.relations.iter().map(|t| view! {
                            <tr><td>{t.name.clone()}</td><td class="num">{fmt_count(t.count)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        </section>
    }
}

#[component]
pub fn DataLicenses() -> impl IntoView {
    let info = use_graph_info();
    view! {
        <h1>"Data sources and licenses"</h1>
        <div class="notice">
            "Parts of this data are licensed for non-commercial use only (marked NC below). Suggestions are hypotheses for research, not clinical advice."
        </div>
        {move || match info.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            Some(Ok(g)) => view! {
                <section class="panel">
                    <table class="stack" data-testid="attributions">
                        <thead><tr><th>"Source"</th><th>"License"</th><th>"Covers"</th></tr></thead>
                        <tbody>
                            {g.attributions.iter().map(|a| view! {
                                <tr>
                                    <td data-label="Source">{a.source.clone()}</td>
                                    <td data-label="License">{a.license.clone()} {a.non_commercial.then(|| view! { <span class="tag-nc" title="non-commercial">"NC"</span> })}</td>
                                    <td data-label="Covers">{a.covers.clone()}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </section>
            }.into_any(),
        }}
    }
}
