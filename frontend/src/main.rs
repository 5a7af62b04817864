//! The serenqa browser app (Leptos, client-side rendered). Talks to the backend's `/api`
//! with the JSON types of `serenqa-shared`; layout and scoring run here in WebAssembly.

mod annotate;
mod api;
mod ask;
mod candidates;
mod charts;
mod discover;
mod leaderboard;
mod notice;
mod pages;
mod refused;
mod run_page;
mod search_box;
mod shortlist;
mod start;
mod subgraph;
mod t1_score;
mod trace;
mod url_state;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::path;

fn main() {
    console_error_panic_hook::set_once();
    // The static loading shell of index.html has done its job; keep what was typed into its
    // search form.
    let document = web_sys::window().and_then(|w| w.document());
    let typed = document
        .as_ref()
        .and_then(|d| d.get_element_by_id("boot-q"))
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(e).ok())
        .map(|i| i.value())
        .unwrap_or_default();
    if let Some(shell) = document
        .as_ref()
        .and_then(|d| d.get_element_by_id("boot-shell"))
    {
        shell.remove();
    }
    leptos::mount::mount_to_body(App);
    if let Some(d) = document.filter(|_| !typed.trim().is_empty()) {
        // The route's view may render a moment after mounting: look for the box a few times.
        leptos::task::spawn_local(async move {
            for _ in 0..60 {
                if carry_over(&d, &typed) {
                    break;
                }
                api::sleep_ms(50).await;
            }
        });
    }
}

/// Puts text typed into the loading shell's form into the app's own box — Ask's for a
/// question, the search box for a name — as if typed there, and focuses it.
/// `false` while the page has no such box yet.
fn carry_over(d: &web_sys::Document, typed: &str) -> bool {
    let question = typed.trim_end().ends_with('?') || typed.split_whitespace().count() > 4;
    let target = if question {
        "[data-testid=ask-input]"
    } else {
        "[data-testid=search-input]"
    };
    let Some(input) = d
        .query_selector(target)
        .ok()
        .flatten()
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(e).ok())
    else {
        return false;
    };
    input.set_value(typed);
    if let Ok(ev) = web_sys::Event::new_with_event_init_dict("input", &{
        let init = web_sys::EventInit::new();
        init.set_bubbles(true);
        init
    }) {
        let _ = input.dispatch_event(&ev);
    }
    let _ = input.focus();
    true
}

/// One colour per node type, the same everywhere in the app.
pub fn kind_colour(kind: &str) -> &'static str {
    match kind {
        "Compound" | "Drug" => "#c9853a",
        "Disease" => "#b5473a",
        "Gene" | "Protein" => "#2f6f8f",
        "Anatomy" | "Tissue" => "#7a5aa6",
        "Symptom" | "Phenotype" => "#d46a9a",
        "Side Effect" => "#8d6e63",
        "Pathway" => "#5a9a5a",
        "Biological Process" => "#4f8f86",
        "Molecular Function" => "#6b8e23",
        "Cellular Component" => "#5c7cba",
        "Pharmacologic Class" => "#b08d2f",
        _ => "#7b8494",
    }
}

#[component]
fn App() -> impl IntoView {
    shortlist::provide();
    view! {
        <Router>
            <a class="skip" href="#main">"Skip to content"</a>
            <header class="top">
                <a class="brand" href="/">"serenqa"</a>
                <nav aria-label="Main">
                    <A href="/" exact=true>"Discover"</A>
                    <A href="/leaderboard">"Leaderboard"</A>
                    <A href="/graph">"Graph"</A>
                    <A href="/data">"Data & licenses"</A>
                    <A href="/shortlist">"Shortlist"<shortlist::ShortlistCount /></A>
                    <A href="/annotate">"Annotate"</A>
                </nav>
            </header>
            <main id="main">
                <Routes fallback=|| view! { <section class="panel" data-testid="page-not-found"><h1>"Page not found"</h1><p>"This address is not a page of serenqa. Entity pages are at /entity/Type::identifier, e.g. "<a href="/entity/Disease::DOID:2841">"/entity/Disease::DOID:2841"</a>"; or "<a href="/">"search by name on Discover"</a>"."</p></section> }>
                    <Route path=path!("/") view=discover::Discover />
                    <Route path=path!("/entity/:key") view=discover::Entity />
                    <Route path=path!("/leaderboard") view=leaderboard::Leaderboard />
                    <Route path=path!("/runs/:run/trace/:qid") view=trace::TracePage />
                    <Route path=path!("/runs/:run") view=run_page::RunPage />
                    <Route path=path!("/shortlist") view=shortlist::ShortlistPage />
                    <Route path=path!("/graph") view=pages::Overview />
                    <Route path=path!("/data") view=pages::DataLicenses />
                    <Route path=path!("/login") view=annotate::account::Login />
                    <Route path=path!("/invite/:token") view=annotate::account::Invite />
                    <Route path=path!("/reset/:token") view=annotate::account::Reset />
                    <Route path=path!("/annotate") view=annotate::work::Batches />
                    <Route path=path!("/annotate/batch/:id") view=annotate::work::BatchPage />
                    <Route path=path!("/annotate/q/:id") view=annotate::question::QuestionPage />
                    <Route path=path!("/review") view=annotate::review::Review />
                    <Route path=path!("/admin") view=annotate::admin::Admin />
                </Routes>
            </main>
            <footer>
                "Suggestions from serenqa are hypotheses for research, not clinical advice. "
                <a href="/data">"Data sources and licenses"</a>
            </footer>
        </Router>
    }
}
