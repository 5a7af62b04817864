//! Why a request was refused or failed, in plain words, and what the page does about it: the
//! one place that turns an HTTP status, the server's JSON error (`{code, message}`,
//! `serenqa_shared::api::ApiError`) and its `Retry-After` header into one line for the user and
//! a retry policy. Every page shows [`Refusal::message`]; pages that can retry (Ask, Discover)
//! retry once after [`Refusal::retry_after`] seconds and then offer a "Try again" button.

use serenqa_shared::api::ApiError;

/// The shortest and longest automatic wait (seconds) whatever `Retry-After` says: a server
/// asking for 0 s would be asked again at once, one asking for an hour would leave the page
/// frozen; past the longest the user is offered "Try again" instead.
pub const RETRY_MIN_SECS: u32 = 1;
pub const RETRY_MAX_SECS: u32 = 30;

/// What kind of refusal it is: decides the wording, the retry and the page's extras (a sign-in
/// link, a search box).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No reply at all: the server is not running, restarting, or the device is offline.
    Unreachable,
    /// 429 `rate_limited`: this address asked too often in a short time.
    RateLimited,
    /// 429 `busy` or 503: the server is busy (or a service it needs is).
    Busy,
    /// 504, 408 or the Ask deadline (`ask_deadline`): the request took too long.
    TooSlow,
    /// 401 (a model-backed Ask, an ended session): signing in is what to do.
    SignIn,
    /// 404 `unknown_node` / 400 `bad_node_key`: no such entity in the graph.
    NotInGraph,
    /// The connection dropped before the answer arrived.
    Lost,
    /// Anything else: the server's own one-line message, or the status in words.
    Other,
}

impl Kind {
    /// The kind as the page's `data-kind` attribute names it (browser tests read it).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Unreachable => "unreachable",
            Kind::RateLimited => "rate-limited",
            Kind::Busy => "busy",
            Kind::TooSlow => "too-slow",
            Kind::SignIn => "sign-in",
            Kind::NotInGraph => "not-in-graph",
            Kind::Lost => "lost",
            Kind::Other => "other",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub kind: Kind,
    /// The HTTP status (0: none, the server was not reached or the stream said it).
    pub status: u16,
    /// The server's error code (empty when it sent none).
    pub code: String,
    /// One line for the user: why, and what to do.
    pub message: String,
    /// Seconds to wait before the one automatic retry, clamped to
    /// [`RETRY_MIN_SECS`]..=[`RETRY_MAX_SECS`]; `None`: do not retry by yourself.
    pub retry_after: Option<u32>,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `navigator.onLine` (true when unknown).
pub fn is_online() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"navigator".into()).ok())
        .and_then(|n| js_sys::Reflect::get(&n, &"onLine".into()).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(true)
}

/// What a person reads when the server could not be reached (instead of the browser's
/// "TypeError: Failed to fetch").
pub fn unreachable_message() -> String {
    if is_online() {
        "The server could not be reached (it may be down or restarting); try again in a moment."
            .into()
    } else {
        "This device is offline; try again once it is connected.".into()
    }
}

/// `Retry-After` in seconds (the server sends whole seconds; an HTTP date or garbage counts as
/// absent), clamped to the automatic-retry range.
pub fn parse_retry_after(header: Option<&str>) -> Option<u32> {
    let secs: f64 = header?.trim().parse().ok()?;
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some((secs.ceil() as u32).clamp(RETRY_MIN_SECS, RETRY_MAX_SECS))
}

impl Refusal {
    /// A reply that is not a success: its status, its JSON error body if it had one, its
    /// `Retry-After` header.
    pub fn from_reply(status: u16, body: Option<ApiError>, retry_after: Option<&str>) -> Refusal {
        let (code, server_message) = body.map(|e| (e.code, e.message)).unwrap_or_default();
        let kind = kind_of(status, &code);
        let retry_after = match kind {
            // Busy with no header still deserves its one retry, soon.
            Kind::RateLimited | Kind::Busy => {
                Some(parse_retry_after(retry_after).unwrap_or(RETRY_MIN_SECS * 2))
            }
            _ => None,
        };
        let message = message_of(kind, status, &server_message);
        Refusal {
            kind,
            status,
            code,
            message,
            retry_after,
        }
    }

