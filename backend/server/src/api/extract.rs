//! Extractors whose rejections are JSON `{code, message}` like every other API error
//! (axum's own reply in plain text). Handlers use `Q<T>` for query strings, `J<T>` for
//! JSON bodies, and [`resolve`] for a node key (`Type::identifier`) in a path or query.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use serde::de::DeserializeOwned;

use serenqa_graph::{Graph, NodeId};

use super::error::HttpError;

/// A query string, or 400 `bad_query`.
pub struct Q<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Q<T> {
    type Rejection = HttpError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, HttpError> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(v)) => Ok(Q(v)),
            Err(e) => Err(query_error(e)),
        }
    }
}

fn query_error(e: QueryRejection) -> HttpError {
    HttpError::bad_request(
        "bad_query",
        e.body_text()
            .replace("Failed to deserialize query string: ", "bad query string: "),
    )
}

#[allow(dead_code)] // used by the POST endpoints of later API areas
/// A JSON body, or 400 `bad_json` / 413 `body_too_large` / 415 `not_json`.
pub struct J<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for J<T> {
    type Rejection = HttpError;
    async fn from_request(req: Request, state: &S) -> Result<Self, HttpError> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(J(v)),
            Err(e) => Err(json_error(e)),
        }
    }
}

#[allow(dead_code)]
fn json_error(e: JsonRejection) -> HttpError {
    let status = e.status();
    let (status, code) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (status, "body_too_large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (status, "not_json"),
        _ => (StatusCode::BAD_REQUEST, "bad_json"),
    };
    HttpError {
        status,
        code,
        message: e.body_text(),
    }
}

/// Resolves `Type::identifier` or an unambiguous bare identifier, else 404 with the key.
pub fn resolve(g: &Graph, key: &str) -> Result<NodeId, HttpError> {
    let key = key.trim();
    if key.is_empty() || key.len() > 300 {
        return Err(HttpError::bad_request(
            "bad_node_key",
            "a node key is `Type::identifier`, at most 300 bytes",
        ));
    }
    g.find_by_key(key).ok_or_else(|| {
        HttpError::not_found(
            "unknown_node",
            format!("no node {key:?} (use Type::identifier, e.g. Compound::DB00945)"),
        )
    })
}
