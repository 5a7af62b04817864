//! One question: rank its candidates by drag-and-drop (pointer events, so touch works) or by
//! keyboard, mark ties and "unsure", rate confidence, comment. Every change is autosaved as a
//! draft (or kept complete once submitted); "Submit" asks the server to validate the order.
//!
//! The list order is the ranking: an item with "tied with the one above" shares the rank of
//! its predecessor, otherwise it ranks one below it (dense ranks 1, 2, 2, 3 …).

use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use serenqa_shared::annotate::{Candidate, CandidateContext, Me, NewResponse, QuestionView, RankEntry, SaveOutcome, Status};
use wasm_bindgen::JsCast;

use super::{get, send, submission_id, Failure, Signed};

#[derive(Clone, Debug, PartialEq)]
struct Item {
    cand: Candidate,
    ctx: Option<CandidateContext>,
    /// Tied with the item above.
    tie: bool,
    unsure: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum SaveState {
    Untouched,
    Pending,
    Saving,
    Saved(i64),
    Failed(String),
}

/// Dense ranks of the list.
fn ranks(items: &[Item]) -> Vec<u32> {
    let mut out = Vec::with_capacity(items.len());
    let mut r = 0;
    for (i, it) in items.iter().enumerate() {
        if i == 0 || !it.tie {
            r += 1;
        }
        out.push(r);
    }
    out
}

fn normalise(v: &mut [Item]) {
    if let Some(first) = v.first_mut() {
        first.tie = false;
    }
}

#[component]
pub fn QuestionPage() -> impl IntoView {
    view! { <Signed children=|_me: Me| view! { <QuestionLoader /> } /> }
}

#[component]
fn QuestionLoader() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let (qv, set_qv) = signal(None::<Result<QuestionView, Failure>>);
    Effect::new(move |_| {
        let id = id();
        set_qv.set(None);
        spawn_local(async move { set_qv.set(Some(get(&format!("/api/annotate/questions/{id}")).await)) });
    });
    move || match qv.get() {
        None => view! { <p class="loading">"Loading the question…"</p> }.into_any(),
        Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
        Some(Ok(v)) => view! { <Ranker qv=v /> }.into_any(),
    }
}

fn focus_candidate(id: i64) {
    // After the list re-renders: put the keyboard focus back on the moved item.
    set_timeout(
        move || {
            let el = document().query_selector(&format!("[data-cand='{id}']")).ok().flatten();
            if let Some(el) = el.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
                let _ = el.focus();
            }
        },
        Duration::from_millis(0),
    );
}

