//! `serenqa predict` and `GET /api/predictions` end to end on a small Hetionet-format graph:
//! the TSV is byte-identical across runs, the server serves the stored predictions, and bad
//! input gets a 4xx `{code, message}`.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// 30 compounds, 8 diseases, 20 genes; treatments follow shared genes; some palliations.
fn write_graph(dir: &Path) {
    let het = dir.join("het");
    std::fs::create_dir(&het).unwrap();
    let mut nodes = String::from("id\tname\tkind\n");
    let mut edges = String::from("source\tmetaedge\ttarget\n");
    for i in 0..30 {
        nodes += &format!("Compound::DB{i:05}\tdrug {i}\tCompound\n");
    }
    for i in 0..8 {
        nodes += &format!("Disease::DOID:{i}\tdisease {i}\tDisease\n");
    }
    for i in 0..20 {
        nodes += &format!("Gene::{i}\tGENE{i}\tGene\n");
    }
    let mut s = 11u64;
    let mut r = |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n
    };
    let binds: Vec<Vec<u64>> = (0..30).map(|_| (0..2).map(|_| r(20)).collect()).collect();
    let assoc: Vec<Vec<u64>> = (0..8).map(|_| (0..4).map(|_| r(20)).collect()).collect();
    for (c, gs) in binds.iter().enumerate() {
        for g in gs {
            edges += &format!("Compound::DB{c:05}\tCbG\tGene::{g}\n");
        }
    }
    for (d, gs) in assoc.iter().enumerate() {
        for g in gs {
            edges += &format!("Disease::DOID:{d}\tDaG\tGene::{g}\n");
        }
    }
    #[allow(clippy::needless_range_loop)]
    for c in 0..30 {
        for d in 0..8 {
            if binds[c].iter().any(|g| assoc[d].contains(g)) && r(3) > 0 {
                edges += &format!("Compound::DB{c:05}\tCtD\tDisease::DOID:{d}\n");
            } else if r(8) == 0 {
                edges += &format!("Compound::DB{c:05}\tCpD\tDisease::DOID:{d}\n");
            }
        }
    }
    std::fs::write(het.join("hetionet-nodes.tsv"), nodes).unwrap();
    std::fs::write(het.join("hetionet-edges.sif"), edges).unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(["--quiet", "import", "hetionet", "het", "--out", "g.snap"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success());
}

fn serenqa(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(args)
        .current_dir(dir)
        .env("SERENQA_CACHE", dir.join("cache"))
        .output()
        .unwrap()
}

fn serve(dir: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args([
            "--quiet",
            "serve",
            "--graph",
            "g.snap",
            "--addr",
            "127.0.0.1:0",
            "--dist",
            "nodist",
            "--db",
            "a.sqlite",
        ])
        .current_dir(dir)
        .env("SERENQA_CACHE", dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");
    Server { child, base }
}

fn get(url: &str) -> (u16, serde_json::Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent.get(url).call().unwrap();
    let status = resp.status().as_u16();
    let body = resp.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}")),
    )
}

#[test]
fn predict_writes_a_reproducible_tsv_and_the_server_serves_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_graph(d);

    // Before `serenqa predict`: the endpoint says so.
    {
        let s = serve(d);
        let (st, v) = get(&format!(
            "{}/api/predictions?disease=Disease::DOID:0",
            s.base
        ));
        assert_eq!(
            (st, v["code"].as_str()),
            (503, Some("no_predictions")),
            "{v}"
        );
    }

    let a = serenqa(
        d,
        &[
            "--quiet", "predict", "--graph", "g.snap", "--seed", "3", "--out", "a.tsv",
        ],
    );
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = serenqa(
        d,
        &[
            "--quiet",
            "predict",
            "--graph",
            "g.snap",
            "--seed",
            "3",
            "--out",
            "b.tsv",
            "--no-store",
        ],
    );
    assert!(b.status.success());
    let ta = std::fs::read(d.join("a.tsv")).unwrap();
    assert!(
        ta == std::fs::read(d.join("b.tsv")).unwrap(),
        "two runs with one seed gave different bytes"
    );
    let text = String::from_utf8(ta).unwrap();
    // The six required columns in order, then the palliation head's.
    assert!(text.starts_with("compound_id\tdisease_id\tscore\tdisease_percentile\tcompound_percentile\ttop_metapaths\tpalliates_score\tpalliates_disease_percentile\n"));
    assert_eq!(text.lines().count(), 1 + 30 * 8);
    assert!(
        text.lines().skip(1).all(|l| l.split('\t').count() == 8
            && l.split('\t')
                .nth(6)
                .is_some_and(|s| s.parse::<f64>().is_ok_and(|x| (0.0..=1.0).contains(&x)))),
        "palliation column"
    );
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("Compound::DB00000\tDisease::DOID:0\t"));

    let s = serve(d);
    let (st, v) = get(&format!(
        "{}/api/predictions?disease=Disease::DOID:0&limit=5",
        s.base
    ));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["total"], 30);
    let preds = v["predictions"].as_array().unwrap();
    assert_eq!(preds.len(), 5);
    let scores: Vec<f64> = preds.iter().map(|p| p["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(preds[0]["disease_percentile"].as_f64().unwrap() > 95.0);
    // The second head (CpD) is served next to the plausibility.
    let pall = &preds[0]["palliates"];
    assert!(
        pall["score"]
            .as_f64()
            .is_some_and(|x| (0.0..=1.0).contains(&x)),
        "{pall}"
    );
    assert!(
        pall["disease_percentile"]
            .as_f64()
            .is_some_and(|x| (0.0..=100.0).contains(&x)),
        "{pall}"
    );
    assert!(pall["known"].is_boolean(), "{pall}");
    assert_eq!(preds[0]["disease"]["id"], "DOID:0");

    let (st, v) = get(&format!(
        "{}/api/predictions?compound=Compound::DB00001",
        s.base
    ));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["total"], 8);

    for (q, status, code) in [
        ("disease=Disease::DOID:999", 404, "unknown_node"),
        ("disease=Gene::3", 400, "wrong_type"),
        ("disease=Compound::DB00001", 400, "wrong_type"),
        ("compound=Disease::DOID:1", 400, "wrong_type"),
        ("", 400, "bad_query"),
        (
            "disease=Disease::DOID:0&compound=Compound::DB00001",
            400,
            "bad_query",
        ),
        ("disease=Disease::DOID:0&limit=0", 400, "bad_limit"),
        ("disease=Disease::DOID:0&limit=abc", 400, ""),
    ] {
        let (st, v) = get(&format!("{}/api/predictions?{q}", s.base));
        assert_eq!(st, status, "{q}: {v}");
        assert!(
            v["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{q}: {v}"
        );
        if !code.is_empty() {
            assert_eq!(v["code"], code, "{q}: {v}");
        }
    }
}
