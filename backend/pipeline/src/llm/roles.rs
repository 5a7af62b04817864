//! Which model plays each role ([`Roles`]), read from the models file: the one place that
//! decides model-or-offline per role (the agents are then built from it once, see
//! `crate::agents`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::chat::{ChatModel, Message};
use super::client::LlmClient;
use super::models::ModelsFile;
use super::role::Role;

/// The model chosen for one role: a [`ChatModel`] and the declared model name it is asked for.
#[derive(Clone)]
pub struct RoleModel {
    pub client: Arc<dyn ChatModel>,
    pub name: String,
}

impl RoleModel {
    /// One call for `role`, recorded as traces record it (`role` is the trace's role name:
    /// [`Role::as_str`], or a judge's template). Returns the trace (reply or error, latency,
    /// cache) and whether the reply was truncated; the caller adds its own issues.
    pub async fn call(&self, role: &str, prompt: Vec<Message>) -> (CallTrace, bool) {
        let mut t = CallTrace {
            role: role.into(),
            model: self.name.clone(),
            ..Default::default()
        };
        let mut truncated = false;
        match self.client.complete(&self.name, &prompt).await {
            Ok(r) => {
                t.latency_ms = r.latency_ms;
                t.cached = r.cached;
                truncated = r.truncated;
                t.reply = Some(r.text);
            }
            Err(e) => {
                t.error = Some(e.to_string());
                t.error_kind = Some(e.kind().to_string());
            }
        }
        t.prompt = prompt;
        (t, truncated)
    }
}

/// One LLM call as recorded in traces.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallTrace {
    pub role: String,
    pub model: String,
    pub prompt: Vec<Message>,
    pub reply: Option<String>,
    pub error: Option<String>,
    /// The failed call's [`super::LlmError::kind`] (`connect`, `timeout`, `http`,
    /// `malformed`); absent when the call succeeded (and in traces written before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    pub latency_ms: f64,
    pub cached: bool,
    /// What was wrong with the reply (hallucinated ids, unparsable…), if anything.
    pub issues: Vec<String>,
}

/// Which model plays each role (`None`: the offline agent).
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
        let client: Option<Arc<dyn ChatModel>> = client.map(|c| c as Arc<dyn ChatModel>);
        Roles::with_model(file, client)
    }

    /// Like [`Roles::from_file`] with any [`ChatModel`] serving the file's models.
    pub fn with_model(file: &ModelsFile, client: Option<Arc<dyn ChatModel>>) -> Roles {
        let pick = |role: Role| -> Option<RoleModel> {
            let spec = file.model_for(role.as_str())?;
            Some(RoleModel {
                client: client.clone()?,
                name: spec.name.clone(),
            })
        };
        Roles {
            retrieval: pick(Role::Retrieval),
            relations: pick(Role::Relations),
            nodes: pick(Role::Nodes),
            cont: pick(Role::Continue),
            summary: pick(Role::Summary),
            judge: pick(Role::Judge),
        }
    }

    /// The model of a mapped role.
    pub fn get(&self, role: Role) -> Option<&RoleModel> {
        match role {
            Role::Retrieval => self.retrieval.as_ref(),
            Role::Relations => self.relations.as_ref(),
            Role::Nodes => self.nodes.as_ref(),
            Role::Continue => self.cont.as_ref(),
            Role::Summary => self.summary.as_ref(),
            Role::Judge => self.judge.as_ref(),
            Role::Ensemble => None,
        }
    }

    /// `role → model name or "offline"`, for manifests and tables.
    pub fn labels(&self) -> BTreeMap<String, String> {
        Role::MAPPED
            .iter()
            .map(|&r| {
                let label = self
                    .get(r)
                    .map(|m| m.name.clone())
                    .unwrap_or_else(|| "offline".into());
                (r.as_str().to_string(), label)
            })
            .collect()
    }
}
