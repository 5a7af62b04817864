//! The models file: the model endpoints ([`ModelSpec`]) and which plays each role.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::role::ROLES;

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

/// Longest `timeout_secs` a models file may set (a day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

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
            // Bounded too: a timeout becomes a `Duration`, which a huge number overflows.
            if !(m.timeout_secs > 0.0 && m.timeout_secs <= MAX_TIMEOUT_SECS) {
                return Err(format!(
                    "model {:?}: timeout_secs must be positive, at most {MAX_TIMEOUT_SECS}",
                    m.name
                ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_models_file_is_valid() {
        let f: ModelsFile =
            serde_json::from_str(include_str!("../../models.example.json")).unwrap();
        f.validate().unwrap();
        assert_eq!(
            f.model_for("retrieval").map(|m| m.name.as_str()),
            Some("deepseek-v3")
        );
        assert_eq!(f.model_for("nodes").map(|m| m.concurrency), Some(64));
    }

    #[test]
    fn server_example_files_are_valid_and_map_every_role() {
        for (name, text) in [
            ("vllm", include_str!("../../models.vllm.json")),
            ("ollama", include_str!("../../models.ollama.json")),
            ("llamacpp", include_str!("../../models.llamacpp.json")),
            ("hosted", include_str!("../../models.hosted.json")),
        ] {
            let f: ModelsFile = serde_json::from_str(text).unwrap();
            f.validate().unwrap();
            for role in ROLES {
                assert!(f.model_for(role).is_some(), "{name}: {role} unmapped");
            }
        }
    }
}
