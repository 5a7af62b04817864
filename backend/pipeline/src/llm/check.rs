//! Whether a models file's endpoints can serve its roles ([`check`], `serenqa models check`):
//! per declared model, the endpoint's model listing (`GET {base_url}/models`), then one tiny
//! chat call per role the model plays (and one scoring call when the file's `ensemble` list
//! names it: the benchmark builder's scorers), through the same [`LlmClient`] a run uses.
//!
//! Bounded: every request has the per-call timeout of [`CheckOptions`]; no retries unless
//! asked for (then the file's `max_retries` and `backoff_ms`); the listing is never retried.
//! Models are checked in parallel. A model's role calls go one after another (so each
//! latency is one call's), except when its listing got no answer (unreachable, timeout): then
//! they go out together, so a dead host costs about two timeouts, not one per role.
//!
//! Reports name an endpoint by its host (and port) only — never the URL's path, query or
//! credentials, never a key — and every error is one line of a few words.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::chat::{LlmError, Message};
use super::client::{install_crypto, LlmClient};
use super::models::{ModelSpec, ModelsFile, MAX_TIMEOUT_SECS};
use super::role::Role;

/// Per-call timeout when neither `--timeout` nor a shorter `timeout_secs` in the file says
/// otherwise, seconds.
pub const DEFAULT_CHECK_TIMEOUT_SECS: f64 = 20.0;

/// `max_tokens` of a check call (the model's own `max_tokens` when smaller).
pub const CHECK_MAX_TOKENS: u32 = 16;

/// Longest reply excerpt and error message kept in a report, characters.
const EXCERPT_CHARS: usize = 60;
const MESSAGE_CHARS: usize = 120;

/// How a check calls the endpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CheckOptions {
    /// Per-call timeout, seconds; `None`: the model's `timeout_secs`, at most
    /// [`DEFAULT_CHECK_TIMEOUT_SECS`].
    pub timeout_secs: Option<f64>,
    /// Retry failed chat calls as a run would (the file's `max_retries`, `backoff_ms`);
    /// default: one attempt each.
    pub retries: bool,
}

impl CheckOptions {
    /// The per-call timeout for `spec`, seconds.
    pub fn timeout_for(&self, spec: &ModelSpec) -> f64 {
        self.timeout_secs
            .unwrap_or_else(|| spec.timeout_secs.min(DEFAULT_CHECK_TIMEOUT_SECS))
            .clamp(0.001, MAX_TIMEOUT_SECS)
    }
}

/// Why a listing or a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// No connection (refused, no such host, TLS failure, connection cut).
    Unreachable,
    /// No answer within the timeout.
    Timeout,
    /// An HTTP error status (`status` says which).
    Http,
    /// An answer that is not an OpenAI-compatible reply.
    Malformed,
    /// The model's `api_key_env` variable is not set (nothing was sent).
    MissingKey,
}

impl ErrorKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Http => "http",
            ErrorKind::Malformed => "malformed",
            ErrorKind::MissingKey => "missing-key",
        }
    }
}

/// A failure: its kind, the HTTP status when there was one, one line of detail.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckError {
    pub kind: ErrorKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    pub message: String,
}

impl CheckError {
    fn new(kind: ErrorKind, message: impl AsRef<str>) -> CheckError {
        CheckError {
            kind,
            status: None,
            message: one_line(message.as_ref(), MESSAGE_CHARS),
        }
    }

    /// `unreachable`, `http 401`, …
    pub fn label(&self) -> String {
        match self.status {
            Some(s) => format!("{} {s}", self.kind.as_str()),
            None => self.kind.as_str().to_string(),
        }
    }

