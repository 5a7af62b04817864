//! Large replies as a budget like the others.
//!
//! A reply is serialised before it is sent, and it stays in memory until the client has read
//! it: a tiny query can make a huge reply (a control character escapes to six bytes), and a
//! client that reads slowly holds that memory after the query's concurrency slot is free. So:
//!
//! - **size**: a reply is serialised into at most [`MAX_REPLY_BYTES`] (escape growth counted,
//!   since it is the serialised bytes that count); past it the request is refused before
//!   anything more is built;
//! - **held**: the bytes of every reply not yet sent count against one process-wide cap,
//!   [`MAX_HELD_BYTES`]; a reply that would pass it is refused `503 busy` with `Retry-After`;
//! - **deadline**: a reply not read within [`SEND_DEADLINE`] is dropped (its memory freed,
//!   the connection closed at the next write), so a stalled reader cannot hold it.
//!
//! The held bytes are released when the body has been sent, when the client goes away (the
//! body is dropped), or at the deadline, whichever comes first.
//!
//! **One home**: every endpoint whose reply can be large answers through [`json`] (serialise
//! off the async workers under the size limit, then [`held`]) or, for a body it builds itself
//! (the review CSV), [`held`] after [`check_size`]: Cypher (its own `cypher_budget` code),
//! paths, Discover, predictions and their explanation subgraph, the RNS endpoints, runs,
//! questions, traces, the run comparison and the review exports. Past the size limit they
//! answer `400 reply_too_large` with what to ask for instead.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::error::HttpError;

/// Largest serialised reply of an endpoint that can return large bodies, by default
/// (`serve --max-reply-bytes`; [`set_max_reply_bytes`]).
pub const MAX_REPLY_BYTES: usize = 16 << 20;

/// The limit in force in this process (set once at start; tests lower it).
static MAX_REPLY: AtomicUsize = AtomicUsize::new(MAX_REPLY_BYTES);

/// Sets the largest serialised reply of this process (`serve --max-reply-bytes`).
pub fn set_max_reply_bytes(n: usize) {
    MAX_REPLY.store(n.max(1), Ordering::Relaxed);
}

/// The largest serialised reply in force.
pub fn max_reply_bytes() -> usize {
    MAX_REPLY.load(Ordering::Relaxed)
}
/// Most bytes of replies built and not yet sent, over all connections.
pub const MAX_HELD_BYTES: usize = 256 << 20;
/// A reply not read by then is dropped.
pub const SEND_DEADLINE: Duration = Duration::from_secs(60);
/// Bytes handed to the connection at a time.
const CHUNK: usize = 64 << 10;

/// Bytes of replies held right now (this process).
static HELD: AtomicUsize = AtomicUsize::new(0);

/// The reply would be larger than the limit.
#[derive(Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub limit: usize,
}

/// A serialised reply in chunks of at most [`CHUNK`] bytes: no buffer doubled past what is
/// needed and no copy when it grows, and each chunk is freed as soon as it is sent.
#[derive(Debug, Default)]
pub struct Chunked {
    chunks: Vec<Bytes>,
    len: usize,
}

impl Chunked {
    /// Bytes in all.
    pub fn len(&self) -> usize {
        self.len
    }
    /// The bytes in one piece (tests).
    #[cfg(test)]
    pub fn to_vec(&self) -> Vec<u8> {
        self.chunks.concat()
    }
}

impl From<Vec<u8>> for Chunked {
    fn from(v: Vec<u8>) -> Chunked {
        let len = v.len();
        Chunked {
            chunks: vec![Bytes::from(v)],
            len,
        }
    }
}

/// A writer into chunks that refuses to grow past `limit` bytes.
struct Limited {
    done: Chunked,
    cur: Vec<u8>,
    limit: usize,
}

