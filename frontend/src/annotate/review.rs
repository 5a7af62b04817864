//! Reviewers: agreement and expert partitions per batch and per question, exports, each
//! annotator's progress and the individual submitted rankings and comments (`oversight`).
//! Annotators appear by pseudonym only ("A12", as in the export); for a reviewer the server
//! sends no e-mail, name or account id.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::annotate::{BatchAggregate, BatchRef, BatchReview, Me, Role};

use super::account::SignOut;
use super::oversight::WorkViews;
use super::{fmt3, get, Failure, SignedAs};

#[component]
pub fn Review() -> impl IntoView {
    view! { <SignedAs needs=vec![Role::Reviewer] children=|me: Me| view! { <ReviewBody me=me /> } /> }
}

#[component]
fn ReviewBody(me: Me) -> impl IntoView {
    let (list, set_list) = signal(None::<Result<Vec<BatchAggregate>, Failure>>);
    let (open, set_open) = signal(None::<i64>);
    let (detail, set_detail) = signal(None::<Result<BatchReview, Failure>>);
    spawn_local(async move { set_list.set(Some(get("/api/review/batches").await)) });
    Effect::new(move |_| {
        if let Some(id) = open.get() {
            set_detail.set(None);
            spawn_local(async move {
                set_detail.set(Some(get(&format!("/api/review/batches/{id}")).await));
            });
        }
    });
    let batches = Signal::derive(move || {
        list.with(|l| match l {
            Some(Ok(v)) => v
                .iter()
                .map(|b| BatchRef {
                    id: b.batch.id,
                    name: b.batch.name.clone(),
                })
                .collect(),
            _ => Vec::new(),
        })
    });
    view! {
        <h1>"Annotation results"</h1>
        <SignOut me=me />
        <nav class="toc panel" aria-label="On this page" data-testid="review-toc">
            <strong>"On this page"</strong>
            <ul>
                <li><a href="#agreement">"Agreement per batch"</a></li>
                <li><a href="#progress">"Progress"</a></li>
                <li><a href="#rankings">"Rankings and comments"</a></li>
            </ul>
        </nav>
        <p class="muted">
            "Agreement: Kendall's W (tie-corrected; mean over questions) and Krippendorff's α (ordinal; pooled over the batch's candidates). Only submitted rankings count. The expert serendipity set is the top 20 % by mean rank."
        </p>
        <p class="exports">
            <a class="button" href="/api/review/export.csv" download>"Export responses (CSV)"</a>
            <a class="button" href="/api/review/export.json" download>"Export responses (JSON)"</a>
            <a class="button" href="/api/review/expert-rankings?source=serenqa" download="expert-rankings-serenqa.json">"Expert rankings: SerenQA"</a>
            <a class="button" href="/api/review/expert-rankings?source=benchmark" download="expert-rankings-benchmark.json">"Expert rankings: benchmark"</a>
        </p>
        {move || match list.get() {
            None => view! { <p class="loading">"Computing aggregates…"</p> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
            Some(Ok(v)) => view! {
                <div class="table-wrap" id="agreement">
                <table data-testid="batch-aggregates">
                    <thead><tr>
                        <th>"Batch"</th><th class="num">"Questions"</th><th class="num">"Answered"</th><th class="num">"Responses"</th>
                        <th class="num">"Annotators"</th><th class="num">"Mean W"</th><th class="num">"α (ordinal)"</th>
                    </tr></thead>
                    <tbody>
                        {v.into_iter().map(|b| {
                            let id = b.batch.id;
                            view! {
                                <tr>
                                    <td><button class="link-button big" on:click=move |_| set_open.set(Some(id))>{b.batch.name.clone()}</button></td>
                                    <td class="num">{b.batch.questions}</td>
                                    <td class="num">{b.answered}</td>
                                    <td class="num">{b.responses}</td>
                                    <td class="num">{b.annotators}</td>
                                    <td class="num" title=format!("{} questions", b.w_questions)>{fmt3(b.mean_kendall_w)}</td>
                                    <td class="num">{fmt3(b.alpha)}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
            }.into_any(),
        }}
        {move || open.get().map(|_| match detail.get() {
            None => view! { <p class="loading">"Loading the batch…"</p> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
            Some(Ok(b)) => {
                let answered: Vec<_> = b.questions.into_iter().filter(|q| q.annotators > 0).collect();
                view! {
                    <section class="panel" data-testid="question-aggregates">
                        <h2>{b.batch.name.clone()}</h2>
                        {if answered.is_empty() { Some(view! { <p class="muted">"No submitted rankings in this batch yet."</p> }) } else { None }}
                        <div class="table-wrap">
                        <table>
                            <thead><tr><th>"Question"</th><th class="num">"Annotators"</th><th class="num">"W"</th><th class="num">"α"</th><th>"Expert serendipity set (mean rank)"</th></tr></thead>
                            <tbody>
                                {answered.into_iter().map(|q| view! {
                                    <tr>
                                        <td>{q.text.clone()}</td>
                                        <td class="num">{q.annotators}</td>
                                        <td class="num">{fmt3(q.kendall_w)}</td>
                                        <td class="num">{fmt3(q.alpha)}</td>
                                        <td>{q.candidates.iter().filter(|c| c.serendipitous)
                                            .map(|c| format!("{} ({:.2})", c.name, c.mean_rank.unwrap_or(0.0))).collect::<Vec<_>>().join(", ")}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                        </div>
                    </section>
                }.into_any()
            }
        })}
        <WorkViews batches=batches />
    }
}
