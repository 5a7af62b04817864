//! What every model client speaks: [`ChatModel`] (one chat completion request → the reply
//! text with its usage, or a typed [`LlmError`]), and the messages, replies and errors it
//! exchanges. [`super::LlmClient`] is the OpenAI-compatible implementation; another provider is
//! one more `impl ChatModel`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A boxed, sendable future (what trait methods that call models return, so the traits stay
/// usable as `dyn` objects).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Longest reply kept; longer ones are truncated and flagged.
pub const MAX_REPLY_CHARS: usize = 32_000;

/// A chat model: one completion of `messages` by the model declared as `model` (its name in
/// the models file). Implementations retry, cache and account as they see fit; the reply's
/// `latency_ms`, `cached` and `truncated` go into traces.
pub trait ChatModel: Send + Sync {
    fn complete<'a>(
        &'a self,
        model: &'a str,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<Reply, LlmError>>;

    /// Calls, cache hits, tokens and latency so far (recorded in a run's manifest); a client
    /// that does not count reports zeros.
    fn stats(&self) -> serenqa_shared::api::StatsSnapshot {
        serenqa_shared::api::StatsSnapshot::default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn system(s: impl Into<String>) -> Self {
        Message {
            role: "system".into(),
            content: s.into(),
        }
    }
    pub fn user(s: impl Into<String>) -> Self {
        Message {
            role: "user".into(),
            content: s.into(),
        }
    }
}

/// A completed call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub text: String,
    pub cached: bool,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency_ms: f64,
    pub attempts: u32,
    /// Cut at [`MAX_REPLY_CHARS`] or stopped by `max_tokens`.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum LlmError {
    #[error("HTTP {status} from {model}: {body}")]
    Status {
        model: String,
        status: u16,
        body: String,
    },
    #[error("{model}: timed out after {secs:.1}s ({attempts} attempts)")]
    Timeout {
        model: String,
        secs: f64,
        attempts: u32,
    },
    #[error("{model}: connection failed: {message}")]
    Connect { model: String, message: String },
    #[error("{model}: malformed reply: {message}")]
    Malformed { model: String, message: String },
}

impl LlmError {
    /// The error's kind as runs record it (a failed item's `error_kind`): `connect`,
    /// `timeout`, `http` or `malformed`.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Connect { .. } => "connect",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Status { .. } => "http",
            LlmError::Malformed { .. } => "malformed",
        }
    }

    /// The endpoint could not serve the request after the client's retries (connection
    /// failure, timeout, 429 or 5xx): an infrastructure problem, not an answer of the model.
    pub fn is_unavailable(&self) -> bool {
        match self {
            LlmError::Connect { .. } | LlmError::Timeout { .. } => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            LlmError::Malformed { .. } => false,
        }
    }
}

tokio::task_local! {
    static UNAVAILABLE: Arc<AtomicUsize>;
}

/// Counts one call that failed with [`LlmError::is_unavailable`] for the enclosing
/// [`track_unavailable`] (if any).
pub(crate) fn note_unavailable() {
    let _ = UNAVAILABLE.try_with(|n| n.fetch_add(1, Ordering::Relaxed));
}

/// Runs `f` and counts the calls inside it (on this task) that failed with
/// [`LlmError::is_unavailable`]. The traces record such failures as empty replies, as the
/// paper scores them; a queue worker uses the count to retry the item later instead of
/// storing a result degraded by an outage.
pub async fn track_unavailable<F: std::future::Future>(f: F) -> (F::Output, usize) {
    let n = Arc::new(AtomicUsize::new(0));
    let out = UNAVAILABLE.scope(n.clone(), f).await;
    let count = n.load(Ordering::Relaxed);
    (out, count)
}
