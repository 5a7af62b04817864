//! The work itself, for admins and reviewers: per-annotator progress and the submitted
//! rankings (order with names, ties, unsure marks, confidence, comment, time on task, saves),
//! filtered by batch, question or annotator, one page at a time. The server decides what
//! identifies whom: admins get e-mails and names, reviewers only pseudonyms ("A12"), so the
//! same components serve both pages.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::annotate::{AnnotatorProgress, BatchRef, RankingView, RankingsPage};

use super::date_time;
use super::{get, Failure};

/// Rankings per page.
const PAGE: usize = 10;

/// What the rankings list shows.
#[derive(Clone, Debug, Default, PartialEq)]
struct Filter {
    batch: Option<i64>,
    question: Option<(i64, String)>,
    annotator: Option<String>,
    offset: usize,
}

impl Filter {
    fn url(&self) -> String {
        let mut q = format!("/api/review/rankings?limit={PAGE}&offset={}", self.offset);
        if let Some(b) = self.batch {
            q.push_str(&format!("&batch={b}"));
        }
        if let Some((id, _)) = &self.question {
            q.push_str(&format!("&question={id}"));
        }
        if let Some(a) = &self.annotator {
            q.push_str(&format!("&annotator={a}"));
        }
        q
    }
}

/// "A12 · ann@example.org" for admins, "A12" for reviewers.
fn who(annotator: &str, email: Option<&str>) -> String {
    match email {
        Some(e) => format!("{annotator} · {e}"),
        None => annotator.to_string(),
    }
}