    fn from_llm(e: &LlmError) -> CheckError {
        match e {
            LlmError::Connect { message, .. } => {
                CheckError::new(ErrorKind::Unreachable, last_cause(message))
            }
            LlmError::Timeout { secs, attempts, .. } => CheckError::new(
                ErrorKind::Timeout,
                if *attempts > 1 {
                    format!("no answer within {secs:.1} s ({attempts} attempts)")
                } else {
                    format!("no answer within {secs:.1} s")
                },
            ),
            LlmError::Status { status, body, .. } => CheckError {
                status: Some(*status),
                ..CheckError::new(ErrorKind::Http, body)
            },
            LlmError::Malformed { message, .. } => CheckError::new(ErrorKind::Malformed, message),
        }
    }
}

/// The endpoint's model listing (`GET {base_url}/models`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Listing {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// The model ids the endpoint lists.
    pub models: Vec<String>,
    /// Whether the configured `model` is among them (`None` when there is no listing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured_listed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<CheckError>,
}

/// One declared model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelCheck {
    /// Its name in the models file.
    pub name: String,
    /// The endpoint's host (and port).
    pub host: String,
    /// The model id the endpoint is asked for.
    pub model: String,
    pub listing: Listing,
    /// The roles it plays.
    pub roles: Vec<String>,
}

/// Whether a role can be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RoleStatus {
    /// Its model answered the check call.
    Ok,
    /// Its model could not answer: see `error`.
    Failed,
    /// No model is mapped: the offline agent plays it.
    Offline,
}

/// One role.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoleCheck {
    pub role: String,
    /// What the role does, in a few words.
    pub does: String,
    pub status: RoleStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// Attempts made (more than one only with retries).
    pub attempts: u32,
    /// The start of the reply, on one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<CheckError>,
}

/// A whole check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckReport {
    /// Every role mapped to a model answered.
    pub ok: bool,
    pub models: Vec<ModelCheck>,
    /// The six roles, in manifest order; then one `ensemble` row per model of the file's
    /// `ensemble` list (the benchmark builder's scorers), when it names any.
    pub roles: Vec<RoleCheck>,
}

impl CheckReport {
    /// The roles that cannot be served.
    pub fn failed(&self) -> Vec<&RoleCheck> {
        self.roles
            .iter()
            .filter(|r| r.status == RoleStatus::Failed)
            .collect()
    }
}

/// Checks every declared model of `file` and every role it maps (see the module docs).
pub async fn check(file: &ModelsFile, opts: CheckOptions) -> CheckReport {
    let mut played: BTreeMap<String, Vec<Role>> = BTreeMap::new();
    for role in Role::MAPPED {
        if let Some(spec) = file.model_for(role.as_str()) {
            played.entry(spec.name.clone()).or_default().push(role);
        }
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, spec) in file.models.iter().enumerate() {
        let roles = played.get(&spec.name).cloned().unwrap_or_default();
        let scorer = file.ensemble.contains(&spec.name);
        let spec = spec.clone();
        tasks.spawn(async move { (i, check_model(spec, roles, scorer, opts).await) });
    }
    let mut done: Vec<(usize, ModelCheck, Vec<RoleCheck>)> = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        // A check task does not panic; a cancelled one leaves its model out of the report
        // (its roles then read as failed below).
        if let Ok((i, (model, roles))) = joined {
            done.push((i, model, roles));
        }
    }
    done.sort_by_key(|d| d.0);
    let mut by_role: BTreeMap<String, RoleCheck> = BTreeMap::new();
    let mut scorers: BTreeMap<String, RoleCheck> = BTreeMap::new();
    let mut models = Vec::new();
    for (_, m, roles) in done {
        for r in roles {
            if r.role == ENSEMBLE_ROLE {
                scorers.insert(m.name.clone(), r);
            } else {
                by_role.insert(r.role.clone(), r);
            }
        }
        models.push(m);
    }
    let ensemble = file.ensemble.iter().map(|name| {
        scorers.remove(name).unwrap_or_else(|| {
            let spec = file.models.iter().find(|m| &m.name == name);
            RoleCheck {
                role: ENSEMBLE_ROLE.into(),
                does: ENSEMBLE_DOES.into(),
                status: RoleStatus::Failed,
                model: Some(name.clone()),
                host: spec.map(|s| host_of(&s.base_url)),
                latency_ms: None,
                attempts: 0,
                reply: None,
                error: Some(CheckError::new(
                    ErrorKind::Unreachable,
                    "the check of its model did not finish",
                )),
            }
        })
    });
    let roles: Vec<RoleCheck> = Role::MAPPED
        .iter()
        .map(|&role| {
            by_role.remove(role.as_str()).unwrap_or_else(|| {
                let spec = file.model_for(role.as_str());
                RoleCheck {
                    role: role.as_str().into(),
                    does: role.summary().into(),
                    status: if spec.is_some() {
                        RoleStatus::Failed
                    } else {
                        RoleStatus::Offline
                    },
                    model: spec.map(|s| s.name.clone()),
                    host: spec.map(|s| host_of(&s.base_url)),
                    latency_ms: None,
                    attempts: 0,
                    reply: None,
                    error: spec.map(|_| {
                        CheckError::new(
                            ErrorKind::Unreachable,
                            "the check of its model did not finish",
                        )
                    }),
                }
            })
        })
        .chain(ensemble)
        .collect();
    let ok = roles.iter().all(|r| r.status != RoleStatus::Failed);
    CheckReport { ok, models, roles }
}

