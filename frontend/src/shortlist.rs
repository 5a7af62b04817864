//! The clinician's shortlist: candidates kept from entity pages (the "☆ Keep" buttons of the
//! candidate table and of the explanation), listed on `/shortlist`, removable, exported as CSV
//! (`serenqa_shared::api::shortlist_csv`: the research-only caveat first, cells neutralised).
//!
//! Where it lives: signed-in users' lists are on the server (`/api/shortlist`, per account);
//! anyone else's in this browser's `localStorage` (key [`LOCAL_KEY`]). When a signed-in user
//! has a local list from before signing in, it is moved to the account. Both are capped at
//! [`SHORTLIST_MAX_ITEMS`].

use gloo_net::http::Request;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::api::{Shortlist, ShortlistAdd, ShortlistItem, SHORTLIST_MAX_ITEMS};

use crate::annotate::{self, Failure};

/// `localStorage` key of an anonymous user's list (JSON `[ShortlistItem]`).
pub const LOCAL_KEY: &str = "serenqa.shortlist.v1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    Loading,
    /// In this browser only.
    Local,
    /// On the server, for the signed-in account.
    Server,
}

/// The shortlist, shared by every page (provided once by the app).
#[derive(Clone, Copy)]
pub struct Shortlists {
    pub items: RwSignal<Vec<ShortlistItem>>,
    pub place: RwSignal<Where>,
    pub error: RwSignal<Option<String>>,
    /// A [`detect`] is running; `rerun`: another was asked for meanwhile (see
    /// [`Shortlists::reload`]).
    detecting: StoredValue<bool>,
    rerun: StoredValue<bool>,
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

fn load_local() -> Vec<ShortlistItem> {
    storage()
        .and_then(|s| s.get_item(LOCAL_KEY).ok().flatten())
        .and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default()
}

fn save_local(items: &[ShortlistItem]) -> Result<(), String> {
    let s = storage().ok_or("this browser does not allow local storage")?;
    let res = if items.is_empty() {
        s.remove_item(LOCAL_KEY)
    } else {
        let j = serde_json::to_string(items).map_err(|e| e.to_string())?;
        s.set_item(LOCAL_KEY, &j)
    };
    res.map_err(|_| {
        "the browser refused to store the shortlist (storage full or disabled)".to_string()
    })
}

fn now_secs() -> i64 {
    (js_sys::Date::now() / 1000.0) as i64
}

fn add_request(item: &ShortlistItem) -> ShortlistAdd {
    ShortlistAdd {
        query: item.query.key(),
        candidate: item.candidate.key(),
        scores: item.scores.clone(),
    }
}

async fn delete(query: &str, candidate: &str) -> Result<Shortlist, Failure> {
    let url = format!(
        "/api/shortlist?query={}&candidate={}",
        crate::api::enc(query),
        crate::api::enc(candidate)
    );
    let resp = Request::delete(&url)
        .header("X-Requested-With", "serenqa")
        .header("X-CSRF-Token", &annotate::csrf())
        .send()
        .await;
    let resp = resp.map_err(|_| Failure {
        status: 0,
        message: annotate::offline_message(),
    })?;
    let status = resp.status();
    if !resp.ok() {
        let message = match resp.json::<serenqa_shared::api::ApiError>().await {
            Ok(e) if status < 500 => e.message,
            _ => annotate::status_message(status),
        };
        return Err(Failure { status, message });
    }
    resp.json::<Shortlist>().await.map_err(|e| Failure {
        status,
        message: format!("unexpected reply: {e}"),
    })
}

/// Creates the shortlist and finds where it lives (signed in: the server).
pub fn provide() -> Shortlists {
    let s = Shortlists {
        items: RwSignal::new(Vec::new()),
        place: RwSignal::new(Where::Loading),
        error: RwSignal::new(None),
        detecting: StoredValue::new(false),
        rerun: StoredValue::new(false),
    };
    provide_context(s);
    s.reload();
    s
}

/// Reads the list from where it lives now: the account when signed in (moving a list kept in
/// this browser before signing in to it), else this browser.
async fn detect(s: Shortlists) {
    // Signed out (or the session could not be checked): this browser's list.
    let Ok(Some(_me)) = annotate::me().await else {
        s.items.set(load_local());
        s.place.set(Where::Local);
        return;
    };
    match annotate::get::<Shortlist>("/api/shortlist").await {
        Ok(list) => {
            s.items.set(list.items);
            s.place.set(Where::Server);
            let local = load_local();
            if !local.is_empty() {
                let mut moved_all = true;
                for it in &local {
                    match annotate::send::<_, Shortlist>("POST", "/api/shortlist", &add_request(it))
                        .await
                    {
                        Ok(list) => s.items.set(list.items),
                        Err(e) => {
                            moved_all = false;
                            s.error.set(Some(format!(
                                "Could not move {} to your account: {e}",
                                it.candidate.name
                            )));
                        }
                    }
                }
                if moved_all {
                    let _ = save_local(&[]);
                }
            }
        }
        Err(e) => {
            s.items.set(load_local());
            s.place.set(Where::Local);
            s.error.set(Some(format!(
                "Your account's shortlist could not be read ({e}); this browser's list is shown."
            )));
        }
    }
}

pub fn use_shortlist() -> Shortlists {
    use_context::<Shortlists>().unwrap_or_else(provide)
}

impl Shortlists {
    /// Finds again where the list lives (after signing in or out). One detection at a time:
    /// asked for while one runs, it runs once more after it. Two at once raced: signing in
    /// asks twice (the login form, then the shortlist page it opens), and the second one's
    /// read of the account's list could land before the first one's move of this browser's
    /// list, then overwrite the moved list with an empty one.
    pub fn reload(&self) {
        let s = *self;
        if s.detecting.get_value() {
            s.rerun.set_value(true);
            return;
        }
        s.detecting.set_value(true);
        spawn_local(async move {
            loop {
                s.rerun.set_value(false);
                detect(s).await;
                if !s.rerun.get_value() {
                    break;
                }
            }
            s.detecting.set_value(false);
        });
    }

