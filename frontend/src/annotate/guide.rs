//! The annotation guidelines: what "serendipitous" means in this questionnaire, with two
//! worked examples. Opens by itself on an annotator's first visit (remembered in
//! `localStorage` once dismissed) and stays one click away from every annotation page.

use leptos::prelude::*;

const SEEN_KEY: &str = "serenqa:guidelines-seen";

fn storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

fn seen() -> bool {
    storage()
        .and_then(|s| s.get_item(SEEN_KEY).ok().flatten())
        .is_some()
}

fn mark_seen() {
    if let Some(s) = storage() {
        let _ = s.set_item(SEEN_KEY, "1");
    }
}

/// A "Guidelines" toggle and the panel it opens (open at once on the first visit).
#[component]
pub fn Guidelines() -> impl IntoView {
    let open = RwSignal::new(!seen());
    let close = move || {
        mark_seen();
        open.set(false);
    };
    view! {
        <div class="guide-bar">
            <button class="link-button guide-toggle" type="button" data-testid="guidelines-toggle"
                aria-expanded=move || open.get().to_string() aria-controls="guidelines"
                on:click=move |_| if open.get_untracked() { close() } else { open.set(true) }>
                {move || if open.get() { "Hide the guidelines" } else { "Guidelines: what counts as serendipitous?" }}
            </button>
        </div>
        {move || open.get().then(|| view! {
            <section class="panel guide" id="guidelines" data-testid="guidelines" aria-labelledby="guidelines-title"
                on:keydown=move |ev: web_sys::KeyboardEvent| if ev.key() == "Escape" { close() }>
                <h2 id="guidelines-title">"How to rank: what “serendipitous” means here"</h2>
                <p>"Every candidate of a question is a " <strong>"known answer"</strong>
                   ": the knowledge graph records it as answering the question. You are not asked whether it is correct. You are asked how "
                   <strong>"serendipitous"</strong> " it is: how much it would be a useful surprise to a researcher who already knows the other answers. A serendipitous answer is all three of:"</p>
                <ul class="guide-terms">
                    <li><strong>"Relevant"</strong> " — it plausibly belongs with the other answers and the entities named in the question (shared targets, pathways, mechanisms). Not a curiosity with no visible link."</li>
                    <li><strong>"Novel"</strong> " — you would not reach it by following the obvious connections of the other answers; it is not the textbook answer."</li>
                    <li><strong>"Surprising"</strong> " — its own context (what it is usually known for, its class, its other links) is different from that of the rest of the answers."</li>
                </ul>
                <p>"Put the most serendipitous candidate first (rank 1) and the most expected one last. Candidates you cannot tell apart can be tied; mark a candidate “unsure” when you do not know it well enough to judge. The short graph facts under each candidate list its most specific neighbours first."</p>
                <h3>"Example 1 — “Which compounds treat rheumatoid arthritis?”"</h3>
                <p>"Known answers: Methotrexate, Prednisone, Sulfasalazine, Hydroxychloroquine. "
                   <strong>"Hydroxychloroquine"</strong> " ranks first: it is relevant (it calms the same immune processes as the others), novel (it was developed against malaria, so little of what surrounds the other answers leads to it) and surprising (its neighbours are antimalarial and parasite-related). "
                   <strong>"Prednisone"</strong> " ranks last: a broad corticosteroid linked to nearly every inflammatory disease, it is the answer anyone expects. Methotrexate and Sulfasalazine sit in between; tie them if you see no difference."</p>
                <h3>"Example 2 — “Which compounds treat type 2 diabetes mellitus?”"</h3>
                <p>"Known answers: Metformin, Glipizide, Sitagliptin, Bromocriptine. "
                   <strong>"Bromocriptine"</strong> " ranks first: a dopamine agonist known for Parkinson's disease and pituitary tumours, it still lowers blood glucose through the brain's control of metabolism — relevant, far from the usual diabetes drugs, and from a different field. "
                   <strong>"Glipizide"</strong> " ranks last: a sulfonylurea, the classic answer. Had the list contained a compound that is rare only because the graph knows little about it, with no visible link to diabetes, that would be unexpected but not relevant: rank it low, or mark it unsure."</p>
                <button class="button" type="button" data-testid="guidelines-close" on:click=move |_| close()>"Got it"</button>
            </section>
        })}
    }
}
