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
fn write_graph(dir: &Path) -> String {
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
    edges
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
    // The all-pairs model explains every pair by its metapaths.
    assert_eq!(preds[0]["explained"], true, "{}", preds[0]);
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

/// `serenqa predict check`: the stored predictions against a list from outside the graph. The
/// figures are recomputed here from the TSV of the same run, independently of the crate.
#[test]
fn check_measures_the_stored_predictions_against_an_outside_list() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let edges = write_graph(d);
    // Three fixed pairs, a disease the graph lacks, and the graph's first known treatment.
    let first_ctd = edges
        .lines()
        .find(|l| l.split('\t').nth(1) == Some("CtD"))
        .unwrap();
    let f: Vec<&str> = first_ctd.split('\t').collect();
    let (kc, kd) = (
        f[0].trim_start_matches("Compound::").to_string(),
        f[2].trim_start_matches("Disease::").to_string(),
    );
    let mut pairs: Vec<(String, String)> = [
        ("DB00000", "DOID:0"),
        ("DB00001", "DOID:1"),
        ("DB00003", "DOID:2"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    if !pairs.contains(&(kc.clone(), kd.clone())) {
        pairs.push((kc, kd));
    }
    // And the first known palliation, a candidate unless palliations are left out.
    let first_cpd = edges
        .lines()
        .find(|l| l.split('\t').nth(1) == Some("CpD"))
        .unwrap();
    let f: Vec<&str> = first_cpd.split('\t').collect();
    let cpd = (
        f[0].trim_start_matches("Compound::").to_string(),
        f[2].trim_start_matches("Disease::").to_string(),
    );
    if !pairs.contains(&cpd) {
        pairs.push(cpd);
    }
    let mut list = String::from("slim_id\tname\tdrugbank_id\n");
    for (c, dd) in &pairs {
        list += &format!("{dd}\tx\t{c}\n{dd}\ty\t{c}\n");
    }
    list += "DOID:9\tx\tDB00002\n";
    std::fs::write(d.join("list.tsv"), list).unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec![
            "--quiet", "predict", "check", "--graph", "g.snap", "--pairs", "list.tsv", "--json",
            "r.json",
        ];
        args.extend_from_slice(extra);
        serenqa(d, &args)
    };
    let before = check(&[]);
    assert!(!before.status.success());
    let err = String::from_utf8_lossy(&before.stderr);
    assert!(err.contains("run `serenqa predict` first"), "{err}");

    let p = serenqa(
        d,
        &["--quiet", "predict", "--graph", "g.snap", "--out", "p.tsv"],
    );
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let out = check(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();

    // Independently: known treatments from the edge list, scores from the TSV.
    let known: std::collections::HashSet<(String, String)> = edges
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.get(1) == Some(&"CtD")).then(|| (f[0].to_string(), f[2].to_string()))
        })
        .collect();
    let tsv = std::fs::read_to_string(d.join("p.tsv")).unwrap();
    let mut cand: Vec<(f64, String, String)> = tsv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[2].parse().unwrap(), f[0].to_string(), f[1].to_string())
        })
        .filter(|(_, c, dd)| !known.contains(&(c.clone(), dd.clone())))
        .collect();
    let listed = |c: &str, dd: &str| {
        pairs
            .iter()
            .any(|(a, b)| c == format!("Compound::{a}") && dd == format!("Disease::{b}"))
    };
    let n_known = pairs
        .iter()
        .filter(|(a, b)| known.contains(&(format!("Compound::{a}"), format!("Disease::{b}"))))
        .count();
    assert!(n_known >= 1);
    let l = &r["list"];
    assert_eq!(l["read"], pairs.len() + 1, "{l}");
    assert_eq!(l["unmatched"], 1, "DOID:9 is not in the graph: {l}");
    assert_eq!(l["known"], n_known, "{l}");
    assert_eq!(l["positives"], pairs.len() - n_known, "{l}");
    assert_eq!(l["candidates"], cand.len(), "{l}");
    if pairs.len() > n_known {
        // Mann–Whitney over the candidates, ties counted half.
        let pos: Vec<f64> = cand
            .iter()
            .filter(|x| listed(&x.1, &x.2))
            .map(|x| x.0)
            .collect();
        let neg: Vec<f64> = cand
            .iter()
            .filter(|x| !listed(&x.1, &x.2))
            .map(|x| x.0)
            .collect();
        let wins: f64 = pos
            .iter()
            .map(|&p| {
                neg.iter()
                    .map(|&q| {
                        if p > q {
                            1.0
                        } else if p == q {
                            0.5
                        } else {
                            0.0
                        }
                    })
                    .sum::<f64>()
            })
            .sum();
        let want = wins / (pos.len() * neg.len()) as f64;
        let got = l["model"]["auroc"].as_f64().unwrap();
        // The TSV prints each f32 score exactly, so the two agree to rounding.
        assert!((got - want).abs() < 1e-9, "AUROC {got} against {want}");
        cand.sort_by(|a, b| b.0.total_cmp(&a.0));
        let in100 = cand[..100.min(cand.len())]
            .iter()
            .filter(|x| listed(&x.1, &x.2))
            .count();
        assert_eq!(l["model"]["hits"][0][1], in100, "{l}");
    }
    assert_eq!(l["second_excluded"], 0, "{l}");
    assert!(r["against"].is_null());

    // Palliations left out, and the list against a second one (the first list's positives
    // should outscore pairs nobody listed).
    std::fs::write(
        d.join("other.tsv"),
        "compound_id\tdisease_id\nCompound::DB00004\tDisease::DOID:3\nDB00005\tDOID:4\n",
    )
    .unwrap();
    let out2 = check(&["--exclude-palliates", "--against", "other.tsv"]);
    assert!(
        out2.status.success(),
        "{}",
        String::from_utf8_lossy(&out2.stderr)
    );
    let r2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(r2["list"]["second_excluded"], 1, "{}", r2["list"]);
    assert_eq!(r2["list"]["positives"], pairs.len() - n_known - 1);
    assert_eq!(r2["against"]["list"]["read"], 2);
    assert!(String::from_utf8_lossy(&out2.stdout).contains("against the second list"));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("| model (served score) |")
            && table.contains("| baseline: treatment degrees |"),
        "{table}"
    );

    // repoDB's shape: comma-separated, quoted names, indications as UMLS CUIs mapped by the
    // Disease Ontology's cross-references (a tiny ontology in a data directory of its own:
    // C0000003 is listed by DOID:3 and DOID:4), rows kept by status.
    let data = d.join("data/disease-ontology");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("xrefs-prop-slim.tsv"),
        "doid_code\tdoid_name\tresource\tresource_id\nDOID:3\tdisease 3\tUMLS\tC0000003\nDOID:4\tdisease 4\tUMLS\tC0000003\n",
    )
    .unwrap();
    std::fs::write(
        data.join("slim-terms-prop.tsv"),
        "slim_id\tslim_name\tsubsumed_id\tsubsumed_name\tmin_distance\nDOID:3\tdisease 3\tDOID:3\tdisease 3\t0\n",
    )
    .unwrap();
    std::fs::write(
        data.join("term-names.tsv"),
        "doid\tname\ttype\nDOID:3\tdisease 3\tname\n",
    )
    .unwrap();
    std::fs::write(
        d.join("repodb.csv"),
        "drug_name,drug_id,ind_name,ind_id,NCT,status,phase,DetailedStatus\n\
         drug 5,DB00005,\"disease, three\",C0000003,NA,Approved,NA,NA\n\
         drug 6,DB00006,unknown,C0009999,NCT1,Approved,NA,NA\n\
         drug 7,DB00007,\"disease, three\",C0000003,NCT2,Terminated,Phase 2,\"slow, accrual\"\n",
    )
    .unwrap();
    let out3 = Command::new(EXE)
        .args([
            "--quiet",
            "predict",
            "check",
            "--graph",
            "g.snap",
            "--pairs",
            "repodb.csv",
            "--status",
            "Approved",
            "--against",
            "repodb.csv",
            "--against-status",
            "terminated,withdrawn",
            "--json",
            "r3.json",
        ])
        .current_dir(d)
        .env("SERENQA_CACHE", d.join("cache"))
        .env("SERENQA_DATA", d.join("data"))
        .output()
        .unwrap();
    assert!(
        out3.status.success(),
        "{}",
        String::from_utf8_lossy(&out3.stderr)
    );
    let r3: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r3.json")).unwrap()).unwrap();
    let (l3, a3) = (&r3["list"], &r3["against"]["list"]);
    assert_eq!(
        (l3["read"].as_u64(), l3["unmatched"].as_u64()),
        (Some(2), Some(1)),
        "{l3}"
    );
    assert_eq!(
        (l3["via_umls"].as_u64(), l3["pairs"].as_u64()),
        (Some(1), Some(2)),
        "{l3}"
    );
    assert_eq!(
        (a3["read"].as_u64(), a3["pairs"].as_u64()),
        (Some(1), Some(2)),
        "{a3}"
    );
    assert!(String::from_utf8_lossy(&out3.stdout).contains("mapped from UMLS CUIs"));

    // The same run's scores as the model compared: the same figures, a difference of zero
    // with a zero interval; the served model's intervals hold its own figures.
    let out4 = check(&["--compare", "p.tsv"]);
    assert!(
        out4.status.success(),
        "{}",
        String::from_utf8_lossy(&out4.stderr)
    );
    let r4: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let c4 = &r4["compare"];
    assert_eq!(c4["name"], "p.tsv");
    assert_eq!(c4["figures"], r4["list"]["model"], "{c4}");
    if pairs.len() > n_known {
        let diff = &c4["model_minus_this"];
        assert_eq!(diff["hits"], 0, "{diff}");
        assert_eq!(diff["auroc"].as_f64(), Some(0.0), "{diff}");
        assert_eq!(diff["hits_interval"]["lo"].as_f64(), Some(0.0), "{diff}");
        assert_eq!(diff["hits_interval"]["hi"].as_f64(), Some(0.0), "{diff}");
        let sp = &r4["list"]["model_spread"];
        let auroc = r4["list"]["model"]["auroc"].as_f64().unwrap();
        assert!(
            sp["auroc"]["lo"].as_f64().unwrap() <= auroc + 1e-12
                && auroc <= sp["auroc"]["hi"].as_f64().unwrap() + 1e-12,
            "{sp}"
        );
    }
    let t4 = String::from_utf8_lossy(&out4.stdout);
    assert!(
        t4.contains("| compared: p.tsv |") && t4.contains("resampled by disease"),
        "{t4}"
    );
    // A scores file that lacks pairs (another graph's, or cut short): one line, no report.
    let head: Vec<&str> = tsv.lines().take(4).collect();
    std::fs::write(d.join("short.tsv"), head.join("\n")).unwrap();
    let short = check(&["--compare", "short.tsv"]);
    assert!(!short.status.success());
    let err = String::from_utf8_lossy(&short.stderr);
    assert!(
        err.contains("no score for") && err.contains("candidate pairs"),
        "{err}"
    );
    assert!(short.stdout.is_empty());
    std::fs::write(d.join("noscore.tsv"), "compound_id\tdisease_id\nA\tB\n").unwrap();
    let err = String::from_utf8_lossy(&check(&["--compare", "noscore.tsv"]).stderr).to_string();
    assert!(
        err.contains("needs compound_id, disease_id and score"),
        "{err}"
    );

    // A list without a compound column: one line, no report.
    std::fs::write(d.join("bad.tsv"), "a\tb\nx\ty\n").unwrap();
    let bad = serenqa(
        d,
        &[
            "--quiet", "predict", "check", "--graph", "g.snap", "--pairs", "bad.tsv",
        ],
    );
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("compound column"), "{err}");
    assert!(bad.stdout.is_empty());
}
