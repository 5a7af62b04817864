//! Ask: one free-text question through the whole SerenQA pipeline on the server — retrieval
//! (question → Cypher → existing answers), serendipity exploration from those answers, hop
//! summaries — with the offline agents unless the server has a model configured (the browser
//! never holds a model key).

use leptos::prelude::*;
use serenqa_shared::api::{AskCandidate, AskEvent, AskResponse, Stage, SubgraphView, Understood};

use crate::api::{self, Refusal};
use crate::candidates::{N_HELP, RNS_HELP, R_HELP, S_HELP};
use crate::refused::{Refused, Retrying};
use crate::subgraph::SubgraphSvg;

/// Why Ask shows no S (`AskResponse.s_hidden`).
const S_HIDDEN: &str = "Surprise is not shown: the candidates were scored against a single known entity, where S only says whether walks connect the two, which N already measures. RNS leaves it out.";

/// The stages the server runs, in order: (name in the events, what the page says).
const STAGES: &[(&str, &str)] = &[
    (
        "retrieval",
        "retrieval: question → Cypher → existing answers",
    ),
    ("exploration", "exploration: beam search from the answers"),
    ("scoring", "summaries and RNS scores"),
];

/// Longest question the server accepts (characters); the input stops there.
const MAX_QUESTION: usize = 2000;

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// A stage as it arrived: the server's time for it and when the page heard of it (ms after
/// the question was sent; the browser test checks stages arrive before the result).
#[derive(Clone, Debug, PartialEq)]
struct Arrived {
    stage: Stage,
    at_ms: f64,
}

/// The page's state of one question's request.
type Answer = Result<AskResponse, Refusal>;