/// The row name of a benchmark-builder scorer (a model of the file's `ensemble` list).
pub const ENSEMBLE_ROLE: &str = "ensemble";
const ENSEMBLE_DOES: &str = "scores candidate answers when the benchmark is built";

/// The check prompt of an ensemble scorer: scores for two answers, as the builder asks.
fn ensemble_probe() -> Vec<Message> {
    vec![Message::user(
        "Rate how expected each answer is for \"what treats headache\" from 1 (obvious) to 5 \
         (surprising): aspirin, lithium. Reply with two comma-separated integers only.",
    )]
}

/// One model: its listing and its roles' calls.
async fn check_model(
    spec: ModelSpec,
    roles: Vec<Role>,
    scorer: bool,
    opts: CheckOptions,
) -> (ModelCheck, Vec<RoleCheck>) {
    let host = host_of(&spec.base_url);
    let timeout = opts.timeout_for(&spec);
    let mut report = ModelCheck {
        name: spec.name.clone(),
        host: host.clone(),
        model: spec.model.clone(),
        listing: failed_listing(CheckError::new(ErrorKind::Unreachable, "not checked")),
        roles: roles.iter().map(|r| r.as_str().to_string()).collect(),
    };
    let role_row = |role: Role| RoleCheck {
        role: role.as_str().into(),
        does: role.summary().into(),
        status: RoleStatus::Failed,
        model: Some(spec.name.clone()),
        host: Some(host.clone()),
        latency_ms: None,
        attempts: 0,
        reply: None,
        error: None,
    };
    let scorer_row = || RoleCheck {
        role: ENSEMBLE_ROLE.into(),
        does: ENSEMBLE_DOES.into(),
        ..role_row(Role::Judge)
    };
    let fail_all = |e: CheckError| -> Vec<RoleCheck> {
        roles
            .iter()
            .map(|&r| role_row(r))
            .chain(scorer.then(scorer_row))
            .map(|row| RoleCheck {
                error: Some(e.clone()),
                ..row
            })
            .collect()
    };

    let key = match &spec.api_key_env {
        Some(var) => match std::env::var(var) {
            Ok(k) if !k.trim().is_empty() => Some(k),
            _ => {
                let e = CheckError::new(
                    ErrorKind::MissingKey,
                    format!("environment variable {var} (api_key_env) is not set"),
                );
                report.listing = failed_listing(e.clone());
                return (report, fail_all(e));
            }
        },
        None => None,
    };

    // The client a run would use, for this model alone, with the check's limits.
    let mut probe_spec = spec.clone();
    probe_spec.max_tokens = spec.max_tokens.clamp(1, CHECK_MAX_TOKENS);
    probe_spec.timeout_secs = timeout;
    probe_spec.concurrency = (roles.len() + usize::from(scorer)).max(1);
    if !opts.retries {
        probe_spec.max_retries = 0;
    }
    let max_attempts = probe_spec.max_retries.saturating_add(1);
    let one = ModelsFile {
        models: vec![probe_spec],
        ..ModelsFile::default()
    };
    let client = match LlmClient::new(&one, None) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            let e = CheckError::new(ErrorKind::Unreachable, e);
            report.listing = failed_listing(e.clone());
            return (report, fail_all(e));
        }
    };

    report.listing = list_models(&spec, key.as_deref(), timeout).await;
    if let Some(e) = report.listing.error.as_mut() {
        e.message = redact_key(&e.message, key.as_deref());
    }
    let answered = report
        .listing
        .error
        .as_ref()
        .is_none_or(|e| !matches!(e.kind, ErrorKind::Unreachable | ErrorKind::Timeout));

    // Each role's probe, and the scorer's when the model is in the ensemble.
    let calls: Vec<(Vec<Message>, RoleCheck)> = roles
        .iter()
        .map(|&r| (probe(r), role_row(r)))
        .chain(scorer.then(|| (ensemble_probe(), scorer_row())))
        .collect();
    let mut rows = Vec::new();
    if answered {
        for (prompt, row) in calls {
            rows.push(call_role(&client, &spec.name, &prompt, max_attempts, row).await);
        }
    } else {
        let mut set = tokio::task::JoinSet::new();
        for (i, (prompt, row)) in calls.into_iter().enumerate() {
            let (client, name) = (client.clone(), spec.name.clone());
            set.spawn(async move {
                (
                    i,
                    call_role(&client, &name, &prompt, max_attempts, row).await,
                )
            });
        }
        let mut out: Vec<(usize, RoleCheck)> = Vec::new();
        while let Some(joined) = set.join_next().await {
            if let Ok(r) = joined {
                out.push(r);
            }
        }
        out.sort_by_key(|r| r.0);
        rows = out.into_iter().map(|r| r.1).collect();
    }
    for row in &mut rows {
        if let Some(e) = row.error.as_mut() {
            e.message = redact_key(&e.message, key.as_deref());
        }
        if let Some(r) = row.reply.as_mut() {
            *r = redact_key(r, key.as_deref());
        }
    }
    (report, rows)
}

