//! The RNS weights in force on a live `serenqa serve`: with an empty database Discover, Ask
//! and the RNS-guided partition use the shipped fitted weights (`backend/model/rns-weights.json`)
//! and say so; once the annotation store holds a calibration on expert rankings, every one of
//! them uses it and records it; weights given with a request override both, labelled `request`.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serde_json::Value;
use serenqa_store::{CalibrationRecord, Repo, SqliteRepo};
use serenqa_testkit::http::agent;
use serenqa_testkit::serve::{import_hetionet, spawn_serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

fn start() -> Served {
    let dir = tempfile::tempdir().unwrap();
    import_hetionet(
        EXE,
        dir.path(),
        "id\tname\tkind\nCompound::DB00945\tAcetylsalicylic acid\tCompound\nCompound::DB00316\tAcetaminophen\tCompound\nCompound::DB01050\tIbuprofen\tCompound\nDisease::DOID:10763\thypertension\tDisease\nGene::5743\tPTGS2\tGene\nGene::5742\tPTGS1\tGene\nDisease::DOID:0050783\tfever\tDisease\n",
        "source\tmetaedge\ttarget\nCompound::DB00945\tCtD\tDisease::DOID:10763\nCompound::DB00945\tCbG\tGene::5743\nCompound::DB00316\tCbG\tGene::5743\nCompound::DB00316\tCtD\tDisease::DOID:0050783\nCompound::DB01050\tCbG\tGene::5742\nCompound::DB00945\tCbG\tGene::5742\n",
    );
    spawn_serve(
        EXE,
        dir.path(),
        &["--graph", "g.snap", "--dist", "nodist", "--db", "w.sqlite"],
    )
    .with_dir(dir)
}

fn get(url: &str) -> Value {
    let mut r = agent().get(url).call().unwrap();
    assert_eq!(r.status().as_u16(), 200, "{url}");
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

fn post(url: &str, body: &str) -> Value {
    let mut r = agent()
        .post(url)
        .header("content-type", "application/json")
        .send(body)
        .unwrap();
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap();
    assert_eq!(status, 200, "{url}: {text}");
    serde_json::from_str(&text).unwrap()
}

fn triple(w: &Value) -> (f64, f64, f64) {
    (
        w["alpha"].as_f64().unwrap(),
        w["beta"].as_f64().unwrap(),
        w["gamma"].as_f64().unwrap(),
    )
}

fn close(a: (f64, f64, f64), b: (f64, f64, f64)) -> bool {
    (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12 && (a.2 - b.2).abs() < 1e-12
}

#[test]
fn discover_ask_and_partition_use_the_weights_in_force_and_record_them() {
    let s = start();
    let shipped = serenqa_model::weights::shipped();
    let sw = (
        shipped.weights.alpha,
        shipped.weights.beta,
        shipped.weights.gamma,
    );
    let discover = format!("{}/api/discover/Disease::DOID:10763", s.base);
    let ask = format!("{}/api/ask", s.base);
    let partition = format!("{}/api/partition", s.base);
    let question = r#"{"question":"Which compounds treat hypertension?"}"#;
    let cands = r#"{"candidates":["Compound::DB00945","Compound::DB00316","Compound::DB01050"]}"#;

    // 1. Empty database: the shipped weights, labelled with their source.
    let d = get(&discover);
    assert!(close(triple(&d["weights"]), sw), "{}", d["weights"]);
    assert_eq!(d["weights_source"]["kind"], shipped.source.kind.as_str());
    assert_eq!(
        d["default_weights"]["source"]["label"],
        shipped.source.label.as_str()
    );
    assert!(close(triple(&d["default_weights"]["weights"]), sw));
    let a = post(&ask, question);
    assert!(
        close(triple(&a["weights"]["weights"]), sw),
        "{}",
        a["weights"]
    );
    assert_eq!(a["weights"]["source"]["kind"], shipped.source.kind.as_str());
    let p = post(&partition, cands);
    assert!(close(triple(&p["weights"]), sw));
    assert_eq!(p["weights_source"]["kind"], shipped.source.kind.as_str());

    // 2. A calibration on expert rankings in the store takes precedence everywhere once an
    // admin puts it in force (storing it is not enough).
    let repo = SqliteRepo::open(&s.dir().join("w.sqlite")).unwrap();
    let id = repo
        .add_calibration(&CalibrationRecord {
            id: 0,
            created_at: 1_780_000_000,
            alpha: 0.2,
            beta: 0.5,
            gamma: 0.3,
            agreement: 0.61,
            questions: 40,
            annotators: 3,
            provenance: serde_json::json!({"source": "test"}),
        })
        .unwrap();
    let d = get(&discover);
    assert_eq!(d["weights_source"]["kind"], shipped.source.kind.as_str());
    repo.use_weights(Some(id), "test", "", 1).unwrap();
    let cw = (0.2, 0.5, 0.3);
    let d = get(&discover);
    assert!(close(triple(&d["weights"]), cw), "{}", d["weights"]);
    assert_eq!(d["weights_source"]["kind"], "calibration");
    assert!(
        d["weights_source"]["label"]
            .as_str()
            .unwrap()
            .contains(&format!("calibration #{id}")),
        "{}",
        d["weights_source"]
    );
    assert_eq!(d["weights_source"]["date"], "2026-05-28");
    assert!(close(triple(&d["default_weights"]["weights"]), cw));
    // The scores were computed with them.
    for c in d["candidates"].as_array().unwrap() {
        let t = &c["terms"];
        let want = 0.2 * t["r"].as_f64().unwrap()
            + 0.5 * t["n"].as_f64().unwrap()
            + 0.3 * t["s"].as_f64().unwrap();
        assert!((t["rns"].as_f64().unwrap() - want).abs() < 1e-9);
    }
    let a = post(&ask, question);
    assert!(
        close(triple(&a["weights"]["weights"]), cw),
        "{}",
        a["weights"]
    );
    assert_eq!(a["weights"]["source"]["kind"], "calibration");
    let p = post(&partition, cands);
    assert!(close(triple(&p["weights"]), cw));
    assert_eq!(p["weights_source"]["kind"], "calibration");

    // 3. Weights in the request override, labelled as such; the defaults are still reported.
    let d = get(&format!("{discover}?weights=1,0,0"));
    assert!(close(triple(&d["weights"]), (1.0, 0.0, 0.0)));
    assert_eq!(d["weights_source"]["kind"], "request");
    assert!(close(triple(&d["default_weights"]["weights"]), cw));
    let p = post(
        &partition,
        r#"{"candidates":["Compound::DB00945","Compound::DB00316","Compound::DB01050"],"weights":{"alpha":0,"beta":1,"gamma":0}}"#,
    );
    assert_eq!(p["weights_source"]["kind"], "request");

    // 4. Reverting restores the shipped weights everywhere.
    repo.use_weights(None, "test", "", 2).unwrap();
    let d = get(&discover);
    assert!(close(triple(&d["weights"]), sw));
    assert_eq!(d["weights_source"]["kind"], shipped.source.kind.as_str());
}
