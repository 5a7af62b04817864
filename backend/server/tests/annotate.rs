//! The annotation API on a live `serenqa serve` with a throwaway SQLite file: every route's
//! access rule for every role, CSRF, login back-off, revisions and submission ids, bad input (nothing stored), the load and
//! crash tests.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use serenqa_testkit::http::Session as C;
use serenqa_testkit::serve::{admin_invite, import_hetionet, spawn_serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

fn cli(dir: &Path, args: &[&str]) -> String {
    serenqa_testkit::serve::cli(EXE, dir, args)
}

fn questionnaire(dir: &Path) {
    let q = dir.join("q");
    std::fs::create_dir(&q).unwrap();
    std::fs::write(
        q.join("categories.json"),
        r#"[{"batch_id": 1, "batch_name": "Cardio (1)", "total": 2, "categories": {}}]"#,
    )
    .unwrap();
    let cand = |n: &str, id: &str, r: u32| json!({"entity_name": n, "llm_rank": r, "entity_link": format!("https://go.drugbank.com/drugs/{id}")});
    let batch = json!([
        {"question_number": 1, "qid": 101, "text": "Which drugs treat hypertension?", "category": "cardio:bp",
         "llm_ranking": [cand("Aspirin", "DB00945", 1), cand("Acetaminophen", "DB00316", 2), cand("Xa", "DB00001", 3), cand("Xb", "DB00002", 4), cand("Xc", "DB00003", 5)],
         "resource": [{"entity_name": "hypertension", "entity_link": "https://disease-ontology.org/?id=DOID:10763"}]},
        {"question_number": 2, "qid": 102, "text": "Which drugs treat angina?", "category": "cardio:angina",
         "llm_ranking": [cand("Aspirin", "DB00945", 2), cand("Acetaminophen", "DB00316", 1)], "resource": []}
    ]);
    std::fs::write(q.join("batch1.json"), batch.to_string()).unwrap();
}

fn start() -> (Served, String) {
    let dir = tempfile::tempdir().unwrap();
    import_hetionet(
        EXE,
        dir.path(),
        "id\tname\tkind\nCompound::DB00945\tAcetylsalicylic acid\tCompound\nCompound::DB00316\tAcetaminophen\tCompound\nDisease::DOID:10763\thypertension\tDisease\nCompound::DB00001\tLepirudin\tCompound\n",
        "source\tmetaedge\ttarget\nCompound::DB00945\tCtD\tDisease::DOID:10763\nCompound::DB00945\tCrC\tCompound::DB00316\nCompound::DB00001\tCrC\tCompound::DB00945\nCompound::DB00316\tCtD\tDisease::DOID:10763\n",
    );
    questionnaire(dir.path());
    let out = cli(
        dir.path(),
        &[
            "annotate",
            "--db",
            "a.sqlite",
            "import-serenqa",
            "--dir",
            "q",
        ],
    );
    assert!(out.contains("2 questions added"), "{out}");
    // `--db` after the subcommand names the same option.
    let after = cli(
        dir.path(),
        &[
            "annotate",
            "import-serenqa",
            "--dir",
            "q",
            "--db",
            "b.sqlite",
        ],
    );
    assert!(after.contains("2 questions added"), "{after}");
    assert!(dir.path().join("b.sqlite").exists());
    let token = admin_invite(EXE, dir.path(), "a.sqlite");
    let s = spawn_serve(
        EXE,
        dir.path(),
        &["--graph", "g.snap", "--db", "a.sqlite", "--dist", "nodist"],
    )
    .with_dir(dir);
    (s, token)
}

/// Signs in from a login/accept reply: the session cookie and the CSRF token.
fn session_from(status: u16, body: &str, headers: &[(String, String)]) -> C {
    assert_eq!(status, 200, "{body}");
    let cookie = C::set_cookie(headers);
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    C::from_reply(status, body, headers)
}

const XRW: (&str, &str) = ("X-Requested-With", "serenqa");

fn accept(s: &Served, token: &str, name: &str) -> C {
    let body = json!({"name": name, "password": "a long password 1"}).to_string();
    let (st, b, h) = C::default().req(
        "POST",
        &format!("{}/api/auth/invite/{token}", s.base),
        Some(&body),
        &[XRW],
    );
    session_from(st, &b, &h)
}

fn invite(s: &Served, admin: &C, email: &str, role: &str) -> String {
    let (st, b, _) = admin.req(
        "POST",
        &format!("{}/api/admin/invites", s.base),
        Some(&json!({"email": email, "role": role}).to_string()),
        &[],
    );
    assert_eq!(st, 200, "{b}");
    let v: Value = serde_json::from_str(&b).unwrap();
    v["link"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string()
}

fn ranking(cands: &[i64], ranks: &[u32], sub: &str, status: &str) -> String {
    json!({"submission_id": sub, "confidence": 4, "comment": "", "status": status,
           "ranking": cands.iter().zip(ranks).map(|(c, r)| json!({"candidate": c, "rank": r, "unsure": false})).collect::<Vec<_>>()})
    .to_string()
}

/// Every key of a JSON value, at any depth.
fn keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            keys(x, out);
        }),
        Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn no_questionnaire_position_or_llm_order_reaches_an_annotator() {
    let (s, admin_token) = start();
    let b = &s.base;
    let admin = accept(&s, &admin_token, "Admin");
    let ann = accept(
        &s,
        &invite(&s, &admin, "ann@example.org", "annotator"),
        "Ann",
    );
    let ann2 = accept(
        &s,
        &invite(&s, &admin, "ann2@example.org", "annotator"),
        "Ann Two",
    );
    let json = |c: &C, path: &str| -> Value {
        let (st, body) = c.get(&format!("{b}{path}"));
        assert_eq!(st, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    };
    let batches = json(&ann, "/api/annotate/batches");
    let bid = batches[0]["batch"]["id"].as_i64().unwrap();
    let batch = json(&ann, &format!("/api/annotate/batches/{bid}"));
    let qs: Vec<i64> = batch["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_i64().unwrap())
        .collect();
    let q1 = qs[0];
    let view = json(&ann, &format!("/api/annotate/questions/{q1}"));
    let names = |v: &Value| {
        v["question"]["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let ids = |v: &Value| {
        v["question"]["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    // The questionnaire (LLM) order is Aspirin, Acetaminophen, Xa, Xb, Xc.
    let llm = ["Aspirin", "Acetaminophen", "Xa", "Xb", "Xc"];
    let shown = names(&view);
    assert_ne!(shown, llm, "shown in the LLM order");
    // Ids ascend in name order, not in the questionnaire's.
    let mut by_id: Vec<(i64, String)> = ids(&view).into_iter().zip(shown.iter().cloned()).collect();
    by_id.sort();
    assert_eq!(
        by_id.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(),
        ["Acetaminophen", "Aspirin", "Xa", "Xb", "Xc"]
    );
    // The order is a stable per-annotator shuffle: the same on reload, and still after a save.
    assert_eq!(
        names(&json(&ann, &format!("/api/annotate/questions/{q1}"))),
        shown
    );
    let other = names(&json(&ann2, &format!("/api/annotate/questions/{q1}")));
    let mut sorted_other = other.clone();
    sorted_other.sort();
    let mut sorted_shown = shown.clone();
    sorted_shown.sort();
    assert_eq!(sorted_other, sorted_shown, "same candidates for everyone");
    let cands = ids(&view);
    // Submitting the shown order untouched needs the explicit confirmation (422 otherwise,
    // nothing stored); a draft of it is fine.
    let put = |body: String| {
        ann.req(
            "PUT",
            &format!("{b}/api/annotate/questions/{q1}/response"),
            Some(&body),
            &[],
        )
    };
    let (st, body, _) = put(ranking(&cands, &[1, 2, 3, 4, 5], "p0", "complete"));
    assert_eq!(st, 422, "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(e["code"], "untouched_order", "{body}");
    assert!(e["message"].as_str().unwrap().contains("move at least one"));
    assert!(json(&ann, &format!("/api/annotate/questions/{q1}"))["response"].is_null());
    let mut confirmed: Value =
        serde_json::from_str(&ranking(&cands, &[1, 2, 3, 4, 5], "p1", "complete")).unwrap();
    confirmed["confirm_shown_order"] = json!(true);
    confirmed["time_ms"] = json!(12_345);
    let (st, body, _) = put(confirmed.to_string());
    assert_eq!(st, 200, "{body}");
    let saved = json(&ann, &format!("/api/annotate/questions/{q1}"));
    assert_eq!(saved["response"]["confirmed_shown_order"], true);
    assert_eq!(saved["response"]["time_ms"], 12_345);
    assert_eq!(
        saved["response"]["presented"],
        json!(cands),
        "the order shown is recorded"
    );
    let after = json(&ann, &format!("/api/annotate/questions/{q1}"));
    assert_eq!(
        names(&after),
        shown,
        "a saved response does not bring back the questionnaire order"
    );
    // Where the question is in the batch, and what is left to do.
    assert_eq!(
        (after["index"].as_u64(), after["total"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(after["next_todo"].as_i64(), Some(qs[1]));
    let last = json(&ann, &format!("/api/annotate/questions/{}", qs[1]));
    assert_eq!(last["index"].as_u64(), Some(2));
    assert!(
        last["next_todo"].is_null(),
        "q1 is submitted, q2 is this one: nothing else to do: {}",
        last["next_todo"]
    );
    // No `position` or `llm_rank` key anywhere in what an annotator can read.
    for path in [
        "/api/annotate/batches".to_string(),
        format!("/api/annotate/batches/{bid}"),
        format!("/api/annotate/questions/{q1}"),
        format!("/api/annotate/questions/{}", qs[1]),
        "/api/annotate/responses".to_string(),
    ] {
        let mut k = Vec::new();
        keys(&json(&ann, &path), &mut k);
        assert!(
            !k.iter().any(|k| k == "position" || k == "llm_rank"),
            "{path} sends {k:?}"
        );
    }
    // Context: one group per phrase (the symmetric "resembles" stored both ways is one line),
    // and the most specific neighbours first (Lepirudin has 1 link, Acetaminophen 2).
    let pos = shown.iter().position(|n| n == "Aspirin").unwrap();
    let ctx = &view["context"][pos];
    assert_eq!(ctx["candidate"].as_i64(), Some(cands[pos]));
    assert_eq!(
        ctx["lines"],
        json!([
            "resembles 2: Lepirudin, Acetaminophen",
            "treats 1: hypertension"
        ]),
        "{ctx}"
    );
}

#[test]
fn batches_assigned_with_an_overlap_target_and_admin_reset_links() {
    let (s, admin_token) = start();
    let b = &s.base;
    let admin = accept(&s, &admin_token, "Admin");
    let ann = accept(
        &s,
        &invite(&s, &admin, "ann@example.org", "annotator"),
        "Ann",
    );
    let bob = accept(
        &s,
        &invite(&s, &admin, "bob@example.org", "annotator"),
        "Bob",
    );
    let (_, users) = admin.get(&format!("{b}/api/admin/users"));
    let users: Value = serde_json::from_str(&users).unwrap();
    let id_of = |e: &str| {
        users
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["email"] == e)
            .unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let (ann_id, admin_id) = (id_of("ann@example.org"), id_of("admin@example.org"));
    let (_, batches) = ann.get(&format!("{b}/api/annotate/batches"));
    let batches: Value = serde_json::from_str(&batches).unwrap();
    let bid = batches[0]["batch"]["id"].as_i64().unwrap();
    let qid = batches[0]["resume_at"].as_i64().unwrap();
    // Only admins assign; only annotators can be assigned; k in 1–1000.
    let put = |c: &C, body: Value| {
        c.req(
            "PUT",
            &format!("{b}/api/admin/batches/{bid}/assignment"),
            Some(&body.to_string()),
            &[],
        )
    };
    assert_eq!(
        put(&ann, json!({"annotators": [ann_id], "overlap": 2})).0,
        403
    );
    assert_eq!(put(&admin, json!({"annotators": [admin_id]})).0, 400);
    assert_eq!(
        put(&admin, json!({"annotators": [ann_id], "overlap": 0})).0,
        400
    );
    let (st, body, _) = put(&admin, json!({"annotators": [ann_id], "overlap": 2}));
    assert_eq!(st, 200, "{body}");
    let a: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (
            a["overlap"].as_i64(),
            a["annotators"].clone(),
            a["coverage"].clone(),
            a["covered"].as_i64()
        ),
        (Some(2), json!([ann_id]), json!([0, 0]), Some(0))
    );
    // Bob no longer sees the batch and its questions answer him 403; Ann works on.
    let (_, bl) = bob.get(&format!("{b}/api/annotate/batches"));
    assert_eq!(bl, "[]", "bob sees no batch");
    assert_eq!(bob.get(&format!("{b}/api/annotate/batches/{bid}")).0, 403);
    assert_eq!(bob.get(&format!("{b}/api/annotate/questions/{qid}")).0, 403);
    let (_, v) = ann.get(&format!("{b}/api/annotate/questions/{qid}"));
    let v: Value = serde_json::from_str(&v).unwrap();
    let mut cands: Vec<i64> = v["question"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    cands.sort();
    let save = |c: &C, sub: &str| {
        c.req(
            "PUT",
            &format!("{b}/api/annotate/questions/{qid}/response"),
            Some(&ranking(&cands, &[1, 2, 3, 4, 5], sub, "complete")),
            &[],
        )
        .0
    };
    assert_eq!(
        save(&bob, "bob-1"),
        403,
        "an unassigned annotator cannot save"
    );
    assert_eq!(save(&ann, "ann-1"), 200);
    let (_, all) = admin.get(&format!("{b}/api/admin/assignments"));
    let all: Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all[0]["coverage"], json!([1, 0]), "{all}");
    assert_eq!(all[0]["covered"], 0, "1 of k = 2");
    // Reset link: admin only, one use, ends the old session, signs in with the new password.
    let (st, _, _) = ann.req(
        "POST",
        &format!("{b}/api/admin/users/{ann_id}/reset"),
        Some("{}"),
        &[],
    );
    assert_eq!(st, 403);
    let (st, body, _) = admin.req(
        "POST",
        &format!("{b}/api/admin/users/{ann_id}/reset"),
        Some("{}"),
        &[],
    );
    assert_eq!(st, 200, "{body}");
    let link: Value = serde_json::from_str(&body).unwrap();
    let token = link["link"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    assert!(link["link"].as_str().unwrap().contains("/reset/"));
    let (st, info) = C::default().get(&format!("{b}/api/auth/reset/{token}"));
    assert_eq!(st, 200);
    assert!(info.contains("ann@example.org"));
    let post = |pw: &str| {
        C::default().req(
            "POST",
            &format!("{b}/api/auth/reset/{token}"),
            Some(&json!({"password": pw}).to_string()),
            &[XRW],
        )
    };
    assert_eq!(post("short").0, 422, "weak password");
    let (st, body, h) = post("a brand new password 2");
    let fresh = session_from(st, &body, &h);
    assert_eq!(
        ann.get(&format!("{b}/api/auth/me")),
        (200, r#"{"signed_in":false}"#.to_string()),
        "the old session ended"
    );
    assert_eq!(fresh.get(&format!("{b}/api/auth/me")).0, 200);
    assert_eq!(post("a brand new password 3").0, 409, "used once");
    assert_eq!(
        C::default().get(&format!("{b}/api/auth/reset/{token}")).0,
        404
    );
    assert_eq!(
        C::default()
            .get(&format!("{b}/api/auth/reset/{}", "ab".repeat(32)))
            .0,
        404
    );
    let (st, _, _) = C::default().req(
        "POST",
        &format!("{b}/api/auth/login"),
        Some(
            &json!({"email": "ann@example.org", "password": "a brand new password 2"}).to_string(),
        ),
        &[XRW],
    );
    assert_eq!(st, 200, "signs in with the new password");
    // Unassigned again: open to Bob.
    assert_eq!(put(&admin, json!({"annotators": []})).0, 200);
    assert_eq!(bob.get(&format!("{b}/api/annotate/batches/{bid}")).0, 200);
}

#[test]
fn roles_csrf_bad_input_and_aggregates() {
    let (s, admin_token) = start();
    let b = &s.base;
    // First admin from the CLI's one-time link; the link works once.
    let admin = accept(&s, &admin_token, "Admin");
    let again = C::default().req(
        "POST",
        &format!("{b}/api/auth/invite/{admin_token}"),
        Some(&json!({"name": "x", "password": "a long password 1"}).to_string()),
        &[XRW],
    );
    assert_eq!(again.0, 410, "{}", again.1);
    assert!(again.1.contains("invite_used"), "{}", again.1);
    assert_eq!(
        C::default()
            .get(&format!("{b}/api/auth/invite/{admin_token}"))
            .0,
        410
    );
    assert_eq!(
        C::default()
            .get(&format!("{b}/api/auth/invite/{}", "0".repeat(64)))
            .0,
        404
    );

    let ann1 = accept(
        &s,
        &invite(&s, &admin, "ann1@example.org", "annotator"),
        "Ann One",
    );
    let ann2 = accept(
        &s,
        &invite(&s, &admin, "ann2@example.org", "annotator"),
        "Ann Two",
    );
    let rev = accept(
        &s,
        &invite(&s, &admin, "rev@example.org", "reviewer"),
        "Rev",
    );
    let anon = C::default();
    let (st, body) = ann1.get(&format!("{b}/api/auth/me"));
    assert_eq!(st, 200);
    assert!(body.contains("\"annotator\""));
    assert!(body.contains("\"signed_in\":true"), "{body}");
    // An anonymous visitor's page load asks too: a plain answer, no failed request.
    assert_eq!(
        anon.get(&format!("{b}/api/auth/me")),
        (200, r#"{"signed_in":false}"#.to_string())
    );

    // Batches and the question for annotators.
    let (st, body) = ann1.get(&format!("{b}/api/annotate/batches"));
    assert_eq!(st, 200, "{body}");
    let batches: Value = serde_json::from_str(&body).unwrap();
    let bid = batches[0]["batch"]["id"].as_i64().unwrap();
    let qid = batches[0]["resume_at"].as_i64().unwrap();
    let (st, body) = ann1.get(&format!("{b}/api/annotate/questions/{qid}"));
    assert_eq!(st, 200, "{body}");
    let qv: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(qv["question"]["text"], "Which drugs treat hypertension?");
    assert!(
        qv["question"]["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["llm_rank"].is_null()),
        "LLM ranks are not shown"
    );
    let ctx = qv["context"].as_array().unwrap();
    assert!(
        ctx.iter().any(|c| c["in_graph"] == true
            && c["lines"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains("hypertension")))),
        "graph context: {ctx:?}"
    );
    assert!(ctx.iter().all(|c| c["link"][0] == "DrugBank"));
    let mut cands: Vec<i64> = qv["question"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    cands.sort();
    let put = |c: &C, q: i64, body: &str| {
        c.req(
            "PUT",
            &format!("{b}/api/annotate/questions/{q}/response"),
            Some(body),
            &[],
        )
    };

    // CSRF: a session without the token, a wrong token, a cross-site origin.
    let no_csrf = C {
        csrf: String::new(),
        ..ann1.clone()
    };
    assert_eq!(
        put(
            &no_csrf,
            qid,
            &ranking(&cands, &[1, 2, 3, 4, 5], "c0", "complete")
        )
        .0,
        403
    );
    let wrong = C {
        csrf: "x".repeat(64),
        ..ann1.clone()
    };
    assert_eq!(
        put(
            &wrong,
            qid,
            &ranking(&cands, &[1, 2, 3, 4, 5], "c0", "complete")
        )
        .0,
        403
    );
    let (st, _, _) = ann1.req(
        "PUT",
        &format!("{b}/api/annotate/questions/{qid}/response"),
        Some(&ranking(&cands, &[1, 2, 3, 4, 5], "c0", "complete")),
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(st, 403);
    let (st, body, _) = anon.req(
        "POST",
        &format!("{b}/api/auth/login"),
        Some(&json!({"email": "ann1@example.org", "password": "a long password 1"}).to_string()),
        &[],
    );
    assert_eq!(st, 403, "login without X-Requested-With: {body}");

    // Bad input: each a clear 4xx with a code, nothing stored.
    let bad: Vec<(String, u16, &str)> = vec![
        (ranking(&cands, &[1, 3, 3, 4, 5], "b1", "draft"), 422, "not_an_order"),
        (ranking(&cands, &[1, 2, 3, 4, 9], "b2", "draft"), 422, "not_an_order"),
        (ranking(&[cands[0], cands[0]], &[1, 2], "b3", "draft"), 422, "not_an_order"),
        (ranking(&[cands[0], 999_999], &[1, 2], "b4", "draft"), 422, "unknown_candidate"),
        (ranking(&cands[..3], &[1, 2, 3], "b5", "complete"), 422, "incomplete"),
        ("{\"submission_id\": ".to_string(), 400, "bad_json"),
        (json!({"ranking": "nope"}).to_string(), 400, "bad_json"),
        (format!("{{\"submission_id\": \"big\", \"comment\": \"{}\", \"ranking\": [], \"status\": \"draft\"}}", "x".repeat(100_000)), 413, "body_too_large"),
    ];
    for (body, status, code) in &bad {
        let (st, reply, _) = put(&ann1, qid, body);
        assert_eq!(st, *status, "{code}: {reply}");
        let e: Value = serde_json::from_str(&reply)
            .unwrap_or_else(|_| panic!("JSON error for {code}: {reply}"));
        assert_eq!(e["code"], *code, "{reply}");
        assert!(!e["message"].as_str().unwrap().is_empty());
    }
    assert_eq!(
        put(
            &ann1,
            999_999,
            &ranking(&cands, &[1, 2, 3, 4, 5], "b6", "complete")
        )
        .0,
        404,
        "unknown question"
    );
    assert_eq!(ann1.get(&format!("{b}/api/annotate/batches/999999")).0, 404);
    assert_eq!(ann1.get(&format!("{b}/api/annotate/questions/abc")).0, 400);
    let (_, mine) = ann1.get(&format!("{b}/api/annotate/responses"));
    assert_eq!(mine, "[]", "nothing stored by bad input");

    // Valid submissions; a retry with the same id is stored once.
    let (st, body, _) = put(
        &ann1,
        qid,
        &ranking(&cands, &[1, 2, 3, 4, 5], "ok-1", "complete"),
    );
    assert_eq!(st, 200, "{body}");
    let r1: Value = serde_json::from_str(&body).unwrap();
    let (_, body, _) = put(
        &ann1,
        qid,
        &ranking(&cands, &[1, 2, 3, 4, 5], "ok-1", "complete"),
    );
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["duplicate"],
        true
    );
    let (st, body, _) = put(
        &ann2,
        qid,
        &ranking(&cands, &[1, 1, 2, 3, 4], "ok-2", "complete"),
    );
    assert_eq!(st, 200, "ties are a proper order: {body}");
    let r2: Value = serde_json::from_str(&body).unwrap();
    let rid1 = r1["response_id"].as_i64().unwrap();
    let rid2 = r2["response_id"].as_i64().unwrap();

    // Own responses only.
    assert_eq!(ann1.get(&format!("{b}/api/responses/{rid1}")).0, 200);
    assert_eq!(ann1.get(&format!("{b}/api/responses/{rid2}")).0, 403);
    assert_eq!(ann2.get(&format!("{b}/api/responses/{rid1}")).0, 403);
    assert_eq!(rev.get(&format!("{b}/api/responses/{rid1}")).0, 403);
    assert_eq!(admin.get(&format!("{b}/api/responses/{rid1}")).0, 200);
    assert_eq!(anon.get(&format!("{b}/api/responses/{rid1}")).0, 401);
    assert_eq!(ann1.get(&format!("{b}/api/responses/424242")).0, 404);
    let (_, mine) = ann2.get(&format!("{b}/api/annotate/responses"));
    let mine: Value = serde_json::from_str(&mine).unwrap();
    assert_eq!(mine.as_array().unwrap().len(), 1);
    assert_eq!(mine[0]["id"].as_i64().unwrap(), rid2);

    // The access matrix: (method, path, body) × (anonymous, annotator, reviewer, admin).
    let inv_body = json!({"email": "new@example.org", "role": "reviewer"}).to_string();
    let cal_body = json!({"source": "serenqa", "step": 0.5}).to_string();
    let resp_body = ranking(&cands, &[1, 2, 3, 4, 5], "m-1", "complete");
    let matrix: Vec<(&str, String, Option<&str>, [u16; 4])> = vec![
        // Anonymous is an answer here (`{"signed_in": false}`), not an error.
        ("GET", "/api/auth/me".into(), None, [200, 200, 200, 200]),
        (
            "GET",
            "/api/annotate/batches".into(),
            None,
            [401, 200, 403, 200],
        ),
        (
            "GET",
            format!("/api/annotate/batches/{bid}"),
            None,
            [401, 200, 403, 200],
        ),
        (
            "GET",
            format!("/api/annotate/questions/{qid}"),
            None,
            [401, 200, 403, 200],
        ),
        (
            "PUT",
            format!("/api/annotate/questions/{qid}/response"),
            Some(&resp_body),
            [401, 200, 403, 200],
        ),
        (
            "GET",
            "/api/annotate/responses".into(),
            None,
            [401, 200, 403, 200],
        ),
        (
            "GET",
            "/api/review/batches".into(),
            None,
            [401, 403, 200, 200],
        ),
        (
            "GET",
            format!("/api/review/batches/{bid}"),
            None,
            [401, 403, 200, 200],
        ),
        (
            "GET",
            "/api/review/expert-rankings?source=serenqa".into(),
            None,
            [401, 403, 200, 200],
        ),
        (
            "GET",
            "/api/review/export.json".into(),
            None,
            [401, 403, 200, 200],
        ),
        (
            "GET",
            "/api/review/export.csv".into(),
            None,
            [401, 403, 200, 200],
        ),
        ("GET", "/api/review/runs".into(), None, [401, 403, 200, 200]),
        ("GET", "/api/admin/users".into(), None, [401, 403, 403, 200]),
        (
            "GET",
            "/api/admin/calibrations".into(),
            None,
            [401, 403, 403, 200],
        ),
        (
            "GET",
            "/api/admin/weights".into(),
            None,
            [401, 403, 403, 200],
        ),
        (
            "POST",
            "/api/admin/invites".into(),
            Some(&inv_body),
            [401, 403, 403, 200],
        ),
        (
            "POST",
            "/api/admin/calibrations".into(),
            Some(&cal_body),
            [401, 403, 403, 200],
        ),
    ];
    let ann3 = accept(
        &s,
        &invite(&s, &admin, "ann3@example.org", "annotator"),
        "Ann Three",
    );
    for (method, path, body, expect) in &matrix {
        for (who, c) in [
            ("anonymous", &anon),
            ("annotator", &ann3),
            ("reviewer", &rev),
            ("admin", &admin),
        ]
        .iter()
        .enumerate()
        .map(|(i, x)| (i, x.1))
        {
            let body = body.map(|b| b.replace("m-1", &format!("m-{who}")));
            let (st, reply, _) = c.req(method, &format!("{b}{path}"), body.as_deref(), &[]);
            assert_eq!(st, expect[who], "{method} {path} as role #{who}: {reply}");
            if st >= 400 {
                let e: Value = serde_json::from_str(&reply).unwrap_or_else(|_| {
                    panic!("{method} {path}: JSON error expected, got {reply}")
                });
                assert!(e["code"].is_string() && e["message"].is_string());
            }
        }
    }

    // Reviewers see aggregates and pseudonyms, never emails; admins see emails.
    let (_, agg) = rev.get(&format!("{b}/api/review/batches"));
    let agg: Value = serde_json::from_str(&agg).unwrap();
    assert_eq!(
        agg[0]["responses"], 4,
        "ann1, ann2, ann3 and admin completed question 1: {agg}"
    );
    assert!(agg[0]["mean_kendall_w"].as_f64().unwrap() > 0.5);
    let (_, ex) = rev.get(&format!("{b}/api/review/export.json"));
    assert!(
        !ex.contains("@example.org") && ex.contains("\"annotator\":\"A"),
        "{ex}"
    );
    let (_, csv) = rev.get(&format!("{b}/api/review/export.csv"));
    assert!(!csv.contains("@example.org"));
    let (_, ex) = admin.get(&format!("{b}/api/review/export.json"));
    assert!(ex.contains("ann1@example.org"));
    let (_, er) = rev.get(&format!("{b}/api/review/expert-rankings?source=serenqa"));
    let er: Value = serde_json::from_str(&er).unwrap();
    assert_eq!(er["format"], "serenqa-expert-rankings");
    assert_eq!(er["questions"][0]["qid"], 101);
    assert_eq!(er["questions"][0]["ranking"].as_array().unwrap().len(), 5);
    assert_eq!(
        rev.get(&format!("{b}/api/review/expert-rankings?source=nope"))
            .0,
        400
    );
    // The benchmark builder reads the file as written.
    let path = s.dir().join("experts.json");
    std::fs::write(&path, serde_json::to_string(&er).unwrap()).unwrap();
    use serenqa_benchmark::partition::LoadExpertRankings;
    let parsed = serenqa_benchmark::partition::ExpertRankings::load(&path).unwrap();
    assert_eq!(parsed.get(101).unwrap().ranking.len(), 5);
    assert_eq!(parsed.get(101).unwrap().annotators, Some(4));
    let (_, cals) = admin.get(&format!("{b}/api/admin/calibrations"));
    assert!(
        cals.contains("\"provenance\""),
        "the admin's calibration run is stored: {cals}"
    );
    // …but not put in force: that takes an explicit, confirmed step within the minimums.
    let cals: Value = serde_json::from_str(&cals).unwrap();
    let cal = &cals[0];
    assert_eq!(cal["in_force"], false);
    assert!(
        cal["blocked"]
            .as_str()
            .unwrap()
            .contains("too little expert data"),
        "{cal}"
    );
    let (_, w) = admin.get(&format!("{b}/api/admin/weights"));
    let w: Value = serde_json::from_str(&w).unwrap();
    assert_eq!(w["in_force"]["source"]["kind"], "fitted", "{w}");
    assert!(w["calibration"].is_null() && w["history"] == json!([]));
    let use_w = |body: Value| {
        admin.req(
            "PUT",
            &format!("{b}/api/admin/weights"),
            Some(&body.to_string()),
            &[],
        )
    };
    let (st, body, _) = use_w(json!({"calibration": cal["id"], "confirm": false}));
    assert_eq!(
        (st, body.contains("confirm_required")),
        (422, true),
        "{body}"
    );
    let (st, body, _) = use_w(json!({"calibration": cal["id"], "confirm": true}));
    assert_eq!((st, body.contains("below_minimum")), (422, true), "{body}");
    let (st, body, _) = use_w(json!({"calibration": 99_999, "confirm": true}));
    assert_eq!(st, 404, "{body}");
    let (st, body, _) = ann1.req(
        "PUT",
        &format!("{b}/api/admin/weights"),
        Some(&json!({"calibration": null, "confirm": true}).to_string()),
        &[],
    );
    assert_eq!(st, 403, "{body}");
    // Going back to the shipped weights is always allowed, and recorded.
    let (st, body, _) = use_w(json!({"calibration": null, "confirm": true}));
    assert_eq!(st, 200, "{body}");
    let w: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(w["history"][0]["by"], "admin@example.org");
    assert_eq!(w["in_force"]["source"]["kind"], "fitted");

    // Logout ends the session.
    let (st, _, h) = ann2.req("POST", &format!("{b}/api/auth/logout"), None, &[]);
    assert_eq!(st, 200);
    assert!(h
        .iter()
        .any(|(k, v)| k == "set-cookie" && v.contains("Max-Age=0")));
    assert_eq!(
        ann2.get(&format!("{b}/api/auth/me")),
        (200, r#"{"signed_in":false}"#.to_string()),
        "signed out"
    );
    // …while a route that needs the session still refuses with 401.
    assert_eq!(ann2.get(&format!("{b}/api/annotate/batches")).0, 401);
    assert!(s.dir().join("a.sqlite").is_file());
}

/// Admin and reviewer views of the work (issue 39, item 4): one valid invite link per address,
/// pending invites and revocation with the reason at acceptance, per-annotator progress and
/// individual rankings with comments — e-mails for admins, pseudonyms only for reviewers —
/// and the role rules of every such route.
#[test]
fn views_of_the_work_and_invites() {
    let (s, admin_token) = start();
    let b = &s.base;
    let admin = accept(&s, &admin_token, "Admin");
    let ann = accept(
        &s,
        &invite(&s, &admin, "ann@example.org", "annotator"),
        "Ann Annotator",
    );
    let rev = accept(
        &s,
        &invite(&s, &admin, "rev@example.org", "reviewer"),
        "Rev Reviewer",
    );
    let anon = C::default();
    let json = |c: &C, path: &str| -> Value {
        let (st, body) = c.get(&format!("{b}{path}"));
        assert_eq!(st, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    };

    // One valid link per address: the second invite replaces the first and says so.
    let create = |email: &str| -> Value {
        let (st, body, _) = admin.req(
            "POST",
            &format!("{b}/api/admin/invites"),
            Some(&json!({"email": email, "role": "annotator"}).to_string()),
            &[],
        );
        assert_eq!(st, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let token = |v: &Value| {
        v["link"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string()
    };
    let first = create("new@example.org");
    assert!(first["replaced"].is_null(), "{first}");
    let second = create("NEW@example.org");
    assert_eq!(second["replaced"]["email"], "new@example.org", "{second}");
    let refused = |t: &str, code: &str, words: &str| {
        let (st, body) = anon.get(&format!("{b}/api/auth/invite/{t}"));
        assert_eq!(st, 410, "{body}");
        assert!(body.contains(code) && body.contains(words), "{body}");
        let (st, body, _) = anon.req(
            "POST",
            &format!("{b}/api/auth/invite/{t}"),
            Some(&json!({"name": "x", "password": "a long password 1"}).to_string()),
            &[XRW],
        );
        assert_eq!(st, 410, "{body}");
        let e: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(e["code"], code, "{body}");
        assert!(!e["message"].as_str().unwrap().contains('\n'));
    };
    refused(&token(&first), "invite_replaced", "replaced by a newer one");
    // The pending list: the new address once (admins only), then revoked.
    let pending = json(&admin, "/api/admin/invites");
    let mine: Vec<&Value> = pending
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["email"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case("new@example.org")
        })
        .collect();
    assert_eq!(mine.len(), 1, "{pending}");
    assert_eq!(mine[0]["created_by"], "admin@example.org");
    let id = mine[0]["id"].as_i64().unwrap();
    for c in [&ann, &rev] {
        assert_eq!(c.get(&format!("{b}/api/admin/invites")).0, 403);
        let (st, _, _) = c.req("DELETE", &format!("{b}/api/admin/invites/{id}"), None, &[]);
        assert_eq!(st, 403);
    }
    assert_eq!(anon.get(&format!("{b}/api/admin/invites")).0, 401);
    // Without the CSRF token a revocation is refused.
    let no_csrf = C {
        csrf: String::new(),
        ..admin.clone()
    };
    let (st, body, _) = no_csrf.req("DELETE", &format!("{b}/api/admin/invites/{id}"), None, &[]);
    assert_eq!(st, 403, "{body}");
    assert!(body.contains("csrf"), "{body}");
    assert_eq!(
        json(&admin, "/api/admin/invites").as_array().map(Vec::len),
        Some(pending.as_array().map_or(0, Vec::len))
    );
    let (st, body, _) = admin.req("DELETE", &format!("{b}/api/admin/invites/{id}"), None, &[]);
    assert_eq!(st, 200, "{body}");
    refused(&token(&second), "invite_revoked", "withdrawn");
    assert!(!json(&admin, "/api/admin/invites")
        .to_string()
        .contains("new@example.org"));
    let (st, body, _) = admin.req("DELETE", &format!("{b}/api/admin/invites/99999"), None, &[]);
    assert_eq!(st, 404, "{body}");
    // A used link cannot be revoked; an account's address cannot be invited.
    let used = create("late@example.org");
    accept(&s, &token(&used), "Late");
    let (st, body, _) = admin.req(
        "POST",
        &format!("{b}/api/admin/invites"),
        Some(&json!({"email": "late@example.org", "role": "annotator"}).to_string()),
        &[],
    );
    assert_eq!(st, 409, "{body}");

    // The annotator's work: a submission with a comment, and a draft.
    let batches = json(&ann, "/api/annotate/batches");
    let bid = batches[0]["batch"]["id"].as_i64().unwrap();
    let qs: Vec<i64> = json(&ann, &format!("/api/annotate/batches/{bid}"))["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_i64().unwrap())
        .collect();
    let view = json(&ann, &format!("/api/annotate/questions/{}", qs[0]));
    let cands: Vec<i64> = view["question"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    let mut body: Value =
        serde_json::from_str(&ranking(&cands, &[1, 2, 2, 3, 4], "v1", "complete")).unwrap();
    body["comment"] = json!("Xb is the surprising one");
    let (st, r, _) = ann.req(
        "PUT",
        &format!("{b}/api/annotate/questions/{}/response", qs[0]),
        Some(&body.to_string()),
        &[],
    );
    assert_eq!(st, 200, "{r}");
    let draft = ranking(&[cands[0], cands[1]], &[1, 2], "v2", "draft");
    let q2 = json(&ann, &format!("/api/annotate/questions/{}", qs[1]));
    let c2: Vec<i64> = q2["question"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    let draft = if c2.len() == 2 {
        ranking(&c2, &[1, 2], "v2", "draft")
    } else {
        draft
    };
    let (st, r, _) = ann.req(
        "PUT",
        &format!("{b}/api/annotate/questions/{}/response", qs[1]),
        Some(&draft),
        &[],
    );
    assert_eq!(st, 200, "{r}");

    // Annotators and anonymous visitors read none of it.
    for path in ["/api/review/progress", "/api/review/rankings"] {
        assert_eq!(ann.get(&format!("{b}{path}")).0, 403, "{path}");
        assert_eq!(anon.get(&format!("{b}{path}")).0, 401, "{path}");
    }

    // Admins: e-mails, names, the ranking by name with its comment.
    let progress = json(&admin, "/api/review/progress");
    let row = progress
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["email"] == "ann@example.org")
        .unwrap_or_else(|| panic!("{progress}"));
    assert_eq!(
        (
            row["submitted"].as_i64(),
            row["in_progress"].as_i64(),
            row["skipped"].as_i64()
        ),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(row["name"], "Ann Annotator");
    assert!(row["last_activity"].as_i64().is_some());
    let pseudo = row["annotator"].as_str().unwrap().to_string();
    let page = json(&admin, "/api/review/rankings");
    assert_eq!(page["total"], 1, "{page}");
    let item = &page["items"][0];
    assert_eq!(item["email"], "ann@example.org");
    assert_eq!(item["annotator"], pseudo.as_str());
    assert_eq!(item["comment"], "Xb is the surprising one");
    assert_eq!(item["confidence"], 4);
    let names: Vec<&str> = item["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 5);
    assert!(
        names.contains(&"Aspirin") && names.contains(&"Xb"),
        "{names:?}"
    );
    assert_eq!(
        item["ranking"][1]["rank"], item["ranking"][2]["rank"],
        "the tie is kept"
    );
    assert_eq!(
        (item["saves"].as_i64(), item["submissions"].as_i64()),
        (Some(1), Some(1))
    );

    // Reviewers: the same work under the same pseudonym, and nothing that identifies anyone.
    let rprogress = json(&rev, "/api/review/progress");
    let rpage = json(&rev, "/api/review/rankings");
    let filtered = json(
        &rev,
        &format!("/api/review/rankings?annotator={pseudo}&question={}", qs[0]),
    );
    for v in [&rprogress, &rpage, &filtered] {
        let text = v.to_string();
        for secret in ["@", "Ann Annotator", "Rev Reviewer", "Admin\""] {
            assert!(
                !text.contains(secret),
                "{secret:?} in a reviewer reply: {text}"
            );
        }
        let mut k = Vec::new();
        keys(v, &mut k);
        assert!(
            !k.iter().any(|k| k == "email" || k == "user_id"),
            "identity keys {k:?}"
        );
    }
    assert!(rprogress
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p.get("name").is_none()));
    assert!(rprogress
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["annotator"] == pseudo.as_str()));
    assert_eq!(rpage["items"][0]["annotator"], pseudo.as_str());
    assert_eq!(rpage["items"][0]["comment"], "Xb is the surprising one");
    assert_eq!(filtered["total"], 1);
    let export = json(&rev, "/api/review/export.json");
    assert_eq!(
        export[0]["annotator"],
        pseudo.as_str(),
        "the export's label is the same"
    );
    // Paging and bad filters.
    let none = json(&rev, "/api/review/rankings?offset=1&limit=1");
    assert_eq!(
        (
            none["total"].as_i64(),
            none["items"].as_array().map(Vec::len)
        ),
        (Some(1), Some(0))
    );
    for (q, code) in [
        ("annotator=ann%40example.org", "bad_annotator"),
        ("annotator=7", "bad_annotator"),
        ("limit=0", "bad_limit"),
        ("limit=101", "bad_limit"),
    ] {
        let (st, body) = rev.get(&format!("{b}/api/review/rankings?{q}"));
        assert_eq!(st, 400, "{q}: {body}");
        assert!(body.contains(code), "{q}: {body}");
    }
}

#[test]
fn login_rate_limit_and_secure_cookie_behind_tls() {
    let (s, admin_token) = start();
    let b = &s.base;
    let _admin = accept(&s, &admin_token, "Admin");
    let login = |pw: &str, extra: &[(&str, &str)]| {
        let mut h = vec![XRW];
        h.extend_from_slice(extra);
        C::default().req(
            "POST",
            &format!("{b}/api/auth/login"),
            Some(&json!({"email": "admin@example.org", "password": pw}).to_string()),
            &h,
        )
    };
    let (st, _, h) = login("a long password 1", &[("X-Forwarded-Proto", "https")]);
    assert_eq!(st, 200);
    assert!(
        h.iter()
            .any(|(k, v)| k == "set-cookie" && v.contains("; Secure")),
        "Secure over TLS"
    );
    let (st, _, h) = login("a long password 1", &[]);
    assert_eq!(st, 200);
    assert!(
        !h.iter()
            .any(|(k, v)| k == "set-cookie" && v.contains("Secure")),
        "plain HTTP on loopback"
    );
    // E-mails over 254 bytes: a clear 400 before anything else happens.
    let long = format!("{}@example.org", "a".repeat(250));
    let (st, body, _) = C::default().req(
        "POST",
        &format!("{b}/api/auth/login"),
        Some(&json!({"email": long, "password": "x"}).to_string()),
        &[XRW],
    );
    assert_eq!(st, 400, "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(e["code"], "email_too_long", "{body}");
    assert!(e["message"].as_str().unwrap().contains("254"), "{body}");
    // Failures back off (the limiter's exponential growth is tested with an injected clock in
    // the store's tests): the free failures answer 401, then 429 with Retry-After even for the
    // right password — the password is not checked while backing off …
    for _ in 0..3 {
        assert_eq!(login("wrong password!", &[]).0, 401);
    }
    let (st, body, h) = login("a long password 1", &[]);
    assert_eq!(
        st, 429,
        "the right password waits while backing off: {body}"
    );
    assert!(body.contains("rate_limited"));
    let retry: u64 = h
        .iter()
        .find(|(k, _)| k == "retry-after")
        .map(|(_, v)| v.parse().unwrap())
        .expect("Retry-After");
    assert!(
        (1..=2).contains(&retry),
        "the first back-off is short: {retry} s"
    );
    // … and is not a lock-out: once it is over, the owner's correct password signs in.
    std::thread::sleep(std::time::Duration::from_secs(retry));
    let (st, body, _) = login("a long password 1", &[]);
    assert_eq!(st, 200, "after the back-off the owner signs in: {body}");
    // Unknown users are limited the same way (no account enumeration).
    let other = |pw: &str| {
        C::default()
            .req(
                "POST",
                &format!("{b}/api/auth/login"),
                Some(&json!({"email": "nobody@example.org", "password": pw}).to_string()),
                &[XRW],
            )
            .0
    };
    for _ in 0..3 {
        assert_eq!(other("x"), 401);
    }
    assert_eq!(other("x"), 429);
}

/// Revisions, idempotent retries and submission ids over HTTP.
#[test]
fn stale_revisions_conflict_and_submission_ids_are_checked() {
    let (s, admin_token) = start();
    let b = &s.base;
    let admin = accept(&s, &admin_token, "Admin");
    let ann = accept(
        &s,
        &invite(&s, &admin, "ann@example.org", "annotator"),
        "Ann",
    );
    let (_, body) = ann.get(&format!("{b}/api/annotate/batches"));
    let bid = serde_json::from_str::<Value>(&body).unwrap()[0]["batch"]["id"]
        .as_i64()
        .unwrap();
    let (_, body) = ann.get(&format!("{b}/api/annotate/batches/{bid}"));
    let bv: Value = serde_json::from_str(&body).unwrap();
    let qids: Vec<i64> = bv["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_i64().unwrap())
        .collect();
    let cands = |q: i64| -> Vec<i64> {
        let (_, body) = ann.get(&format!("{b}/api/annotate/questions/{q}"));
        let v: Value = serde_json::from_str(&body).unwrap();
        let mut c: Vec<i64> = v["question"]["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_i64().unwrap())
            .collect();
        c.sort();
        c
    };
    let (q1, q2) = (qids[0], qids[1]);
    let c1 = cands(q1);
    let put = |q: i64, body: &str| {
        ann.req(
            "PUT",
            &format!("{b}/api/annotate/questions/{q}/response"),
            Some(body),
            &[],
        )
    };
    let based = |body: String, base: i64| {
        let mut v: Value = serde_json::from_str(&body).unwrap();
        v["base_revision"] = json!(base);
        v.to_string()
    };

    let (st, body, _) = put(q1, &based(ranking(&c1, &[1, 2, 3, 4, 5], "r1", "draft"), 0));
    assert_eq!(st, 200, "{body}");
    let (st, body, _) = put(q1, &based(ranking(&c1, &[2, 1, 3, 4, 5], "r2", "draft"), 1));
    assert_eq!(st, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["revision"], 2);
    // A delayed save based on revision 1 arrives after revision 2: 409 with the stored state.
    let (st, body, _) = put(q1, &based(ranking(&c1, &[5, 4, 3, 2, 1], "r3", "draft"), 1));
    assert_eq!(st, 409, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["code"], "stale_revision", "{body}");
    assert_eq!(v["revision"], 2);
    assert_eq!(v["current"]["revision"], 2);
    let first = v["current"]["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["candidate"] == c1[0])
        .unwrap()
        .clone();
    assert_eq!(
        first["rank"], 2,
        "the current ranking is revision 2's: {body}"
    );
    assert!(!v["message"].as_str().unwrap().is_empty());
    let (_, stored) = ann.get(&format!("{b}/api/annotate/questions/{q1}"));
    assert_eq!(
        serde_json::from_str::<Value>(&stored).unwrap()["response"]["revision"],
        2,
        "nothing stored by the stale save"
    );
    // A retry of the stored save (same submission id) is answered again, not refused.
    let (st, body, _) = put(q1, &based(ranking(&c1, &[2, 1, 3, 4, 5], "r2", "draft"), 1));
    assert_eq!(st, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["duplicate"].as_bool(), v["revision"].as_i64()),
        (Some(true), Some(2))
    );
    // The submission id of question 1 reused on question 2: 409, nothing stored there.
    let c2 = cands(q2);
    let (st, body, _) = put(q2, &based(ranking(&c2, &[1, 2], "r2", "draft"), 0));
    assert_eq!(st, 409, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["code"],
        "submission_id_reused",
        "{body}"
    );
    let (_, v) = ann.get(&format!("{b}/api/annotate/questions/{q2}"));
    assert!(serde_json::from_str::<Value>(&v).unwrap()["response"].is_null());

    // Submitted, then edited: the edit stays pending until a complete save.
    let (st, body, _) = put(
        q1,
        &based(ranking(&c1, &[1, 2, 3, 4, 5], "s1", "complete"), 2),
    );
    assert_eq!(st, 200, "{body}");
    let (st, body, _) = put(q1, &based(ranking(&c1, &[5, 4, 3, 2, 1], "e1", "draft"), 3));
    assert_eq!(st, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["pending"].as_bool()),
        (Some("complete"), Some(true)),
        "{body}"
    );
    let (_, view) = ann.get(&format!("{b}/api/annotate/questions/{q1}"));
    let view: Value = serde_json::from_str(&view).unwrap();
    assert_eq!(view["response"]["status"], "complete");
    assert!(view["response"]["pending"]["ranking"].is_array(), "{view}");
    let (_, er) = admin.get(&format!("{b}/api/review/batches/{bid}"));
    let er: Value = serde_json::from_str(&er).unwrap();
    let agg = er["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["question_id"] == q1)
        .unwrap();
    assert_eq!(agg["annotators"], 1, "the submission still counts");
    assert_eq!(
        agg["candidates"][0]["candidate"], c1[0],
        "with its own ranking, not the pending edit: {agg}"
    );
}

/// The sign-in back-off's logic with a driven clock (no sleeping): exponential growth, the
/// owner admitted after the wait however many failures an attacker caused, IPv6 /64 keys,
/// bursts, forgetting, the bounded table.
#[test]
fn login_back_off_with_an_injected_clock() {
    use serenqa_store::limiter::{Limits, LoginLimiter};
    use std::net::IpAddr;
    use std::time::{Duration, Instant};
    let lim = LoginLimiter::default();
    let l = Limits::default();
    let t0 = Instant::now();
    let attacker: IpAddr = "2001:db8:bad:1::66".parse().unwrap();
    let attacker_same_64: IpAddr = "2001:db8:bad:1:ffff::1".parse().unwrap();
    let owner: IpAddr = "192.0.2.10".parse().unwrap();
    let email = "owner@example.org";

    // The attacker fails as fast as the limiter lets them; the waits they are given double.
    let mut t = t0;
    let mut waits = Vec::new();
    let mut failures = 0;
    while failures < 14 {
        match lim.begin(email, Some(attacker), t) {
            Ok(a) => {
                a.failed(t);
                failures += 1;
            }
            Err(w) => {
                waits.push(w.as_secs());
                t += w;
            }
        }
    }
    assert_eq!(
        waits[..6],
        [1, 2, 4, 8, 16, 32],
        "exponential back-off after {} free failures: {waits:?}",
        l.pair.free
    );
    // Another address of the same IPv6 /64 is the same client.
    assert!(lim
        .begin("other@example.org", Some(attacker_same_64), t)
        .is_ok_and(|a| {
            a.failed(t);
            true
        }));
    assert!(
        lim.begin(email, Some(attacker_same_64), t).is_err(),
        "the /64 shares the back-off"
    );

    // The owner, elsewhere, waits at most the e-mail cap — never a lock-out — and then the
    // correct password is checked and succeeds, which clears the e-mail's counter.
    let wait = lim
        .begin(email, Some(owner), t)
        .err()
        .expect("14 failures on the e-mail make everyone wait");
    assert!(
        wait <= l.email.cap,
        "the owner waits {wait:?}, at most {:?}",
        l.email.cap
    );
    assert!(
        lim.begin(email, Some(owner), t + wait - Duration::from_millis(1))
            .is_err(),
        "still backing off"
    );
    let ok = lim
        .begin(email, Some(owner), t + wait)
        .expect("after the back-off the owner's attempt is checked");
    ok.succeeded(t + wait);
    let ok = lim
        .begin(email, Some(owner), t + wait)
        .expect("the success cleared the e-mail's back-off");
    ok.succeeded(t + wait);
    // The attacker's own address is still backing off for this e-mail.
    assert!(lim.begin(email, Some(attacker), t + wait).is_err());

    // Attempts in flight count: a burst gets at most the free attempts checked at once.
    let burst = LoginLimiter::default();
    let ip: IpAddr = "198.51.100.1".parse().unwrap();
    let admitted: Vec<_> = (0..10)
        .filter_map(|_| burst.begin("x@example.org", Some(ip), t0).ok())
        .collect();
    assert_eq!(admitted.len() as u32, l.pair.free);
    drop(admitted); // dropped unreported: counted as failures
    assert!(burst.begin("x@example.org", Some(ip), t0).is_err());
    // Many people behind one address signing in at once are not limited by each other.
    let office = LoginLimiter::default();
    let held: Vec<_> = (0..50)
        .map(|i| {
            office
                .begin(&format!("p{i}@example.org"), Some(ip), t0)
                .expect("concurrent honest sign-ins")
        })
        .collect();
    for a in held {
        a.succeeded(t0);
    }
    // Counters are forgotten after a quiet period: the free failures are free again.
    let later = t0 + l.pair.forget + Duration::from_secs(1);
    for _ in 0..l.pair.free {
        burst
            .begin("x@example.org", Some(ip), later)
            .expect("forgotten")
            .failed(later);
    }
    assert!(burst.begin("x@example.org", Some(ip), later).is_err());

    // The table stays bounded: unique e-mails from many addresses evict the oldest entries.
    let small = LoginLimiter::new(Limits::default(), 64);
    for i in 0..5000u32 {
        let ip = IpAddr::from([10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
        if let Ok(a) = small.begin(
            &format!("u{i}@example.org"),
            Some(ip),
            t0 + Duration::from_millis(i as u64),
        ) {
            a.failed(t0 + Duration::from_millis(i as u64));
        }
        assert!(small.len() <= small.capacity(), "{} entries", small.len());
    }
}

#[test]
fn load_50_annotators_x_100_submissions_and_crash() {
    for extra in [&[][..], &["--crash"][..]] {
        let mut args = vec![
            "--quiet",
            "perf",
            "annotate",
            "--annotators",
            "50",
            "--submissions",
            "100",
        ];
        args.extend_from_slice(extra);
        let out = Command::new(EXE).args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("acknowledged 5000, stored 5000, lost 0, duplicated 0"),
            "{text}"
        );
        assert!(text.contains("p99"));
        if !extra.is_empty() {
            assert!(
                text.contains("every acknowledged submission was found after restart: true"),
                "{text}"
            );
        }
        println!("{text}");
    }
}
