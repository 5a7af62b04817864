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
//!
//! # Layout
//! - `chat` — the [`ChatModel`] trait (one chat completion → [`Reply`] or [`LlmError`]), the
//!   messages, replies and errors, and outage counting ([`track_unavailable`]).
//! - `client` — [`LlmClient`], the OpenAI-compatible [`ChatModel`]: retries, concurrency
//!   limits, accounting ([`Stats`]); `cache` — its on-disk response cache.
//! - `models` — the models file ([`ModelsFile`], [`ModelSpec`]); `role` — the agent roles
//!   ([`Role`], [`ROLES`]); `roles` — which model plays each role ([`Roles`], [`RoleModel`]).
//! - `check` — whether a models file's endpoints can serve its roles ([`check`]: the model
//!   listing and one tiny call per role; `serenqa models check`).
//!
//! To add a provider that is not OpenAI-compatible: implement [`ChatModel`] for its client
//! and put it in a [`RoleModel`]; every agent takes its model as `Arc<dyn ChatModel>`.

mod cache;
mod chat;
mod check;
mod client;
mod connect;
mod models;
mod role;
mod roles;

pub use cache::Cache;
pub use chat::{
    track_unavailable, BoxFuture, ChatModel, LlmError, Message, Reply, MAX_REPLY_CHARS,
};
pub use check::{
    check, CheckError, CheckOptions, CheckReport, ErrorKind, Listing, ModelCheck, RoleCheck,
    RoleStatus, CHECK_MAX_TOKENS, DEFAULT_CHECK_TIMEOUT_SECS,
};
pub use client::{parse_reply, Endpoint, LlmClient, Stats, StatsSnapshot};
pub use connect::connect;
pub use models::{ModelSpec, ModelsFile, MAX_TIMEOUT_SECS};
pub use role::{Role, ROLES};
pub use roles::{CallTrace, RoleModel, Roles};
