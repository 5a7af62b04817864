//! The expert annotation app: sign-in and invites, the annotators' questionnaire, the
//! reviewers' aggregates and the admin page. Talks to `/api/auth`, `/api/annotate`,
//! `/api/review`, `/api/admin` with the types of `serenqa_shared::annotate`.
//!
//! Writes carry the session's CSRF token (`X-CSRF-Token`, learnt from `/api/auth/me`) and
//! `X-Requested-With: serenqa`; the session cookie itself is HttpOnly and never seen here.

pub mod account;
pub mod admin;
pub mod guide;
pub mod invites;
pub mod oversight;
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
use serenqa_shared::annotate::{Me, Role, Whoami};
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

/// `navigator.onLine` (true when unknown).
pub use crate::api::refusal::is_online;

/// What a person reads when the server could not be reached (instead of the browser's
/// "TypeError: Failed to fetch").
pub fn offline_message() -> String {
    let online = is_online();
    if online {
        "the server could not be reached (network problem or server restarting)".into()
    } else {
        "this device is offline".into()
    }
}

/// A readable line for a failed request without a JSON error body.
pub fn status_message(status: u16) -> String {
    match status {
        0 => offline_message(),
        401 => "your session has ended; sign in again".into(),
        403 => "you do not have the role this needs".into(),
        404 => "not found".into(),
        408 | 429 | 503 => format!("the server is busy (HTTP {status}); try again in a moment"),
        s if s >= 500 => format!("the server had a problem (HTTP {s})"),
        s => format!("the request was refused (HTTP {s})"),
    }
}

async fn finish<T: DeserializeOwned>(
    req: Result<gloo_net::http::Response, gloo_net::Error>,
) -> Result<T, Failure> {
    let resp = req.map_err(|_| Failure {
        status: 0,
        message: offline_message(),
    })?;
    let status = resp.status();
    if !resp.ok() {
        let message = match resp.json::<ApiError>().await {
            // 5xx details are hidden by the server; name the kind of failure instead. A 401
            // that is not about the session (a wrong password at sign-in) keeps the server's
            // reason: only `not_signed_in` means the session has ended.
            Ok(e) if status < 500 && (status != 401 || e.code != "not_signed_in") => e.message,
            _ => status_message(status),
        };
        return Err(Failure { status, message });
    }
    resp.json::<T>().await.map_err(|e| Failure {
        status,
        message: format!("unexpected reply: {e}"),
    })
}

pub async fn get<T: DeserializeOwned>(url: &str) -> Result<T, Failure> {
    finish(Request::get(url).send().await).await
}

fn with_headers(b: RequestBuilder) -> RequestBuilder {
    let csrf = csrf();
    b.header("X-Requested-With", "serenqa")
        .header("X-CSRF-Token", &csrf)
}

pub async fn send<B: Serialize, T: DeserializeOwned>(
    method: &str,
    url: &str,
    body: &B,
) -> Result<T, Failure> {
    let b = match method {
        "PUT" => Request::put(url),
        "DELETE" => Request::delete(url),
        _ => Request::post(url),
    };
    let req = with_headers(b).json(body).map_err(|e| Failure {
        status: 0,
        message: e.to_string(),
    })?;
    finish(req.send().await).await
}

/// Who is signed in: `Ok(None)` for nobody (`/api/auth/me` answers an anonymous visitor with
/// 200 `{signed_in: false}`, not an error); learns the CSRF token when someone is.
pub async fn me() -> Result<Option<Me>, Failure> {
    let w: Whoami = get("/api/auth/me").await?;
    let me = w.me();
    if let Some(m) = &me {
        set_csrf(&m.csrf);
    }
    Ok(me)
}

/// The signed-in user, loaded once per page; `None` while loading, `Some(Ok(None))` when
/// signed out, `Some(Err)` on failure.
pub fn use_me() -> ReadSignal<Option<Result<Option<Me>, Failure>>> {
    let (me_, set_me) = signal(None);
    spawn_local(async move {
        set_me.set(Some(me().await));
    });
    me_
}

/// Where a role lands after signing in.
pub fn home_of(role: Role) -> &'static str {
    match role {
        Role::Annotator => "/annotate",
        Role::Reviewer => "/review",
        Role::Admin => "/admin",
    }
}

/// `/login?next=<this page>`: signing in comes back here.
pub fn login_href() -> String {
    let loc = window().location();
    let here = format!(
        "{}{}",
        loc.pathname().unwrap_or_default(),
        loc.search().unwrap_or_default()
    );
    format!(
        "/login?next={}",
        String::from(js_sys::encode_uri_component(&here))
    )
}

/// The sign-in prompt for a page whose session is missing or ended.
#[component]
pub fn SignInPrompt(#[prop(into)] message: String) -> impl IntoView {
    view! {
        <section class="panel" data-testid="sign-in-prompt">
            <p>{message}</p>
            <a class="button" href=login_href()>"Sign in"</a>
            <span class="muted">" — you will come back to this page."</span>
        </section>
    }
}

/// Who may use a page, as the API checks it (admins pass every check).
pub fn role_allows(role: Role, needs: &[Role]) -> bool {
    role == Role::Admin || needs.contains(&role)
}

/// Wraps a page that needs a session and one of `needs` (admins pass every check): loading,
/// a sign-in prompt that comes back here, a clear message for any other role
/// (and a link to their own page) instead of forms the server would refuse.
#[component]
pub fn SignedAs<F, V>(needs: Vec<Role>, children: F) -> impl IntoView
where
    F: Fn(Me) -> V + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let me = use_me();
    move || {
        match me.get() {
        None => view! { <p class="loading">"Checking your session…"</p> }.into_any(),
        Some(Ok(None)) => view! { <SignInPrompt message="Please sign in to continue." /> }.into_any(),
        Some(Err(f)) if f.status == 401 => view! { <SignInPrompt message="Please sign in to continue." /> }.into_any(),
        Some(Err(f)) => view! { <p class="error" role="alert">{format!("Could not check your session: {f}")}</p> }.into_any(),
        Some(Ok(Some(m))) if !role_allows(m.user.role, &needs) => {
            let names: Vec<&str> = needs.iter().filter(|r| **r != Role::Admin).map(|r| r.as_str()).chain(std::iter::once("admin")).collect();
            let home = home_of(m.user.role);
            view! {
                <section class="panel role-gate" data-testid="role-gate" role="alert">
                    <h1>"Not available with your role"</h1>
                    <p>{format!("This page needs the {} role. You are signed in as {} ({}).", names.join(" or "), m.user.email, m.user.role.as_str())}</p>
                    <p><a class="button" href=home>"Go to your page"</a></p>
                </section>
            }
            .into_any()
        }
        Some(Ok(Some(m))) => children(m).into_view().into_any(),
    }
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

/// A Unix time as the browser's local date and time.
pub fn date_time(unix: i64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix as f64 * 1000.0));
    String::from(d.to_locale_string("en-GB", &wasm_bindgen::JsValue::UNDEFINED))
}
