//! The offline agent's T1 on the project's own everyday questions (`GET
//! /api/understand/score`), shown on the leaderboard as that agent's T1 result: the
//! benchmark's offline T1 row shares the generator's templates and measures nothing.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::api::UnderstandScore;

use crate::api;

#[component]
pub fn IndependentT1() -> impl IntoView {
    let (score, set_score) = signal(None::<Result<UnderstandScore, String>>);
    spawn_local(async move {
        set_score.set(Some(
            api::get_json::<UnderstandScore>("/api/understand/score").await,
        ));
    });
    view! {
        <section data-testid="t1-independent">
            <h2>"T1 of the offline agent on everyday questions"</h2>
            {move || match score.get() {
                None => view! { <p class="loading">"Scoring the offline agent on the everyday-question set…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                Some(Ok(s)) => {
                    let rows = s.rows.iter().map(|r| {
                        let label = match r.group.as_str() {
                            "all" => "all questions".to_string(),
                            "set dev" => "written with the lexicon (dev)".to_string(),
                            "set held" => "written afterwards (held)".to_string(),
                            p => format!("pattern {p}"),
                        };
                        view! { <tr><td>{label}</td><td class="num">{r.n}</td><td class="num">{format!("{:.1}", 100.0 * r.f1)}</td><td class="num">{format!("{:.1}", 100.0 * r.exact)}</td></tr> }
                    }).collect_view();
                    view! {
                        <p class="muted">{format!(
                            "{} questions written by hand in everyday clinical phrasing (synonyms, misspellings, no punctuation), each with its own gold Cypher ({}); not generated from the benchmark's templates. This is the offline agent's T1 result; its row in Table 2 is a grammar oracle.",
                            s.questions, s.source
                        )}</p>
                        <div class="scroll-x">
                            <table class="results" data-testid="t1-independent-table">
                                <thead><tr><th>"Questions"</th><th class="num">"n"</th><th class="num">"Answer F1"</th><th class="num">"Exact reading"</th></tr></thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}
