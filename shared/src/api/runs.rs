//! Replies about the evaluation runs directory (`GET /api/runs`, `GET /api/runs/{id}/questions`,
//! `GET /api/runs/{id}/questions/{qid}`) and what they carry: a run's manifest
//! ([`Manifest`], the `manifest.json` of a run, written by `serenqa eval`), its settings and
//! aggregate tables. The server builds them (`serenqa_pipeline::runs_dir`); the browser reads
//! them. The top-level fields are in the JSON keys' alphabetical order, the order the server's
//! untyped objects had.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::results::{Aggregate, RunSettings};

/// `GET /api/runs`: every run in the runs directory, newest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunsReply {
    pub runs: Vec<RunEntry>,
    /// The runs directory's name (never a full server path).
    #[serde(default)]
    pub runs_dir: String,
}

/// One run of [`RunsReply`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunEntry {
    /// Aggregate tables (`aggregate.json`); None while the run is not finished.
    #[serde(default)]
    pub aggregate: Option<Aggregate>,
    /// The run id (its directory's name).
    pub id: String,
    pub manifest: Manifest,
    /// The run's settings as the leaderboard labels it ([`Manifest::settings`], `id` = the
    /// directory's name).
    pub settings: RunSettings,
}

/// `GET /api/runs/{id}/questions`: one question of a run (by qid).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunQuestion {
    #[serde(default)]
    pub pattern: String,
    pub qid: u32,
    #[serde(default)]
    pub question: String,
}

/// `GET /api/runs/{id}/questions/{qid}`: one question's raw trace lines in a run, as stored
/// (`t1.jsonl` and `t3.jsonl` records; their fields are documented in `serenqa_pipeline`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuestionLines {
    pub qid: u32,
    pub run_id: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub t1: Vec<serde_json::Value>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub t3: Vec<serde_json::Value>,
}

/// A run's `manifest.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct Manifest {
    pub format: String,
    pub run_id: String,
    /// Short name for leaderboards: the retrieval/explorer model names or `offline`.
    pub label: String,
    pub status: String,
    pub created_unix: u64,
    pub updated_unix: u64,
    pub dataset: DatasetInfo,
    pub models_file: String,
    /// Declared models (no keys).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub models: Vec<serde_json::Value>,
    pub roles: BTreeMap<String, String>,
    pub prompts_hash: String,
    pub code_version: String,
    pub tasks: Vec<String>,
    pub partitions: Vec<String>,
    pub split: Option<String>,
    pub limit: Option<usize>,
    pub explore: ExploreConfig,
    /// Where T3 read edges: `memory` or the Redis edge store's URL.
    pub edge_source: String,
    /// Who scored the benchmark's `llm` partition (`llm`, `offline proxy`, `mixed`, `unknown`).
    pub ensemble: String,
    pub seeds: BTreeMap<String, u64>,
    pub items: BTreeMap<String, usize>,
    /// LLM call statistics summed over every invocation of the run (a resume adds to them).
    pub llm: StatsSnapshot,
    /// Work items whose model calls failed (connection refused, timeout, HTTP error,
    /// malformed reply) and have no result yet: not scored; `status` is then `incomplete`, and
    /// running `serenqa eval` again on the run retries exactly these. Details in the run's
    /// `failed.jsonl`.
    pub failed: usize,
    /// `failed` by error kind (`connect`, `timeout`, `http`, `malformed`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by_kind: BTreeMap<String, usize>,
    /// Wall seconds of the last invocation.
    pub seconds: f64,
    pub notes: Vec<String>,
    /// Set when the items ran on queue workers (`serenqa eval --queue`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueInfo>,
}

/// The host (and port) of an endpoint URL: no scheme, user, path or query — what a client may
/// see of where a model runs (`https://user:key@api.x.com/v1?k=1` → `api.x.com`).
pub fn endpoint_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    host.to_string()
}

/// `text` with every `http://…` or `https://…` replaced by its host ([`endpoint_host`];
/// `(no host)` when there is none), and any `sk-…` word (an API key an error body may echo)
/// by `[key]`: what a client may see of an error from a model endpoint.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let at = [rest.find("http://"), rest.find("https://")]
            .into_iter()
            .flatten()
            .min();
        let Some(at) = at else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || "()[]<>\"'`,;".contains(c))
            .unwrap_or(tail.len());
        let host = endpoint_host(tail[..end].trim());
        out.push_str(if host.is_empty() { "(no host)" } else { &host });
        rest = &tail[end..];
    }
    redact_key_words(&out)
}

