//! Request bodies: read whole, within a size limit and a deadline, before any handler runs.
//!
//! A body larger than [`MAX_BODY_BYTES`](super::MAX_BODY_BYTES) is refused with
//! `413 body_too_large` (at once when `Content-Length` says so); a client that has not sent
//! its whole body within [`BODY_DEADLINE`] — a slow-loris dribbling bytes, or a stalled
//! upload — gets `408 body_timeout`, and its connection is freed. Both replies are the API's
//! JSON `{code, message}`. Requests without a body pass through untouched (streams, pages).

use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use super::error::HttpError;

/// How long a client may take to send its whole request body.
pub const BODY_DEADLINE: Duration = Duration::from_secs(10);

fn too_large(limit: usize) -> Response {
    HttpError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "body_too_large",
        message: format!("the request body is larger than {} KiB", limit >> 10),
    }
    .into_response()
}

/// Middleware: buffers the body under the size limit and the deadline.
pub async fn bounded(req: Request, next: Next) -> Response {
    bounded_with(req, next, super::MAX_BODY_BYTES, BODY_DEADLINE).await
}

pub async fn bounded_with(req: Request, next: Next, limit: usize, deadline: Duration) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit);
    }
    if req.body().is_end_stream() || req.body().size_hint().exact() == Some(0) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let read = async {
        let mut stream = body.into_data_stream();
        let mut buf: Vec<u8> = Vec::new();
        while let Some(chunk) = stream.next().await {
            let data = chunk.map_err(|_| None)?;
            if buf.len() + data.len() > limit {
                return Err(Some(()));
            }
            buf.extend_from_slice(&data);
        }
        Ok(Bytes::from(buf))
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(Some(()))) => too_large(limit),
        Ok(Err(None)) => {
            HttpError::bad_request("body_unreadable", "the request body could not be read")
                .into_response()
        }
        Err(_) => HttpError {
            status: StatusCode::REQUEST_TIMEOUT,
            code: "body_timeout",
            message: format!(
                "the request body did not arrive within {} s",
                deadline.as_secs()
            ),
        }
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use axum::routing::post;
    use axum::Router;
    use tower::ServiceExt;

    use super::*;

    fn app() -> Router {
        Router::new()
            .route("/x", post(|b: Bytes| async move { b.len().to_string() }))
            .layer(axum::middleware::from_fn(|req, next| {
                bounded_with(req, next, 16, Duration::from_millis(200))
            }))
    }

    async fn call(req: Request) -> (StatusCode, String) {
        let r = app().oneshot(req).await.expect("response");
        let status = r.status();
        let body = axum::body::to_bytes(r.into_body(), 1 << 20)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn small_bodies_pass_large_ones_get_json_413() {
        let (st, body) = call(
            Request::post("/x")
                .body(Body::from("0123456789"))
                .expect("req"),
        )
        .await;
        assert_eq!((st, body.as_str()), (StatusCode::OK, "10"));
        let (st, body) = call(
            Request::post("/x")
                .header(header::CONTENT_LENGTH, "17")
                .body(Body::from("x".repeat(17)))
                .expect("req"),
        )
        .await;
        assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(body.contains(r#""code":"body_too_large""#), "{body}");
        // No Content-Length: counted while reading.
        let chunks = futures_util::stream::iter(
            (0..5).map(|_| Ok::<_, std::io::Error>(Bytes::from("abcd"))),
        );
        let (st, body) = call(
            Request::post("/x")
                .body(Body::from_stream(chunks))
                .expect("req"),
        )
        .await;
        assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    }

    #[tokio::test]
    async fn a_body_that_stalls_gets_json_408() {
        let slow = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from("{"))])
            .chain(futures_util::stream::pending());
        let (st, body) = call(
            Request::post("/x")
                .body(Body::from_stream(slow))
                .expect("req"),
        )
        .await;
        assert_eq!(st, StatusCode::REQUEST_TIMEOUT);
        assert!(body.contains(r#""code":"body_timeout""#), "{body}");
    }
}