#[component]
pub fn AskBox() -> impl IntoView {
    let (question, set_question) = signal(String::new());
    let (busy, set_busy) = signal(false);
    let (stages, set_stages) = signal(Vec::<Arrived>::new());
    let (result, set_result) = signal(None::<(Answer, f64)>);
    // Refused with a `Retry-After`: the reason and the seconds left before the one retry.
    let (waiting, set_waiting) = signal(None::<(Refusal, u32)>);
    // Which question is current: a reply to an older one is dropped.
    let generation = StoredValue::new(0u64);
    // Aborts the open request (a new question, leaving the page).
    let abort = StoredValue::new_local(None::<web_sys::AbortController>);
    on_cleanup(move || {
        let _ = abort.try_update_value(|a| {
            if let Some(a) = a.take() {
                a.abort();
            }
        });
    });
    // Said before any request: an empty or over-long question.
    let (invalid, set_invalid) = signal(None::<String>);
    let submit = move || {
        let q = question.get_untracked();
        if busy.get_untracked() {
            return;
        }
        if q.trim().is_empty() {
            set_invalid.set(Some(
                "Type a question first, e.g. \"Which drugs treat asthma?\"".into(),
            ));
            return;
        }
        if q.chars().count() > MAX_QUESTION {
            set_invalid.set(Some(format!(
                "The question is {} characters long; at most {MAX_QUESTION} are accepted.",
                q.chars().count()
            )));
            return;
        }
        set_invalid.set(None);
        set_busy.set(true);
        set_result.set(None);
        set_waiting.set(None);
        set_stages.set(Vec::new());
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        let current = move || generation.try_get_value() == Some(mine);
        let controller = web_sys::AbortController::new().ok();
        let signal = controller.as_ref().map(web_sys::AbortController::signal);
        abort.update_value(|a| {
            if let Some(old) = std::mem::replace(a, controller) {
                old.abort();
            }
        });
        let started = now_ms();
        let url = format!("/api/ask/stream?limit=20&question={}", api::enc(&q));
        let finish = move |r: Answer| {
            if current() {
                set_busy.set(false);
                set_waiting.set(None);
                set_result.set(Some((r, now_ms() - started)));
            }
        };
        // One attempt: the stream's events update the page; it ends with a result, an error
        // event, or a refusal (`Err`).
        let attempt = move || {
            let url = url.clone();
            let signal = signal.clone();
            async move {
                set_stages.set(Vec::new());
                let mut ended = false;
                let r = api::stream::events(&url, signal.as_ref(), |data| {
                    if ended || !current() {
                        return;
                    }
                    match serde_json::from_str::<AskEvent>(data) {
                        Ok(AskEvent::Stage(stage)) => set_stages.update(|v| {
                            v.push(Arrived {
                                stage,
                                at_ms: now_ms() - started,
                            });
                        }),
                        Ok(AskEvent::Result(a)) => {
                            ended = true;
                            finish(Ok(a));
                        }
                        Ok(AskEvent::Error(err)) => {
                            ended = true;
                            finish(Err(Refusal::from_event(err)));
                        }
                        Err(err) => {
                            ended = true;
                            finish(Err(Refusal::malformed(err)));
                        }
                    }
                })
                .await;
                match r {
                    Err(refusal) => Err(refusal),
                    Ok(()) if ended => Ok(()),
                    Ok(()) => Err(Refusal::lost()),
                }
            }
        };
        leptos::task::spawn_local(async move {
            let r = api::with_one_retry(attempt, move |w| {
                if current() {
                    set_waiting.set(w);
                }
                current()
            })
            .await;
            if let Err(refusal) = r {
                finish(Err(refusal));
            }
        });
    };
    // `?q=` asks that question (links from the starting points, shared links); every question
    // asked is put in the URL, so the address reproduces the view.
    let query = leptos_router::hooks::use_query_map();
    let asked = StoredValue::new(String::new());
    Effect::new(move |_| {
        let q = query.read().get("q").unwrap_or_default();
        if !q.trim().is_empty() && q != asked.get_value() {
            asked.set_value(q.clone());
            set_question.set(q);
            submit();
        }
    });
    let submit = move || {
        let q = question.get_untracked();
        if !q.trim().is_empty() && q.chars().count() <= MAX_QUESTION && !busy.get_untracked() {
            asked.set_value(q.clone());
            if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
                let _ = h.replace_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("?q={}", api::enc(&q))),
                );
            }
        }
        submit();
    };
    let stage_list = move || {
        let done = stages.get();
        let running = busy.get();
        STAGES
            .iter()
            .enumerate()
            .map(|(i, (name, label))| {
                let arrived = done.iter().find(|a| a.stage.name == *name).cloned();
                let first_open = running && arrived.is_none() && STAGES[..i].iter().all(|(n, _)| done.iter().any(|a| a.stage.name == *n));
                match arrived {
                    Some(a) => view! {
                        <li class="stage-done" data-stage-done=*name data-arrived-ms=format!("{:.1}", a.at_ms)>
                            {format!("✓ {label} — {:.0} ms", a.stage.ms)}
                        </li>
                    }
                    .into_any(),
                    None if first_open => view! { <li class="stage-running" aria-busy="true">{format!("… {label}")}</li> }.into_any(),
                    None => view! { <li class="stage-pending">{label.to_string()}</li> }.into_any(),
                }
            })
            .collect_view()
    };
    view! {
        <section class="panel" data-testid="ask">
            <h2>"Ask a question"</h2>
            <form class="ask-form" on:submit=move |ev| { ev.prevent_default(); submit(); }>
                <input type="text" aria-label="Question" data-testid="ask-input"
                    placeholder="e.g. Which drugs treat multiple sclerosis?"
                    maxlength=MAX_QUESTION.to_string()
                    prop:value=move || question.get()
                    on:input=move |ev| { set_invalid.set(None); set_question.set(event_target_value(&ev)) } />
                <button type="submit" class="primary" disabled=move || busy.get()>{move || if busy.get() { "Working…" } else { "Ask" }}</button>
            </form>
            <p class="muted ask-counter" data-testid="ask-counter">{move || format!("{} / {MAX_QUESTION}", question.get().chars().count())}</p>
            {move || invalid.get().map(|m| view! { <p class="error" role="alert" data-testid="ask-invalid">{m}</p> })}
            {move || waiting.get().map(|(r, secs)| view! { <Retrying refusal=r seconds=secs testid="ask-retrying" /> })}
            {move || ((busy.get() && waiting.get().is_none()) || !stages.get().is_empty()).then(|| view! {
                <div class="stages" aria-live="polite" data-testid="ask-progress">
                    <ol>{stage_list}</ol>
                </div>
            })}
            {move || result.get().map(|(r, at)| match r {
                Err(e) => view! { <Refused refusal=e testid="ask-error" try_again=Callback::new(move |()| submit()) /> }.into_any(),
                Ok(a) => {
                    let reask = move |q: String| {
                        set_question.set(q);
                        submit();
                    };
                    let repurpose = a.discover.clone().map(|d| view! { <RepurposeList data=d /> });
                    view! { <div data-result-arrived-ms=format!("{at:.1}")>{understood_view(&a.understood, reask)}{repurpose}<AskResult answer=a /></div> }.into_any()
                }
            })}
        </section>
    }
}