/// One check call (`prompt`), reported in `row`.
async fn call_role(
    client: &LlmClient,
    name: &str,
    prompt: &[Message],
    max_attempts: u32,
    mut row: RoleCheck,
) -> RoleCheck {
    let started = Instant::now();
    match client.chat(name, prompt).await {
        Ok(r) => {
            row.status = RoleStatus::Ok;
            row.latency_ms = Some(round_ms(r.latency_ms));
            row.attempts = r.attempts;
            row.reply = Some(one_line(&r.text, EXCERPT_CHARS));
        }
        Err(e) => {
            row.latency_ms = Some(round_ms(started.elapsed().as_secs_f64() * 1000.0));
            // The client retries exactly the unavailable kinds (see `LlmClient`).
            row.attempts = match &e {
                LlmError::Timeout { attempts, .. } => *attempts,
                e if e.is_unavailable() => max_attempts,
                _ => 1,
            };
            row.error = Some(CheckError::from_llm(&e));
        }
    }
    row
}

/// The check prompt of a role: a task of the role's kind, answerable in a few tokens.
pub fn probe(role: Role) -> Vec<Message> {
    let task = match role {
        Role::Retrieval => "Write a Cypher query that returns the number 1. Reply with the query only.",
        Role::Relations => "Which relation type links a compound to a disease it treats: TREATS_CtD or BINDS_CbG? Reply with the type only.",
        Role::Nodes => "Candidates: DB00945 (aspirin), DB00316 (acetaminophen). Pick one to expand. Reply with its id only.",
        Role::Continue => "Aspirin binds PTGS1, which takes part in inflammation. Go one level deeper? Reply YES or NO.",
        Role::Summary => "Summarise in a few words: aspirin binds PTGS1; PTGS1 takes part in inflammation.",
        Role::Judge => "Evidence: aspirin binds PTGS1. Answer: aspirin binds PTGS1. Rate the answer's faithfulness from 1 to 5. Reply 'Score: N'.",
        Role::Ensemble => "Score the answer 'aspirin' to 'Which compounds treat pain?' from 0 to 20. Reply with the number only.",
    };
    vec![
        Message::system(format!(
            "This is a connection check for the {role} role of serenqa. Answer in a few words."
        )),
        Message::user(task),
    ]
}

