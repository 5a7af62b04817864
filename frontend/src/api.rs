//! Calls to the backend API. Errors become one readable line for the page to show.

use gloo_net::http::Request;
use serde::de::DeserializeOwned;
use serenqa_shared::api::{
    ApiError, DiscoverResponse, GraphInfo, NodeDetail, NodeView, PathsReply,
};

pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, String> {
    let resp = Request::get(url)
        .send()
        .await
        .map_err(|e| format!("network error: {e}"))?;
    if !resp.ok() {
        return Err(match resp.json::<ApiError>().await {
            Ok(e) => e.message,
            Err(_) => format!("HTTP {}", resp.status()),
        });
    }
    resp.json::<T>()
        .await
        .map_err(|e| format!("unexpected reply: {e}"))
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

pub async fn node(key: &str) -> Result<NodeDetail, String> {
    get_json(&format!("/api/node/{}", enc(key))).await
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

pub async fn discover(key: &str) -> Result<DiscoverResponse, String> {
    get_json(&format!("/api/discover/{}?limit=200", enc(key))).await
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