fn duration(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// Progress and rankings; `batches` fills the batch filter.
#[component]
pub fn WorkViews(#[prop(into)] batches: Signal<Vec<BatchRef>>) -> impl IntoView {
    let (progress, set_progress) = signal(None::<Result<Vec<AnnotatorProgress>, Failure>>);
    spawn_local(async move { set_progress.set(Some(get("/api/review/progress").await)) });
    let filter = RwSignal::new(Filter::default());
    let (page, set_page) = signal(None::<Result<RankingsPage, Failure>>);
    // Only the reply to the latest filter is shown (an earlier, slower one is dropped).
    let asked = StoredValue::new(0u32);
    Effect::new(move |_| {
        let url = filter.with(Filter::url);
        asked.update_value(|n| *n += 1);
        let mine = asked.get_value();
        set_page.set(None);
        spawn_local(async move {
            let r = get(&url).await;
            if asked.try_get_value() == Some(mine) {
                set_page.set(Some(r));
            }
        });
    });
    let show_annotator = move |a: String| {
        filter.set(Filter {
            annotator: Some(a),
            ..Filter::default()
        });
        if let Some(el) = document().get_element_by_id("rankings") {
            el.scroll_into_view();
        }
    };
    view! {
        <section class="panel" id="progress" data-testid="progress">
            <h2>"Progress per annotator"</h2>
            <p class="muted">"Submitted rankings (skips — every candidate unsure — counted apart), questions in progress, submissions with edits not yet submitted, and the last save."</p>
            {move || match progress.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
                Some(Ok(v)) if v.is_empty() => view! { <p class="muted">"No annotator yet."</p> }.into_any(),
                Some(Ok(v)) => view! {
                    <div class="table-wrap"><table class="progress-table">
                        <thead><tr><th>"Annotator"</th><th>"Role"</th><th>"Assigned"</th><th class="num">"Submitted"</th><th class="num">"Skipped"</th>
                            <th class="num">"In progress"</th><th class="num">"Edits"</th><th>"Last save"</th><th></th></tr></thead>
                        <tbody>{v.into_iter().map(|p| {
                            let a = p.annotator.clone();
                            let label = who(&p.annotator, p.email.as_deref());
                            let assigned = if p.assigned.is_empty() { "open batches".to_string() } else { p.assigned.iter().map(|b| b.name.clone()).collect::<Vec<_>>().join(", ") };
                            view! {
                                <tr data-annotator=p.annotator.clone()>
                                    <td class="who">{label}{p.name.filter(|n| !n.is_empty()).map(|n| view! { <div class="muted">{n}</div> })}</td>
                                    <td data-label="Role">{p.role.as_str()}</td>
                                    <td data-label="Assigned">{assigned}</td>
                                    <td class="num" data-label="Submitted">{p.submitted}</td>
                                    <td class="num" data-label="Skipped">{p.skipped}</td>
                                    <td class="num" data-label="In progress">{p.in_progress}</td>
                                    <td class="num" data-label="Edits">{p.pending_edits}</td>
                                    <td data-label="Last save">{p.last_activity.map(date_time).unwrap_or_else(|| "never".into())}</td>
                                    <td><button class="link-button big" type="button" data-testid="show-rankings" on:click=move |_| show_annotator(a.clone())>"Rankings"</button></td>
                                </tr>
                            }
                        }).collect_view()}</tbody>
                    </table></div>
                }.into_any(),
            }}
        </section>
        <section class="panel" id="rankings" data-testid="rankings">
            <h2>"Submitted rankings"</h2>
            <div class="form inline rank-filters">
                <label>"Batch"
                    <select data-testid="rank-batch" on:change=move |ev| {
                        let b = event_target_value(&ev).parse().ok();
                        filter.update(|f| { f.batch = b; f.question = None; f.offset = 0; });
                    }>
                        <option value="">"all batches"</option>
                        {move || batches.get().into_iter().map(|b| view! {
                            <option value=b.id.to_string() selected=move || filter.with(|f| f.batch == Some(b.id))>{b.name.clone()}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label>"Annotator"
                    <select data-testid="rank-annotator" on:change=move |ev| {
                        let a = event_target_value(&ev);
                        filter.update(|f| { f.annotator = (!a.is_empty()).then_some(a); f.offset = 0; });
                    }>
                        <option value="">"everyone"</option>
                        {move || progress.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|p| {
                            let a = p.annotator.clone();
                            view! { <option value=a.clone() selected=move || filter.with(|f| f.annotator.as_deref() == Some(a.as_str()))>{who(&p.annotator, p.email.as_deref())}</option> }
                        }).collect_view()}
                    </select>
                </label>
            </div>
            {move || filter.with(|f| f.question.clone()).map(|(_, text)| view! {
                <p class="chip-line">"Question: " <strong>{text}</strong> " "
                    <button class="link-button big" type="button" data-testid="all-questions" on:click=move |_| filter.update(|f| { f.question = None; f.offset = 0; })>"show every question"</button></p>
            })}
            {move || match page.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
                Some(Ok(p)) if p.items.is_empty() => view! { <p class="muted" data-testid="no-rankings">"No submitted ranking matches."</p> }.into_any(),
                Some(Ok(p)) => {
                    let (from, to, total) = (p.offset + 1, p.offset + p.items.len(), p.total);
                    let prev = p.offset.checked_sub(PAGE).or((p.offset > 0).then_some(0));
                    let next = (to < total).then_some(p.offset + PAGE);
                    view! {
                        <p class="muted" role="status" data-testid="rank-count">{format!("{from}–{to} of {total}")}</p>
                        <ol class="ranking-cards">
                            {p.items.into_iter().map(|r| view! { <RankingCard r=r filter=filter /> }).collect_view()}
                        </ol>
                        <div class="actions pager">
                            <button class="button secondary" type="button" data-testid="rank-prev" disabled=prev.is_none()
                                on:click=move |_| if let Some(o) = prev { filter.update(|f| f.offset = o) }>"← Previous"</button>
                            <button class="button secondary" type="button" data-testid="rank-next" disabled=next.is_none()
                                on:click=move |_| if let Some(o) = next { filter.update(|f| f.offset = o) }>"Next →"</button>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}

#[component]
fn RankingCard(r: RankingView, filter: RwSignal<Filter>) -> impl IntoView {
    let (qid, qtext) = (r.question_id, r.question.clone());
    let annotator = r.annotator.clone();
    let mut facts = vec![
        r.confidence
            .map_or("no confidence".to_string(), |c| format!("confidence {c}/5")),
        r.time_on_task_s
            .map_or("time not recorded".to_string(), |s| {
                format!("{} on task", duration(s))
            }),
        format!(
            "{} save{}, {} submission{}",
            r.saves,
            if r.saves == 1 { "" } else { "s" },
            r.submissions,
            if r.submissions == 1 { "" } else { "s" }
        ),
        format!("submitted {}", date_time(r.submitted_at)),
    ];
    if r.confirmed_shown_order {
        facts.push("confirmed the order shown".into());
    }
    let ranks: Vec<Option<u32>> = r.ranking.iter().map(|e| e.rank).collect();
    view! {
        <li class="ranking-card" data-testid="ranking-card" data-response=r.response_id data-question=r.question_id data-annotator=r.annotator.clone()>
            <div class="rc-head">
                <button class="link-button big rc-who" type="button" data-testid="rc-annotator" title="Only this annotator"
                    on:click=move |_| filter.update(|f| { f.annotator = Some(annotator.clone()); f.offset = 0; })>{who(&r.annotator, r.email.as_deref())}</button>
                <span class="muted">{r.batch.clone()}</span>
                {r.skipped.then(|| view! { <span class="tag tie">"skipped: all unsure"</span> })}
                {r.pending_edit.then(|| view! { <span class="tag" title="Edits saved as a draft after submitting; they do not count until submitted">"edits pending"</span> })}
            </div>
            <p class="rc-question"><button class="link-button big" type="button" data-testid="rc-question" title="Every ranking of this question"
                on:click=move |_| filter.update(|f| { f.question = Some((qid, qtext.clone())); f.annotator = None; f.offset = 0; })>{r.question.clone()}</button></p>
            <ol class="rc-order">
                {r.ranking.iter().enumerate().map(|(i, e)| {
                    let tied = i > 0 && ranks[i - 1] == e.rank && e.rank.is_some();
                    view! {
                        <li class:unsure=e.unsure>
                            <span class="rc-rank">{e.rank.map_or("–".to_string(), |k| k.to_string())}</span>
                            <span>{e.name.clone()}</span>
                            {tied.then(|| view! { <span class="tag tie">"tie"</span> })}
                            {e.unsure.then(|| view! { <span class="tag">"unsure"</span> })}
                        </li>
                    }
                }).collect_view()}
            </ol>
            {(!r.comment.is_empty()).then(|| view! { <blockquote class="rc-comment" data-testid="rc-comment">{r.comment.clone()}</blockquote> })}
            <p class="muted rc-facts">{facts.join(" · ")}</p>
        </li>
    }
}
