//! One question: rank its candidates by drag-and-drop (pointer events, so touch works) or by
//! keyboard, mark ties and "unsure", rate confidence, comment. Every change is autosaved as a
//! draft; "Submit" asks the server to validate the order. Edits of a submitted ranking are
//! autosaved as a draft beside the submission and count only after "Update submission".
//! Saving (revisions, conflicts, retries, flushing on leave, the copy on this device) is
//! [`super::sync`]'s job; this page only renders and reports changes to it.
//!
//! The list order is the ranking: an item with "tied with the one above" shares the rank of
//! its predecessor, otherwise it ranks one below it (dense ranks 1, 2, 2, 3 …). Moving an item
//! keeps every other tie between the same items (see [`move_in`]); dragging near the top or
//! bottom of the window scrolls it.
//!
//! Around the ranking: the guidelines ([`super::guide`]), the question's known answers (every
//! candidate, alphabetically — never in the server's LLM order, which the page does not have),
//! "question k of N", and after a submission the next question still to do (unless the
//! annotator turned that off; remembered on this device).
//!
//! Integrity (issue 39): a submission in the untouched shown order needs the "the order shown
//! is my ranking" confirmation (`serenqa_shared::annotate::submission_gate`, the rule the
//! server enforces); a ranking marking every candidate unsure is announced as a skip; a
//! refusal is shown at its field and in the status line, which stays at the bottom of the
//! window; the conflict view names every field that differs; key presses that arrive while
//! the moved item is being re-inserted (it loses focus for a moment) go to that item, in order.

use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};
use serenqa_shared::annotate::{
    differences, is_shown_order, submission_gate, BlindCandidate, CandidateContext, Me,
    QuestionView, RankEntry, Role, Status, Version, CONFIRM_SHOWN_ORDER_LABEL, MAX_COMMENT_CHARS,
};
use wasm_bindgen::JsCast;

use super::guide::Guidelines;
use super::sync::{self, LocalCopy, SaveState, Saver, Snapshot, Ui};
use super::{get, Failure, SignInPrompt, SignedAs};

