//! The annotator's batches with progress, and one batch's questions.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use serenqa_shared::annotate::{BatchProgress, BatchView, Me, Status};

use super::account::SignOut;
use super::{get, Failure, Signed};

#[component]
pub fn Batches() -> impl IntoView {
    view! { <Signed children=|me: Me| view! { <BatchList me=me /> } /> }
}

#[component]
fn BatchList(me: Me) -> impl IntoView {
    let (list, set_list) = signal(None::<Result<Vec<BatchProgress>, Failure>>);
    spawn_local(async move { set_list.set(Some(get("/api/annotate/batches").await)) });
    view! {
        <h1>"Annotation batches"</h1>
        <SignOut me=me />
        <p class="muted">"Rank each question's candidate answers from most to least serendipitous (surprising, novel and still relevant). Your work is saved as you go; a question counts once you submit it."</p>
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
                            <li class="panel batch">
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
    view! { <Signed children=|_me: Me| view! { <BatchQuestions /> } /> }
}

#[component]
fn BatchQuestions() -> impl IntoView {
    let params = use_params_map();
    let id = params.read_untracked().get("id").unwrap_or_default();
    let (view_, set_view) = signal(None::<Result<BatchView, Failure>>);
    spawn_local(async move { set_view.set(Some(get(&format!("/api/annotate/batches/{id}")).await)) });
    view! {
        <p><a href="/annotate">"← All batches"</a></p>
        {move || match view_.get() {
            None => view! { <p class="loading">"Loading the batch…"</p> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
            Some(Ok(b)) => view! {
                <h1>{b.batch.name.clone()}</h1>
                <ol class="question-list">
                    {b.questions.into_iter().map(|q| {
                        let (label, class) = match q.status {
                            Some(Status::Complete) => ("submitted", "status done"),
                            Some(Status::Draft) => ("in progress", "status draft"),
                            None => ("to do", "status todo"),
                        };
                        view! {
                            <li>
                                <a href=format!("/annotate/q/{}", q.id)>{q.text.clone()}</a>
                                " " <span class=class>{label}</span>
                                <span class="muted">{format!(" · {} candidates · {}", q.candidates, q.category)}</span>
                            </li>
                        }
                    }).collect_view()}
                </ol>
            }.into_any(),
        }}
    }
}
