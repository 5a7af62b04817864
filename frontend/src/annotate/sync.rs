//! Saving one question's ranking so that nothing acknowledged or typed is lost.
//!
//! The page keeps its state in signals; what must reach the server lives here, outside the
//! reactive graph, in a [`Saver`] (an `Arc<Mutex<Core>>` of plain data). A save can therefore
//! finish — and a pending one be sent — after the question's view has been disposed (the
//! annotator clicked "Next →" or the back link within the autosave pause). Nothing here reads
//! a signal: progress is reported through [`Ui`], whose signals are only ever *set*, which is a
//! no-op once they are disposed. This is what keeps the "disposed reactive value" panic away.
//!
//! Rules:
//! - Changes are autosaved 400 ms after the last one, as drafts; "Submit" / "Update submission"
//!   sends a complete save at once. Only one request is in flight; later changes wait for it.
//! - Every save carries `base_revision`, the revision it was based on. A 409 `stale_revision`
//!   stops saving and shows both versions until the annotator keeps theirs (resent based on the
//!   stored revision) or takes the stored one.
//! - A submission id names one body: a failed request (network, 5xx) is retried with the same
//!   body and id, so the server stores it once; new content gets a new id. Retries back off
//!   (2 s doubling to 30 s) and happen at once when the browser reports it is back `online`;
//!   the page says in plain words what went wrong (offline, server unreachable, busy).
//! - Leaving the view (in-app navigation) or the page (`pagehide`) sends what is pending at
//!   once, as a `keepalive` fetch that outlives the page. Every change is also copied to
//!   `localStorage` until it is acknowledged; when a save cannot be made (session expired,
//!   page closed mid-request), the copy is offered back the next time the question is opened.
//! - Every save carries the time on task: the stored figure plus the time this visit's page
//!   has been visible (hidden tabs do not count), and a submission the "shown order is my
//!   ranking" confirmation when the page asked for it.
//! - A refusal (4xx) is reported with its machine code ([`Ui::field_error`]), so the page can
//!   show it at the field it is about as well as in the status line.

use std::cell::RefCell;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};
use serenqa_shared::annotate::{
    NewResponse, RankEntry, Response, SaveOutcome, StaleRevision, Status,
};
use serenqa_shared::api::ApiError;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::submission_id;

/// The autosave pause after the last change.
pub const DEBOUNCE: Duration = Duration::from_millis(400);

/// What is saved of a question: the ranking in list order, confidence, comment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub ranking: Vec<RankEntry>,
    pub confidence: Option<u8>,
    pub comment: String,
}