#[derive(Clone, Debug, PartialEq)]
struct Item {
    cand: BlindCandidate,
    ctx: Option<CandidateContext>,
    /// Tied with the item above.
    tie: bool,
    unsure: bool,
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

/// Puts the items in the order of a saved ranking (ties keep the saved list order) with its
/// tie and unsure marks; candidates it does not rank go last in their current order.
fn arrange(v: &mut [Item], ranking: &[RankEntry]) {
    let rank_of = |id: i64| {
        ranking
            .iter()
            .find(|e| e.candidate == id)
            .and_then(|e| e.rank)
            .unwrap_or(u32::MAX)
    };
    let pos_of = |id: i64| {
        ranking
            .iter()
            .position(|e| e.candidate == id)
            .unwrap_or(usize::MAX)
    };
    v.sort_by_key(|it| (rank_of(it.cand.id), pos_of(it.cand.id)));
    let mut prev = None;
    for it in v.iter_mut() {
        let rk = rank_of(it.cand.id);
        it.tie = prev == Some(rk) && rk != u32::MAX;
        it.unsure = ranking
            .iter()
            .any(|e| e.candidate == it.cand.id && e.unsure);
        prev = Some(rk);
    }
    normalise(v);
}

/// Moves the item at `from` to `to` without changing any other tie: the item below the one
/// leaving takes over its tie to the item above (so it stays in its group, or becomes the
/// head of the group it was tied to), and the moved item joins a group only when it lands
/// between two items tied together (it shows as tied there).
fn move_in(v: &mut Vec<Item>, from: usize, to: usize) {
    if from >= v.len() || to >= v.len() || from == to {
        return;
    }
    let mut it = v.remove(from);
    if let Some(below) = v.get_mut(from) {
        if below.tie {
            below.tie = it.tie;
        }
    }
    it.tie = to > 0 && v.get(to).is_some_and(|x| x.tie);
    v.insert(to, it);
    normalise(v);
}

fn ranking_of(v: &[Item]) -> Vec<RankEntry> {
    v.iter()
        .zip(ranks(v))
        .map(|(it, r)| RankEntry {
            candidate: it.cand.id,
            rank: Some(r),
            unsure: it.unsure,
        })
        .collect()
}

/// A server or gate message as a sentence (capital first letter).
fn sentence(m: &str) -> String {
    let mut c = m.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Scrolls to what the status line is about: the conflict view, else the first refusal shown
/// at its field.
fn show_problem() {
    let el = document()
        .query_selector("[data-testid=conflict], .field-error")
        .ok()
        .flatten();
    if let Some(el) = el {
        el.scroll_into_view();
    }
}

/// What the conflicting save found stored (its pending edit, else the response).
fn s_current(c: &Option<serenqa_shared::annotate::StaleRevision>) -> Option<Snapshot> {
    c.as_ref()
        .and_then(|s| s.current.as_ref())
        .map(Snapshot::of_response)
}

#[component]
pub fn QuestionPage() -> impl IntoView {
    view! { <SignedAs needs=vec![Role::Annotator] children=|me: Me| view! { <QuestionLoader user=me.user.id /> } /> }
}

/// Whether to open the next question to do after a submission (this device's choice).
const ADVANCE_KEY: &str = "serenqa:auto-advance";

fn auto_advance() -> bool {
    window()
        .local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item(ADVANCE_KEY).ok().flatten())
        .as_deref()
        != Some("0")
}

fn set_auto_advance(on: bool) {
    if let Some(s) = window().local_storage().ok().flatten() {
        let _ = s.set_item(ADVANCE_KEY, if on { "1" } else { "0" });
    }
}

#[component]
fn QuestionLoader(user: i64) -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let (qv, set_qv) = signal(None::<Result<QuestionView, Failure>>);
    Effect::new(move |_| {
        let id = id();
        set_qv.set(None);
        spawn_local(async move {
            // Coming back to a question whose save is still on its way: show it once stored.
            if let Ok(q) = id.parse::<i64>() {
                sync::wait_for_saves(q).await;
            }
            set_qv.set(Some(get(&format!("/api/annotate/questions/{id}")).await));
        });
    });
    move || {
        match qv.get() {
        None => view! { <p class="loading">"Loading the question…"</p> }.into_any(),
        Some(Err(f)) if f.status == 401 => view! { <SignInPrompt message="Your session has ended. Sign in again to open this question." /> }.into_any(),
        Some(Err(f)) => view! { <p class="error" role="alert">{format!("Could not load the question: {}", f.message)}</p> }.into_any(),
        Some(Ok(v)) => view! { <Ranker qv=v user=user /> }.into_any(),
    }
    }
}

fn focus_candidate(id: i64) {
    // After the list re-renders: put the keyboard focus back on the moved item.
    set_timeout(
        move || {
            let el = document()
                .query_selector(&format!("[data-cand='{id}']"))
                .ok()
                .flatten();
            if let Some(el) = el.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
                let _ = el.focus();
            }
        },
        Duration::from_millis(0),
    );
}

