//! The annotator's batches with progress (those assigned to them by name first, marked), and
//! one batch's questions.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use serenqa_shared::annotate::{BatchProgress, BatchView, Me, Role, Status};

use super::account::SignOut;
use super::guide::Guidelines;
use super::{get, Failure, SignInPrompt, SignedAs};

/// A questionnaire category for display: `class:subclass` as "class › subclass", with the
/// release's placeholder subclass `None` (and empty parts) left out.
pub fn category_label(c: &str) -> String {
    let parts: Vec<&str> = c
        .split(':')
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "None")
        .collect();
    if parts.is_empty() {
        "uncategorised".to_string()
    } else {
        parts.join(" › ")
    }
}

#[component]
pub fn Batches() -> impl IntoView {
    view! { <SignedAs needs=vec![Role::Annotator] children=|me: Me| view! { <BatchList me=me /> } /> }
}
#[component]
fn BatchList(me: Me) -> impl IntoView {
    let (list, set_list) = signal(None::<Result<Vec<BatchProgress>, Failure>>);
    spawn_local(async move { set_list.set(Some(get("/api/annotate/batches").await)) });
    view! {
        <h1>"Annotation batches"</h1>
        <SignOut me=me />
        <p class="muted">"Rank each question's candidate answers from most to least serendipitous (relevant to the other answers, novel and surprising). Your work is saved as you go; a question counts once you submit it."</p>
        <Guidelines />
        {move || list.with(|l| match l {
            Some(Ok(v)) if v.iter().any(|p| p.assigned) => Some(view! {
                <p class="muted" data-testid="assigned-note">"The batches assigned to you come first; the others are open to every annotator."</p>
            }),
            _ => None,
        })}
        {move || match list.get() {
            None => view! { <p class="loading">"Loading batches…"</p> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
            Some(Ok(v)) if v.is_empty() => view! { <p class="panel">"No questions have been imported yet."</p> }.into_any(),
            Some(Ok(v)) => view! {
                <ul class="batches" data-testid="batches">
                    {v.into_iter().map(|p| {
                        let pct = if p.batch.questions > 0 { 100 * p.complete / p.batch.questions } else { 0 };
                        let resume = p.resume_at.map(|q| format!("/annotate/q/{q}"));
                        view! {
                            <li class="panel batch" class:assigned=p.assigned data-assigned=p.assigned.to_string()>
                                {p.assigned.then(|| view! { <p class="assigned-mark" data-testid="assigned-mark">"Assigned to you"</p> })}
                                <div class="batch-head">
                                    <a href=format!("/annotate/batch/{}", p.batch.id)><strong>{p.batch.name.clone()}</strong></a>
                                    <span class="tag">{p.batch.source.as_str()}</span>
                                </div>
                                <div class="progress" role="progressbar" aria-valuemin="0" aria-valuemax=p.batch.questions aria-valuenow=p.complete
                                    aria-label=format!("{} progress", p.batch.name)>
                                    <span style=format!("width: {pct}%")></span>
                                </div>
                                <p class="muted">{format!("{} of {} submitted, {} in progress", p.complete, p.batch.questions, p.draft)}</p>
                                {resume.map(|href| view! { <a class="button" href=href>{if p.complete + p.draft > 0 { "Resume" } else { "Start" }}</a> })}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            }.into_any(),
        }}
    }
}

#[component]
pub fn BatchPage() -> impl IntoView {
    view! { <SignedAs needs=vec![Role::Annotator] children=|_me: Me| view! { <BatchQuestions /> } /> }
}

/// One batch: every question in one full-height list (numbered in batch order), with a
/// "to do only" filter and a search over text and category.
#[component]
fn BatchQuestions() -> impl IntoView {
    let params = use_params_map();
    let id = params.read_untracked().get("id").unwrap_or_default();
    let (view_, set_view) = signal(None::<Result<BatchView, Failure>>);
    spawn_local(
        async move { set_view.set(Some(get(&format!("/api/annotate/batches/{id}")).await)) },
    );
    let todo_only = RwSignal::new(false);
    let search = RwSignal::new(String::new());
    view! {
        <p><a href="/annotate">"← All batches"</a></p>
        {move || match view_.get() {
            None => view! { <p class="loading">"Loading the batch…"</p> }.into_any(),
            Some(Err(f)) if f.status == 401 => view! { <SignInPrompt message="Your session has ended. Sign in again to see this batch." /> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{format!("Could not load the batch: {}", f.message)}</p> }.into_any(),
            Some(Ok(b)) => {
                let total = b.questions.len();
                let done = b.questions.iter().filter(|q| q.status == Some(Status::Complete)).count();
                let first_todo = b.questions.iter().find(|q| q.status != Some(Status::Complete)).map(|q| q.id);
                let rows: Vec<(usize, serenqa_shared::annotate::QuestionSummary, String)> = b
                    .questions
                    .into_iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let hay = format!("{} {}", q.text, q.category).to_lowercase();
                        (i + 1, q, hay)
                    })
                    .collect();
                let rows = StoredValue::new(rows);
                let visible = move || {
                    let needle = search.get().trim().to_lowercase();
                    let todo = todo_only.get();
                    rows.with_value(|r| {
                        r.iter()
                            .filter(|(_, q, hay)| (!todo || q.status != Some(Status::Complete)) && (needle.is_empty() || hay.contains(&needle)))
                            .map(|(k, q, _)| (*k, q.clone()))
                            .collect::<Vec<_>>()
                    })
                };
                view! {
                    <h1>{b.batch.name.clone()}</h1>
                    <p class="muted" data-testid="batch-summary">{format!("{total} questions · {done} submitted · {} to do", total - done)}</p>
                    {first_todo.map(|q| view! { <p class="batch-summary-actions"><a class="button" href=format!("/annotate/q/{q}") data-testid="first-todo">"Next question to do"</a></p> })}
                    <div class="list-tools panel">
                        <label class="check"><input type="checkbox" data-testid="todo-only" prop:checked=move || todo_only.get()
                            on:change=move |ev| todo_only.set(event_target_checked(&ev)) />"To do only"</label>
                        <label class="search-q">"Search"
                            <input type="search" data-testid="question-search" placeholder="words in the question or category"
                                prop:value=move || search.get() on:input=move |ev| search.set(event_target_value(&ev)) />
                        </label>
                        <span class="muted" role="status" data-testid="shown-count">{move || format!("showing {} of {total}", visible().len())}</span>
                    </div>
                    <ol class="batch-questions" data-testid="question-list">
                        {move || {
                            let v = visible();
                            if v.is_empty() {
                                return view! { <li class="muted empty">"No question matches."</li> }.into_any();
                            }
                            v.into_iter().map(|(k, q)| {
                                let (label, class) = match q.status {
                                    Some(Status::Complete) => ("submitted", "status done"),
                                    Some(Status::Draft) => ("in progress", "status draft"),
                                    None => ("to do", "status todo"),
                                };
                                view! {
                                    <li data-status=label>
                                        <span class="qnum">{k}</span>
                                        <div class="qbody">
                                            <a href=format!("/annotate/q/{}", q.id)>{q.text.clone()}</a>
                                            <div class="qmeta"><span class=class>{label}</span>
                                                <span class="muted">{format!(" {} candidates · {}", q.candidates, category_label(&q.category))}</span></div>
                                        </div>
                                    </li>
                                }
                            }).collect_view().into_any()
                        }}
                    </ol>
                }.into_any()
            }
        }}
    }
}
