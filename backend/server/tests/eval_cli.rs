//! `serenqa eval` killed with SIGKILL mid-run and run again ends with exactly the results of
//! an uninterrupted run (Hetionet, a 30-question benchmark built by `eval` itself).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serenqa_testkit::data::hetionet_data;

fn serenqa(args: &[&str], cwd: &Path, data: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(args)
        .current_dir(cwd)
        .env("SERENQA_DATA", data)
        .output()
        .expect("run serenqa")
}

fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn run_dir(runs: &Path) -> Option<PathBuf> {
    std::fs::read_dir(runs)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
}

fn keys(p: &Path) -> Vec<String> {
    let mut k: Vec<String> = lines(p)
        .iter()
        .filter_map(|v| v["key"].as_str().map(String::from))
        .collect();
    k.sort();
    k
}

#[test]
fn sigkill_then_rerun_equals_uninterrupted() {
    let Some(data) = hetionet_data() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = serenqa(&["--quiet", "precompute", "--out", "gm.snap"], d, &data);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let common = [
        "--quiet",
        "eval",
        "--graph",
        "gm.snap",
        "--bench",
        "bench",
        "--questions",
        "30",
        "--run",
        "r",
    ];
    let o = serenqa(&[&common[..], &["--runs", "full"]].concat(), d, &data);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Table 3 (lower)"));
    let full = d.join("full/r");
    let total = lines(&full.join("t3.jsonl")).len();
    assert!(total > 10, "{total} T2/T3 items");

    // Kill mid-way: one item in flight at a time, SIGKILL once a few are written.
    let mut child = Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args([&common[..], &["--runs", "killed", "--concurrency", "1"]].concat())
        .current_dir(d)
        .env("SERENQA_DATA", &data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t3 = d.join("killed/r/t3.jsonl");
    let start = Instant::now();
    while lines(&t3).len() < 3 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let _ = child.wait();
    let done = lines(&t3).len();
    assert!(
        done >= 3 && done < total,
        "killed after {done} of {total} items"
    );
    assert!(run_dir(&d.join("killed")).is_some());

    let o = serenqa(&[&common[..], &["--runs", "killed"]].concat(), d, &data);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let killed = d.join("killed/r");
    let agg = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p.join("aggregate.json")).unwrap()).unwrap()
    };
    assert_eq!(agg(&killed), agg(&full), "same tables");
    assert_eq!(
        keys(&killed.join("t1.jsonl")),
        keys(&full.join("t1.jsonl")),
        "T1: nothing lost or duplicated"
    );
    assert_eq!(
        keys(&killed.join("t3.jsonl")),
        keys(&full.join("t3.jsonl")),
        "T3: nothing lost or duplicated"
    );
    let by_key = |p: &Path| {
        lines(p)
            .into_iter()
            .map(|v| (v["key"].as_str().unwrap_or("").to_string(), v))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(
        by_key(&killed.join("t3.jsonl")),
        by_key(&full.join("t3.jsonl")),
        "identical traces"
    );
}
