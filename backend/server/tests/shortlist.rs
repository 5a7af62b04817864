//! The shortlist API on a live `serenqa serve` with a throwaway SQLite file: sign-in and CSRF
//! required, keys checked against the graph, scores checked, names from the graph, replace in
//! place, removal, the per-user cap, and one-line JSON errors with a code.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serde_json::{json, Value};
use serenqa_testkit::http::{error_code, Session as C};
use serenqa_testkit::serve::{admin_invite, import_hetionet, spawn_serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");
/// `serenqa_shared::api::SHORTLIST_MAX_ITEMS`.
const CAP: usize = serenqa_shared::api::SHORTLIST_MAX_ITEMS;

/// A graph with one disease and CAP + 5 compounds (so the cap can be reached), an annotation
/// store with an admin's invite.
fn start() -> (Served, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = String::from("id\tname\tkind\nDisease::DOID:2841\tasthma\tDisease\n");
    let mut edges = String::from("source\tmetaedge\ttarget\n");
    for i in 0..CAP + 5 {
        nodes.push_str(&format!("Compound::DB{i:05}\tDrug {i}\tCompound\n"));
        edges.push_str(&format!("Compound::DB{i:05}\tCtD\tDisease::DOID:2841\n"));
    }
    // A name a spreadsheet would run as a formula.
    nodes.push_str("Compound::DB99999\t=HYPERLINK(\"http://x\")\tCompound\n");
    import_hetionet(EXE, dir.path(), &nodes, &edges);
    let token = admin_invite(EXE, dir.path(), "a.sqlite");
    let s = spawn_serve(
        EXE,
        dir.path(),
        &[
            "--graph",
            "g.snap",
            "--db",
            "a.sqlite",
            "--dist",
            "nodist",
            "--no-baseline",
        ],
    )
    .with_dir(dir);
    (s, token)
}

fn accept(s: &Served, token: &str) -> C {
    let body = json!({"name": "Admin", "password": "a long password 1"}).to_string();
    let (st, b, h) = C::default().req(
        "POST",
        &format!("{}/api/auth/invite/{token}", s.base),
        Some(&body),
        &[("X-Requested-With", "serenqa")],
    );
    C::from_reply(st, &b, &h)
}

fn scores() -> Value {
    json!({"plausibility": 0.42, "percentile": 99.5, "rns": 0.31, "r": 0.5, "n": 0.25, "s": 0.125, "weights": {"alpha": 0.5, "beta": 0.3, "gamma": 0.2}, "blend": 0.5})
}

fn add(c: &C, s: &Served, candidate: &str, scores: Value) -> (u16, Value) {
    let body = json!({"query": "Disease::DOID:2841", "candidate": candidate, "scores": scores})
        .to_string();
    let (st, b, _) = c.req(
        "POST",
        &format!("{}/api/shortlist", s.base),
        Some(&body),
        &[],
    );
    let v: Value = serde_json::from_str(&b).unwrap_or_else(|_| panic!("reply is not JSON: {b}"));
    (st, v)
}

#[test]
fn shortlist_needs_a_session_checks_input_and_is_capped() {
    let (s, token) = start();
    let b = &s.base;
    let anon = C::default();
    // Signed out: 401 with a code, for reading and writing.
    let (st, body, _) = anon.req("GET", &format!("{b}/api/shortlist"), None, &[]);
    assert_eq!(
        error_code(st, &serde_json::from_str(&body).unwrap(), 401),
        "not_signed_in"
    );
    let (st, v) = add(&anon, &s, "Compound::DB00001", scores());
    assert_eq!(error_code(st, &v, 401), "not_signed_in");

    let admin = accept(&s, &token);
    // A write without the CSRF token is refused.
    let no_csrf = C {
        csrf: String::new(),
        ..admin.clone()
    };
    let (st, v) = add(&no_csrf, &s, "Compound::DB00001", scores());
    assert_eq!(error_code(st, &v, 403), "csrf");

    // Kept: names come from the graph, the reply is the whole list.
    let (st, v) = add(&admin, &s, "Compound::DB00001", scores());
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["max_items"].as_u64(), Some(CAP as u64));
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(
        (
            items[0]["candidate"]["name"].as_str(),
            items[0]["query"]["name"].as_str()
        ),
        (Some("Drug 1"), Some("asthma"))
    );
    assert_eq!(items[0]["scores"]["weights"]["alpha"].as_f64(), Some(0.5));

    // Bad input: each a 4xx with its code, nothing stored.
    let mut bad_plaus = scores();
    bad_plaus["plausibility"] = json!(1.5);
    let mut bad_w = scores();
    bad_w["weights"]["beta"] = json!(7);
    for (cand, sc, status, code) in [
        ("Compound::DB77777", scores(), 404, "unknown_node"),
        ("", scores(), 400, "bad_node_key"),
        ("Compound::DB00002", bad_plaus, 400, "bad_scores"),
        ("Compound::DB00002", bad_w, 400, "bad_scores"),
        ("Disease::DOID:2841", scores(), 400, "same_node"),
    ] {
        let (st, v) = add(&admin, &s, cand, sc);
        assert_eq!(error_code(st, &v, status), code, "{cand}");
    }
    for (body, status, code) in [
        ("{not json", 400, "bad_json"),
        (r#"{"query": "Disease::DOID:2841"}"#, 400, "bad_json"),
    ] {
        let (st, b2, _) = admin.req("POST", &format!("{b}/api/shortlist"), Some(body), &[]);
        assert_eq!(
            error_code(st, &serde_json::from_str(&b2).unwrap(), status),
            code,
            "{body}"
        );
    }
    let big =
        json!({"query": "Disease::DOID:2841", "candidate": "x".repeat(20_000), "scores": scores()})
            .to_string();
    let (st, b2, _) = admin.req("POST", &format!("{b}/api/shortlist"), Some(&big), &[]);
    assert_eq!(
        error_code(st, &serde_json::from_str(&b2).unwrap(), 413),
        "body_too_large"
    );
    let (_, body, _) = admin.req("GET", &format!("{b}/api/shortlist"), None, &[]);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["items"].as_array().unwrap().len(),
        1,
        "bad input stored nothing: {v}"
    );

    // Kept again: same place, new scores.
    let mut again = scores();
    again["rns"] = json!(0.9);
    add(&admin, &s, "Compound::DB00000", scores());
    let (st, v) = add(&admin, &s, "Compound::DB00001", again);
    assert_eq!(st, 200);
    let items = v["items"].as_array().unwrap();
    assert_eq!(
        (
            items.len(),
            items[0]["candidate"]["id"].as_str(),
            items[0]["scores"]["rns"].as_f64()
        ),
        (2, Some("DB00001"), Some(0.9))
    );

    // Up to the cap, then 409 shortlist_full; removing one makes room.
    for i in 2..CAP {
        let (st, v) = add(&admin, &s, &format!("Compound::DB{i:05}"), scores());
        assert_eq!(st, 200, "item {i}: {v}");
    }
    let (st, v) = add(&admin, &s, &format!("Compound::DB{:05}", CAP), scores());
    assert_eq!(error_code(st, &v, 409), "shortlist_full");
    let del = |q: &str, c: &str| {
        let (st, body, _) = admin.req(
            "DELETE",
            &format!("{b}/api/shortlist?query={q}&candidate={c}"),
            None,
            &[],
        );
        (st, serde_json::from_str::<Value>(&body).unwrap())
    };
    let (st, v) = del("Disease::DOID:2841", "Compound::DB00007");
    assert_eq!((st, v["items"].as_array().unwrap().len()), (200, CAP - 1));
    let (st, v) = del("Disease::DOID:2841", "Compound::DB00007");
    assert_eq!(error_code(st, &v, 404), "not_in_shortlist");
    let (st, body, _) = admin.req(
        "DELETE",
        &format!("{b}/api/shortlist?query=Disease::DOID:2841"),
        None,
        &[],
    );
    assert_eq!(
        error_code(st, &serde_json::from_str(&body).unwrap(), 400),
        "bad_query"
    );
    let (st, v) = add(&admin, &s, "Compound::DB99999", scores());
    assert_eq!((st, v["items"].as_array().unwrap().len()), (200, CAP));
    assert_eq!(
        v["items"][CAP - 1]["candidate"]["name"].as_str(),
        Some("=HYPERLINK(\"http://x\")")
    );
    // The list is registered in the API description.
    let (_, doc, _) = anon.req("GET", &format!("{b}/api/openapi.json"), None, &[]);
    let doc: Value = serde_json::from_str(&doc).unwrap();
    for m in ["get", "post", "delete"] {
        assert!(
            doc["paths"]["/api/shortlist"][m].is_object(),
            "{m} /api/shortlist in openapi.json"
        );
    }
    assert!(
        doc["components"]["schemas"]["ShortlistAdd"].is_object(),
        "ShortlistAdd schema"
    );
}
