//! The admin page's invites: create a one-time link (with a copy button, and the link in a
//! read-only field that selects itself, for browsers that refuse the clipboard), the pending
//! invites with "New link" (re-issue: the old link stops working) and "Revoke". One valid link
//! per address: the server replaces an earlier link and the page says so.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::annotate::{CreateInvite, InviteCreated, PendingInvite, Role};
use wasm_bindgen::{JsCast, JsValue};

use super::date_time;
use super::{get, send, Failure};

/// Writes `text` to the clipboard (`navigator.clipboard.writeText`); `Err` when the browser
/// has no clipboard API or refuses (an insecure origin, no permission).
async fn copy_to_clipboard(text: &str) -> Result<(), ()> {
    let nav = js_sys::Reflect::get(&window(), &JsValue::from_str("navigator")).map_err(|_| ())?;
    let clip = js_sys::Reflect::get(&nav, &JsValue::from_str("clipboard")).map_err(|_| ())?;
    if clip.is_undefined() || clip.is_null() {
        return Err(());
    }
    let write = js_sys::Reflect::get(&clip, &JsValue::from_str("writeText"))
        .map_err(|_| ())?
        .dyn_into::<js_sys::Function>()
        .map_err(|_| ())?;
    let promise = write
        .call1(&clip, &JsValue::from_str(text))
        .map_err(|_| ())?
        .dyn_into::<js_sys::Promise>()
        .map_err(|_| ())?;
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|_| ())
}

/// Selects the whole text of the read-only link field `id` (the fallback for copying by hand).
fn select_field(id: &str) {
    if let Some(el) = document()
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
    {
        let _ = el.focus();
        el.select();
    }
}

/// A one-time link: a read-only field (selects itself when focused) and "Copy link".
#[component]
fn LinkBox(
    link: String,
    #[prop(into)] field_id: String,
    #[prop(into)] testid: String,
) -> impl IntoView {
    let (copied, set_copied) = signal(None::<bool>);
    let text = link.clone();
    let fid = field_id.clone();
    let copy = move |_| {
        let (text, fid) = (text.clone(), fid.clone());
        spawn_local(async move {
            let ok = copy_to_clipboard(&text).await.is_ok();
            if !ok {
                select_field(&fid);
            }
            set_copied.set(Some(ok));
        });
    };
    view! {
        <div class="link-box">
            <input class="link-field" id=field_id type="text" readonly=true data-testid=testid prop:value=link
                aria-label="One-time link" on:focus=move |ev| {
                    if let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) { el.select(); }
                } />
            <button class="button" type="button" data-testid="copy-link" on:click=copy>"Copy link"</button>
            {move || copied.get().map(|ok| if ok {
                view! { <span class="muted" role="status" data-testid="copied">"Copied."</span> }.into_any()
            } else {
                view! { <span class="field-error" role="status" data-testid="copy-by-hand">"This browser did not allow copying: the link is selected, press Ctrl+C (⌘C on a Mac)."</span> }.into_any()
            })}
        </div>
    }
}

#[component]
pub fn Invites() -> impl IntoView {
    let (pending, set_pending) = signal(None::<Result<Vec<PendingInvite>, Failure>>);
    let reload =
        move || spawn_local(async move { set_pending.set(Some(get("/api/admin/invites").await)) });
    reload();
    let (email, set_email) = signal(String::new());
    let (role, set_role) = signal(Role::Annotator);
    // The last link created (with what it replaced), and the outcome of the last revocation.
    let (created, set_created) = signal(None::<Result<InviteCreated, String>>);
    let (revoked, set_revoked) = signal(None::<Result<String, String>>);
    let create = move |body: CreateInvite| {
        set_revoked.set(None);
        spawn_local(async move {
            let r: Result<InviteCreated, Failure> = send("POST", "/api/admin/invites", &body).await;
            set_created.set(Some(r.map_err(|f| f.message)));
            reload();
        });
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        create(CreateInvite {
            email: email.get_untracked().trim().to_string(),
            role: role.get_untracked(),
        });
    };
    let revoke = move |p: PendingInvite| {
        set_created.set(None);
        spawn_local(async move {
            let r: Result<PendingInvite, Failure> = send(
                "DELETE",
                &format!("/api/admin/invites/{}", p.id),
                &serde_json::json!({}),
            )
            .await;
            set_revoked.set(Some(match r {
                Ok(p) => Ok(format!(
                    "Revoked: the link for {} no longer works.",
                    p.email
                )),
                Err(f) => Err(f.message),
            }));
            reload();
        });
    };
    view! {
        <section class="panel" id="invites" data-testid="invites">
            <h2>"Invite a user"</h2>
            <form class="form inline" on:submit=submit>
                <label>"Email" <input type="email" name="invite-email" required prop:value=email on:input=move |ev| set_email.set(event_target_value(&ev)) /></label>
                <label>"Role"
                    <select name="invite-role" on:change=move |ev| set_role.set(Role::parse(&event_target_value(&ev)).unwrap_or(Role::Annotator))>
                        <option value="annotator">"annotator"</option>
                        <option value="reviewer">"reviewer"</option>
                        <option value="admin">"admin"</option>
                    </select>
                </label>
                <button class="button" type="submit">"Create invite link"</button>
            </form>
            <p class="muted">"One valid link per address: a new link for an address replaces its earlier one. Links are valid 7 days and can be used once; only a digest is stored, so copy the link now — later it can be replaced, not shown again."</p>
            {move || created.get().map(|r| match r {
                Ok(i) => view! {
                    <div class="notice ok" data-testid="invite-created">
                        <p>{format!("One-time link for {} (valid until {}):", i.email, date_time(i.expires_at))}</p>
                        <LinkBox link=i.link.clone() field_id="invite-link-field" testid="invite-link" />
                        {i.replaced.map(|p| view! {
                            <p class="field-error" data-testid="invite-replaced">{format!("The earlier link for {} no longer works.", p.email)}</p>
                        })}
                    </div>
                }.into_any(),
                Err(e) => view! { <p class="error" role="alert" data-testid="invite-error">{e}</p> }.into_any(),
            })}
            <h3>"Pending invites"</h3>
            {move || revoked.get().map(|r| match r {
                Ok(m) => view! { <p class="notice ok" role="status" data-testid="invite-revoked">{m}</p> }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            })}
            {move || match pending.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
                Some(Ok(v)) if v.is_empty() => view! { <p class="muted" data-testid="no-pending">"No invite is waiting to be accepted."</p> }.into_any(),
                Some(Ok(v)) => view! {
                    <ul class="pending-list" data-testid="pending-invites">
                        {v.into_iter().map(|p| {
                            let (again, gone) = (p.clone(), p.clone());
                            view! {
                                <li data-email=p.email.clone()>
                                    <div class="pending-who"><strong>{p.email.clone()}</strong> <span class="tag">{p.role.as_str()}</span></div>
                                    <div class="muted pending-when">{format!("created {}{} · expires {}", date_time(p.created_at),
                                        p.created_by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default(), date_time(p.expires_at))}</div>
                                    <div class="actions">
                                        <button class="button secondary" type="button" data-testid="reissue"
                                            title="Creates a new link for this address; the pending one stops working"
                                            on:click=move |_| create(CreateInvite { email: again.email.clone(), role: again.role })>"New link"</button>
                                        <button class="button secondary danger" type="button" data-testid="revoke"
                                            on:click=move |_| revoke(gone.clone())>"Revoke"</button>
                                    </div>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any(),
            }}
        </section>
    }
}