/// `GET {base_url}/models`: the ids the endpoint lists.
async fn list_models(spec: &ModelSpec, key: Option<&str>, timeout: f64) -> Listing {
    install_crypto();
    let http = match reqwest::Client::builder().build() {
        Ok(h) => h,
        Err(e) => {
            return failed_listing(CheckError::new(
                ErrorKind::Unreachable,
                last_cause(&super::client::error_chain(&e.without_url())),
            ))
        }
    };
    let url = format!("{}/models", spec.base_url.trim_end_matches('/'));
    let mut req = http.get(&url).timeout(Duration::from_secs_f64(timeout));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let started = Instant::now();
    let sent = req.send().await;
    let result = match sent {
        Ok(resp) => {
            let status = resp.status().as_u16();
            match resp.text().await {
                Ok(body) if (200..300).contains(&status) => parse_listing(&body),
                Ok(body) => Err(CheckError {
                    status: Some(status),
                    ..CheckError::new(ErrorKind::Http, body)
                }),
                Err(e) => Err(reqwest_error(e, timeout)),
            }
        }
        Err(e) => Err(reqwest_error(e, timeout)),
    };
    let latency_ms = Some(round_ms(started.elapsed().as_secs_f64() * 1000.0));
    match result {
        Ok(models) => Listing {
            ok: true,
            latency_ms,
            configured_listed: Some(is_listed(&spec.model, &models)),
            models,
            error: None,
        },
        Err(e) => Listing {
            latency_ms,
            ..failed_listing(e)
        },
    }
}

fn failed_listing(e: CheckError) -> Listing {
    Listing {
        ok: false,
        latency_ms: None,
        models: Vec::new(),
        configured_listed: None,
        error: Some(e),
    }
}

/// The ids of an OpenAI-compatible listing (`{"data": [{"id": …}, …]}`).
pub fn parse_listing(body: &str) -> Result<Vec<String>, CheckError> {
    let v: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| CheckError::new(ErrorKind::Malformed, format!("listing is not JSON ({e})")))?;
    let data = v
        .get("data")
        .and_then(|d| d.as_array())
        .ok_or_else(|| CheckError::new(ErrorKind::Malformed, "listing without a \"data\" array"))?;
    Ok(data
        .iter()
        .filter_map(|m| m.get("id").and_then(|i| i.as_str()).map(str::to_string))
        .collect())
}

/// Whether `model` is among `listed`; Ollama lists an untagged model as `name:latest`.
pub fn is_listed(model: &str, listed: &[String]) -> bool {
    listed
        .iter()
        .any(|m| m == model || (!model.contains(':') && *m == format!("{model}:latest")))
}

fn reqwest_error(e: reqwest::Error, timeout: f64) -> CheckError {
    if e.is_timeout() {
        return CheckError::new(
            ErrorKind::Timeout,
            format!("no answer within {timeout:.1} s"),
        );
    }
    CheckError::new(
        ErrorKind::Unreachable,
        last_cause(&super::client::error_chain(&e.without_url())),
    )
}

