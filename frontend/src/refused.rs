//! How a page shows a [`Refusal`](crate::api::Refusal): its one line, then what to do — a
//! sign-in link that comes back here, or a "Try again" button — and, while the one automatic
//! retry waits out the server's `Retry-After`, the reason with a countdown.

use leptos::prelude::*;

use crate::api::{Kind, Refusal};

/// A refusal that stands: the line, a sign-in link when signing in is the fix, a "Try again"
/// button when asking again can help. `testid` names it for the browser tests.
#[component]
pub fn Refused(
    refusal: Refusal,
    #[prop(into)] testid: String,
    /// Asks again (`None`: no button).
    #[prop(optional)]
    try_again: Option<Callback<()>>,
) -> impl IntoView {
    let sign_in = (refusal.kind == Kind::SignIn).then(|| {
        view! { " " <a class="button" href=crate::annotate::login_href() data-testid="refused-sign-in">"Sign in"</a> }
    });
    let again = try_again.filter(|_| refusal.can_try_again()).map(|f| {
        view! { " " <button type="button" class="primary" data-testid="try-again" on:click=move |_| f.run(())>"Try again"</button> }
    });
    view! {
        <div class="error refused" role="alert" data-testid=testid data-kind=refusal.kind.as_str() data-status=refusal.status.to_string()>
            <span>{refusal.message.clone()}</span>
            {sign_in}
            {again}
        </div>
    }
}

/// The wait before the automatic retry: the reason and "retrying in N s".
#[component]
pub fn Retrying(refusal: Refusal, seconds: u32, #[prop(into)] testid: String) -> impl IntoView {
    view! {
        <p class="notice refused" role="status" aria-live="polite" data-testid=testid data-kind=refusal.kind.as_str()>
            {refusal.message.clone()}
            " "
            <strong>{format!("Retrying in {seconds} s…")}</strong>
        </p>
    }
}