    /// True when (query, candidate) is kept (tracked).
    pub fn has(&self, query: &str, candidate: &str) -> bool {
        self.items.with(|v| {
            v.iter()
                .any(|i| i.query.key() == query && i.candidate.key() == candidate)
        })
    }

    /// Keeps an item (again: replaces its scores in place).
    pub fn add(&self, mut item: ShortlistItem) {
        let s = *self;
        s.error.set(None);
        if s.place.get_untracked() == Where::Server {
            spawn_local(async move {
                match annotate::send::<_, Shortlist>("POST", "/api/shortlist", &add_request(&item))
                    .await
                {
                    Ok(list) => s.items.set(list.items),
                    Err(e) => s.error.set(Some(format!("Not kept: {e}"))),
                }
            });
            return;
        }
        item.added_at = now_secs();
        let mut items = s.items.get_untracked();
        if let Some(old) = items
            .iter_mut()
            .find(|i| i.query == item.query && i.candidate == item.candidate)
        {
            old.scores = item.scores;
        } else if items.len() >= SHORTLIST_MAX_ITEMS {
            s.error.set(Some(format!(
                "The shortlist already holds {} items, the most allowed; remove some first.",
                items.len()
            )));
            return;
        } else {
            items.push(item);
        }
        if let Err(e) = save_local(&items) {
            s.error.set(Some(e));
        }
        s.items.set(items);
    }

