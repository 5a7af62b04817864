//! Calls to the backend API. Every failure is a [`Refusal`] (`refusal`: why, in one line, and
//! whether to retry); `get_json` callers that only show a line get its message. `stream` reads
//! Ask's server-sent events over fetch so that a refusal's status and body are readable.

pub mod refusal;
pub mod stream;

use std::future::Future;

use gloo_net::http::Request;
use serde::de::DeserializeOwned;
use serenqa_shared::api::{
    ApiError, DiscoverResponse, GraphInfo, NodeDetail, NodeView, PathsReply,
};

pub use refusal::{Kind, Refusal};

/// GET `url` as JSON; a refusal says why in plain words (`refusal`).
pub async fn get<T: DeserializeOwned>(url: &str) -> Result<T, Refusal> {
    let resp = Request::get(url)
        .send()
        .await
        .map_err(|_| Refusal::unreachable())?;
    if !resp.ok() {
        return Err(refusal_of(resp).await);
    }
    resp.json::<T>().await.map_err(Refusal::malformed)
}

/// The refusal a non-2xx reply carries: its status, its JSON error body if any, its
/// `Retry-After` header.
pub(crate) async fn refusal_of(resp: gloo_net::http::Response) -> Refusal {
    let status = resp.status();
    let retry_after = resp.headers().get("retry-after");
    let body = resp.json::<ApiError>().await.ok();
    Refusal::from_reply(status, body, retry_after.as_deref())
}

/// [`get`] for pages that only show the line.
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, String> {
    get(url).await.map_err(|r| r.message)
}

/// Runs `attempt`; when it is refused with a `Retry-After` (rate limited, busy), counts the
/// seconds down through `waiting` — `Some((refusal, seconds left))` each second, then `None` —
/// and runs it once more. `waiting` returns `false` when the page has moved on (the wait stops
/// there). A second refusal comes back with its final wording and no retry of its own.
pub async fn with_one_retry<T, Fut>(
    mut attempt: impl FnMut() -> Fut,
    waiting: impl Fn(Option<(Refusal, u32)>) -> bool,
) -> Result<T, Refusal>
where
    Fut: Future<Output = Result<T, Refusal>>,
{
    let first = match attempt().await {
        Err(r) => r,
        ok => return ok,
    };
    let Some(secs) = first.retry_after else {
        return Err(first);
    };
    for left in (1..=secs).rev() {
        if !waiting(Some((first.clone(), left))) {
            return Err(first);
        }
        sleep_ms(1000).await;
    }
    if !waiting(None) {
        return Err(first);
    }
    attempt().await.map_err(|mut r| {
        r.message = r.final_message();
        r.retry_after = None;
        r
    })
}

/// Percent-encodes a query-string value.
pub fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b':' => {
                out.push(b as char);
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub async fn graph_info() -> Result<GraphInfo, String> {
    get_json("/api/graph").await
}

pub async fn search(q: &str, kind: Option<&str>) -> Result<Vec<NodeView>, String> {
    let mut url = format!("/api/search?limit=8&q={}", enc(q));
    if let Some(k) = kind {
        url.push_str(&format!("&kind={}", enc(k)));
    }
    get_json(&url).await
}

pub async fn node(key: &str) -> Result<NodeDetail, Refusal> {
    get(&format!("/api/node/{}", enc(key))).await
}

pub async fn paths(from: &str, to: &str) -> Result<PathsReply, String> {
    get_json(&format!(
        "/api/paths?limit=20&from={}&to={}",
        enc(from),
        enc(to)
    ))
    .await
}

/// `Type::identifier`, the key the API takes.
pub fn key_of(n: &NodeView) -> String {
    format!("{}::{}", n.kind, n.id)
}

pub async fn discover(key: &str) -> Result<DiscoverResponse, Refusal> {
    get(&format!("/api/discover/{}?limit=200", enc(key))).await
}

/// Paths from any of several nodes (keys joined by commas) to one node.
pub async fn paths_from_set(from: &[String], to: &str) -> Result<PathsReply, String> {
    let from: Vec<String> = from.iter().map(|k| enc(k)).collect();
    get_json(&format!(
        "/api/paths?limit=20&from={}&to={}",
        from.join(","),
        enc(to)
    ))
    .await
}

/// Waits `ms` milliseconds (a browser timer).
pub async fn sleep_ms(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(p).await;
}

/// The paths that carry the plausibility prediction of (compound, disease), by metapath.
pub async fn explain(
    compound: &str,
    disease: &str,
) -> Result<serenqa_shared::api::ExplainResponse, String> {
    get_json(&format!(
        "/api/predictions/explain?compound={}&disease={}",
        enc(compound),
        enc(disease)
    ))
    .await
}
