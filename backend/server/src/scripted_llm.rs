//! A scripted OpenAI-compatible chat server — a TEST AND BENCHMARK DOUBLE, NOT A MODEL.
//!
//! It answers each pipeline role's prompt with a plausible, well-formed reply computed from
//! the prompt alone (so concurrent runs get identical answers in any order): retrieval gets
//! an executable Cypher query over the label the question names, the relation agent the
//! first offered relation types, the node agent the first candidate ids, the continue agent
//! YES, the summariser a fixed paragraph, the judges fixed `Score: N` replies, the benchmark's
//! ensemble scorers 0–20 scores that depend on the model name ([`ensemble_reply`]: rankings
//! by name, one model that always replies malformed, one that is malformed only at its first
//! attempt). Every answer
//! waits `latency` first, standing in for a real endpoint's time per call. Used by
//! `serenqa perf queue` and by the queue tests (`tests/queue_cli.rs` includes this file);
//! its scores say nothing about any language model.
//!
//! Failure mode ([`Faults`], [`start_with_faults`]): while switched on, a deterministic share
//! of calls fails — those whose prompt hash falls in the failing fifth ([`fault_for`]): an
//! HTTP 500, a malformed body (cut-off JSON) or, when enabled, no answer at all (the client
//! times out). The same prompt always gets the same fault, so retries fail alike and a run
//! is reproducible; switched off, the server answers every call (`tests/eval_failures.rs`).
//! [`Faults::every`] makes every call fail one way instead (`tests/models_check.rs`).
//! `GET /v1/models` lists the one model, `scripted-1`, the way OpenAI-compatible servers do.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;

/// A running scripted server.
pub struct ScriptedLlm {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// Requests answered so far.
    pub calls: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct S {
    latency: Duration,
    calls: Arc<AtomicUsize>,
    faults: Faults,
}

/// The failure mode of a scripted server; clones share their switches and counters.
#[derive(Clone, Default)]
pub struct Faults {
    /// While true, the calls [`fault_for`] picks fail.
    pub on: Arc<AtomicBool>,
    /// Whether a picked call may hang instead (the client's timeout ends it).
    pub timeouts: bool,
    /// Calls failed so far.
    pub failed: Arc<AtomicUsize>,
    /// While `on`, every call fails this way (instead of the fifth [`fault_for`] picks).
    pub every: Option<Fault>,
}

/// How a picked call fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 500 with a text body.
    Http500,
    /// HTTP 200 with cut-off JSON.
    Malformed,
    /// No answer: the request hangs until the client gives up.
    Hang,
}

/// FNV-1a: a hash that is the same in every process and build.
fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The fault of a call whose messages' contents joined are `prompt`: about one call in five
/// fails (hash mod 5 = 0); of those, one in five gets no answer (an HTTP 500 instead when
/// `timeouts` is off), two in five an HTTP 500, two in five a malformed reply.
pub fn fault_for(prompt: &str, timeouts: bool) -> Option<Fault> {
    let h = fnv1a(prompt);
    if !h.is_multiple_of(5) {
        return None;
    }
    Some(match (h / 5) % 5 {
        0 if timeouts => Fault::Hang,
        0..=2 => Fault::Http500,
        _ => Fault::Malformed,
    })
}

/// Starts the server on an ephemeral loopback port in the current tokio runtime.
pub async fn start(latency: Duration) -> std::io::Result<ScriptedLlm> {
    start_with_faults(latency, Faults::default()).await
}

/// [`start`] with a failure mode, switched on and off through `faults.on`.
pub async fn start_with_faults(latency: Duration, faults: Faults) -> std::io::Result<ScriptedLlm> {
    let s = S {
        latency,
        calls: Arc::new(AtomicUsize::new(0)),
        faults,
    };
    let calls = s.calls.clone();
    let app = Router::new()
        .route("/v1/chat/completions", post(handle))
        .route("/v1/models", get(listing))
        .with_state(s);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(ScriptedLlm {
        base_url: format!("http://{addr}/v1"),
        calls,
        task,
    })
}

