//! The key schema of the queue (see the table in the module docs of [`crate::queue`]) and
//! what a coordinator stores under `spec`: [`RunSpec`], [`ModelsRef`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::explore::ExploreConfig;
use crate::llm::ModelsFile;
use crate::run::TaskKind;

/// The set of active run ids.
pub const RUNS_KEY: &str = "serenqa:runs";
/// Worker heartbeats.
pub const WORKERS_KEY: &str = "serenqa:workers";
/// The consumer group of every run's task stream.
pub const GROUP: &str = "workers";
/// Format tag of [`RunSpec`]; a worker refuses any other.
pub const SPEC_FORMAT: &str = "serenqa-run-spec/2";
/// Deliveries after which a task counts as poison (default of `--max-deliveries`).
pub const MAX_DELIVERIES: usize = 5;
/// How long a finished run's keys stay in Redis.
pub const FINISHED_TTL_SECS: u64 = 7 * 24 * 3600;

/// The keys of one run (see the module docs).
#[derive(Clone, Debug)]
pub struct Keys {
    run: String,
}

impl Keys {
    pub fn new(run_id: &str) -> Keys {
        Keys {
            run: run_id.to_string(),
        }
    }
    fn k(&self, what: &str) -> String {
        format!("serenqa:run:{{{}}}:{what}", self.run)
    }
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run
    }
    /// The glob that matches every key of the run (for messages).
    pub fn pattern(&self) -> String {
        self.k("*")
    }
    pub fn spec(&self) -> String {
        self.k("spec")
    }
    pub fn files(&self) -> String {
        self.k("files")
    }
    pub fn tasks(&self) -> String {
        self.k("tasks")
    }
    pub fn enqueued(&self) -> String {
        self.k("enqueued")
    }
    pub fn results(&self) -> String {
        self.k("results")
    }
    pub fn done(&self) -> String {
        self.k("done")
    }
    pub fn retries(&self) -> String {
        self.k("retries")
    }
    pub fn llm(&self) -> String {
        self.k("llm")
    }
    pub fn refused(&self) -> String {
        self.k("refused")
    }
    /// Every key of the run (for expiry).
    pub fn all(&self) -> Vec<String> {
        vec![
            self.spec(),
            self.files(),
            self.tasks(),
            self.enqueued(),
            self.results(),
            self.done(),
            self.retries(),
            self.llm(),
            self.refused(),
        ]
    }
}

/// Everything a worker needs to rebuild a run's [`crate::run::Ctx`] (besides the graph and the model,
/// which it loads itself, and the benchmark files, stored beside the spec).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub format: String,
    pub run_id: String,
    /// `serenqa_benchmark::records::graph_hash` of the coordinator's graph.
    pub graph_hash: String,
    /// Whether the coordinator had the serendipity model (workers must match).
    pub has_model: bool,
    /// [`crate::bench::Benchmark::hash`] of the files in `files`.
    pub bench_hash: String,
    pub prompts_hash: String,
    /// Which models the run uses, by name and hash only: endpoints and key variables never
    /// travel through Redis (whoever can write there could otherwise send a worker's keys
    /// anywhere). Each worker builds its clients from its own `--models` file and refuses the
    /// run when that file's [`ModelsFile::config_hash`] differs.
    pub models: ModelsRef,
    pub tasks: BTreeSet<TaskKind>,
    pub partitions: Vec<String>,
    pub explore: ExploreConfig,
    /// Work items of the run.
    pub items: usize,
}

/// The models of a run as the spec names them: model names, the role mapping, and the
/// [`ModelsFile::config_hash`] of the coordinator's models file. Nothing else is accepted
/// (a spec with, say, a `base_url` here does not parse and the worker refuses the run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsRef {
    pub names: Vec<String>,
    pub roles: BTreeMap<String, String>,
    pub hash: String,
}

impl ModelsRef {
    pub fn of(f: &ModelsFile) -> ModelsRef {
        ModelsRef {
            names: f.models.iter().map(|m| m.name.clone()).collect(),
            roles: f.roles.clone(),
            hash: f.config_hash(),
        }
    }
}

/// Why a worker with models file `mine` must refuse a run whose spec names `theirs`, if it must.
pub fn models_mismatch(run_id: &str, theirs: &ModelsRef, mine: &ModelsFile) -> Option<String> {
    let ours = ModelsRef::of(mine);
    if ours.hash == theirs.hash {
        return None;
    }
    let names = |n: &[String]| {
        if n.is_empty() {
            "none (offline)".to_string()
        } else {
            n.join(", ")
        }
    };
    Some(format!(
        "run {run_id}: the coordinator's models (hash {}, models {}) differ from this worker's models file (hash {}, models {}): start the worker with `--models` naming the same models, base URLs, model ids, temperature, max_tokens and roles",
        theirs.hash,
        names(&theirs.names),
        ours.hash,
        names(&ours.names)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_a_run_shares_its_hash_tag() {
        let k = Keys::new("gpt-4o-1234abcd");
        for key in k.all() {
            assert!(key.starts_with("serenqa:run:{gpt-4o-1234abcd}:"), "{key}");
        }
        assert_eq!(
            k.all().len(),
            k.all().into_iter().collect::<BTreeSet<_>>().len(),
            "distinct keys"
        );
    }
}
