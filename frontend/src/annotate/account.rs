//! Sign-in and invite acceptance.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::{use_navigate, use_params_map, use_query_map};
use serenqa_shared::annotate::{
    AcceptInvite, InviteInfo, LoginRequest, Me, ResetInfo, ResetPassword,
};

use super::{get, home_of, send, set_csrf, Failure};

/// A `next` target is followed only when it is a path on this site: it starts with one `/`
/// (not `//host`), holds no backslash and no control characters, and is not the
/// sign-in page itself.
pub fn safe_next(n: &str) -> bool {
    n.starts_with('/')
        && !n.starts_with("//")
        && !n.contains('\\')
        && !n.chars().any(char::is_control)
        && !n.starts_with("/login")
        && n.len() <= 2000
}

#[component]
pub fn Login() -> impl IntoView {
    let navigate = use_navigate();
    // `?next=/annotate/q/12` (a page whose session ended) brings the annotator back there; only
    // paths on this site are followed.
    let next = use_query_map()
        .read_untracked()
        .get("next")
        .filter(|n| safe_next(n));
    let (email, set_email) = signal(String::new());
    let (password, set_password) = signal(String::new());
    let (error, set_error) = signal(None::<String>);
    let (busy, set_busy) = signal(false);
    let shortlists = crate::shortlist::use_shortlist();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let navigate = navigate.clone();
        set_busy.set(true);
        set_error.set(None);
        let body = LoginRequest {
            email: email.get_untracked(),
            password: password.get_untracked(),
        };
        let next = next.clone();
        spawn_local(async move {
            let r: Result<Me, Failure> = send("POST", "/api/auth/login", &body).await;
            set_busy.set(false);
            match r {
                Ok(me) => {
                    set_csrf(&me.csrf);
                    // The shortlist now lives with the account.
                    shortlists.reload();
                    navigate(
                        next.as_deref().unwrap_or(home_of(me.user.role)),
                        Default::default(),
                    );
                }
                Err(f) => set_error.set(Some(f.message)),
            }
        });
    };
    view! {
        <h1>"Sign in"</h1>
        <form class="panel form narrow" on:submit=submit>
            <label>"Email"
                <input type="email" name="email" autocomplete="username" required
                    prop:value=email on:input=move |ev| set_email.set(event_target_value(&ev)) />
            </label>
            <label>"Password"
                <input type="password" name="password" autocomplete="current-password" required
                    prop:value=password on:input=move |ev| set_password.set(event_target_value(&ev)) />
            </label>
            <button class="button" type="submit" disabled=busy>"Sign in"</button>
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </form>
        <p class="muted">"Accounts are created by invitation from an administrator."</p>
    }
}

