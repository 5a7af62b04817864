//! The expert annotation app: sign-in and invites, the annotators' questionnaire, the
//! reviewers' aggregates and the admin page. Talks to `/api/auth`, `/api/annotate`,
//! `/api/review`, `/api/admin` with the types of `serenqa_shared::annotate`.
//!
//! Writes carry the session's CSRF token (`X-CSRF-Token`, learnt from `/api/auth/me`) and
//! `X-Requested-With: serenqa`; the session cookie itself is HttpOnly and never seen here.

pub mod account;
pub mod admin;
pub mod question;
pub mod review;
pub mod sync;
pub mod work;

use std::cell::RefCell;

use gloo_net::http::{Request, RequestBuilder};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serenqa_shared::annotate::{Me, Role};
use serenqa_shared::api::ApiError;

thread_local! {
    static CSRF: RefCell<String> = const { RefCell::new(String::new()) };
}

pub fn set_csrf(token: &str) {
    CSRF.with(|c| *c.borrow_mut() = token.to_string());
}

/// The session's CSRF token (empty before `/api/auth/me` answered).
pub fn csrf() -> String {
    CSRF.with(|c| c.borrow().clone())
}

/// An API failure: HTTP status (0 for network errors) and a readable line.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub status: u16,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

async fn finish<T: DeserializeOwned>(req: Result<gloo_net::http::Response, gloo_net::Error>) -> Result<T, Failure> {
    let resp = req.map_err(|e| Failure { status: 0, message: format!("network error: {e}") })?;
    let status = resp.status();
    if !resp.ok() {
        let message = match resp.json::<ApiError>().await {
            Ok(e) => e.message,
            Err(_) => format!("HTTP {status}"),
        };
        return Err(Failure { status, message });
    }
    resp.json::<T>().await.map_err(|e| Failure { status, message: format!("unexpected reply: {e}") })
}

pub async fn get<T: DeserializeOwned>(url: &str) -> Result<T, Failure> {
    finish(Request::get(url).send().await).await
}

fn with_headers(b: RequestBuilder) -> RequestBuilder {
    let csrf = csrf();
    b.header("X-Requested-With", "serenqa").header("X-CSRF-Token", &csrf)
}

pub async fn send<B: Serialize, T: DeserializeOwned>(method: &str, url: &str, body: &B) -> Result<T, Failure> {
    let b = match method {
        "PUT" => Request::put(url),
        _ => Request::post(url),
    };
    let req = with_headers(b).json(body).map_err(|e| Failure { status: 0, message: e.to_string() })?;
    finish(req.send().await).await
}

/// The signed-in user, loaded once per page; `None` while loading, `Some(Err)` when signed
/// out (status 401) or on failure.
pub fn use_me() -> ReadSignal<Option<Result<Me, Failure>>> {
    let (me, set_me) = signal(None);
    spawn_local(async move {
        let r: Result<Me, Failure> = get("/api/auth/me").await;
        if let Ok(m) = &r {
            set_csrf(&m.csrf);
        }
        set_me.set(Some(r));
    });
    me
}

/// Where a role lands after signing in.
pub fn home_of(role: Role) -> &'static str {
    match role {
        Role::Annotator => "/annotate",
        Role::Reviewer => "/review",
        Role::Admin => "/admin",
    }
}

/// Wraps a page that needs a session: loading, sign-in prompt, or the page.
#[component]
pub fn Signed<F, V>(children: F) -> impl IntoView
where
    F: Fn(Me) -> V + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let me = use_me();
    move || match me.get() {
        None => view! { <p class="loading">"Checking your session…"</p> }.into_any(),
        Some(Err(f)) if f.status == 401 => view! {
            <section class="panel">
                <p>"Please sign in to continue."</p>
                <a class="button" href="/login">"Sign in"</a>
            </section>
        }
        .into_any(),
        Some(Err(f)) => view! { <p class="error" role="alert">{format!("Could not check your session: {f}")}</p> }.into_any(),
        Some(Ok(m)) => children(m).into_view().into_any(),
    }
}

pub fn fmt3(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "–".into())
}

/// A fresh idempotency key for one submission.
pub fn submission_id() -> String {
    let t = js_sys::Date::now() as u64;
    let r = (js_sys::Math::random() * 1e15) as u64;
    format!("{t:x}-{r:x}")
}
