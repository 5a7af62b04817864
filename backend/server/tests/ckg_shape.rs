//! The app on a graph that is not Hetionet: a small CKG-shaped synthetic graph (36 node types,
//! 47 relation types, `Drug` / `Disease` / `IS_INDICATED_FOR` instead of `Compound` /
//! `Disease` / `TREATS_CtD`) goes through precompute, the plausibility model and the server's
//! Discover pages, and `serenqa perf ckg` runs its whole sequence at a toy size.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::path::Path;
use std::process::{Command, Output};

use serenqa_testkit::http::get_with_headers as get;
use serenqa_testkit::serve::Serve;

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

fn serenqa(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(EXE)
        .arg("--quiet")
        .args(args)
        .current_dir(dir)
        .env("SERENQA_CACHE", dir.join("cache"))
        .env_remove("SERENQA_DATA")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn discover_and_plausibility_on_a_ckg_shaped_graph() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    serenqa(
        d,
        &[
            "synth", "--nodes", "3000", "--edges", "30000", "--out", "g.snap",
        ],
    );
    serenqa(d, &["precompute", "--graph", "g.snap"]);

    // Without plausibility predictions: candidates by walk proximity from the known drugs.
    let s = Serve::new(EXE, d)
        .args(&["--graph", "g.snap", "--dist", "nodist"])
        .env("SERENQA_CACHE", d.join("cache"))
        .spawn();
    let (st, body, _) = get(&format!(
        "{}/api/discover/Disease::D00000007?limit=20",
        s.base
    ));
    assert_eq!(st, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["answer_kind"], "Drug", "{body}");
    let walk: Vec<String> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["node"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(walk.len(), 20, "{body}");
    assert!(v["method"].as_str().unwrap().contains("random walk"));
    drop(s);

    // The plausibility model on this schema (its task read off the graph), then served.
    let out = serenqa(d, &["predict", "--graph", "g.snap", "--max-len", "3"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("stored for the server"), "{said}");
    let s = Serve::new(EXE, d)
        .args(&["--graph", "g.snap", "--dist", "nodist"])
        .env("SERENQA_CACHE", d.join("cache"))
        .spawn();
    let (st, body, _) = get(&format!(
        "{}/api/discover/Disease::D00000007?limit=20",
        s.base
    ));
    assert_eq!(st, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(v["method"].as_str().unwrap().contains("plausib"), "{body}");
    let cands = v["candidates"].as_array().unwrap();
    assert!(!cands.is_empty());
    assert!(cands.iter().all(|c| c["plausibility"]["score"].is_number()));
    // A drug's page: its diseases.
    let (st, body, _) = get(&format!("{}/api/discover/Drug::D00000003?limit=10", s.base));
    assert_eq!(st, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["answer_kind"], "Disease", "{body}");
    drop(s);

    // The top lists (what a graph past the all-pairs limit gets), served alone.
    for e in std::fs::read_dir(d.join("cache")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("predictions-")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let out = serenqa(d, &["predict", "--graph", "g.snap", "--top-k", "10"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("top-10 lists") && said.contains("held-out"),
        "{said}"
    );
    let s = Serve::new(EXE, d)
        .args(&["--graph", "g.snap", "--dist", "nodist"])
        .env("SERENQA_CACHE", d.join("cache"))
        .spawn();
    let (st, body, _) = get(&format!(
        "{}/api/discover/Disease::D00000007?limit=20",
        s.base
    ));
    assert_eq!(st, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        v["method"].as_str().unwrap().contains("top lists"),
        "{body}"
    );
    let cands = v["candidates"].as_array().unwrap();
    assert!(!cands.is_empty() && cands.len() <= 10, "{body}");
    assert!(cands.iter().all(|c| c["plausibility"]["score"].is_number()));
    // The graph's verb is "is indicated for": the known answers are still named treatments,
    // so the page lists them under its treatments heading.
    let known = v["known"].as_array().unwrap();
    assert!(
        !known.is_empty() && known.iter().all(|k| k["relation"] == "treats"),
        "{body}"
    );
    // Top lists keep no metapath values: the pairs say so, and the explanation endpoint says
    // what explains a candidate instead (not "run serenqa predict": the lists are loaded).
    assert!(
        cands
            .iter()
            .all(|c| c["plausibility"]["explained"] == false),
        "{body}"
    );
    let drug = cands[0]["node"]["id"].as_str().unwrap().to_string();
    let (st, body, _) = get(&format!(
        "{}/api/predictions/explain?compound=Drug::{drug}&disease=Disease::D00000007",
        s.base
    ));
    assert_eq!(st, 503, "{body}");
    let e: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(e["code"], "no_metapath_explanation", "{body}");
    assert!(e["message"].as_str().unwrap().contains("paths"), "{body}");
    let (st, body, _) = get(&format!(
        "{}/api/predictions?disease=Disease::D00000007&limit=5",
        s.base
    ));
    assert_eq!(st, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let preds = v["predictions"].as_array().unwrap();
    assert!(!preds.is_empty() && preds.len() <= 5, "{body}");
    let scores: Vec<f64> = preds.iter().map(|p| p["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {body}"
    );
    assert!(
        v["method"].as_str().unwrap().contains("top lists"),
        "{body}"
    );
    let (st, body, _) = get(&format!("{}/api/discover/Drug::D00000003?limit=10", s.base));
    assert_eq!(st, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["answer_kind"], "Disease", "{body}");
    assert!(
        v["method"].as_str().unwrap().contains("top lists"),
        "{body}"
    );
}

#[test]
fn perf_ckg_runs_its_whole_sequence_at_a_toy_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = serenqa(
        d,
        &[
            "perf",
            "ckg",
            "--nodes",
            "3000",
            "--edges",
            "30000",
            "--pages",
            "4",
            "--max-len",
            "2",
            "--work-dir",
            "w",
        ],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    for row in [
        "| synth 3000 nodes / 30000 edges |",
        "| precompute",
        "| predict",
        "| serve: ready |",
        "replies proposed by the plausibility model",
        "| Discover, disease page, cold | p50",
        "| Ask, schema-derived questions | 10/10 understood",
        "| Cypher, node-local | p50",
        "| paths disease → drug",
    ] {
        assert!(table.contains(row), "no row {row:?} in:\n{table}");
    }
    assert!(!table.contains("failed"), "{table}");
}