/// The innermost cause of a `a: b: c` chain (`Connection refused (os error 111)`), URLs
/// reduced to their host.
fn last_cause(message: &str) -> String {
    let m = redact_urls(message);
    m.rsplit(": ")
        .find(|s| !s.trim().is_empty())
        .unwrap_or(m.as_str())
        .trim()
        .to_string()
}

/// The host (and port) of a URL, never its path, query or credentials (the one rule:
/// `serenqa_shared::api::endpoint_host`, also applied to run manifests served to clients).
pub fn host_of(url: &str) -> String {
    let h = serenqa_shared::api::endpoint_host(url.trim());
    if h.is_empty() {
        "(no host)".into()
    } else {
        h
    }
}

/// `text` with every URL reduced to its host (the one rule: `serenqa_shared::api::redact_urls`).
pub use serenqa_shared::api::redact_urls;

/// `text` without the API key: the key itself, and any `sk-…` word (an error body may echo
/// a key, even masked), reduced to `[key]`.
pub fn redact_key(text: &str, key: Option<&str>) -> String {
    let text = match key {
        Some(k) if k.len() >= 4 => text.replace(k, "[key]"),
        _ => text.to_string(),
    };
    serenqa_shared::api::redact_key_words(&text)
}

/// `text` on one line (whitespace runs collapsed, URLs reduced to hosts), cut at `max` chars.
fn one_line(text: &str, max: usize) -> String {
    let flat = redact_urls(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    if flat.chars().count() > max {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

fn round_ms(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_never_carry_path_query_or_credentials() {
        assert_eq!(host_of("http://127.0.0.1:8000/v1"), "127.0.0.1:8000");
        assert_eq!(
            host_of("https://api.deepseek.com/v1?x=1"),
            "api.deepseek.com"
        );
        assert_eq!(host_of("http://user:pw@host:11434/v1"), "host:11434");
        assert_eq!(host_of("http://[::1]:8080/v1"), "[::1]:8080");
        assert_eq!(
            redact_urls("error sending request for url (http://h:1/v1/models?k=s): refused"),
            "error sending request for url (h:1): refused"
        );
        assert_eq!(
            last_cause("error sending request for url (http://h:1/v1/x): client error (Connect): tcp connect error: Connection refused (os error 111)"),
            "Connection refused (os error 111)"
        );
    }

    #[test]
    fn listings_and_errors_read_in_one_line() {
        let ids =
            parse_listing(r#"{"object":"list","data":[{"id":"a"},{"id":"llama3.1:latest"}]}"#);
        assert_eq!(
            ids.as_deref().ok(),
            Some(&["a".to_string(), "llama3.1:latest".to_string()][..])
        );
        let listed = ids.unwrap_or_default();
        assert!(is_listed("llama3.1", &listed) && is_listed("a", &listed));
        assert!(!is_listed("b", &listed));
        assert_eq!(
            parse_listing("{\"x\": 1}").map_err(|e| e.kind),
            Err(ErrorKind::Malformed)
        );
        let e = CheckError::from_llm(&LlmError::Status {
            model: "m".into(),
            status: 401,
            body: "bad key\nsee https://x.example/docs/auth".into(),
        });
        assert_eq!(e.label(), "http 401");
        assert_eq!(e.message, "bad key see x.example");
        assert_eq!(one_line(&"x".repeat(200), 10).chars().count(), 10);
        assert_eq!(
            redact_key("Incorrect API key provided: sk-proj-****abcd. See x", None),
            "Incorrect API key provided: [key] See x"
        );
        assert_eq!(
            redact_key("bad token abc123secret", Some("abc123secret")),
            "bad token [key]"
        );
    }

    #[test]
    fn every_role_has_a_probe_and_a_summary() {
        for r in Role::MAPPED {
            assert_eq!(probe(r).len(), 2);
            assert!(!r.summary().is_empty());
        }
    }
}
