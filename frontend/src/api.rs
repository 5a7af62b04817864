//! Calls to the backend API. Errors become one readable line for the page to show.

use gloo_net::http::Request;
use serde::de::DeserializeOwned;
use serenqa_shared::api::{ApiError, GraphInfo};

pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, String> {
    let resp = Request::get(url).send().await.map_err(|e| format!("network error: {e}"))?;
    if !resp.ok() {
        return Err(match resp.json::<ApiError>().await {
            Ok(e) => e.message,
            Err(_) => format!("HTTP {}", resp.status()),
        });
    }
    resp.json::<T>().await.map_err(|e| format!("unexpected reply: {e}"))
}

pub async fn graph_info() -> Result<GraphInfo, String> {
    get_json("/api/graph").await
}