impl Snapshot {
    /// What the annotator last saved: the pending edit of a submission, else the response.
    pub fn of_response(r: &Response) -> Snapshot {
        match &r.pending {
            Some(p) => Snapshot {
                ranking: p.ranking.clone(),
                confidence: p.confidence,
                comment: p.comment.clone(),
            },
            None => Snapshot {
                ranking: r.ranking.clone(),
                confidence: r.confidence,
                comment: r.comment.clone(),
            },
        }
    }
    /// The submitted version, if the response is submitted.
    pub fn submitted(r: &Response) -> Option<Snapshot> {
        (r.status == Status::Complete).then(|| Snapshot {
            ranking: r.ranking.clone(),
            confidence: r.confidence,
            comment: r.comment.clone(),
        })
    }
    fn of_body(b: &NewResponse) -> Snapshot {
        Snapshot {
            ranking: b.ranking.clone(),
            confidence: b.confidence,
            comment: b.comment.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SaveState {
    Untouched,
    Pending,
    Saving,
    Saved(i64),
    Retrying(String),
    Failed(String),
    Conflict,
    SignedOut,
}

/// The signals the saver reports to (set only, never read).
#[derive(Clone, Copy)]
pub struct Ui {
    pub state: RwSignal<SaveState>,
    /// The response is submitted.
    pub submitted: RwSignal<bool>,
    /// The submitted response has saved, unsubmitted edits.
    pub edited: RwSignal<bool>,
    pub conflict: RwSignal<Option<StaleRevision>>,
    /// A complete save (submission) was acknowledged.
    pub just_submitted: RwSignal<bool>,
    /// The last refusal's `(code, message)`, shown at its field; cleared by the next save.
    pub field_error: RwSignal<Option<(String, String)>>,
}

/// Time on task: the stored figure plus the visible time of this visit.
struct Clock {
    stored_ms: u64,
    /// `performance.now()`-style milliseconds when the page last became visible (`None`:
    /// hidden now).
    visible_since: Option<f64>,
    /// Visible milliseconds of this visit before `visible_since`.
    banked: f64,
}

impl Clock {
    fn total(&self, now: f64) -> u64 {
        let live = self.visible_since.map_or(0.0, |t| (now - t).max(0.0));
        self.stored_ms
            .saturating_add((self.banked + live).max(0.0) as u64)
    }
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

fn page_visible() -> bool {
    !document().hidden()
}

/// A copy of unsaved changes kept on this device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalCopy {
    pub base_revision: i64,
    pub content: Snapshot,
    /// `Date.now()` when it was written.
    pub saved_at: f64,
}

struct Core {
    user: i64,
    qid: i64,
    /// The last acknowledged revision (what the next save is based on).
    base: i64,
    /// The content shown now.
    desired: Snapshot,
    /// `desired` has not been acknowledged yet.
    dirty: bool,
    want_submit: bool,
    /// Sent, outcome unknown (a retry resends exactly this).
    in_flight: Option<NewResponse>,
    /// Content the server refused (4xx): not resent until it changes.
    rejected: Option<Snapshot>,
    running: bool,
    /// Waiting for the annotator (conflict, signed out).
    blocked: bool,
    conflict_revision: i64,
    timer: Option<TimeoutHandle>,
    submitted: Option<Snapshot>,
    /// The annotator ticked "the shown order is my ranking" for the submission asked for.
    confirm: bool,
    clock: Clock,
}

impl Core {
    /// The request to send next, if any (recorded as in flight).
    fn next_body(&mut self) -> Option<NewResponse> {
        if let Some(b) = &self.in_flight {
            return Some(b.clone());
        }
        let send =
            self.want_submit || (self.dirty && self.rejected.as_ref() != Some(&self.desired));
        if !send {
            return None;
        }
        let status = if self.want_submit {
            Status::Complete
        } else {
            Status::Draft
        };
        self.want_submit = false;
        let b = NewResponse {
            submission_id: submission_id(),
            ranking: self.desired.ranking.clone(),
            confidence: self.desired.confidence,
            comment: self.desired.comment.clone(),
            status,
            base_revision: self.base,
            confirm_shown_order: status == Status::Complete && self.confirm,
            time_ms: Some(self.clock.total(now_ms())),
        };
        self.in_flight = Some(b.clone());
        Some(b)
    }
}

/// Saves one question's ranking; cheap to clone, usable after the view is gone.
#[derive(Clone)]
pub struct Saver {
    core: Arc<Mutex<Core>>,
    ui: Ui,
}

thread_local! {
    /// Questions with a save loop running (the question page waits for them before loading).
    static RUNNING: RefCell<HashSet<i64>> = RefCell::new(HashSet::new());
}

/// Waits (up to 3 s) until no save of question `qid` is running, so that coming back to a
/// question shows what was just sent.
pub async fn wait_for_saves(qid: i64) {
    for _ in 0..60 {
        if !RUNNING.with(|r| r.borrow().contains(&qid)) {
            return;
        }
        sleep(50).await;
    }
}

impl Saver {
    pub fn new(
        user: i64,
        qid: i64,
        base: i64,
        loaded: Snapshot,
        submitted: Option<Snapshot>,
        stored_time_ms: u64,
        ui: Ui,
    ) -> Saver {
        let core = Core {
            user,
            qid,
            base,
            desired: loaded,
            dirty: false,
            want_submit: false,
            in_flight: None,
            rejected: None,
            running: false,
            blocked: false,
            conflict_revision: 0,
            timer: None,
            submitted,
            confirm: false,
            clock: Clock {
                stored_ms: stored_time_ms,
                visible_since: page_visible().then(now_ms),
                banked: 0.0,
            },
        };
        Saver {
            core: Arc::new(Mutex::new(core)),
            ui,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Core> {
        self.core
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The content changed: keep it on this device and save it after the pause.
    pub fn changed(&self, snap: Snapshot) {
        {
            let mut c = self.lock();
            if let Some(h) = c.timer.take() {
                h.clear();
            }
            write_local(
                c.user,
                c.qid,
                &LocalCopy {
                    base_revision: c.base,
                    content: snap.clone(),
                    saved_at: js_sys::Date::now(),
                },
            );
            c.desired = snap;
            c.dirty = true;
        }
        self.ui.state.set(SaveState::Pending);
        let me = self.clone();
        let h = set_timeout_with_handle(move || me.kick(), DEBOUNCE).ok();
        self.lock().timer = h;
    }

    /// The page became visible or hidden: only visible time counts as time on task.
    pub fn visibility(&self, visible: bool) {
        let mut c = self.lock();
        let now = now_ms();
        match (visible, c.clock.visible_since) {
            (true, None) => c.clock.visible_since = Some(now),
            (false, Some(t)) => {
                c.clock.banked += (now - t).max(0.0);
                c.clock.visible_since = None;
            }
            _ => {}
        }
    }

    /// "Submit ranking" / "Update submission": a complete save of `snap`, now; `confirm`:
    /// the annotator confirmed the untouched shown order as their ranking.
    pub fn submit(&self, snap: Snapshot, confirm: bool) {
        self.ui.field_error.set(None);
        {
            let mut c = self.lock();
            c.confirm = confirm;
            write_local(
                c.user,
                c.qid,
                &LocalCopy {
                    base_revision: c.base,
                    content: snap.clone(),
                    saved_at: js_sys::Date::now(),
                },
            );
            c.desired = snap;
            c.dirty = true;
            c.want_submit = true;
            c.rejected = None;
        }
        self.kick();
    }

    /// The view or the page is going away: send what is pending now (a `keepalive` fetch).
    pub fn flush(&self) {
        self.kick();
    }

    /// The submitted version (for "Discard edits").
    pub fn submitted(&self) -> Option<Snapshot> {
        self.lock().submitted.clone()
    }

    /// Conflict resolved by keeping this page's version: resend it based on the stored revision.
    pub fn keep_mine(&self) {
        {
            let mut c = self.lock();
            c.base = c.conflict_revision;
            c.blocked = false;
            c.dirty = true;
            c.rejected = None;
        }
        self.ui.conflict.set(None);
        self.kick();
    }

    /// Conflict resolved by taking the stored version; returns it for the page to show.
    pub fn take_theirs(&self, s: &StaleRevision) -> Option<Snapshot> {
        let snap = {
            let mut c = self.lock();
            c.base = s.revision;
            c.blocked = false;
            c.dirty = false;
            c.want_submit = false;
            c.in_flight = None;
            c.rejected = None;
            remove_local(c.user, c.qid);
            let snap = s.current.as_ref().map(Snapshot::of_response);
            if let Some(sn) = &snap {
                c.desired = sn.clone();
            }
            c.submitted = s.current.as_ref().and_then(Snapshot::submitted);
            snap
        };
        self.ui.submitted.set(
            s.current
                .as_ref()
                .is_some_and(|r| r.status == Status::Complete),
        );
        self.ui
            .edited
            .set(s.current.as_ref().is_some_and(|r| r.pending.is_some()));
        self.ui.conflict.set(None);
        self.ui.state.set(if s.revision > 0 {
            SaveState::Saved(s.revision)
        } else {
            SaveState::Untouched
        });
        snap
    }

    /// Starts sending if something is pending and nothing is in flight. The fetch itself is
    /// started synchronously, so this also works from a `pagehide` handler.
    fn kick(&self) {
        let (body, fut, qid) = {
            let mut c = self.lock();
            if let Some(h) = c.timer.take() {
                h.clear();
            }
            if c.running || c.blocked {
                return;
            }
            let Some(b) = c.next_body() else { return };
            c.running = true;
            let fut = start_put(c.qid, &b);
            (b, fut, c.qid)
        };
        RUNNING.with(|r| r.borrow_mut().insert(qid));
        spawn_local(self.clone().drive(body, fut));
    }

    async fn drive(self, mut body: NewResponse, mut fut: PutFuture) {
        let mut attempt = 0u32;
        loop {
            self.ui.state.set(SaveState::Saving);
            let reply = fut.await;
            let next = match reply {
                Reply::Saved(o) => {
                    attempt = 0;
                    self.on_saved(&body, &o);
                    self.next()
                }
                Reply::Stale(s) => {
                    let mut c = self.lock();
                    c.in_flight = None;
                    c.blocked = true;
                    c.conflict_revision = s.revision;
                    if body.status == Status::Complete {
                        c.want_submit = true;
                    }
                    drop(c);
                    self.ui.conflict.set(Some(*s));
                    self.ui.state.set(SaveState::Conflict);
                    None
                }
                Reply::Failed { status, .. }
                    if status == 0 || status == 408 || status == 429 || status >= 500 =>
                {
                    // Unknown outcome: retry the same body (same submission id) after a pause,
                    // or as soon as the browser is back online.
                    attempt += 1;
                    self.ui
                        .state
                        .set(SaveState::Retrying(super::status_message(status)));
                    sleep_or_online((1000i32 << attempt.min(5)).min(30_000)).await;
                    let mut c = self.lock();
                    if c.blocked {
                        None
                    } else {
                        c.next_body().map(|b| {
                            let f = start_put(c.qid, &b);
                            (b, f)
                        })
                    }
                }
                Reply::Failed { status: 401, .. } => {
                    // Kept on this device (the copy is offered back after signing in).
                    let mut c = self.lock();
                    c.in_flight = None;
                    c.blocked = true;
                    drop(c);
                    self.ui.state.set(SaveState::SignedOut);
                    None
                }
                Reply::Failed { code, .. } if code == "submission_id_reused" => {
                    self.lock().in_flight = None;
                    self.next()
                }
                Reply::Failed { code, message, .. } => {
                    let mut c = self.lock();
                    c.in_flight = None;
                    c.rejected = Some(Snapshot::of_body(&body));
                    drop(c);
                    self.ui.field_error.set(Some((code, message.clone())));
                    self.ui.state.set(SaveState::Failed(message));
                    None
                }
            };
            match next {
                Some((b, f)) => {
                    body = b;
                    fut = f;
                }
                None => break,
            }
        }
        let qid = {
            let mut c = self.lock();
            c.running = false;
            c.qid
        };
        RUNNING.with(|r| r.borrow_mut().remove(&qid));
    }

    fn next(&self) -> Option<(NewResponse, PutFuture)> {
        let mut c = self.lock();
        if c.blocked {
            return None;
        }
        let b = c.next_body()?;
        let f = start_put(c.qid, &b);
        Some((b, f))
    }

    fn on_saved(&self, body: &NewResponse, o: &SaveOutcome) {
        let snap = Snapshot::of_body(body);
        let mut c = self.lock();
        c.in_flight = None;
        c.base = o.revision;
        c.rejected = None;
        if body.status == Status::Complete {
            c.submitted = Some(snap.clone());
        }
        if snap == c.desired {
            c.dirty = false;
            remove_local(c.user, c.qid);
        }
        let dirty = c.dirty;
        drop(c);
        if body.status == Status::Complete {
            self.ui.submitted.set(true);
            if !dirty {
                self.ui.just_submitted.set(true);
            }
        }
        self.ui.edited.set(o.pending);
        self.ui.field_error.set(None);
        self.ui.state.set(if dirty {
            SaveState::Pending
        } else {
            SaveState::Saved(o.revision)
        });
    }
}

// ----- the request -----

enum Reply {
    Saved(SaveOutcome),
    Stale(Box<StaleRevision>),
    Failed {
        status: u16,
        code: String,
        message: String,
    },
}

type PutFuture = Pin<Box<dyn Future<Output = Reply>>>;

fn failed(status: u16, message: impl Into<String>) -> Reply {
    Reply::Failed {
        status,
        code: String::new(),
        message: message.into(),
    }
}

/// Starts `PUT …/response` now (a `keepalive` fetch: it completes even if the page unloads)
/// and returns its reply as a future.
fn start_put(qid: i64, body: &NewResponse) -> PutFuture {
    let url = format!("/api/annotate/questions/{qid}/response");
    let json = match serde_json::to_string(body) {
        Ok(j) => j,
        Err(e) => {
            let m = e.to_string();
            return Box::pin(async move { failed(400, m) });
        }
    };
    let init = web_sys::RequestInit::new();
    init.set_method("PUT");
    init.set_body(&JsValue::from_str(&json));
    let headers = js_sys::Object::new();
    let csrf = super::csrf();
    for (k, v) in [
        ("Content-Type", "application/json"),
        ("X-Requested-With", "serenqa"),
        ("X-CSRF-Token", csrf.as_str()),
    ] {
        let _ = js_sys::Reflect::set(&headers, &JsValue::from_str(k), &JsValue::from_str(v));
    }
    init.set_headers(&headers);
    let _ = js_sys::Reflect::set(&init, &JsValue::from_str("keepalive"), &JsValue::TRUE);
    let promise = window().fetch_with_str_and_init(&url, &init);
    Box::pin(async move {
        let resp = match JsFuture::from(promise).await {
            Ok(r) => r,
            Err(_) => return failed(0, super::offline_message()),
        };
        let Ok(resp) = resp.dyn_into::<web_sys::Response>() else {
            return failed(0, "not a response");
        };
        let status = resp.status();
        let text = match resp.text() {
            Ok(p) => JsFuture::from(p)
                .await
                .ok()
                .and_then(|t| t.as_string())
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        if status == 200 {
            return match serde_json::from_str::<SaveOutcome>(&text) {
                Ok(o) => Reply::Saved(o),
                Err(e) => failed(status, format!("unexpected reply: {e}")),
            };
        }
        if status == 409 {
            if let Ok(s) = serde_json::from_str::<StaleRevision>(&text) {
                if s.code == "stale_revision" {
                    return Reply::Stale(Box::new(s));
                }
            }
        }
        match serde_json::from_str::<ApiError>(&text) {
            Ok(e) => Reply::Failed {
                status,
                code: e.code,
                message: e.message,
            },
            Err(_) => failed(status, format!("HTTP {status}")),
        }
    })
}

/// Sleeps `ms`, or less: wakes when the window's `online` event fires.
async fn sleep_or_online(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        let w = window();
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        // addEventListener("online", resolve, {once: true}), through Reflect (no extra web-sys
        // features); resolving twice is harmless.
        let opts = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&opts, &JsValue::from_str("once"), &JsValue::TRUE);
        if let Ok(add) = js_sys::Reflect::get(&w, &JsValue::from_str("addEventListener"))
            .and_then(wasm_bindgen::JsCast::dyn_into::<js_sys::Function>)
        {
            let _ = add.call3(&w, &JsValue::from_str("online"), &resolve, &opts);
        }
    });
    let _ = JsFuture::from(p).await;
}

async fn sleep(ms: i32) {
    crate::api::sleep_ms(ms).await;
}

// ----- the copy on this device -----

fn local_key(user: i64, qid: i64) -> String {
    format!("serenqa:unsaved:{user}:{qid}")
}

fn storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

fn write_local(user: i64, qid: i64, copy: &LocalCopy) {
    if let (Some(s), Ok(j)) = (storage(), serde_json::to_string(copy)) {
        let _ = s.set_item(&local_key(user, qid), &j);
    }
}

/// The unsaved changes this device kept for the question, if any.
pub fn read_local(user: i64, qid: i64) -> Option<LocalCopy> {
    let j = storage()?.get_item(&local_key(user, qid)).ok()??;
    serde_json::from_str(&j).ok()
}

pub fn remove_local(user: i64, qid: i64) {
    if let Some(s) = storage() {
        let _ = s.remove_item(&local_key(user, qid));
    }
}