/// `text` with any `sk-…` word (an API key an error body may echo, even masked) reduced to
/// `[key]`.
pub fn redact_key_words(text: &str) -> String {
    text.split(' ')
        .map(|w| {
            if w.trim_start_matches(|c: char| !c.is_alphanumeric())
                .starts_with("sk-")
            {
                "[key]"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Manifest {
    /// The manifest as an anonymous client may see it: each model's `base_url` reduced to its
    /// host (`endpoint_host`), and the benchmark's directory and the models file to their names.
    pub fn for_clients(mut self) -> Manifest {
        for m in &mut self.models {
            if let Some(obj) = m.as_object_mut() {
                if let Some(url) = obj.remove("base_url") {
                    let host = url.as_str().map(endpoint_host).unwrap_or_default();
                    obj.insert("endpoint_host".into(), serde_json::Value::String(host));
                }
            }
        }
        let name = |p: &str| {
            std::path::Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        self.dataset.dir = name(&self.dataset.dir);
        self.models_file = name(&self.models_file);
        self
    }

    /// The run's settings as the leaderboard labels it.
    pub fn settings(&self) -> RunSettings {
        RunSettings {
            id: self.run_id.clone(),
            label: self.label.clone(),
            roles: self.roles.clone(),
            beam: self.explore.beam_width,
            depth: self.explore.depth,
            relations: self.explore.relations_per_node,
            nodes: self.explore.nodes_per_node,
            limit: self.limit,
            split: self.split.clone(),
            questions: self.dataset.questions,
            ensemble: self.ensemble.clone(),
            explorer_params_b: self
                .roles
                .get("nodes")
                .and_then(|name| {
                    self.models
                        .iter()
                        .find(|m| m["name"].as_str() == Some(name.as_str()))
                })
                .and_then(|m| m["params_b"].as_f64()),
            created_unix: self.created_unix,
            status: self.status.clone(),
        }
    }
}

/// The benchmark a run evaluated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DatasetInfo {
    pub dir: String,
    pub hash: String,
    pub graph_hash: String,
    pub questions: usize,
}

/// How a distributed run was executed (see `serenqa_pipeline::queue`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct QueueInfo {
    /// The Redis URL without credentials.
    pub redis: String,
    /// Workers that completed items of this run.
    pub workers: Vec<String>,
}

/// Exploration settings (Algorithm 3 and D.3): what `serenqa_pipeline::explore` runs with
/// and what a run's manifest records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExploreConfig {
    /// n: nodes kept per level (beam width).
    pub beam_width: usize,
    /// h: levels at most.
    pub depth: usize,
    /// m: relation types per frontier node.
    pub relations_per_node: usize,
    /// k: candidate edges per frontier node after scoring.
    pub nodes_per_node: usize,
    /// Feed level descriptions to later prompts ("with summary").
    pub use_summaries: bool,
    /// Score edges that have no confidence with the graph score
    /// (`serenqa_pipeline::explore::graph_score`). Off by default, as in the paper's D.3: a
    /// frontier node none of whose edges has a confidence (all of Hetionet) keeps a uniform
    /// seeded sample of k edges.
    pub graph_score: bool,
    pub seed: u64,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            beam_width: 30,
            depth: 3,
            relations_per_node: 3,
            nodes_per_node: 10,
            use_summaries: true,
            graph_score: false,
            seed: 7,
        }
    }
}

/// LLM call statistics of a run (`serenqa_pipeline::llm::Stats::snapshot`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatsSnapshot {
    pub calls: u64,
    pub cache_hits: u64,
    pub errors: u64,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub mean_latency_ms: f64,
    pub max_in_flight: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys the browser and the e2e tests read; an unset `queue` is left out.
    #[test]
    fn wire_keys() {
        let entry = RunEntry {
            aggregate: None,
            id: "offline-1".into(),
            manifest: Manifest::default(),
            settings: RunSettings::default(),
        };
        assert_eq!(
            endpoint_host("https://u:secret@api.x.com:8443/v1?key=k"),
            "api.x.com:8443"
        );
        assert_eq!(
            endpoint_host("http://127.0.0.1:11434/v1"),
            "127.0.0.1:11434"
        );
        assert_eq!(endpoint_host("localhost:8000"), "localhost:8000");
        let m = Manifest {
            models: vec![
                serde_json::json!({"name": "m", "base_url": "https://h.example/v1?token=t"}),
            ],
            dataset: DatasetInfo {
                dir: "/home/someone/cache/bench-1".into(),
                ..Default::default()
            },
            ..Default::default()
        }
        .for_clients();
        let text = serde_json::to_string(&m).unwrap_or_default();
        assert!(
            !text.contains("token=") && !text.contains("/home"),
            "{text}"
        );
        assert_eq!(m.models[0]["endpoint_host"], "h.example");
        let v = serde_json::to_value(RunsReply {
            runs: vec![entry],
            runs_dir: "runs".into(),
        })
        .expect("serialises");
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object()
                .expect("object")
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(&v), ["runs", "runs_dir"]);
        let run = &v["runs"][0];
        assert_eq!(keys(run), ["aggregate", "id", "manifest", "settings"]);
        assert!(run["aggregate"].is_null());
        assert!(run["manifest"].get("queue").is_none());
        assert!(run["manifest"]["split"].is_null());
        let back: RunsReply = serde_json::from_value(v).expect("reads back");
        assert_eq!(back.runs[0].id, "offline-1");
        let q = serde_json::to_value(QuestionLines {
            qid: 7,
            run_id: "r".into(),
            ..Default::default()
        })
        .expect("serialises");
        assert_eq!(keys(&q), ["qid", "run_id", "t1", "t3"]);
    }
}
