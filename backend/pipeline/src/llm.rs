//! OpenAI-compatible chat client (`POST {base_url}/chat/completions`): works with vLLM,
//! Ollama, llama.cpp server, OpenAI, DeepSeek….
//!
//! - Retries with exponential backoff on 429, 5xx, timeouts and connection errors
//!   (`Retry-After` honoured up to 30 s); other 4xx fail at once.
//! - A concurrency limit per model (default 64 requests in flight).
//! - An on-disk response cache keyed by xxh3-128 of (model, messages, temperature,
//!   max_tokens): reruns are reproducible and free. Only successful replies are cached.
//! - Token and latency accounting ([`Stats`]), shared by every model of a run.
//! - Replies longer than [`MAX_REPLY_CHARS`] are cut and flagged (endless text).
//!
//! Models are declared in a JSON file ([`ModelsFile`]); roles map to models, any role not
//! mapped runs the offline agent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

/// Longest reply kept; longer ones are truncated and flagged.
pub const MAX_REPLY_CHARS: usize = 32_000;

/// The roles a model can play. Every role not mapped in the models file is played by the
/// offline agent (or offline proxy judge).
pub const ROLES: &[&str] = &[
    "retrieval",
    "relations",
    "nodes",
    "continue",
    "summary",
    "judge",
];

fn default_temperature() -> f32 {
    0.0
}
fn default_max_tokens() -> u32 {
    1024
}
fn default_timeout() -> f64 {
    120.0
}
fn default_retries() -> u32 {
    4
}
fn default_backoff() -> u64 {
    500
}
fn default_concurrency() -> usize {
    64
}

/// One model endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Label used in roles, tables and traces.
    pub name: String,
    /// e.g. `http://127.0.0.1:8000/v1` (the `/chat/completions` suffix is added).
    pub base_url: String,
    /// The model name the server expects.
    pub model: String,
    /// Name of the environment variable holding the key (never the key itself in files).
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default = "default_temperature")]
    pub temperature: f32,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// First backoff delay; doubles per retry.
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    /// Requests in flight at most.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Model size in billions of parameters, when known (the model-scale analysis, Fig. 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_b: Option<f64>,
}

/// The models file: `{"models": [ModelSpec…], "roles": {"retrieval": "name", …},
/// "cache_dir": "…"}`. A role may also be `"offline"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelsFile {
    #[serde(default)]
    pub models: Vec<ModelSpec>,
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
    /// Response cache; default `$SERENQA_CACHE/llm` (see `serenqa_graph::datadir`).
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// The benchmark builder's LLM ensemble (`serenqa bench build --models`): model names;
    /// empty = every declared model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ensemble: Vec<String>,
}

impl ModelsFile {
    pub fn load(path: &Path) -> Result<ModelsFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading models file {}: {e}", path.display()))?;
        let f: ModelsFile = serde_json::from_str(&text)
            .map_err(|e| format!("models file {}: {e}", path.display()))?;
        f.validate()?;
        Ok(f)
    }

    /// No model needed: every role offline.
    pub fn offline() -> ModelsFile {
        ModelsFile::default()
    }

    pub fn validate(&self) -> Result<(), String> {
        let mut names = std::collections::BTreeSet::new();
        for m in &self.models {
            if m.name.trim().is_empty() || m.name == "offline" {
                return Err(format!("model name {:?} is reserved or empty", m.name));
            }
            if !names.insert(m.name.as_str()) {
                return Err(format!("model {:?} declared twice", m.name));
            }
            if !(m.base_url.starts_with("http://") || m.base_url.starts_with("https://")) {
                return Err(format!(
                    "model {:?}: base_url must start with http:// or https://",
                    m.name
                ));
            }
            if m.params_b.is_some_and(|p| !p.is_finite() || p <= 0.0) {
                return Err(format!(
                    "model {:?}: params_b must be a positive number of billions",
                    m.name
                ));
            }
            if m.concurrency == 0 {
                return Err(format!(
                    "model {:?}: concurrency must be at least 1",
                    m.name
                ));
            }
            if m.timeout_secs.is_nan() || m.timeout_secs <= 0.0 {
                return Err(format!("model {:?}: timeout_secs must be positive", m.name));
            }
        }
        for (role, model) in &self.roles {
            if !ROLES.contains(&role.as_str()) && role != "default" {
                return Err(format!(
                    "unknown role {role:?} (roles: {}, default)",
                    ROLES.join(", ")
                ));
            }
            if model != "offline" && !names.contains(model.as_str()) {
                return Err(format!("role {role:?} names undeclared model {model:?}"));
            }
        }
        for m in &self.ensemble {
            if !names.contains(m.as_str()) {
                return Err(format!("the ensemble names undeclared model {m:?}"));
            }
        }
        Ok(())
    }

    /// The model playing `role`: the role's mapping, else `default`, else offline (`None`).
    pub fn model_for(&self, role: &str) -> Option<&ModelSpec> {
        let name = self.roles.get(role).or_else(|| self.roles.get("default"))?;
        self.models.iter().find(|m| &m.name == name)
    }

    /// Hash of what decides the replies of this file's models: per model (sorted by name) its
    /// name, base URL (without a trailing `/`), model id, temperature and `max_tokens`, and
    /// the role mapping. Not API keys or their variable names, not timeouts, retries or
    /// concurrency (each machine's own business). A queue run's spec carries this hash, and a
    /// worker whose own models file hashes differently refuses the run.
    pub fn config_hash(&self) -> String {
        let mut models: Vec<serde_json::Value> = self
            .models
            .iter()
            .map(|m| {
                serde_json::json!([
                    m.name,
                    m.base_url.trim_end_matches('/'),
                    m.model,
                    m.temperature,
                    m.max_tokens
                ])
            })
            .collect();
        models.sort_by(|a, b| a[0].as_str().cmp(&b[0].as_str()));
        let canonical = serde_json::json!({"models": models, "roles": self.roles}).to_string();
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(canonical.as_bytes()))
    }

    /// The same models with every role pointing at `name` (for `serenqa ask --model`).
    pub fn all_roles(&self, name: &str) -> Result<ModelsFile, String> {
        if name != "offline" && !self.models.iter().any(|m| m.name == name) {
            return Err(format!("unknown model {name:?}"));
        }
        let mut f = self.clone();
        f.roles = BTreeMap::from([("default".to_string(), name.to_string())]);
        Ok(f)
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

/// The on-disk cache: one JSON file per request under `dir/xx/…`.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct CacheEntry {
    model: String,
    reply: String,
    prompt_tokens: u64,
    completion_tokens: u64,
    truncated: bool,
}