#[component]
fn Ranker(qv: QuestionView, user: i64) -> impl IntoView {
    let qid = qv.question.id;
    let ctx_of = |c: &BlindCandidate| qv.context.iter().find(|x| x.candidate == c.id).cloned();
    let mut initial: Vec<Item> = qv
        .question
        .candidates
        .iter()
        .map(|c| Item {
            cand: c.clone(),
            ctx: ctx_of(c),
            tie: false,
            unsure: false,
        })
        .collect();
    // What the annotator last saved (a pending edit of a submission, else the response).
    let loaded = qv.response.as_ref().map(Snapshot::of_response);
    if let Some(l) = &loaded {
        arrange(&mut initial, &l.ranking);
    }
    let loaded = loaded.unwrap_or_else(|| Snapshot {
        ranking: ranking_of(&initial),
        confidence: None,
        comment: String::new(),
    });
    let items = RwSignal::new(initial);
    let confidence = RwSignal::new(loaded.confidence);
    let comment = RwSignal::new(loaded.comment.clone());
    let ui = Ui {
        state: RwSignal::new(match &qv.response {
            Some(r) => SaveState::Saved(r.revision),
            None => SaveState::Untouched,
        }),
        submitted: RwSignal::new(
            qv.response
                .as_ref()
                .is_some_and(|r| r.status == Status::Complete),
        ),
        edited: RwSignal::new(qv.response.as_ref().is_some_and(|r| r.pending.is_some())),
        conflict: RwSignal::new(None),
        just_submitted: RwSignal::new(false),
        field_error: RwSignal::new(None),
    };
    let field_error = ui.field_error;
    // The order the server showed (this annotator's shuffle): a submission in it, untouched,
    // needs the explicit confirmation.
    let presented = StoredValue::new(
        qv.question
            .candidates
            .iter()
            .map(|c| c.id)
            .collect::<Vec<i64>>(),
    );
    let confirm = RwSignal::new(
        qv.response
            .as_ref()
            .is_some_and(|r| r.confirmed_shown_order),
    );
    let gate_error = RwSignal::new(None::<String>);
    let untouched = Memo::new(move |_| {
        items.with(|v| presented.with_value(|p| is_shown_order(p, &ranking_of(v))))
    });
    let all_unsure =
        Memo::new(move |_| items.with(|v| !v.is_empty() && v.iter().all(|x| x.unsure)));
    let (state, submitted, edited, conflict) = (ui.state, ui.submitted, ui.edited, ui.conflict);
    let base = qv.response.as_ref().map_or(0, |r| r.revision);
    let saver = Saver::new(
        user,
        qid,
        base,
        loaded.clone(),
        qv.response.as_ref().and_then(Snapshot::submitted),
        qv.response.as_ref().and_then(|r| r.time_ms).unwrap_or(0),
        ui,
    );
    // Changes this device kept but the server never acknowledged (session ended, page closed
    // mid-save): offered back unless the server already has exactly them.
    let restore = RwSignal::new(None::<LocalCopy>);
    match sync::read_local(user, qid) {
        Some(l) if l.content != loaded => restore.set(Some(l)),
        Some(_) => sync::remove_local(user, qid),
        None => {}
    }
    // Leaving: in-app navigation disposes this view, `pagehide` covers reloads and closed
    // tabs. Both send what is pending at once; neither touches a signal afterwards.
    let on_hide = {
        let s = saver.clone();
        window_event_listener_untyped("pagehide", move |_| s.flush())
    };
    // Time on task counts while the page is visible.
    let on_visibility = {
        let s = saver.clone();
        window_event_listener_untyped("visibilitychange", move |_| {
            s.visibility(!document().hidden());
        })
    };
    {
        let s = saver.clone();
        on_cleanup(move || {
            on_hide.remove();
            on_visibility.remove();
            s.flush();
        });
    }
    let saver = StoredValue::new(saver);
    let dragging = RwSignal::new(None::<i64>);
    // After a submission: on to the next question still to do, if the annotator wants that.
    let advance = RwSignal::new(auto_advance());
    let next_todo = qv.next_todo;
    {
        let navigate = use_navigate();
        let just = ui.just_submitted;
        Effect::new(move |_| {
            if just.get() && advance.get_untracked() {
                if let Some(n) = next_todo {
                    navigate(
                        &format!("/annotate/q/{n}?submitted={qid}"),
                        Default::default(),
                    );
                }
            }
        });
    }
    let came_from = use_query_map()
        .read_untracked()
        .get("submitted")
        .and_then(|s| s.parse::<i64>().ok());

    let snapshot = move || Snapshot {
        ranking: items.with_untracked(|v| ranking_of(v)),
        confidence: confidence.get_untracked(),
        comment: comment.get_untracked(),
    };
    let apply = move |s: &Snapshot| {
        items.update(|v| arrange(v, &s.ranking));
        confidence.set(s.confidence);
        comment.set(s.comment.clone());
    };
    let changed = move || saver.with_value(|s| s.changed(snapshot()));
    // Once the order is no longer the shown one, the confirmation question is moot.
    Effect::new(move |_| {
        if !untouched.get() {
            gate_error.set(None);
        }
    });
    let submit = move |_| {
        let snap = snapshot();
        let shown = untouched.get_untracked();
        let ok = confirm.get_untracked() && shown;
        if let Err(g) =
            presented.with_value(|p| submission_gate(p, &snap.ranking, Status::Complete, ok))
        {
            gate_error.set(Some(g.message));
            if let Some(el) = document()
                .get_element_by_id("confirm-shown")
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = el.focus();
            }
            return;
        }
        gate_error.set(None);
        saver.with_value(|s| s.submit(snap, ok));
    };
    // A refusal shown at its field: which field a server code is about.
    let error_at = move |field: &'static str| {
        move || {
            field_error.get().and_then(|(code, message)| {
                let at = match code.as_str() {
                    "untouched_order" => "confirm",
                    "bad_confidence" => "confidence",
                    "incomplete" if message.contains("confidence") => "confidence",
                    "comment_too_long" => "comment",
                    "bad_submission_id" | "submission_id_reused" | "" => "none",
                    _ => "ranking",
                };
                (at == field).then(|| {
                    view! { <p class="field-error" role="alert" data-testid=format!("{field}-error")>{sentence(&message)}</p> }
                })
            })
        }
    };
    let restore_banner = move || {
        restore.get().map(|l| {
            let content = l.content.clone();
            let when = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(l.saved_at)).to_locale_string("en-GB", &wasm_bindgen::JsValue::UNDEFINED);
            view! {
                <div class="notice" role="alert" data-testid="restore">
                    <p>"This device kept changes to this question that were never saved (from " {String::from(when)} "). "</p>
                    <button class="button" type="button" data-testid="restore-yes" on:click=move |_| {
                        apply(&content);
                        restore.set(None);
                        changed();
                    }>"Restore my changes"</button>
                    " "
                    <button class="link-button" type="button" data-testid="restore-no" on:click=move |_| {
                        sync::remove_local(user, qid);
                        restore.set(None);
                    }>"Discard them"</button>
                </div>
            }
        })
    };
    let conflict_panel = move || {
        conflict.get().map(|s| {
            // Every field in which this page's version and the stored one differ (the order
            // with its ties, unsure marks, confidence, comment), updated as the page changes.
            let diffs = move || {
                let stored = s_current(&conflict.get());
                let mine = (
                    items.with(|v| ranking_of(v)),
                    confidence.get(),
                    comment.get(),
                );
                let name = |id: i64| {
                    items.with_untracked(|v| {
                        v.iter()
                            .find(|it| it.cand.id == id)
                            .map_or_else(|| format!("#{id}"), |it| it.cand.name.clone())
                    })
                };
                match stored {
                    None => Vec::new(),
                    Some(t) => differences(
                        Version {
                            ranking: &mine.0,
                            confidence: mine.1,
                            comment: &mine.2,
                        },
                        Version {
                            ranking: &t.ranking,
                            confidence: t.confidence,
                            comment: &t.comment,
                        },
                        name,
                    ),
                }
            };
            let has_theirs = s.current.is_some();
            let what = match &s.current {
                Some(r) if r.status == Status::Complete && r.pending.is_some() => "a submitted ranking with unsubmitted edits",
                Some(r) if r.status == Status::Complete => "a submitted ranking",
                Some(_) => "a draft",
                None => "nothing",
            };
            let s2 = s.clone();
            view! {
                <div class="notice conflict" role="alert" data-testid="conflict">
                    <p><strong>"This question was saved elsewhere"</strong>
                        {format!(" (another tab or device stored {what}, revision {}). Your version, shown below, has not been saved over it.", s.revision)}</p>
                    {has_theirs.then(|| view! {
                        <div data-testid="theirs">
                            {move || {
                                let d = diffs();
                                if d.is_empty() {
                                    view! { <p class="muted" data-testid="no-diff">"Both versions hold the same ranking, unsure marks, confidence and comment."</p> }.into_any()
                                } else {
                                    view! {
                                        <p class="muted">"How they differ:"</p>
                                        <ul class="diffs" data-testid="conflict-diffs">
                                            {d.into_iter().map(|x| {
                                                let label = match x.field {
                                                    "order" => "Order",
                                                    "unsure" => "Marked unsure",
                                                    "confidence" => "Confidence",
                                                    _ => "Comment",
                                                };
                                                view! { <li data-field=x.field><strong>{label}</strong>" — yours: " {x.mine} "; theirs: " {x.theirs}</li> }
                                            }).collect_view()}
                                        </ul>
                                    }.into_any()
                                }
                            }}
                        </div>
                    })}
                    <button class="button" type="button" data-testid="keep-mine" on:click=move |_| saver.with_value(super::sync::Saver::keep_mine)>"Keep mine"</button>
                    " "
                    <button class="button secondary" type="button" data-testid="take-theirs" on:click=move |_| {
                        if let Some(snap) = saver.with_value(|sv| sv.take_theirs(&s2)) {
                            apply(&snap);
                        }
                    }>"Take theirs"</button>
                </div>
            }
        })
    };
    let discard_edits = move |_| {
        if let Some(snap) = saver.with_value(super::sync::Saver::submitted) {
            apply(&snap);
            changed();
        }
    };
    let move_item = move |from: usize, to: usize| items.update(|v| move_in(v, from, to));
    let index_of = move |id: i64| items.with(|v| v.iter().position(|x| x.cand.id == id));
    let on_key = move |id: i64, ev: web_sys::KeyboardEvent| {
        let Some(i) = items.with_untracked(|v| v.iter().position(|x| x.cand.id == id)) else {
            return;
        };
        let n = items.with_untracked(std::vec::Vec::len);
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
    // A moved item is re-inserted in the list and loses the focus until `focus_candidate`
    // gives it back: presses in between reach the page, not the item. They are taken here, in
    // order, for the item that had the focus last — unless the annotator has since clicked or
    // focused something else.
    let last_focus = StoredValue::new(None::<i64>);
    let on_page_key = window_event_listener(leptos::ev::keydown, move |ev| {
        let on_page = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_none_or(|el| el.tag_name() == "BODY" || el.tag_name() == "HTML");
        if on_page {
            if let Some(id) = last_focus.get_value() {
                on_key(id, ev);
            }
        }
    });
    // Focus or a click anywhere but a candidate forgets the last-focused one.
    let forget_off_candidate = move |target: Option<web_sys::EventTarget>| {
        let on_cand = target
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("li.cand").ok().flatten())
            .is_some();
        if !on_cand {
            last_focus.set_value(None);
        }
    };
    let on_focus_elsewhere = window_event_listener(leptos::ev::focusin, move |ev| {
        forget_off_candidate(ev.target());
    });
    let on_click_elsewhere = window_event_listener(leptos::ev::pointerdown, move |ev| {
        forget_off_candidate(ev.target());
    });
    on_cleanup(move || {
        on_page_key.remove();
        on_focus_elsewhere.remove();
        on_click_elsewhere.remove();
    });
    // Pointer drag: the handle captures the pointer; the item under the pointer gives the
    // target position, and the list reorders live. Near the window's top or bottom edge a
    // timer scrolls the page (faster closer to the edge) and re-targets under the pointer.
    let pointer = StoredValue::new((0.0f32, 0.0f32));
    let scroller = StoredValue::new(None::<IntervalHandle>);
    let retarget = move || {
        let Some(id) = dragging.get_untracked() else {
            return;
        };
        let (x, y) = pointer.get_value();
        let Some(target) = document().element_from_point(x, y) else {
            return;
        };
        let Some(li) = target.closest("[data-index]").ok().flatten() else {
            return;
        };
        let Some(to) = li
            .get_attribute("data-index")
            .and_then(|s| s.parse::<usize>().ok())
        else {
            return;
        };
        if let Some(from) = items.with_untracked(|v| v.iter().position(|x| x.cand.id == id)) {
            if from != to {
                move_item(from, to);
            }
        }
    };
    let on_move = move |ev: web_sys::PointerEvent| {
        if dragging.get_untracked().is_none() {
            return;
        }
        pointer.set_value((ev.client_x() as f32, ev.client_y() as f32));
        retarget();
    };
    let stop_scroller = move || {
        if let Some(h) = scroller
            .try_update_value(std::option::Option::take)
            .flatten()
        {
            h.clear();
        }
    };
    let start_scroller = move || {
        stop_scroller();
        let h = set_interval_with_handle(
            move || {
                if dragging.get_untracked().is_none() {
                    return;
                }
                let (_, y) = pointer.get_value();
                let h = window()
                    .inner_height()
                    .ok()
                    .and_then(|v| v.as_f64())
                    .unwrap_or(800.0) as f32;
                const EDGE: f32 = 70.0;
                let dy = if y < EDGE {
                    -(EDGE - y.max(0.0)) / 3.0 - 2.0
                } else if y > h - EDGE {
                    (y.min(h) - (h - EDGE)) / 3.0 + 2.0
                } else {
                    0.0
                };
                if dy != 0.0 {
                    window().scroll_by_with_x_and_y(0.0, dy as f64);
                    retarget();
                }
            },
            Duration::from_millis(30),
        )
        .ok();
        scroller.set_value(h);
    };
    on_cleanup(stop_scroller);
    let end_drag = move |_ev: web_sys::PointerEvent| {
        stop_scroller();
        if dragging.get_untracked().is_some() {
            dragging.set(None);
            changed();
        }
    };

    let q = qv.question.clone();
    let total = q.candidates.len();
    let (prev, next) = (qv.prev, qv.next);
    let (index, of) = (qv.index, qv.total);
    let mut known: Vec<(String, String)> = q
        .candidates
        .iter()
        .map(|c| (c.name.clone(), c.kind.clone()))
        .collect();
    known.sort_by_key(|(n, _)| n.to_lowercase());
    let batch_href = format!("/annotate/batch/{}", qv.batch.id);
    view! {
        <nav class="q-crumbs" aria-label="Batch">
            <a href=batch_href.clone()>{format!("← {}", qv.batch.name)}</a>
            {(of > 0).then(|| view! { <span class="q-pos" data-testid="q-position">{format!("Question {index} of {of}")}</span> })}
        </nav>
        {came_from.map(|_| view! { <p class="notice ok" role="status" data-testid="advanced">"Your ranking of the previous question was submitted. This is the next question still to do."</p> })}
        <Guidelines />
        <section class="panel question">
            {restore_banner}
            {conflict_panel}
            <p class="muted">{super::work::category_label(&q.category)}</p>
            <h1 data-testid="question-text">{q.text.clone()}</h1>
            {(!q.resources.is_empty()).then(|| view! {
                <p class="muted">"Named in the question: "
                    {q.resources.iter().map(|r| match &r.link {
                        Some(l) => view! { <a href=l.clone() target="_blank" rel="noopener">{r.name.clone()}</a>" " }.into_any(),
                        None => view! { <span>{r.name.clone()}" "</span> }.into_any(),
                    }).collect_view()}
                </p>
            })}
            <div class="known" data-testid="known-answers">
                <h2>{format!("Known answers ({})", known.len())}</h2>
                <p class="muted">"All of these answer the question according to the knowledge graph (listed alphabetically). Judge each one's serendipity against the others and the entities named in the question."</p>
                <ul class="known-list">
                    {known.into_iter().map(|(n, k)| view! { <li>{n}<span class="tag">{k}</span></li> }).collect_view()}
                </ul>
            </div>
            <p class="help" id="rank-help">
                "Order the " {total} " candidates from most serendipitous (1) to least. Drag them by the ⠿ handle, or focus one and use ↑ / ↓ to move it, T to tie it with the one above, U to mark it unsure. Under each candidate: its largest relation groups, naming its most specific neighbours."
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
                                on:focus=move |_| last_focus.set_value(Some(id))
                                on:keydown=move |ev| on_key(id, ev)>
                                <span class="handle" aria-hidden="true" title="Drag to reorder"
                                    on:pointerdown=move |ev: web_sys::PointerEvent| {
                                        ev.prevent_default();
                                        if let Some(t) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                                            let _ = t.set_pointer_capture(ev.pointer_id());
                                        }
                                        pointer.set_value((ev.client_x() as f32, ev.client_y() as f32));
                                        dragging.set(Some(id));
                                        start_scroller();
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
            {error_at("ranking")}
            {move || all_unsure.get().then(|| view! {
                <p class="notice" data-testid="skip-note">"Every candidate is marked unsure: submitting records that you skipped this question. A skip does not count toward the batch's coverage or the results."</p>
            })}
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
                {error_at("confidence")}
            </fieldset>
            <label class="comment">"Comment (optional)"
                <textarea rows="3" maxlength=MAX_COMMENT_CHARS.to_string() prop:value=comment aria-describedby="comment-count"
                    on:input=move |ev| { comment.set(event_target_value(&ev)); changed(); }></textarea>
                // The box holds at most the limit (the browser cuts a longer paste): say so, so
                // nobody believes a cut text was kept whole.
                <span id="comment-count" class="muted comment-count" data-testid="comment-count"
                    class:warn=move || comment.with(|c| c.encode_utf16().count() >= MAX_COMMENT_CHARS)>
                    {move || {
                        let n = comment.with(|c| c.chars().count());
                        if comment.with(|c| c.encode_utf16().count() >= MAX_COMMENT_CHARS) {
                            format!("{n} / {MAX_COMMENT_CHARS} characters: the limit. Anything typed or pasted beyond it was not kept; keep longer notes elsewhere.")
                        } else {
                            format!("{n} / {MAX_COMMENT_CHARS} characters")
                        }
                    }}
                </span>
            </label>
            {error_at("comment")}
            {move || untouched.get().then(|| view! {
                <div class="confirm-order" data-testid="confirm-block">
                    <p class="muted">"You have not moved any candidate: the list is still in the order it was shown in."</p>
                    <label class="check">
                        <input type="checkbox" id="confirm-shown" data-testid="confirm-shown"
                            aria-describedby="confirm-error"
                            prop:checked=move || confirm.get()
                            on:change=move |ev| { confirm.set(event_target_checked(&ev)); gate_error.set(None); } />
                        {CONFIRM_SHOWN_ORDER_LABEL}
                    </label>
                    {move || gate_error.get().map(|m| view! { <p class="field-error" role="alert" id="confirm-error" data-testid="confirm-error">{sentence(&m)}</p> })}
                    {error_at("confirm")}
                </div>
            })}
            <div class="actions">
                <button class="button" type="button" data-testid="submit" on:click=submit>
                    {move || if submitted.get() { "Update submission" } else { "Submit ranking" }}
                </button>
                {move || (submitted.get() && edited.get()).then(|| view! {
                    <button class="link-button" type="button" data-testid="discard-edits" on:click=discard_edits>"Discard edits (back to the submission)"</button>
                })}
                <label class="check advance">
                    <input type="checkbox" data-testid="auto-advance" prop:checked=move || advance.get()
                        on:change=move |ev| { let on = event_target_checked(&ev); set_auto_advance(on); advance.set(on); } />
                    {if next_todo.is_some() { "After submitting, open the next question to do" } else { "After submitting, open the next question to do (none left)" }}
                </label>
            </div>
            <div class="status-bar" data-testid="status-bar"
                class:error=move || matches!(state.get(), SaveState::Failed(_) | SaveState::Conflict | SaveState::SignedOut)>
                {move || matches!(state.get(), SaveState::Failed(_) | SaveState::Conflict).then(|| view! {
                    <button class="link-button status-show" type="button" data-testid="status-show" on:click=move |_| show_problem()>"Show me"</button>
                })}
                <span class="save-state" data-testid="save-state" role="status"
                    class:warn=move || matches!(state.get(), SaveState::Retrying(_))
                    class:error=move || matches!(state.get(), SaveState::Failed(_) | SaveState::Conflict | SaveState::SignedOut)>
                    {move || match state.get() {
                        SaveState::Untouched => "Not saved yet".to_string(),
                        SaveState::Pending | SaveState::Saving => "Saving…".to_string(),
                        SaveState::Saved(rev) if submitted.get() && edited.get() => format!("Edits saved as a draft; press “Update submission” to count them (revision {rev})"),
                        SaveState::Saved(rev) => format!("Saved{} (revision {rev})", if submitted.get() { ", submitted" } else { " as draft" }),
                        SaveState::Retrying(m) => format!("Not saved yet: {m}. Your changes are kept on this device and sent automatically as soon as the server can be reached."),
                        SaveState::Failed(m) => format!("Not saved: {m}. Correct it where it is marked; the next change is sent again."),
                        SaveState::Conflict => "Not saved: changed elsewhere (see above)".to_string(),
                        SaveState::SignedOut => "Not saved: your session has ended".to_string(),
                    }}
                </span>
            </div>
            {move || (state.get() == SaveState::SignedOut).then(|| view! {
                <p class="notice" role="alert" data-testid="signed-out">"Your session has ended. "
                    <a href=format!("/login?next=/annotate/q/{qid}")>"Sign in again"</a>
                    "; your changes are kept on this device and offered back when you return to this question."</p>
            })}
            <nav class="prevnext" aria-label="Questions">
                {prev.map(|p| view! { <a href=format!("/annotate/q/{p}")>"← Previous"</a> })}
                {next_todo.filter(|n| Some(*n) != next).map(|n| view! { <a href=format!("/annotate/q/{n}") data-testid="next-todo">"Next to do →"</a> })}
                {next.map(|n| view! { <a href=format!("/annotate/q/{n}")>"Next →"</a> })}
            </nav>
        </section>
    }
}