#[component]
fn Ranker(qv: QuestionView) -> impl IntoView {
    let qid = qv.question.id;
    let ctx_of = |c: &Candidate| qv.context.iter().find(|x| x.candidate == c.id).cloned();
    let mut initial: Vec<Item> = qv.question.candidates.iter().map(|c| Item { cand: c.clone(), ctx: ctx_of(c), tie: false, unsure: false }).collect();
    if let Some(r) = &qv.response {
        let rank_of = |id: i64| r.ranking.iter().find(|e| e.candidate == id).and_then(|e| e.rank).unwrap_or(u32::MAX);
        // Ties keep the saved list order (the ranking is stored in list order).
        let pos_of = |id: i64| r.ranking.iter().position(|e| e.candidate == id).unwrap_or(usize::MAX);
        initial.sort_by_key(|it| (rank_of(it.cand.id), pos_of(it.cand.id)));
        let mut prev = None;
        for it in initial.iter_mut() {
            let rk = rank_of(it.cand.id);
            it.tie = prev == Some(rk) && rk != u32::MAX;
            it.unsure = r.ranking.iter().any(|e| e.candidate == it.cand.id && e.unsure);
            prev = Some(rk);
        }
    }
    let items = RwSignal::new(initial);
    let confidence = RwSignal::new(qv.response.as_ref().and_then(|r| r.confidence));
    let comment = RwSignal::new(qv.response.as_ref().map(|r| r.comment.clone()).unwrap_or_default());
    let submitted = RwSignal::new(qv.response.as_ref().is_some_and(|r| r.status == Status::Complete));
    let state = RwSignal::new(match &qv.response {
        Some(r) => SaveState::Saved(r.revision),
        None => SaveState::Untouched,
    });
    let dragging = RwSignal::new(None::<i64>);
    let seq = StoredValue::new(0u64);

    let body = move |status: Status| NewResponse {
        submission_id: submission_id(),
        ranking: items.with_untracked(|v| {
            let rk = ranks(v);
            v.iter().zip(rk).map(|(it, r)| RankEntry { candidate: it.cand.id, rank: Some(r), unsure: it.unsure }).collect()
        }),
        confidence: confidence.get_untracked(),
        comment: comment.get_untracked(),
        status,
    };
    let save = move |status: Status| {
        let b = body(status);
        state.set(SaveState::Saving);
        spawn_local(async move {
            let r: Result<SaveOutcome, Failure> = send("PUT", &format!("/api/annotate/questions/{qid}/response"), &b).await;
            match r {
                Ok(o) => {
                    if status == Status::Complete {
                        submitted.set(true);
                    }
                    state.set(SaveState::Saved(o.revision));
                }
                Err(f) => state.set(SaveState::Failed(f.message)),
            }
        });
    };
    // Debounced autosave: the last change within 400 ms is saved.
    let changed = move || {
        let my = seq.get_value() + 1;
        seq.set_value(my);
        state.set(SaveState::Pending);
        set_timeout(
            move || {
                if seq.get_value() == my {
                    save(if submitted.get_untracked() { Status::Complete } else { Status::Draft });
                }
            },
            Duration::from_millis(400),
        );
    };
    let move_item = move |from: usize, to: usize| {
        items.update(|v| {
            if from < v.len() && to < v.len() && from != to {
                let mut it = v.remove(from);
                it.tie = false;
                v.insert(to, it);
                normalise(v);
            }
        });
    };
    let index_of = move |id: i64| items.with(|v| v.iter().position(|x| x.cand.id == id));
    let on_key = move |id: i64, ev: web_sys::KeyboardEvent| {
        let Some(i) = items.with_untracked(|v| v.iter().position(|x| x.cand.id == id)) else { return };
        let n = items.with_untracked(|v| v.len());
        match ev.key().as_str() {
            "ArrowUp" if i > 0 => {
                ev.prevent_default();
                move_item(i, i - 1);
                focus_candidate(id);
                changed();
            }
            "ArrowDown" if i + 1 < n => {
                ev.prevent_default();
                move_item(i, i + 1);
                focus_candidate(id);
                changed();
            }
            "t" | "T" | "=" if i > 0 => {
                items.update(|v| v[i].tie = !v[i].tie);
                changed();
            }
            "u" | "U" => {
                items.update(|v| v[i].unsure = !v[i].unsure);
                changed();
            }
            _ => {}
        }
    };
    // Pointer drag: the handle captures the pointer; the item under the pointer gives the
    // target position, and the list reorders live.
    let on_move = move |ev: web_sys::PointerEvent| {
        let Some(id) = dragging.get_untracked() else { return };
        let Some(target) = document().element_from_point(ev.client_x() as f32, ev.client_y() as f32) else { return };
        let Some(li) = target.closest("[data-index]").ok().flatten() else { return };
        let Some(to) = li.get_attribute("data-index").and_then(|s| s.parse::<usize>().ok()) else { return };
        if let Some(from) = items.with_untracked(|v| v.iter().position(|x| x.cand.id == id)) {
            if from != to {
                move_item(from, to);
            }
        }
    };
    let end_drag = move |_ev: web_sys::PointerEvent| {
        if dragging.get_untracked().take().is_some() {
            dragging.set(None);
            changed();
        }
    };

    let q = qv.question.clone();
    let total = q.candidates.len();
    let (prev, next) = (qv.prev, qv.next);
    view! {
        <p><a href=format!("/annotate/batch/{}", qv.batch.id)>{format!("← {}", qv.batch.name)}</a></p>
        <section class="panel question">
            <p class="muted">{q.category.clone()}</p>
            <h1 data-testid="question-text">{q.text.clone()}</h1>
            {(!q.resources.is_empty()).then(|| view! {
                <p class="muted">"Entities in the question: "
                    {q.resources.iter().map(|r| match &r.link {
                        Some(l) => view! { <a href=l.clone() target="_blank" rel="noopener">{r.name.clone()}</a>" " }.into_any(),
                        None => view! { <span>{r.name.clone()}" "</span> }.into_any(),
                    }).collect_view()}
                </p>
            })}
            <p class="help" id="rank-help">
                "Order the " {total} " candidates from most serendipitous (1) to least. Drag them by the ⠿ handle, or focus one and use ↑ / ↓ to move it, T to tie it with the one above, U to mark it unsure."
            </p>
            <ol class="ranking" aria-describedby="rank-help" data-testid="ranking"
                on:pointermove=on_move on:pointerup=end_drag on:pointercancel=end_drag>
                <For each=move || items.get() key=|it| it.cand.id let:it>
                    {
                        let id = it.cand.id;
                        let name = it.cand.name.clone();
                        let idx = move || index_of(id).unwrap_or(0);
                        let rank = move || items.with(|v| { let r = ranks(v); index_of(id).map(|i| r[i]).unwrap_or(0) });
                        let tie = move || items.with(|v| v.iter().find(|x| x.cand.id == id).is_some_and(|x| x.tie));
                        let unsure = move || items.with(|v| v.iter().find(|x| x.cand.id == id).is_some_and(|x| x.unsure));
                        let link = it.ctx.as_ref().and_then(|c| c.link.clone());
                        let lines = it.ctx.as_ref().map(|c| c.lines.clone()).unwrap_or_default();
                        let in_graph = it.ctx.as_ref().is_some_and(|c| c.in_graph);
                        let n1 = name.clone();
                        let n2 = name.clone();
                        view! {
                            <li class="cand" tabindex="0" data-cand=id data-index=idx
                                class:dragging=move || dragging.get() == Some(id)
                                class:tied=tie class:unsure=unsure
                                aria-label=move || format!("{}, rank {}{}", n1, rank(), if unsure() { ", unsure" } else { "" })
                                on:keydown=move |ev| on_key(id, ev)>
                                <span class="handle" aria-hidden="true" title="Drag to reorder"
                                    on:pointerdown=move |ev: web_sys::PointerEvent| {
                                        ev.prevent_default();
                                        if let Some(t) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                                            let _ = t.set_pointer_capture(ev.pointer_id());
                                        }
                                        dragging.set(Some(id));
                                    }>"⠿"</span>
                                <span class="rank" data-testid="rank">{rank}</span>
                                <div class="cand-body">
                                    <div class="cand-name">
                                        <strong>{name.clone()}</strong>
                                        <span class="tag">{it.cand.kind.clone()}</span>
                                        {link.map(|(db, url)| view! { <a class="src" href=url target="_blank" rel="noopener">{db}</a> })}
                                        {move || tie().then(|| view! { <span class="tag tie">"tied"</span> })}
                                    </div>
                                    {if in_graph {
                                        view! { <ul class="context">{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul> }.into_any()
                                    } else {
                                        view! { <p class="context muted">"Not in the loaded graph."</p> }.into_any()
                                    }}
                                </div>
                                <div class="cand-controls">
                                    <button type="button" aria-label=format!("Move {n2} up") tabindex="-1"
                                        on:click=move |_| { let i = idx(); if i > 0 { move_item(i, i - 1); changed(); } }>"▲"</button>
                                    <button type="button" aria-label=format!("Move {} down", name) tabindex="-1"
                                        on:click=move |_| { let i = idx(); if i + 1 < total { move_item(i, i + 1); changed(); } }>"▼"</button>
                                    <label class="check"><input type="checkbox" tabindex="-1" prop:checked=tie prop:disabled=move || idx() == 0
                                        on:change=move |_| { let i = idx(); if i > 0 { items.update(|v| v[i].tie = !v[i].tie); changed(); } } />"tie"</label>
                                    <label class="check"><input type="checkbox" tabindex="-1" prop:checked=unsure
                                        on:change=move |_| { let i = idx(); items.update(|v| v[i].unsure = !v[i].unsure); changed(); } />"unsure"</label>
                                </div>
                            </li>
                        }
                    }
                </For>
            </ol>
            <fieldset class="confidence">
                <legend>"Confidence in this ranking"</legend>
                {(1u8..=5).map(|c| view! {
                    <label class="chip" class:on=move || confidence.get() == Some(c)>
                        <input type="radio" name="confidence" value=c prop:checked=move || confidence.get() == Some(c)
                            on:change=move |_| { confidence.set(Some(c)); changed(); } />
                        {c}
                    </label>
                }).collect_view()}
                <span class="muted">" 1 = guess, 5 = certain"</span>
            </fieldset>
            <label class="comment">"Comment (optional)"
                <textarea rows="3" maxlength="4000" prop:value=comment
                    on:input=move |ev| { comment.set(event_target_value(&ev)); changed(); }></textarea>
            </label>
            <div class="actions">
                <button class="button" type="button" data-testid="submit" on:click=move |_| save(Status::Complete)>
                    {move || if submitted.get() { "Update submission" } else { "Submit ranking" }}
                </button>
                <span class="save-state" data-testid="save-state" role="status">
                    {move || match state.get() {
                        SaveState::Untouched => "Not saved yet".to_string(),
                        SaveState::Pending | SaveState::Saving => "Saving…".to_string(),
                        SaveState::Saved(rev) => format!("Saved{} (revision {rev})", if submitted.get() { ", submitted" } else { " as draft" }),
                        SaveState::Failed(m) => format!("Not saved: {m}"),
                    }}
                </span>
            </div>
            <nav class="prevnext" aria-label="Questions">
                {prev.map(|p| view! { <a href=format!("/annotate/q/{p}")>"← Previous"</a> })}
                {next.map(|n| view! { <a href=format!("/annotate/q/{n}")>"Next →"</a> })}
            </nav>
        </section>
    }
}