#[component]
pub fn Invite() -> impl IntoView {
    let params = use_params_map();
    let token = move || params.read_untracked().get("token").unwrap_or_default();
    let (info, set_info) = signal(None::<Result<InviteInfo, Failure>>);
    {
        let t = token();
        spawn_local(async move {
            set_info.set(Some(get(&format!("/api/auth/invite/{t}")).await));
        });
    }
    let navigate = use_navigate();
    let (name, set_name) = signal(String::new());
    let (pw1, set_pw1) = signal(String::new());
    let (pw2, set_pw2) = signal(String::new());
    let (error, set_error) = signal(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if pw1.get_untracked() != pw2.get_untracked() {
            set_error.set(Some("the two passwords differ".into()));
            return;
        }
        let navigate = navigate.clone();
        let body = AcceptInvite {
            name: name.get_untracked(),
            password: pw1.get_untracked(),
        };
        let t = token();
        spawn_local(async move {
            let r: Result<Me, Failure> =
                send("POST", &format!("/api/auth/invite/{t}"), &body).await;
            match r {
                Ok(me) => {
                    set_csrf(&me.csrf);
                    navigate(home_of(me.user.role), Default::default());
                }
                Err(f) => set_error.set(Some(f.message)),
            }
        });
    };
    view! {
        <h1>"Accept your invitation"</h1>
        {move || match info.get() {
            None => view! { <p class="loading">"Checking the invitation…"</p> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
            Some(Ok(i)) => {
                let submit = submit.clone();
                view! {
                    <form class="panel form narrow" on:submit=submit>
                        <p>"Invitation for " <strong data-testid="invite-email">{i.email.clone()}</strong>
                           " as " <strong>{i.role.as_str()}</strong> "."</p>
                        <label>"Your name"
                            <input name="name" autocomplete="name" prop:value=name on:input=move |ev| set_name.set(event_target_value(&ev)) />
                        </label>
                        <label>"Choose a password (10 characters or more)"
                            <input type="password" name="password" autocomplete="new-password" required minlength="10"
                                prop:value=pw1 on:input=move |ev| set_pw1.set(event_target_value(&ev)) />
                        </label>
                        <label>"Repeat the password"
                            <input type="password" name="password2" autocomplete="new-password" required
                                prop:value=pw2 on:input=move |ev| set_pw2.set(event_target_value(&ev)) />
                        </label>
                        <button class="button" type="submit">"Create my account"</button>
                        {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                    </form>
                }.into_any()
            }
        }}
    }
}

/// `/reset/{token}`: an admin-issued one-time link to choose a new password.
#[component]
pub fn Reset() -> impl IntoView {
    let params = use_params_map();
    let token = params.read_untracked().get("token").unwrap_or_default();
    let (info, set_info) = signal(None::<Result<ResetInfo, Failure>>);
    {
        let t = token.clone();
        spawn_local(async move { set_info.set(Some(get(&format!("/api/auth/reset/{t}")).await)) });
    }
    let navigate = use_navigate();
    let (pw1, set_pw1) = signal(String::new());
    let (pw2, set_pw2) = signal(String::new());
    let (error, set_error) = signal(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if pw1.get_untracked() != pw2.get_untracked() {
            set_error.set(Some("the two passwords differ".into()));
            return;
        }
        let navigate = navigate.clone();
        let body = ResetPassword {
            password: pw1.get_untracked(),
        };
        let t = token.clone();
        spawn_local(async move {
            let r: Result<Me, Failure> = send("POST", &format!("/api/auth/reset/{t}"), &body).await;
            match r {
                Ok(me) => {
                    set_csrf(&me.csrf);
                    navigate(home_of(me.user.role), Default::default());
                }
                Err(f) => set_error.set(Some(f.message)),
            }
        });
    };
    view! {
        <h1>"Choose a new password"</h1>
        {move || match info.get() {
            None => view! { <p class="loading">"Checking the link…"</p> }.into_any(),
            Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> <p><a href="/login">"Sign in"</a></p> }.into_any(),
            Some(Ok(i)) => {
                let submit = submit.clone();
                view! {
                    <form class="panel form narrow" on:submit=submit>
                        <p>"New password for " <strong data-testid="reset-email">{i.email.clone()}</strong> ". Signing in elsewhere ends."</p>
                        <label>"New password (10 characters or more)"
                            <input type="password" name="password" autocomplete="new-password" required minlength="10"
                                prop:value=pw1 on:input=move |ev| set_pw1.set(event_target_value(&ev)) />
                        </label>
                        <label>"Repeat the password"
                            <input type="password" name="password2" autocomplete="new-password" required
                                prop:value=pw2 on:input=move |ev| set_pw2.set(event_target_value(&ev)) />
                        </label>
                        <button class="button" type="submit">"Set the password and sign in"</button>
                        {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                    </form>
                }.into_any()
            }
        }}
    }
}

/// A sign-out button for the annotation pages.
#[component]
pub fn SignOut(me: Me) -> impl IntoView {
    let navigate = use_navigate();
    let click = move |_| {
        let navigate = navigate.clone();
        spawn_local(async move {
            let _: Result<serde_json::Value, Failure> = send("POST", "/api/auth/logout", &()).await;
            navigate("/login", Default::default());
        });
    };
    view! {
        <p class="whoami muted">
            "Signed in as " <strong data-testid="whoami">{me.user.email.clone()}</strong> " (" {me.user.role.as_str()} ") "
            <button class="link-button" on:click=click>"Sign out"</button>
        </p>
    }
}
