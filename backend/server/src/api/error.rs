//! JSON errors for the API.
//!
//! Clients never see internal detail: a `500` is logged on the server's stderr and answered
//! with a generic one-line message and its code ([`HttpError::into_response`]); handlers that
//! fail on a dependency (an LLM endpoint, the edge store, a file) log the detail themselves
//! and return [`HttpError::hidden`], so URLs, provider bodies and absolute paths stay in the
//! log.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serenqa_shared::api::ApiError;

/// An API error: status plus `{code, message}` body.
#[derive(Debug)]
pub struct HttpError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl HttpError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        HttpError {
            status: StatusCode::BAD_REQUEST,
            code,
            message: message.into(),
        }
    }
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        HttpError {
            status: StatusCode::NOT_FOUND,
            code,
            message: message.into(),
        }
    }
    #[allow(dead_code)]
    pub fn unavailable(code: &'static str, message: impl Into<String>) -> Self {
        HttpError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code,
            message: message.into(),
        }
    }
    /// An internal error: `detail` goes to the log, the client gets a generic message.
    pub fn internal(detail: impl Into<String>) -> Self {
        HttpError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "internal",
            message: detail.into(),
        }
    }
    /// `status` with the public `message`; `detail` (URLs, paths, provider replies) is logged.
    pub fn hidden(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
        detail: impl std::fmt::Display,
    ) -> Self {
        eprintln!("error: {code}: {detail}");
        HttpError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let message = if self.status == StatusCode::INTERNAL_SERVER_ERROR {
            eprintln!("error: {}: {}", self.code, self.message);
            "internal error (the details are in the server log)".to_string()
        } else {
            self.message
        };
        (
            self.status,
            Json(ApiError {
                code: self.code.to_string(),
                message,
            }),
        )
            .into_response()
    }
}

pub async fn not_found() -> HttpError {
    HttpError::not_found("no_such_endpoint", "no such API endpoint")
}