async fn handle(State(s): State<S>, body: String) -> axum::response::Response {
    s.calls.fetch_add(1, Ordering::Relaxed);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
    let text = |role: &str| -> String {
        v["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|x| x["role"] == role))
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let system = text("system");
    if s.faults.on.load(Ordering::SeqCst) {
        let prompt: String = v["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|x| x["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        if let Some(f) = s
            .faults
            .every
            .or_else(|| fault_for(&prompt, s.faults.timeouts))
        {
            s.faults.failed.fetch_add(1, Ordering::Relaxed);
            return match f {
                Fault::Http500 => (
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "scripted failure",
                )
                    .into_response(),
                Fault::Malformed => (
                    [("content-type", "application/json")],
                    "{\"id\": \"scripted\", \"choices\": [{\"index\": 0, \"mess",
                )
                    .into_response(),
                Fault::Hang => std::future::pending().await,
            };
        }
    }
    let content = if system.contains("serendipity score from 0 to 20") {
        let msgs = v["messages"].as_array().cloned().unwrap_or_default();
        let attempt = msgs.iter().filter(|m| m["role"] == "user").count();
        let first_user = text("user");
        let list = first_user
            .lines()
            .find_map(|l| l.strip_prefix("Answer List: "))
            .unwrap_or("");
        let answers: Vec<&str> = list.split(", ").filter(|a| !a.is_empty()).collect();
        ensemble_reply(v["model"].as_str().unwrap_or(""), &answers, attempt)
    } else {
        reply(&system, &text("user"))
    };
    if !s.latency.is_zero() {
        tokio::time::sleep(s.latency).await;
    }
    let body = serde_json::json!({
        "id": "scripted", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": (text("system").len() + text("user").len()) / 4, "completion_tokens": content.len() / 4}
    });
    ([("content-type", "application/json")], body.to_string()).into_response()
}

/// `GET /v1/models`, the OpenAI-compatible listing: the one model [`models_file`] declares
/// (`scripted-1`), whatever the failure mode.
async fn listing() -> axum::response::Response {
    let body = serde_json::json!({
        "object": "list",
        "data": [{"id": "scripted-1", "object": "model", "owned_by": "scripted"}]
    });
    ([("content-type", "application/json")], body.to_string()).into_response()
}

/// Lines after the first line starting with `header`, up to the next empty line.
fn section<'a>(text: &'a str, header: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// The scripted answer to a prompt (a pure function of it).
pub fn reply(system: &str, user: &str) -> String {
    if system.contains("translate biomedical questions into Cypher") {
        // The first node label the question mentions (as a word stem), else Compound.
        let labels: Vec<String> = section(system, "Node labels")
            .iter()
            .map(|l| l.trim().trim_start_matches('-').trim().to_string())
            .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric()))
            .collect();
        let q = user.to_lowercase();
        let label = labels
            .iter()
            .find(|l| q.contains(&l.to_lowercase()))
            .cloned()
            .unwrap_or_else(|| "Compound".into());
        return format!(
            "```cypher\nMATCH (x:{label}) RETURN DISTINCT x.id AS id, x.name AS name LIMIT 5\n```"
        );
    }
    if system.contains("pick the relation types") {
        let rels: Vec<&str> = section(user, "Relation types available")
            .iter()
            .filter_map(|l| l.split_whitespace().next())
            .take(2)
            .collect();
        return rels.join(", ");
    }
    if system.contains("Choose the ones to expand next") {
        let ids: Vec<&str> = section(user, "Candidates")
            .iter()
            .filter_map(|l| l.split(" | ").next())
            .map(str::trim)
            .take(4)
            .collect();
        return ids.join(", ");
    }
    if system.contains("going one level deeper") {
        return "The paths link the roots to related entities through shared targets and pathways.\n\nYES\n\nThe chains remain plausible.".into();
    }
    if system.contains("Summarise the subgraph") {
        return "The explored subgraph connects the roots to genes, pathways and related compounds; the relation patterns suggest shared mechanisms worth a closer look.".into();
    }
    if system.contains("Rate FAITHFULNESS") {
        return "Score: 4\n#END".into();
    }
    if system.contains("Rate COMPREHENSIVENESS") {
        return "Score: 3\n#END".into();
    }
    if system.contains("RELEVANCE") {
        return "Score: 3\n#END".into();
    }
    String::new()
}

/// The scripted ensemble model's reply to a scoring prompt with `answers` (in list order), at
/// its `attempt`-th try (1 = first). By model name: containing `bad` — always `high, medium,
/// low` (not integers); containing `flaky` — at the first attempt every score the same (not
/// distinct), afterwards names ranked descending; containing `-b` — names ranked by length,
/// then name; otherwise names ranked ascending. The i-th ranked answer scores 20 − i.
pub fn ensemble_reply(model: &str, answers: &[&str], attempt: usize) -> String {
    if model.contains("bad") {
        return "high, medium, low".into();
    }
    if model.contains("flaky") && attempt <= 1 {
        return vec!["7"; answers.len()].join(", ");
    }
    ensemble_scores(model, answers)
        .iter()
        .map(std::string::ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The valid scores [`ensemble_reply`] gives (in list order).
pub fn ensemble_scores(model: &str, answers: &[&str]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..answers.len()).collect();
    if model.contains("flaky") {
        order.sort_by(|&a, &b| answers[b].cmp(answers[a]).then(a.cmp(&b)));
    } else if model.contains("-b") {
        order.sort_by(|&a, &b| {
            (answers[a].len(), answers[a])
                .cmp(&(answers[b].len(), answers[b]))
                .then(a.cmp(&b))
        });
    } else {
        order.sort_by(|&a, &b| answers[a].cmp(answers[b]).then(a.cmp(&b)));
    }
    let mut scores = vec![0u32; answers.len()];
    for (rank, &i) in order.iter().enumerate() {
        scores[i] = 20u32.saturating_sub(rank as u32);
    }
    scores
}

/// A models file with one model, `scripted`, at `base_url`, playing every role (or only the
/// roles given), without cache-relevant surprises: no retries beyond two, 30 s timeout.
pub fn models_file(base_url: &str, roles: &[&str], concurrency: usize) -> serde_json::Value {
    let roles: serde_json::Map<String, serde_json::Value> = if roles.is_empty() {
        [("default".to_string(), serde_json::json!("scripted"))]
            .into_iter()
            .collect()
    } else {
        roles
            .iter()
            .map(|r| (r.to_string(), serde_json::json!("scripted")))
            .collect()
    };
    serde_json::json!({
        "models": [{
            "name": "scripted", "base_url": base_url, "model": "scripted-1",
            "temperature": 0.0, "max_tokens": 256, "timeout_secs": 30.0,
            "max_retries": 2, "backoff_ms": 100, "concurrency": concurrency.max(1)
        }],
        "roles": roles
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_gets_a_well_formed_reply() {
        let retrieval = reply("You translate biomedical questions into Cypher queries.\nNode labels (each node has the properties id and name):\n- Compound\n- Disease\n\nRules:", "Question: Which diseases does aspirin treat?");
        assert!(
            retrieval.contains("MATCH (x:Disease)") && retrieval.starts_with("```cypher"),
            "{retrieval}"
        );
        let rels = reply("From one entity of the current frontier, pick the relation types worth following", "Relation types available from this entity:\nTREATS_CtD (3 edges)\nBINDS_CbG (9 edges)\nCAUSES_CcSE (1 edges)\n\nReply with");
        assert_eq!(rels, "TREATS_CtD, BINDS_CbG");
        let nodes = reply("Choose the ones to expand next", "Candidates (id | name | type | reached from | relation | edge score):\nDB1 | a | Compound | x | r | 0.5\nDB2 | b | Compound | x | r | 0.4\n\nReply");
        assert_eq!(nodes, "DB1, DB2");
        assert!(reply("Before going one level deeper:", "").contains("\n\nYES\n\n"));
        assert_eq!(reply("Rate FAITHFULNESS", ""), "Score: 4\n#END");
        assert_eq!(reply("anything else", ""), "");
        assert_eq!(ensemble_reply("ens-a", &["b", "a", "c"], 1), "19, 20, 18");
        assert_eq!(ensemble_reply("ens-b", &["bb", "a", "c"], 1), "18, 20, 19");
        assert_eq!(ensemble_reply("ens-flaky", &["b", "a", "c"], 1), "7, 7, 7");
        assert_eq!(
            ensemble_reply("ens-flaky", &["b", "a", "c"], 2),
            "19, 18, 20"
        );
        assert_eq!(
            ensemble_reply("ens-bad", &["b", "a"], 3),
            "high, medium, low"
        );
    }

    #[test]
    fn about_a_fifth_of_prompts_fail_always_alike() {
        let prompts: Vec<String> = (0..2000).map(|i| format!("prompt {i}")).collect();
        let faults: Vec<Option<Fault>> = prompts.iter().map(|p| fault_for(p, true)).collect();
        let failing = faults.iter().filter(|f| f.is_some()).count();
        assert!((300..500).contains(&failing), "{failing} of 2000");
        for f in [Fault::Http500, Fault::Malformed, Fault::Hang] {
            assert!(faults.contains(&Some(f)), "{f:?} never picked");
        }
        assert_eq!(faults[7], fault_for(&prompts[7], true));
        assert!(prompts
            .iter()
            .all(|p| fault_for(p, false) != Some(Fault::Hang)));
    }
}