/// A repurposing question's answer: the named disease's or drug's own first screen (the
/// entity page's candidates, order, labels and flags, with Keep), and a link to that page.
/// A candidate's "why" opens its explanation there.
#[component]
fn RepurposeList(data: serenqa_shared::api::DiscoverResponse) -> impl IntoView {
    let query = data.query.clone();
    let page = format!("/entity/{}", api::enc(&api::key_of(&query)));
    let heading = if data.answer_kind == "Compound" {
        format!("Drugs that could be repurposed for {}", query.name)
    } else {
        format!("Diseases {} could be repurposed for", query.name)
    };
    let key = api::key_of(&query);
    let on_explain = Callback::new(move |c: serenqa_shared::api::NodeView| {
        let href = format!(
            "/entity/{}?why={}",
            api::enc(&key),
            api::enc(&api::key_of(&c))
        );
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(&href);
        }
    });
    view! {
        <section class="repurpose" data-testid="ask-repurpose">
            <h3>{heading}</h3>
            <p class="muted">"The same list, order, labels and warnings as "<a href=page.clone() data-testid="ask-repurpose-page">{format!("the page of {}", query.name)}</a>"; open a candidate's paths there."</p>
            <crate::candidates::Candidates data=data on_explain=on_explain />
        </section>
    }
}

#[component]
fn AskResult(answer: AskResponse) -> impl IntoView {
    let stages = answer
        .stages
        .iter()
        .map(|s| format!("{} {:.0} ms", s.name, s.ms))
        .collect::<Vec<_>>()
        .join(" · ");
    let agents = answer
        .agents
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    // Only worth a word when exploration read a Redis edge store rather than the server's memory.
    let edges = (!answer.edge_source.is_empty() && answer.edge_source != "memory")
        .then(|| format!(" · edges: {}", answer.edge_source));
    let w = &answer.weights;
    let weights_line = format!(
        "Candidates ranked with RNS weights α = {:.2}, β = {:.2}, γ = {:.2}: {}.",
        w.weights.alpha, w.weights.beta, w.weights.gamma, w.source.label
    );
    let answers = answer
        .answers
        .iter()
        .map(|n| view! { <li><a href=format!("/entity/{}", api::enc(&api::key_of(n)))>{n.name.clone()}</a></li> })
        .collect_view();
    let (open, set_open) = signal(None::<usize>);
    // The explanation is drawn below the whole list: bring it into view when a candidate's
    // paths are opened (on a phone it is many cards down).
    Effect::new(move |_| {
        if open.get().is_some() {
            if let Some(el) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id("ask-why"))
            {
                el.scroll_into_view();
            }
        }
    });
    let s_hidden = answer.s_hidden;
    let ran = answer.cypher.is_some();
    let repurposing = answer.discover.is_some();
    let (n_answers, n_candidates) = (answer.answers.len(), answer.candidates.len());
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
                    <td class="col-rank">{i + 1}</td>
                    <td class="col-name">
                        <a href=format!("/entity/{}", api::enc(&api::key_of(&c.node)))>{c.node.name.clone()}</a>" "<span class="muted">{c.node.kind.clone()}</span>
                        {crate::candidates::known_for_line(&c.node, &c.known_for, c.known_for_total).map(|k| view! { <div class="known-for muted">{k}</div> })}
                    </td>
                    <td class="num" data-label="RNS"><strong>{f(t.map(|t| t.rns))}</strong></td>
                    <td class="num" data-label="R">{f(t.map(|t| t.r))}</td>
                    <td class="num" data-label="N">{f(t.map(|t| t.n))}</td>
                    {if s_hidden {
                        view! { <td class="num muted" data-testid="ask-s" data-label="S" title=S_HIDDEN>"—"</td> }.into_any()
                    } else {
                        view! { <td class="num" data-testid="ask-s" data-label="S">{f(t.map(|t| t.s))}</td> }.into_any()
                    }}
                    <td class="col-actions"><button class="link-button paths-button" on:click=move |_| set_open.set(Some(i))>{format!("{} path{}", c.paths.len(), if c.paths.len() == 1 { "" } else { "s" })}</button></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="ask-result" data-testid="ask-result">
            <p class="muted" data-testid="ask-stages">{stages} " · agents: " {agents} {edges}</p>
            {ran.then(|| view! { <p class="muted" data-testid="ask-weights">{weights_line}</p> })}
            <h3>"Generated Cypher"</h3>
            <pre data-testid="ask-cypher">{answer.cypher.clone().unwrap_or_else(|| "(no query)".into())}</pre>
            // Without a query the reason is the sentence above; the error would only repeat it.
            {answer.error.clone().filter(|_| ran).map(|e| view! { <p class="error">{e}</p> })}
            {
                // The not-understood sentence is already shown above the examples: not twice.
                let shown = answer.understood.not_understood.clone();
                let notes: Vec<String> = answer.notes.iter().filter(|n| Some(*n) != shown.as_ref()).cloned().collect();
                (!notes.is_empty()).then(|| view! { <ul class="muted">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul> })
            }
            // No query ran (not understood, or refused with the reason): no empty answer lists.
            {ran.then(|| {
                let table = view! {
                    <div class="scroll-x">
                        <table class="candidates cards" data-testid="ask-candidates">
                            <thead><tr><th>"#"</th><th>"Candidate"</th>
                                <th class="num" title=RNS_HELP>"RNS"</th><th class="num" title=R_HELP>"R"</th><th class="num" title=N_HELP>"N"</th>
                                <th class="num" title=if s_hidden { S_HIDDEN } else { S_HELP }>"S"</th><th></th></tr></thead>
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                };
                // A repurposing question is answered by the entity page's list above; the
                // pipeline's path-exploration candidates stay available, folded.
                let explored = if repurposing {
                    view! {
                        <details data-testid="ask-explored-folded">
                            <summary>{format!("Path-exploration candidates ({n_candidates}): the pipeline's walk from the known answers, not the repurposing list above")}</summary>
                            {table}
                        </details>
                    }
                    .into_any()
                } else {
                    view! { <h3>{format!("Serendipitous candidates ({})", n_candidates)}</h3>{table} }.into_any()
                };
                view! {
                    <h3>{format!("Existing answers ({})", n_answers)}</h3>
                    <ul class="inline-list" data-testid="ask-answers">{answers}</ul>
                    {explored}
                }
            })}
            {(!answer.summaries.is_empty()).then(|| view! {
                <h3>"Hop summaries"</h3>
                <ol>{answer.summaries.iter().map(|s| view! { <li>{s.clone()}</li> }).collect_view()}</ol>
            })}
            {move || open.get().and_then(|i| cands.with_value(|c| c.get(i).cloned())).map(|c: AskCandidate| {
                let sg = SubgraphView::from_paths(&c.paths);
                view! { <div id="ask-why" data-testid="ask-why"><h3>{format!("Why {}?", c.node.name)}</h3><SubgraphSvg graph=sg centre=0 paths=c.paths /></div> }
            })}
        </div>
    }
}

