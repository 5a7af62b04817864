//! [`LlmClient`]: the OpenAI-compatible [`ChatModel`] (`POST {base_url}/chat/completions`) —
//! retries with backoff, a concurrency limit per model, the response cache, accounting.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::cache::{Cache, CacheEntry};
use super::chat::{
    note_unavailable, BoxFuture, ChatModel, LlmError, Message, Reply, MAX_REPLY_CHARS,
};
use super::models::{ModelSpec, ModelsFile};

/// Accounting for a whole run.
#[derive(Debug, Default)]
pub struct Stats {
    pub calls: AtomicU64,
    pub cache_hits: AtomicU64,
    pub errors: AtomicU64,
    pub retries: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub completion_tokens: AtomicU64,
    /// Sum of latencies of network calls, microseconds.
    pub latency_us: AtomicU64,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
}

/// A run's LLM call statistics (defined with the run manifest that records them).
pub use serenqa_shared::api::StatsSnapshot;

impl Stats {
    pub fn snapshot(&self) -> StatsSnapshot {
        let calls = self.calls.load(Ordering::Relaxed);
        let hits = self.cache_hits.load(Ordering::Relaxed);
        let net = calls.saturating_sub(hits);
        StatsSnapshot {
            calls,
            cache_hits: hits,
            errors: self.errors.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
            mean_latency_ms: if net == 0 {
                0.0
            } else {
                self.latency_us.load(Ordering::Relaxed) as f64 / net as f64 / 1000.0
            },
            max_in_flight: self.max_in_flight.load(Ordering::Relaxed),
        }
    }
}

/// One model with its own concurrency limit.
pub struct Endpoint {
    pub spec: ModelSpec,
    key: Option<String>,
    sem: Semaphore,
}

/// The client for all models of a run.
pub struct LlmClient {
    http: reqwest::Client,
    endpoints: BTreeMap<String, Arc<Endpoint>>,
    cache: Option<Cache>,
    pub stats: Arc<Stats>,
}

