//! JSON errors for the API.

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
        HttpError { status: StatusCode::BAD_REQUEST, code, message: message.into() }
    }
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        HttpError { status: StatusCode::NOT_FOUND, code, message: message.into() }
    }
    pub fn unavailable(code: &'static str, message: impl Into<String>) -> Self {
        HttpError { status: StatusCode::SERVICE_UNAVAILABLE, code, message: message.into() }
    }
    #[allow(dead_code)] // for handlers of later API areas
    pub fn internal(message: impl Into<String>) -> Self {
        HttpError { status: StatusCode::INTERNAL_SERVER_ERROR, code: "internal", message: message.into() }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        (self.status, Json(ApiError { code: self.code.to_string(), message: self.message })).into_response()
    }
}

pub async fn not_found() -> HttpError {
    HttpError::not_found("no_such_endpoint", "no such API endpoint")
}
