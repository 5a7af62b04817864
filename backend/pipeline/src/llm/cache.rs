//! The response cache of [`super::LlmClient`]: one JSON file per request under `dir/xx/…`,
//! keyed by xxh3-128 of what the server sees (model, messages, temperature, max_tokens).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::chat::Message;
use super::models::ModelSpec;

/// The on-disk cache: one JSON file per request under `dir/xx/…`.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
pub(super) struct CacheEntry {
    pub(super) model: String,
    pub(super) reply: String,
    pub(super) prompt_tokens: u64,
    pub(super) completion_tokens: u64,
    pub(super) truncated: bool,
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

    pub(super) fn get(&self, key: &str) -> Option<CacheEntry> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(super) fn put(&self, key: &str, e: &CacheEntry) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