impl Cache {
    pub fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    /// The cache key of a request: what the server sees, minus the endpoint and key.
    pub fn key(spec: &ModelSpec, messages: &[Message]) -> String {
        let canon = serde_json::json!({
            "model": spec.model,
            "messages": messages,
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
        });
        format!(
            "{:032x}",
            xxhash_rust::xxh3::xxh3_128(canon.to_string().as_bytes())
        )
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    fn get(&self, key: &str) -> Option<CacheEntry> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn put(&self, key: &str, e: &CacheEntry) {
        let p = self.path(key);
        // A cache write failure only costs a repeat call later, so it is not an error.
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        if let Ok(text) = serde_json::to_string(e) {
            if std::fs::write(&tmp, text).is_ok() {
                let _ = std::fs::rename(&tmp, &p);
            }
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

fn install_crypto() {
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
                    let _ = UNAVAILABLE.try_with(|n| n.fetch_add(1, Ordering::Relaxed));
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
                        message: one_line(&e),
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

fn one_line(e: &dyn std::error::Error) -> String {
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

/// A model chosen for one role, or the offline agent.
#[derive(Clone)]
pub struct RoleModel {
    pub client: Arc<LlmClient>,
    pub name: String,
}

/// Which model plays each role.
#[derive(Clone, Default)]
pub struct Roles {
    pub retrieval: Option<RoleModel>,
    pub relations: Option<RoleModel>,
    pub nodes: Option<RoleModel>,
    pub cont: Option<RoleModel>,
    pub summary: Option<RoleModel>,
    pub judge: Option<RoleModel>,
}

impl Roles {
    pub fn offline() -> Roles {
        Roles::default()
    }

    pub fn from_file(file: &ModelsFile, client: Option<Arc<LlmClient>>) -> Roles {
        let pick = |role: &str| -> Option<RoleModel> {
            let spec = file.model_for(role)?;
            Some(RoleModel {
                client: client.clone()?,
                name: spec.name.clone(),
            })
        };
        Roles {
            retrieval: pick("retrieval"),
            relations: pick("relations"),
            nodes: pick("nodes"),
            cont: pick("continue"),
            summary: pick("summary"),
            judge: pick("judge"),
        }
    }

    /// `role → model name or "offline"`, for manifests and tables.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let l = |r: &Option<RoleModel>| {
            r.as_ref()
                .map(|m| m.name.clone())
                .unwrap_or_else(|| "offline".into())
        };
        BTreeMap::from([
            ("retrieval".to_string(), l(&self.retrieval)),
            ("relations".to_string(), l(&self.relations)),
            ("nodes".to_string(), l(&self.nodes)),
            ("continue".to_string(), l(&self.cont)),
            ("summary".to_string(), l(&self.summary)),
            ("judge".to_string(), l(&self.judge)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_models_file_is_valid() {
        let f: ModelsFile = serde_json::from_str(include_str!("../models.example.json")).unwrap();
        f.validate().unwrap();
        assert_eq!(
            f.model_for("retrieval").map(|m| m.name.as_str()),
            Some("deepseek-v3")
        );
        assert_eq!(f.model_for("nodes").map(|m| m.concurrency), Some(64));
    }

    #[test]
    fn cache_key_covers_model_messages_and_parameters() {
        let s = ModelSpec {
            name: "a".into(),
            base_url: "http://x".into(),
            model: "m".into(),
            api_key_env: None,
            temperature: 0.0,
            max_tokens: 10,
            timeout_secs: 1.0,
            max_retries: 0,
            backoff_ms: 1,
            concurrency: 1,
            params_b: None,
        };
        let m = vec![Message::user("hi")];
        let k = Cache::key(&s, &m);
        assert_eq!(k, Cache::key(&s, &m));
        let mut s2 = s.clone();
        s2.max_tokens = 11;
        assert_ne!(k, Cache::key(&s2, &m));
        let mut s3 = s.clone();
        s3.base_url = "http://elsewhere".into();
        assert_eq!(
            k,
            Cache::key(&s3, &m),
            "the endpoint is not part of the key"
        );
        assert_ne!(k, Cache::key(&s, &[Message::user("hi!")]));
    }
}