pub(super) fn install_crypto() {
    // reqwest is built without a default provider (see Cargo.toml); a second install is a no-op.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl LlmClient {
    /// A client for the models of `file`; `cache` None disables the cache.
    pub fn new(file: &ModelsFile, cache: Option<PathBuf>) -> Result<LlmClient, String> {
        file.validate()?;
        install_crypto();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        let mut endpoints = BTreeMap::new();
        for m in &file.models {
            let key = match &m.api_key_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    format!("model {:?}: environment variable {var} is not set", m.name)
                })?),
                None => None,
            };
            endpoints.insert(
                m.name.clone(),
                Arc::new(Endpoint {
                    spec: m.clone(),
                    key,
                    sem: Semaphore::new(m.concurrency),
                }),
            );
        }
        Ok(LlmClient {
            http,
            endpoints,
            cache: cache.map(Cache::new),
            stats: Arc::new(Stats::default()),
        })
    }

    pub fn endpoint(&self, name: &str) -> Option<&Arc<Endpoint>> {
        self.endpoints.get(name)
    }

    /// One chat completion with retries, cache and accounting.
    pub async fn chat(&self, model: &str, messages: &[Message]) -> Result<Reply, LlmError> {
        let ep = self.endpoints.get(model).ok_or_else(|| LlmError::Connect {
            model: model.into(),
            message: "model not declared".into(),
        })?;
        let spec = &ep.spec;
        self.stats.calls.fetch_add(1, Ordering::Relaxed);
        let key = Cache::key(spec, messages);
        if let Some(c) = &self.cache {
            if let Some(e) = c.get(&key) {
                self.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
                return Ok(Reply {
                    text: e.reply,
                    cached: true,
                    prompt_tokens: e.prompt_tokens,
                    completion_tokens: e.completion_tokens,
                    latency_ms: 0.0,
                    attempts: 0,
                    truncated: e.truncated,
                });
            }
        }
        let _permit = ep.sem.acquire().await.map_err(|_| LlmError::Connect {
            model: model.into(),
            message: "client closed".into(),
        })?;
        let now = self.stats.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.stats.max_in_flight.fetch_max(now, Ordering::Relaxed);
        let started = Instant::now();
        let result = self.call_with_retries(ep, messages).await;
        self.stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        let latency = started.elapsed();
        self.stats
            .latency_us
            .fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
        match result {
            Ok(mut r) => {
                r.latency_ms = latency.as_secs_f64() * 1000.0;
                self.stats
                    .prompt_tokens
                    .fetch_add(r.prompt_tokens, Ordering::Relaxed);
                self.stats
                    .completion_tokens
                    .fetch_add(r.completion_tokens, Ordering::Relaxed);
                if let Some(c) = &self.cache {
                    c.put(
                        &key,
                        &CacheEntry {
                            model: spec.model.clone(),
                            reply: r.text.clone(),
                            prompt_tokens: r.prompt_tokens,
                            completion_tokens: r.completion_tokens,
                            truncated: r.truncated,
                        },
                    );
                }
                Ok(r)
            }
            Err(e) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                if e.is_unavailable() {
                    note_unavailable();
                }
                Err(e)
            }
        }
    }

    async fn call_with_retries(
        &self,
        ep: &Endpoint,
        messages: &[Message],
    ) -> Result<Reply, LlmError> {
        let spec = &ep.spec;
        let url = format!("{}/chat/completions", spec.base_url.trim_end_matches('/'));
        let body = serde_json::json!({
            "model": spec.model,
            "messages": messages,
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
            "stream": false,
        });
        let timeout = Duration::from_secs_f64(spec.timeout_secs);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut req = self.http.post(&url).timeout(timeout).json(&body);
            if let Some(k) = &ep.key {
                req = req.bearer_auth(k);
            }
            let (retryable, err, retry_after) = match req.send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 30.0)));
                    match resp.text().await {
                        Ok(text) if (200..300).contains(&status) => {
                            return parse_reply(&spec.name, &text, attempt)
                        }
                        Ok(text) => {
                            let body: String = text.chars().take(300).collect();
                            let e = LlmError::Status {
                                model: spec.name.clone(),
                                status,
                                body,
                            };
                            (status == 429 || status >= 500, e, retry_after)
                        }
                        Err(e) if e.is_timeout() => (
                            true,
                            LlmError::Timeout {
                                model: spec.name.clone(),
                                secs: spec.timeout_secs,
                                attempts: attempt,
                            },
                            None,
                        ),
                        Err(e) => (
                            true,
                            LlmError::Connect {
                                model: spec.name.clone(),
                                message: e.to_string(),
                            },
                            None,
                        ),
                    }
                }
                Err(e) if e.is_timeout() => (
                    true,
                    LlmError::Timeout {
                        model: spec.name.clone(),
                        secs: spec.timeout_secs,
                        attempts: attempt,
                    },
                    None,
                ),
                Err(e) => (
                    true,
                    LlmError::Connect {
                        model: spec.name.clone(),
                        message: error_chain(&e),
                    },
                    None,
                ),
            };
            if !retryable || attempt > spec.max_retries {
                return Err(err);
            }
            self.stats.retries.fetch_add(1, Ordering::Relaxed);
            let backoff =
                Duration::from_millis(spec.backoff_ms.saturating_mul(1 << (attempt - 1).min(10)));
            tokio::time::sleep(retry_after.unwrap_or(backoff)).await;
        }
    }
}

/// An error and its causes, joined by `: ` (what the client and `check` report).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// Parses an OpenAI chat-completions body.
pub fn parse_reply(model: &str, body: &str, attempts: u32) -> Result<Reply, LlmError> {
    let bad = |m: &str| LlmError::Malformed {
        model: model.into(),
        message: m.into(),
    };
    let v: serde_json::Value =
        serde_json::from_str(body).map_err(|e| bad(&format!("not JSON ({e})")))?;
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| bad("no choices"))?;
    let content = choice.get("message").and_then(|m| m.get("content"));
    let text = match content {
        Some(serde_json::Value::String(s)) => s.clone(),
        // Some servers send null content with a refusal or tool call: an empty answer.
        Some(serde_json::Value::Null) => String::new(),
        _ => return Err(bad("choice without message content")),
    };
    let finish_length = choice.get("finish_reason").and_then(|f| f.as_str()) == Some("length");
    let usage = v.get("usage");
    let tok = |k: &str| {
        usage
            .and_then(|u| u.get(k))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    let (text, cut) = if text.chars().count() > MAX_REPLY_CHARS {
        (text.chars().take(MAX_REPLY_CHARS).collect(), true)
    } else {
        (text, false)
    };
    Ok(Reply {
        text,
        cached: false,
        prompt_tokens: tok("prompt_tokens"),
        completion_tokens: tok("completion_tokens"),
        latency_ms: 0.0,
        attempts,
        truncated: cut || finish_length,
    })
}

impl ChatModel for LlmClient {
    fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    fn complete<'a>(
        &'a self,
        model: &'a str,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<Reply, LlmError>> {
        Box::pin(self.chat(model, messages))
    }
}
