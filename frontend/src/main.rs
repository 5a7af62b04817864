//! The serenqa browser app (Leptos, client-side rendered). Talks to the backend's `/api`
//! with the JSON types of `serenqa-shared`.

mod api;
mod pages;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::path;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

#[component]
fn App() -> impl IntoView {
    view! {
        <Router>
            <header class="top">
                <a class="brand" href="/">"serenqa"</a>
                <nav aria-label="Main">
                    <A href="/">"Overview"</A>
                    <A href="/data">"Data & licenses"</A>
                </nav>
            </header>
            <main>
                <Routes fallback=|| view! { <p>"Page not found."</p> }>
                    <Route path=path!("/") view=pages::Overview />
                    <Route path=path!("/data") view=pages::DataLicenses />
                </Routes>
            </main>
            <footer>
                "Suggestions from serenqa are hypotheses for research, not clinical advice. "
                <a href="/data">"Data sources and licenses"</a>
            </footer>
        </Router>
    }
}
