//! Starting points on the home page: diseases, drugs and questions that show what the app
//! does, one click each (entity pages, and Ask through its `?q=` link).

use leptos::prelude::*;

use crate::api;

const DISEASES: [(&str, &str); 5] = [
    ("asthma", "Disease::DOID:2841"),
    ("breast cancer", "Disease::DOID:1612"),
    ("multiple sclerosis", "Disease::DOID:2377"),
    ("Parkinson's disease", "Disease::DOID:14330"),
    ("type 2 diabetes mellitus", "Disease::DOID:9352"),
];
const DRUGS: [(&str, &str); 4] = [
    ("Metformin", "Compound::DB00331"),
    ("Acetylsalicylic acid (aspirin)", "Compound::DB00945"),
    ("Dexamethasone", "Compound::DB01234"),
    ("Imatinib", "Compound::DB00619"),
];
const QUESTIONS: [&str; 4] = [
    "Which drugs treat multiple sclerosis?",
    "What genes does metformin bind?",
    "side effects of drugs that treat both asthma and COPD",
    "drugs for hypertension that bind genes associated with hypertension",
];

#[component]
pub fn StartingPoints() -> impl IntoView {
    let link = |(name, key): (&'static str, &'static str)| view! { <li><a href=format!("/entity/{}", api::enc(key))>{name}</a></li> };
    view! {
        <section class="panel" data-testid="starting-points">
            <h2>"Starting points"</h2>
            <div class="start-grid">
                <div>
                    <h3>"Diseases"</h3>
                    <ul class="inline-list">{DISEASES.into_iter().map(link).collect_view()}</ul>
                </div>
                <div>
                    <h3>"Drugs"</h3>
                    <ul class="inline-list">{DRUGS.into_iter().map(link).collect_view()}</ul>
                </div>
                <div>
                    <h3>"Questions"</h3>
                    <ul>{QUESTIONS.into_iter().map(|q| view! { <li><a href=format!("/?q={}", api::enc(q))>{q}</a></li> }).collect_view()}</ul>
                </div>
            </div>
            <p class="muted">"A disease page lists the known treatments and candidates the graph proposes beyond them; Ask answers a question with a graph query, then explores from its answers for serendipitous ones."</p>
        </section>
    }
}