impl io::Write for Limited {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.done.len + b.len() > self.limit {
            return Err(io::Error::other("reply size limit"));
        }
        self.done.len += b.len();
        let mut rest = b;
        while !rest.is_empty() {
            if self.cur.len() == CHUNK {
                let full = std::mem::replace(&mut self.cur, Vec::with_capacity(CHUNK));
                self.done.chunks.push(Bytes::from(full));
            }
            let n = (CHUNK - self.cur.len()).min(rest.len());
            self.cur.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `value` as JSON, or [`TooLarge`] as soon as the bytes written pass `limit` (the rest is
/// never built).
pub fn to_json_bounded<T: Serialize>(value: &T, limit: usize) -> Result<Chunked, TooLarge> {
    let mut w = Limited {
        done: Chunked::default(),
        cur: Vec::new(),
        limit,
    };
    match serde_json::to_writer(&mut w, value) {
        Ok(()) => {
            let mut out = w.done;
            if !w.cur.is_empty() {
                out.chunks.push(Bytes::from(w.cur));
            }
            Ok(out)
        }
        // Serialising a `serde_json::Value` or a derived type fails only on the limit.
        Err(_) => Err(TooLarge { limit }),
    }
}

/// Marks a response whose body is a held reply: already built, so the admission slot that
/// computed it is given back when the handler answers (the held-bytes cap and the read
/// deadline meter a slow reader from then on, not the class's slots).
#[derive(Clone, Copy, Debug)]
pub struct HeldReply;

/// Takes `n` bytes of `counter` if that keeps it at most `cap`.
fn reserve(counter: &AtomicUsize, n: usize, cap: usize) -> bool {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            held.checked_add(n).filter(|&t| t <= cap)
        })
        .is_ok()
}

/// A reply's chunks while they are held: each chunk's bytes are released when it is handed
/// to the connection, and the rest at once when the body is dropped or at the deadline.
struct Held {
    state: Mutex<HeldState>,
    counter: &'static AtomicUsize,
    /// The deadline's timer, stopped once the bytes are released.
    timer: Mutex<Option<tokio::task::AbortHandle>>,
}

struct HeldState {
    chunks: std::collections::VecDeque<Bytes>,
    /// Bytes of `chunks` still counted.
    held: usize,
    /// Dropped at the deadline before it was sent whole.
    late: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Held {
    /// Releases everything still held; `late` when the deadline did it.
    fn release(&self, late: bool) {
        {
            let mut st = lock(&self.state);
            if st.held > 0 || !st.chunks.is_empty() {
                self.counter.fetch_sub(st.held, Ordering::AcqRel);
                st.held = 0;
                st.chunks.clear();
                st.late = late;
            }
        }
        if let Some(t) = lock(&self.timer).take() {
            t.abort();
        }
    }

    /// The next chunk to send (its bytes released), the end, or the deadline's error.
    fn next(&self) -> Option<Result<Bytes, io::Error>> {
        let mut st = lock(&self.state);
        if st.late {
            st.late = false;
            return Some(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the reply was not read in time",
            )));
        }
        let chunk = st.chunks.pop_front();
        if let Some(c) = &chunk {
            st.held -= c.len();
            self.counter.fetch_sub(c.len(), Ordering::AcqRel);
        }
        let done = st.chunks.is_empty();
        drop(st);
        if done {
            if let Some(t) = lock(&self.timer).take() {
                t.abort();
            }
        }
        chunk.map(Ok)
    }
}

/// The body: the held chunks in order; an error (closing the connection) once they were
/// dropped at the deadline.
struct HeldBody {
    held: Arc<Held>,
}

impl futures_util::Stream for HeldBody {
    type Item = Result<Bytes, io::Error>;
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.held.next())
    }
}

impl Drop for HeldBody {
    fn drop(&mut self) {
        self.held.release(false);
    }
}

/// A `200 application/json` reply of `bytes`, counted against the held-bytes cap until sent,
/// or `503 busy` (with `Retry-After`) when the cap is reached.
pub fn held_json(bytes: impl Into<Chunked>) -> Response {
    held(bytes, "application/json")
}

/// A `200` reply of `bytes` as `content_type`, counted against the held-bytes cap until sent
/// and dropped at the read deadline, or `503 busy` (with `Retry-After`) when the cap is
/// reached.
pub fn held(bytes: impl Into<Chunked>, content_type: &'static str) -> Response {
    held_in(
        &HELD,
        MAX_HELD_BYTES,
        SEND_DEADLINE,
        bytes.into(),
        content_type,
    )
}

/// `value` serialised (on a blocking thread) under [`max_reply_bytes`] and sent [`held`];
/// a reply past the limit is refused `400 reply_too_large`, its message ending in `hint`
/// (what to ask for instead).
pub async fn json<T: Serialize + Send + 'static>(
    value: T,
    hint: &'static str,
) -> Result<Response, HttpError> {
    let limit = max_reply_bytes();
    let bytes = tokio::task::spawn_blocking(move || to_json_bounded(&value, limit))
        .await
        .map_err(|e| HttpError::internal(format!("reply task failed: {e}")))?
        .map_err(|too| too_large(too.limit, hint))?;
    Ok(held_json(bytes))
}

/// A body built whole by its handler (a CSV) checked against [`max_reply_bytes`].
pub fn check_size(bytes: Vec<u8>, hint: &'static str) -> Result<Vec<u8>, HttpError> {
    let limit = max_reply_bytes();
    if bytes.len() > limit {
        return Err(too_large(limit, hint));
    }
    Ok(bytes)
}

fn too_large(limit: usize, hint: &str) -> HttpError {
    HttpError::bad_request(
        "reply_too_large",
        format!("the reply would be more than {}; {hint}", size(limit)),
    )
}

