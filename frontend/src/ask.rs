//! Ask: one free-text question through the whole SerenQA pipeline on the server — retrieval
//! (question → Cypher → existing answers), serendipity exploration from those answers, hop
//! summaries — with the offline agents unless the server has a model configured (the browser
//! never holds a model key).

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::api::{AskCandidate, AskRequest, AskResponse, SubgraphView};

use crate::api;
use crate::subgraph::SubgraphSvg;

/// The stages the server runs, in order (the reply reports each one's time).
const STAGES: &[&str] = &["retrieval: question → Cypher → existing answers", "exploration: beam search from the answers", "summaries and RNS scores"];

#[component]
pub fn AskBox() -> impl IntoView {
    let (question, set_question) = signal(String::new());
    let (busy, set_busy) = signal(false);
    let (elapsed, set_elapsed) = signal(0u32);
    let (result, set_result) = signal(None::<Result<AskResponse, String>>);
    let submit = move || {
        let q = question.get_untracked();
        if q.trim().is_empty() || busy.get_untracked() {
            return;
        }
        set_busy.set(true);
        set_result.set(None);
        set_elapsed.set(0);
        // The reply comes in one piece; an elapsed-time counter shows the request is alive.
        let ticker = leptos::prelude::set_interval_with_handle(move || set_elapsed.update(|e| *e += 1), std::time::Duration::from_millis(500)).ok();
        spawn_local(async move {
            let r = api::post_json::<AskRequest, AskResponse>("/api/ask", &AskRequest { question: q, model: None, limit: Some(20) }).await;
            if let Some(t) = ticker {
                t.clear();
            }
            set_busy.set(false);
            set_result.set(Some(r));
        });
    };
    view! {
        <section class="panel" data-testid="ask">
            <h2>"Ask a question"</h2>
            <form class="ask-form" on:submit=move |ev| { ev.prevent_default(); submit(); }>
                <input type="text" aria-label="Question" data-testid="ask-input"
                    placeholder="e.g. Which compounds treat breast cancer?"
                    prop:value=move || question.get()
                    on:input=move |ev| set_question.set(event_target_value(&ev)) />
                <button type="submit" class="primary" disabled=move || busy.get()>{move || if busy.get() { "Working…" } else { "Ask" }}</button>
            </form>
            {move || busy.get().then(|| view! {
                <div class="stages" aria-live="polite">
                    <p class="loading">{move || format!("Running the pipeline on the server… {:.1} s", elapsed.get() as f64 / 2.0)}</p>
                    <ol>{STAGES.iter().map(|s| view! { <li>{*s}</li> }).collect_view()}</ol>
                </div>
            })}
            {move || result.get().map(|r| match r {
                Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                Ok(a) => view! { <AskResult answer=a /> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn AskResult(answer: AskResponse) -> impl IntoView {
    let stages = answer.stages.iter().map(|s| format!("{} {:.0} ms", s.name, s.ms)).collect::<Vec<_>>().join(" · ");
    let agents = answer.agents.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ");
    let answers = answer
        .answers
        .iter()
        .map(|n| view! { <li><a href=format!("/entity/{}", api::enc(&api::key_of(n)))>{n.name.clone()}</a></li> })
        .collect_view();
    let (open, set_open) = signal(None::<usize>);
    let cands = StoredValue::new(answer.candidates.clone());
    let rows = answer
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let t = c.terms;
            let f = move |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "–".into());
            view! {
                <tr data-candidate=c.node.name.clone()>
                    <td>{i + 1}</td>
                    <td><a href=format!("/entity/{}", api::enc(&api::key_of(&c.node)))>{c.node.name.clone()}</a> <span class="muted">{c.node.kind.clone()}</span></td>
                    <td class="num"><strong>{f(t.map(|t| t.rns))}</strong></td>
                    <td class="num">{f(t.map(|t| t.r))}</td>
                    <td class="num">{f(t.map(|t| t.n))}</td>
                    <td class="num">{f(t.map(|t| t.s))}</td>
                    <td><button class="link-button" on:click=move |_| set_open.set(Some(i))>{format!("{} paths", c.paths.len())}</button></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="ask-result" data-testid="ask-result">
            <p class="muted" data-testid="ask-stages">{stages} " · agents: " {agents}</p>
            <h3>"Generated Cypher"</h3>
            <pre data-testid="ask-cypher">{answer.cypher.clone().unwrap_or_else(|| "(no query)".into())}</pre>
            {answer.error.clone().map(|e| view! { <p class="error">{e}</p> })}
            {(!answer.notes.is_empty()).then(|| view! { <ul class="muted">{answer.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
            <h3>{format!("Existing answers ({})", answer.answers.len())}</h3>
            <ul class="inline-list" data-testid="ask-answers">{answers}</ul>
            <h3>{format!("Serendipitous candidates ({})", answer.candidates.len())}</h3>
            <table class="candidates" data-testid="ask-candidates">
                <thead><tr><th>"#"</th><th>"Candidate"</th><th class="num">"RNS"</th><th class="num">"R"</th><th class="num">"N"</th><th class="num">"S"</th><th></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            {(!answer.summaries.is_empty()).then(|| view! {
                <h3>"Hop summaries"</h3>
                <ol>{answer.summaries.iter().map(|s| view! { <li>{s.clone()}</li> }).collect_view()}</ol>
            })}
            {move || open.get().and_then(|i| cands.with_value(|c| c.get(i).cloned())).map(|c: AskCandidate| {
                let sg = SubgraphView::from_paths(&c.paths);
                view! { <h3>{format!("Why {}?", c.node.name)}</h3><SubgraphSvg graph=sg centre=0 paths=c.paths /> }
            })}
        </div>
    }
}
