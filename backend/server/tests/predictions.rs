//! `serenqa predict` and `GET /api/predictions` end to end on a small Hetionet-format graph:
//! the TSV is byte-identical across runs, the server serves the stored predictions, and bad
//! input gets a 4xx `{code, message}`.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::path::Path;
use std::process::Command;

use serenqa_testkit::http::get_json as get;
use serenqa_testkit::serve::{import_hetionet, Serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

/// 30 compounds, 8 diseases, 20 genes; treatments follow shared genes; some palliations.
fn write_graph(dir: &Path) {
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
    for (c, bc) in binds.iter().enumerate() {
        for (d, ad) in assoc.iter().enumerate() {
            if bc.iter().any(|g| ad.contains(g)) && r(3) > 0 {
                edges += &format!("Compound::DB{c:05}\tCtD\tDisease::DOID:{d}\n");
            } else if r(8) == 0 {
                edges += &format!("Compound::DB{c:05}\tCpD\tDisease::DOID:{d}\n");
            }
        }
    }
    import_hetionet(EXE, dir, &nodes, &edges);
}

fn serenqa(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(EXE)
        .args(args)
        .current_dir(dir)
        .env("SERENQA_CACHE", dir.join("cache"))
        .output()
        .unwrap()
}

fn serve(dir: &Path) -> Served {
    Serve::new(EXE, dir)
        .args(&["--graph", "g.snap", "--dist", "nodist", "--db", "a.sqlite"])
        .env("SERENQA_CACHE", dir.join("cache"))
        .spawn()
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