/// `n` bytes as people read it: MiB when whole, else bytes.
pub fn size(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

fn held_in(
    counter: &'static AtomicUsize,
    cap: usize,
    deadline: Duration,
    bytes: Chunked,
    content_type: &'static str,
) -> Response {
    let n = bytes.len();
    if !reserve(counter, n, cap) {
        let mut r = super::error::HttpError::unavailable(
            "busy",
            "the server is holding too many large replies for slow readers; try again shortly",
        )
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return r;
    }
    let held = Arc::new(Held {
        state: Mutex::new(HeldState {
            chunks: bytes.chunks.into(),
            held: n,
            late: false,
        }),
        counter,
        timer: Mutex::new(None),
    });
    // Without a runtime (never in the server) the deadline is not armed; the body still
    // releases when sent or dropped.
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        let weak = Arc::downgrade(&held);
        let task = rt.spawn(async move {
            tokio::time::sleep(deadline).await;
            if let Some(h) = weak.upgrade() {
                h.release(true);
            }
        });
        *lock(&held.timer) = Some(task.abort_handle());
    }
    let mut r = (StatusCode::OK, Body::from_stream(HeldBody { held })).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(n));
    r.extensions_mut().insert(HeldReply);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn escape_growth_counts_against_the_limit() {
        // 1,000 control characters are 6,000 bytes of JSON.
        let v = serde_json::json!({ "s": "\u{1}".repeat(1000) });
        assert_eq!(
            to_json_bounded(&v, 5000).err(),
            Some(TooLarge { limit: 5000 })
        );
        let ok = to_json_bounded(&v, 7000).unwrap().to_vec();
        assert_eq!(ok.len(), 6000 + r#"{"s":""}"#.len());
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&ok).unwrap(), v);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn json_refuses_a_reply_past_the_limit_with_a_hint() {
        let big = vec!["x".repeat(1 << 10); (MAX_REPLY_BYTES >> 10) + 1];
        let e = json(big, "ask for less").await.err().unwrap();
        assert_eq!(
            (e.status, e.code),
            (StatusCode::BAD_REQUEST, "reply_too_large")
        );
        assert!(e.message.ends_with("16 MiB; ask for less"), "{}", e.message);
        let ok = json(vec![1, 2, 3], "ask for less").await.unwrap();
        assert_eq!(ok.headers()[header::CONTENT_LENGTH], "7");
        let body = ok.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"[1,2,3]");
        assert!(check_size(vec![0; 10], "x").is_ok());
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(size(300), "300 bytes");
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn held_bytes_are_capped_and_released_when_sent_dropped_or_late() {
        static C: AtomicUsize = AtomicUsize::new(0);
        let long = Duration::from_secs(3600);
        // Sent in full: the bytes come back whole and the budget is free again.
        let r = held_in(&C, 100, long, vec![b'x'; 80].into(), "application/json");
        assert_eq!(C.load(Ordering::Acquire), 80);
        // A second one does not fit beside it.
        let busy = held_in(&C, 100, long, vec![b'y'; 30].into(), "application/json");
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(busy.headers().contains_key(header::RETRY_AFTER));
        assert_eq!(C.load(Ordering::Acquire), 80);
        let body = r.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body.len(), 80);
        assert_eq!(C.load(Ordering::Acquire), 0);
        // Dropped unsent (the client went away): released.
        let r = held_in(&C, 100, long, vec![b'z'; 90].into(), "application/json");
        assert_eq!(C.load(Ordering::Acquire), 90);
        drop(r);
        assert_eq!(C.load(Ordering::Acquire), 0);
        // Not read by the deadline: released, and the body ends in an error.
        let r = held_in(
            &C,
            100,
            Duration::from_secs(60),
            vec![b'w'; 90].into(),
            "text/csv",
        );
        tokio::time::sleep(Duration::from_secs(61)).await;
        assert_eq!(C.load(Ordering::Acquire), 0);
        assert!(r.into_body().collect().await.is_err());
    }

    /// A large reply is kept in chunks of at most 64 KiB, each released as it is sent: a
    /// reader half-way through holds only the other half.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn chunks_are_released_as_they_are_sent() {
        static C: AtomicUsize = AtomicUsize::new(0);
        let v = vec!["y".repeat(1000); 300];
        let json = to_json_bounded(&v, 1 << 20).unwrap();
        let n = json.len();
        assert_eq!(n, serde_json::to_vec(&v).unwrap().len());
        assert!(json.chunks.iter().all(|c| c.len() <= CHUNK));
        assert_eq!(json.chunks.len(), n.div_ceil(CHUNK));
        let r = held_in(
            &C,
            1 << 20,
            Duration::from_secs(60),
            json,
            "application/json",
        );
        assert_eq!(C.load(Ordering::Acquire), n);
        let mut body = r.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first.len(), CHUNK);
        assert_eq!(C.load(Ordering::Acquire), n - CHUNK);
        drop(body);
        assert_eq!(C.load(Ordering::Acquire), 0);
    }
}