/// What the server understood: the interpretation line, the linked names as chips, "did you
/// mean" alternatives and, when nothing was understood, why and example questions (each
/// re-asks on click).
fn understood_view(
    u: &Understood,
    reask: impl Fn(String) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let chips = u
        .entities
        .iter()
        .map(|e| {
            let out = if e.left_out { ", left out of the answers" } else { "" };
            let title = format!("“{}” → {} ({}, {} match{out})", e.mention, e.node.name, e.node.id, e.matched);
            let label = if e.left_out {
                format!("{} · {} · left out", e.node.kind, e.matched)
            } else {
                format!("{} · {}", e.node.kind, e.matched)
            };
            view! {
                <li class="chip" data-matched=e.matched.clone() data-left-out=e.left_out.then_some("true") title=title>
                    <a href=format!("/entity/{}", api::enc(&api::key_of(&e.node)))>{e.node.name.clone()}</a>
                    " " <span class="muted">{label}</span>
                </li>
            }
        })
        .collect_view();
    let dym = u
        .did_you_mean
        .iter()
        .map(|d| {
            let q = d.question.clone();
            view! { <li><button type="button" class="link-button" on:click=move |_| reask(q.clone())>{format!("{} ({})", d.node.name, d.node.kind)}</button></li> }
        })
        .collect_view();
    let examples = u
        .examples
        .iter()
        .map(|q| {
            let q2 = q.clone();
            view! { <li><button type="button" class="link-button" on:click=move |_| reask(q2.clone())>{q.clone()}</button></li> }
        })
        .collect_view();
    view! {
        <div class="understood" data-testid="ask-understood">
            {u.interpretation.clone().map(|i| view! { <p data-testid="ask-interpretation"><span class="muted">"Understood as: "</span><strong>{i}</strong></p> })}
            {(!u.entities.is_empty()).then(|| view! { <ul class="inline-list chips" data-testid="ask-entities">{chips}</ul> })}
            {(!u.did_you_mean.is_empty()).then(|| view! { <div data-testid="ask-did-you-mean"><span class="muted">"Did you mean "</span><ul class="inline-list">{dym}</ul><span class="muted">"?"</span></div> })}
            {u.not_understood.clone().map(|m| view! { <p class="error" data-testid="ask-not-understood">{m}</p> })}
            {(!u.examples.is_empty()).then(|| view! { <div data-testid="ask-examples"><span class="muted">"Questions that work: "</span><ul class="inline-list">{examples}</ul></div> })}
        </div>
    }
}
