//! `serenqa models check FILE` as a real process against the scripted OpenAI-compatible
//! server (`src/scripted_llm.rs`, a test double, not a model): a healthy endpoint serves
//! every role (exit 0); a port nothing listens on makes its roles `unreachable` (exit 1) and
//! the output names its host only, never the URL; an endpoint whose replies are cut-off JSON
//! makes them `malformed`, one that never answers `timeout` (after `--timeout`); an unset `api_key_env` is one clear line and sends nothing; the
//! roles are listed in the `--help` of `models check` and of `eval`. No timing assertions.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[path = "../src/scripted_llm.rs"]
mod scripted_llm;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

const ROLES: [&str; 6] = [
    "retrieval",
    "relations",
    "nodes",
    "continue",
    "summary",
    "judge",
];

fn serenqa(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(args)
        .current_dir(cwd)
        .env_remove("SERENQA_MODELS")
        .env_remove("SERENQA_CHECK_UNSET_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("run serenqa")
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// `models check --json` of `models` written into `dir`: (exit success, report, output).
fn check_json(dir: &Path, models: &serde_json::Value) -> (bool, serde_json::Value, Output) {
    std::fs::write(dir.join("models.json"), models.to_string()).unwrap();
    let o = serenqa(dir, &["models", "check", "models.json", "--json"]);
    let report = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("JSON report ({e}): {}", text(&o)));
    (o.status.success(), report, o)
}

/// `role → (status, error kind)` of a JSON report.
fn roles(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["error"]["kind"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// A loopback port nothing listens on (bound, then released).
fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_healthy_endpoint_serves_every_role() {
    let rt = runtime();
    let llm = rt.block_on(scripted_llm::start(Duration::ZERO)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let models = scripted_llm::models_file(&llm.base_url, &[], 4);
    let (ok, report, o) = check_json(dir.path(), &models);
    assert!(ok, "{}", text(&o));
    assert_eq!(report["ok"], true);
    let expected: Vec<(String, String, String)> = ROLES
        .iter()
        .map(|r| (r.to_string(), "ok".to_string(), String::new()))
        .collect();
    assert_eq!(roles(&report), expected, "{}", text(&o));
    let m = &report["models"][0];
    assert_eq!(m["listing"]["ok"], true);
    assert_eq!(m["listing"]["models"], serde_json::json!(["scripted-1"]));
    assert_eq!(m["listing"]["configured_listed"], true);
    let host = llm
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1");
    assert_eq!(m["host"], host);
    // One listing and one chat call per role.
    assert_eq!(llm.calls.load(Ordering::SeqCst), ROLES.len());

    // The table: every role served, the host and no URL.
    let o = serenqa(dir.path(), &["models", "check", "models.json"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}"); // the sample shown with --nocapture
    assert!(out.contains("6 of 6 roles served by a model"), "{out}");
    assert!(out.contains("\"scripted-1\" listed"), "{out}");
    assert!(out.contains(host) && !out.contains("http://"), "{out}");
    for r in ROLES {
        assert!(
            out.lines().any(|l| l.starts_with(r) && l.contains(" ok ")),
            "{r}: {out}"
        );
    }
}

#[test]
fn a_dead_endpoint_is_unreachable_and_named_by_its_host_only() {
    let rt = runtime();
    let llm = rt.block_on(scripted_llm::start(Duration::ZERO)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = dead_port();
    let dead_url = format!("http://127.0.0.1:{port}/v1/private-path?token=s3cret");
    // The healthy model plays retrieval and judge, the dead one relations and nodes; the rest
    // stay offline.
    let mut models = scripted_llm::models_file(&llm.base_url, &["retrieval", "judge"], 4);
    models["models"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "gone", "base_url": dead_url, "model": "gone-1", "max_retries": 3
        }));
    models["roles"]["relations"] = "gone".into();
    models["roles"]["nodes"] = "gone".into();
    let (ok, report, o) = check_json(dir.path(), &models);
    assert!(!ok, "{}", text(&o));
    assert_eq!(report["ok"], false);
    let kinds: Vec<(String, String, String)> = roles(&report);
    let expect = |r: &str, s: &str, k: &str| (r.to_string(), s.to_string(), k.to_string());
    assert_eq!(
        kinds,
        vec![
            expect("retrieval", "ok", ""),
            expect("relations", "failed", "unreachable"),
            expect("nodes", "failed", "unreachable"),
            expect("continue", "offline", ""),
            expect("summary", "offline", ""),
            expect("judge", "ok", ""),
        ],
        "{}",
        text(&o)
    );
    assert_eq!(
        report["models"][1]["listing"]["error"]["kind"],
        "unreachable"
    );
    assert_eq!(report["models"][1]["host"], format!("127.0.0.1:{port}"));
    // No retries by default: one attempt per role.
    assert_eq!(report["roles"][1]["attempts"], 1);

    let o = serenqa(dir.path(), &["models", "check", "models.json"]);
    assert!(!o.status.success(), "{}", text(&o));
    let all = text(&o);
    println!("{all}"); // the sample shown with --nocapture
    for leak in ["private-path", "token", "s3cret", "http://", "/v1"] {
        assert!(!all.contains(leak), "{leak:?} in the output: {all}");
    }
    assert!(all.contains(&format!("127.0.0.1:{port}")), "{all}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "2 of 6 roles cannot be served: relations (unreachable), nodes (unreachable)"
        ),
        "{stderr}"
    );
}

#[test]
fn malformed_replies_are_reported_as_malformed() {
    let rt = runtime();
    let faults = scripted_llm::Faults {
        on: std::sync::Arc::new(true.into()),
        every: Some(scripted_llm::Fault::Malformed),
        ..Default::default()
    };
    let llm = rt
        .block_on(scripted_llm::start_with_faults(Duration::ZERO, faults))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let models = scripted_llm::models_file(&llm.base_url, &["retrieval", "summary"], 4);
    let (ok, report, o) = check_json(dir.path(), &models);
    assert!(!ok, "{}", text(&o));
    for (role, status, kind) in roles(&report) {
        if role == "retrieval" || role == "summary" {
            assert_eq!(
                (status.as_str(), kind.as_str()),
                ("failed", "malformed"),
                "{role}"
            );
        } else {
            assert_eq!(status, "offline", "{role}");
        }
    }
    // The listing still answers: the endpoint is up, its chat replies are broken.
    assert_eq!(report["models"][0]["listing"]["ok"], true);
    let o = serenqa(dir.path(), &["models", "check", "models.json"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.starts_with("retrieval") && l.contains("malformed")),
        "{}",
        text(&o)
    );
}

#[test]
fn a_silent_endpoint_times_out_within_the_check_timeout() {
    let rt = runtime();
    let faults = scripted_llm::Faults {
        on: std::sync::Arc::new(true.into()),
        every: Some(scripted_llm::Fault::Hang),
        ..Default::default()
    };
    let llm = rt
        .block_on(scripted_llm::start_with_faults(Duration::ZERO, faults))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let models = scripted_llm::models_file(&llm.base_url, &["continue"], 4);
    std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
    let o = serenqa(
        dir.path(),
        &[
            "models",
            "check",
            "models.json",
            "--json",
            "--timeout",
            "0.5",
        ],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds = roles(&report);
    assert_eq!(
        kinds
            .iter()
            .find(|r| r.0 == "continue")
            .map(|r| (r.1.as_str(), r.2.as_str())),
        Some(("failed", "timeout")),
        "{}",
        text(&o)
    );
    let o = serenqa(
        dir.path(),
        &["models", "check", "models.json", "--timeout", "0"],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--timeout must be a positive number"),
        "{}",
        text(&o)
    );
}

#[test]
fn an_unset_api_key_variable_is_one_clear_line_and_nothing_is_sent() {
    let rt = runtime();
    let llm = rt.block_on(scripted_llm::start(Duration::ZERO)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut models = scripted_llm::models_file(&llm.base_url, &[], 4);
    models["models"][0]["api_key_env"] = "SERENQA_CHECK_UNSET_KEY".into();
    let (ok, report, o) = check_json(dir.path(), &models);
    assert!(!ok, "{}", text(&o));
    assert!(roles(&report)
        .iter()
        .all(|(_, s, k)| s == "failed" && k == "missing-key"));
    assert_eq!(
        llm.calls.load(Ordering::SeqCst),
        0,
        "a call went out without its key"
    );

    let o = serenqa(dir.path(), &["models", "check", "models.json"]);
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("environment variable SERENQA_CHECK_UNSET_KEY (api_key_env) is not set"),
        "{out}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("(missing-key)"), "{stderr}");
}

#[test]
fn the_roles_are_in_the_help_of_models_check_and_eval() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["models", "check", "--help"][..], &["eval", "--help"][..]] {
        let o = serenqa(dir.path(), args);
        assert!(o.status.success(), "{}", text(&o));
        let help = String::from_utf8_lossy(&o.stdout);
        for r in ROLES {
            assert!(
                help.lines().any(|l| l.trim_start().starts_with(r)),
                "{args:?} does not list {r}: {help}"
            );
        }
    }
}

/// The models of the file's `ensemble` list (the benchmark builder's scorers) are checked
/// too, each with one scoring call: a dead scorer fails the check though every role is served.
#[test]
fn the_ensemble_models_are_checked_too() {
    let rt = runtime();
    let llm = rt.block_on(scripted_llm::start(Duration::ZERO)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = dead_port();
    let mut models = scripted_llm::models_file(&llm.base_url, &[], 4);
    models["models"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "gone", "base_url": format!("http://127.0.0.1:{port}/v1"), "model": "gone-1"
        }));
    let live = models["models"][0]["name"].as_str().unwrap().to_string();
    models["ensemble"] = serde_json::json!([live, "gone"]);
    let (ok, report, o) = check_json(dir.path(), &models);
    assert!(!ok, "{}", text(&o));
    let rows = roles(&report);
    assert_eq!(rows.len(), ROLES.len() + 2, "{rows:?}");
    assert_eq!(rows[6], ("ensemble".into(), "ok".into(), String::new()));
    assert_eq!(
        rows[7],
        ("ensemble".into(), "failed".into(), "unreachable".into())
    );
    assert_eq!(report["roles"][7]["model"], "gone");
    // Six role calls and one scoring call reached the live endpoint.
    assert_eq!(llm.calls.load(Ordering::SeqCst), ROLES.len() + 1);
    let o = serenqa(dir.path(), &["models", "check", "models.json"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("1 of 8 roles cannot be served: ensemble (unreachable)"),
        "{stderr}"
    );
}