    /// Removes one item by its keys (`Type::identifier`).
    pub fn remove(&self, query: String, candidate: String) {
        let s = *self;
        s.error.set(None);
        if s.place.get_untracked() == Where::Server {
            spawn_local(async move {
                match delete(&query, &candidate).await {
                    Ok(list) => s.items.set(list.items),
                    Err(e) => s.error.set(Some(format!("Not removed: {e}"))),
                }
            });
            return;
        }
        let mut items = s.items.get_untracked();
        items.retain(|i| !(i.query.key() == query && i.candidate.key() == candidate));
        if let Err(e) = save_local(&items) {
            s.error.set(Some(e));
        }
        s.items.set(items);
    }
}

/// "☆ Keep" / "★ Kept": adds the candidate to the shortlist, or removes it.
#[component]
pub fn KeepButton(item: ShortlistItem) -> impl IntoView {
    let s = use_shortlist();
    let (qk, ck) = (item.query.key(), item.candidate.key());
    let kept = {
        let (qk, ck) = (qk.clone(), ck.clone());
        move || s.has(&qk, &ck)
    };
    let (k_class, k_aria, k_title, k_label) =
        (kept.clone(), kept.clone(), kept.clone(), kept.clone());
    let name = item.candidate.name.clone();
    let item = StoredValue::new(item);
    let click = move |_| {
        if kept() {
            s.remove(qk.clone(), ck.clone());
        } else {
            s.add(item.get_value());
        }
    };
    view! {
        <button class="keep" class:on=k_class data-testid="keep"
            aria-pressed=move || k_aria().to_string()
            title=move || if k_title() { format!("Remove {name} from your shortlist") } else { format!("Add {name} to your shortlist") }
            on:click=click>
            {move || if k_label() { "★ Kept" } else { "☆ Keep" }}
        </button>
    }
}

/// The nav link's count.
#[component]
pub fn ShortlistCount() -> impl IntoView {
    let s = use_shortlist();
    let place = move || match s.place.get() {
        Where::Loading => "loading",
        Where::Local => "local",
        Where::Server => "server",
    };
    view! { <span class="count" data-testid="shortlist-count" data-place=place>{move || { let n = s.items.with(std::vec::Vec::len); (n > 0).then(|| format!(" {n}")) }}</span> }
}

fn fmt_opt(v: Option<f64>, d: usize, suffix: &str) -> String {
    v.map(|x| format!("{x:.d$}{suffix}"))
        .unwrap_or_else(|| "–".into())
}

/// `/shortlist`: the kept candidates, removable, with a CSV export.
#[component]
pub fn ShortlistPage() -> impl IntoView {
    let s = use_shortlist();
    // The session may have started or ended since the app loaded.
    s.reload();
    let csv_href = move || {
        format!(
            "data:text/csv;charset=utf-8,{}",
            crate::api::enc(&s.items.with(|v| serenqa_shared::api::shortlist_csv(v)))
        )
    };
    let place = move || {
        match s.place.get() {
        Where::Loading => "Loading…".to_string(),
        Where::Local => format!("Kept in this browser only (at most {SHORTLIST_MAX_ITEMS}); sign in to keep it with your account."),
        Where::Server => format!("Kept with your account (at most {SHORTLIST_MAX_ITEMS})."),
    }
    };
    let rows = move || {
        s.items
            .get()
            .into_iter()
            .enumerate()
            .map(|(k, it)| {
                let (qk, ck) = (it.query.key(), it.candidate.key());
                let cand_href = format!("/entity/{}", crate::api::enc(&ck));
                // Back to the page it came from, with its explanation open.
                let from_href = format!("/entity/{}?why={}", crate::api::enc(&qk), crate::api::enc(&ck));
                let sc = it.scores.clone();
                let w = sc.weights;
                view! {
                    <tr data-candidate=it.candidate.name.clone()>
                        <td class="col-rank">{k + 1}</td>
                        <td class="col-name"><a href=cand_href>{it.candidate.name.clone()}</a><div class="muted">{format!("{} · {}", it.candidate.kind, it.candidate.id)}</div></td>
                        <td data-label="For"><a href=from_href title="Open the page it was kept from, with its explanation">{it.query.name.clone()}</a></td>
                        <td class="num" data-label="Plausibility">{fmt_opt(sc.plausibility, 3, "")}</td>
                        <td class="num" data-label="Percentile">{fmt_opt(sc.percentile, 1, "%")}</td>
                        <td class="num" data-label="RNS"><strong>{format!("{:.3}", sc.rns)}</strong></td>
                        <td class="num" data-label="R">{format!("{:.3}", sc.r)}</td>
                        <td class="num" data-label="N">{format!("{:.3}", sc.n)}</td>
                        <td class="num" data-label="S" title=sc.s.is_none().then_some("Not informative on the page it was kept from (only that entity was known)")>{fmt_opt(sc.s, 3, "")}</td>
                        <td class="num" data-label="Weights (α, β, γ)">{format!("{:.2} {:.2} {:.2}", w.alpha, w.beta, w.gamma)}</td>
                        <td class="col-actions"><button class="keep" data-testid="shortlist-remove" on:click=move |_| s.remove(qk.clone(), ck.clone())>"Remove"</button></td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <h1>"Shortlist"</h1>
        <crate::notice::Notice />
        <section class="panel">
            <p class="muted" data-testid="shortlist-where">{place}</p>
            {move || s.error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            {move || if s.items.with(std::vec::Vec::is_empty) {
                view! { <p data-testid="shortlist-empty">"Nothing kept yet. On a disease or drug page, press “☆ Keep” next to a candidate or in its explanation."</p> }.into_any()
            } else {
                view! {
                    <div class="row-between">
                        <span class="muted">{move || format!("{} kept; scores as shown when kept, with the weights then in force.", s.items.with(std::vec::Vec::len))}</span>
                        <a class="button" download="serenqa-shortlist.csv" href=csv_href data-testid="shortlist-csv">"Download (CSV)"</a>
                    </div>
                    <div class="scroll-x">
                    <table class="candidates cards" data-testid="shortlist">
                        <thead><tr><th>"#"</th><th>"Candidate"</th><th>"For"</th><th class="num">"Plausibility"</th><th class="num">"Percentile"</th><th class="num">"RNS"</th><th class="num">"R"</th><th class="num">"N"</th><th class="num">"S"</th><th class="num">"Weights α β γ"</th><th></th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                    </div>
                }.into_any()
            }}
        </section>
    }
}