    /// An error event inside a stream that had started well (`AskEvent::Error`): the status
    /// is long sent, so the code says what happened (`ask_deadline`, `cancelled`, …).
    pub fn from_event(e: ApiError) -> Refusal {
        let status = match e.code.as_str() {
            "ask_deadline" => 504,
            "cancelled" | "edge_store_unavailable" | "pipeline_unavailable" => 503,
            "internal" => 500,
            _ => 0,
        };
        let mut r = Refusal::from_reply(status, Some(e), None);
        // The stream is over and was not refused at the door: asking again is the user's call.
        r.retry_after = None;
        r
    }

    /// No reply: the fetch itself failed.
    pub fn unreachable() -> Refusal {
        Refusal {
            kind: Kind::Unreachable,
            status: 0,
            code: String::new(),
            message: unreachable_message(),
            retry_after: None,
        }
    }

    /// The stream ended (or broke) before its result.
    pub fn lost() -> Refusal {
        Refusal {
            kind: Kind::Lost,
            status: 0,
            code: String::new(),
            message: if is_online() {
                "The connection to the server was lost before the answer arrived; try again.".into()
            } else {
                unreachable_message()
            },
            retry_after: None,
        }
    }

    /// A reply that arrived but could not be read.
    pub fn malformed(what: impl std::fmt::Display) -> Refusal {
        Refusal {
            kind: Kind::Other,
            status: 0,
            code: "malformed".into(),
            message: format!("The server's reply could not be read ({what}); reload the page (the server may have been updated)."),
            retry_after: None,
        }
    }

    /// The line to show after the automatic retry failed too (no "retrying" promise).
    pub fn final_message(&self) -> String {
        match self.kind {
            Kind::RateLimited | Kind::Busy => format!(
                "{} It did not clear after one retry; wait a little, then try again.",
                self.message
            ),
            _ => self.message.clone(),
        }
    }

    /// Whether a "Try again" button makes sense (it does not when the user must sign in or
    /// the thing asked for does not exist).
    pub fn can_try_again(&self) -> bool {
        !matches!(self.kind, Kind::SignIn | Kind::NotInGraph)
    }
}

fn kind_of(status: u16, code: &str) -> Kind {
    match (code, status) {
        ("rate_limited", _) => Kind::RateLimited,
        ("busy", _) => Kind::Busy,
        ("ask_deadline", _) | (_, 408 | 504) => Kind::TooSlow,
        ("not_signed_in", _) | (_, 401) => Kind::SignIn,
        ("unknown_node" | "bad_node_key", _) => Kind::NotInGraph,
        (_, 429) => Kind::RateLimited,
        (_, 503) => Kind::Busy,
        (_, 502) => Kind::Unreachable,
        _ => Kind::Other,
    }
}

fn message_of(kind: Kind, status: u16, server: &str) -> String {
    match kind {
        Kind::RateLimited => {
            "Too many requests from your address in a short time: the server limits how often one address may ask.".into()
        }
        Kind::Busy => "The server is busy with other requests right now.".into(),
        Kind::TooSlow => "The question took too long to answer; try a narrower question (one disease or one drug, fewer conditions).".into(),
        Kind::SignIn if server.contains("language model") => {
            "This server answers with a language model, which needs you signed in: sign in, then ask again.".into()
        }
        Kind::SignIn => "This needs you signed in: sign in, then try again.".into(),
        Kind::NotInGraph => "Not in the graph: no disease, drug or other entity has this identifier.".into(),
        Kind::Unreachable => unreachable_message(),
        Kind::Lost => "The connection to the server was lost before the answer arrived; try again.".into(),
        Kind::Other if status >= 500 => format!(
            "The server had a problem (HTTP {status}); try again, and if it persists tell whoever runs it."
        ),
        Kind::Other if !server.is_empty() => sentence(server),
        Kind::Other if status == 0 => "The request failed; try again.".into(),
        Kind::Other => format!("The server refused the request (HTTP {status})."),
    }
}

/// The server's lower-case message as a sentence.
fn sentence(s: &str) -> String {
    let s = s.trim();
    let mut c = s.chars();
    let mut out: String = match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    };
    if !out.ends_with(['.', '?', '!', ')']) {
        out.push('.');
    }
    out
}
