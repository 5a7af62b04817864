//! The HTTP API of a live `serenqa serve` on loopback: JSON shapes, errors, headers, limits.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_testkit::http::{assert_error, get_with_headers as get, post_json};
use serenqa_testkit::serve::{import_hetionet, spawn_serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

fn start() -> Served {
    let dir = tempfile::tempdir().unwrap();
    import_hetionet(
        EXE,
        dir.path(),
        "id\tname\tkind\nCompound::DB00945\tAcetylsalicylic acid\tCompound\nCompound::DB00316\tAcetaminophen\tCompound\nDisease::DOID:10763\thypertension\tDisease\nGene::5743\tPTGS2\tGene\nDisease::DOID:0050783\tfever\tDisease\n",
        "source\tmetaedge\ttarget\nCompound::DB00945\tCtD\tDisease::DOID:10763\nCompound::DB00945\tCbG\tGene::5743\nCompound::DB00316\tCbG\tGene::5743\nCompound::DB00316\tCtD\tDisease::DOID:0050783\n",
    );
    spawn_serve(EXE, dir.path(), &["--graph", "g.snap", "--dist", "nodist"]).with_dir(dir)
}

#[test]
fn graph_search_node_and_errors() {
    let s = start();
    let (st, body, headers) = get(&format!("{}/api/graph", s.base));
    assert_eq!(st, 200);
    let info: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["nodes"], 5);
    assert_eq!(info["edges"], 4);
    assert!(info["attributions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["non_commercial"] == true));
    assert!(headers
        .iter()
        .any(|(k, v)| k == "cross-origin-embedder-policy" && v == "require-corp"));

    let (st, body, _) = get(&format!("{}/api/search?q=acet", s.base));
    assert_eq!(st, 200);
    let hits: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = hits.iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"PTGS2"));
    assert_eq!(names, ["Acetaminophen", "Acetylsalicylic acid"]);

    let (st, body, _) = get(&format!("{}/api/search?q=hyper&kind=Compound", s.base));
    assert_eq!((st, body.as_str()), (200, "[]"));

    let (st, body, _) = get(&format!("{}/api/node/Compound::DB00945", s.base));
    assert_eq!(st, 200);
    let detail: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["node"]["kind"], "Compound");
    assert_eq!(detail["link"][0], "DrugBank");
    assert_eq!(detail["groups"][0]["relation"], "TREATS_CtD");
    assert_eq!(detail["groups"][0]["nodes"][0]["name"], "hypertension");
    let (_, body, _) = get(&format!("{}/api/node/Disease::DOID:10763", s.base));
    let detail: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["groups"][0]["phrase"], "is treated by");

    let (st, body, _) = get(&format!(
        "{}/api/paths?from=Disease::DOID:10763&to=Compound::DB00945",
        s.base
    ));
    assert_eq!(st, 200, "{body}");
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        reply["paths"][0]["record"],
        "DOID:10763--TREATS_CtD--DB00945"
    );
    assert_eq!(reply["paths"][0]["steps"][0]["forward"], false);
    assert_eq!(reply["subgraph"]["nodes"].as_array().unwrap().len(), 2);

    // Discovery: aspirin is the known treatment; acetaminophen (sharing PTGS2) the candidate.
    let (st, body, _) = get(&format!("{}/api/discover/Disease::DOID:10763", s.base));
    assert_eq!(st, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["existing"][0]["name"], "Acetylsalicylic acid");
    assert_eq!(d["existing_known"], true);
    assert_eq!(d["candidates"][0]["node"]["name"], "Acetaminophen");
    // What the candidate already treats, for the clinician to judge the leap.
    assert_eq!(d["candidates"][0]["known_for"][0]["name"], "fever");
    assert_eq!(d["candidates"][0]["known_for_total"], 1);
    let t = &d["candidates"][0]["terms"];
    let (r, n, sv, rns) = (
        t["r"].as_f64().unwrap(),
        t["n"].as_f64().unwrap(),
        t["s"].as_f64().unwrap(),
        t["rns"].as_f64().unwrap(),
    );
    let w = &d["weights"];
    let (a, b, c) = (
        w["alpha"].as_f64().unwrap(),
        w["beta"].as_f64().unwrap(),
        w["gamma"].as_f64().unwrap(),
    );
    assert!((rns - (a * r + b * n + c * sv) / (a.abs() + b.abs() + c.abs())).abs() < 1e-9);
    // Ae = the known treatment + the disease itself (the entity the page names).
    assert_eq!(d["existing"].as_array().unwrap().len(), 2);
    assert_eq!(d["existing"][1]["id"], d["query"]["id"]);
    assert_eq!(d["existing"][1]["kind"], "Disease");
    assert_eq!(
        d["slice"]["ids"].as_array().unwrap().len(),
        3,
        "slice = existing (known + query) + candidates"
    );
    let (st, body, _) = get(&format!("{}/api/discover/Gene::5743", s.base));
    assert_eq!(st, 400, "{body}");
    let (st, _, _) = get(&format!(
        "{}/api/discover/Disease::DOID:10763?limit=0",
        s.base
    ));
    assert_eq!(st, 400);
    let (st, _, _) = get(&format!(
        "{}/api/discover/Disease::DOID:10763?weights=1,2",
        s.base
    ));
    assert_eq!(st, 400);

    let (st, body, _) = get(&format!("{}/api/openapi.json", s.base));
    assert_eq!(st, 200);
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    for p in [
        "/api/graph",
        "/api/search",
        "/api/node/{key}",
        "/api/paths",
        "/api/discover/{key}",
        "/api/slice",
        "/api/rns",
        "/api/partition",
        "/api/cypher",
        "/api/ask",
        "/api/runs",
        "/api/auth/login",
        "/api/auth/invite/{token}",
        "/api/annotate/questions/{id}/response",
        "/api/review/expert-rankings",
        "/api/admin/calibrations",
        "/api/review/progress",
        "/api/review/rankings",
        "/api/admin/invites",
        "/api/admin/invites/{id}",
    ] {
        assert!(doc["paths"].get(p).is_some(), "OpenAPI lacks {p}");
    }
    let (st, body, _) = get(&format!("{}/api/docs", s.base));
    assert!(
        st == 200
            && body.contains("GET /api/paths")
            && body.contains("PUT /api/annotate/questions/{id}/response"),
        "{body}"
    );

    for (url, status, code) in [
        ("/api/node/Compound::NOPE", 404, "unknown_node"),
        ("/api/search?q=", 400, "empty_query"),
        ("/api/search?q=a&kind=Planet", 400, "unknown_kind"),
        ("/api/nothing-here", 404, "no_such_endpoint"),
        ("/api/paths?from=&to=Compound::DB00945", 400, "empty_set"),
        (
            "/api/paths?from=Compound::DB00316&to=Compound::DB00945&max_hops=9",
            400,
            "bad_max_hops",
        ),
        (
            "/api/paths?from=Compound::X&to=Compound::DB00945",
            404,
            "unknown_node",
        ),
        ("/api/paths?to=Compound::DB00945", 400, "bad_query"),
    ] {
        let (st, body, _) = get(&format!("{}{url}", s.base));
        let e = assert_error(st, &body, status, code, url);
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

/// `POST /api/ask`, `GET /api/runs`, `GET /api/runs/{id}/questions/{qid}` on a served graph.
#[test]
fn ask_and_runs_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    import_hetionet(
        EXE,
        dir.path(),
        "id\tname\tkind\nCompound::DB00945\tAcetylsalicylic acid\tCompound\nCompound::DB00316\tAcetaminophen\tCompound\nDisease::DOID:10763\thypertension\tDisease\nGene::1\tA1BG\tGene\n",
        "source\tmetaedge\ttarget\nCompound::DB00945\tCtD\tDisease::DOID:10763\nCompound::DB00316\tCtD\tDisease::DOID:10763\nCompound::DB00945\tCbG\tGene::1\n",
    );
    let runs = dir.path().join("runs");
    let run = runs.join("offline-1234");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("manifest.json"),
        r#"{"format":"serenqa-run","run_id":"offline-1234","label":"offline","status":"complete"}"#,
    )
    .unwrap();
    std::fs::write(run.join("aggregate.json"), r#"{"label":"offline","judge":"proxy","table2":{"all":{"hit":50.0,"f1":40.0,"exe":100.0,"n":2}},"partitions":[]}"#).unwrap();
    let rec = |qid: u32, f1: f64| {
        serde_json::to_string(&serenqa_pipeline::trace::T1Record {
            key: format!("t1:{qid}"),
            qid,
            group: "one_hop".into(),
            hit: f1,
            f1,
            ..Default::default()
        })
        .unwrap()
    };
    std::fs::write(
        run.join("t1.jsonl"),
        format!("{}\n{}\n", rec(7, 1.0), rec(8, 0.0)),
    )
    .unwrap();
    let s = spawn_serve(
        EXE,
        dir.path(),
        &["--graph", "g.snap", "--dist", "nodist", "--runs", "runs"],
    )
    .with_dir(dir);

    let (st, body) = post_json(
        &format!("{}/api/ask", s.base),
        r#"{"question":"Which compounds treat hypertension?"}"#,
    );
    assert_eq!(st, 200, "{body}");
    let r: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        r["cypher"].as_str().unwrap().contains("TREATS_CtD"),
        "{body}"
    );
    let mut answers: Vec<&str> = r["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    answers.sort();
    assert_eq!(answers, ["DB00316", "DB00945"]);
    assert_eq!(r["stages"][0]["name"], "retrieval");
    assert_eq!(r["agents"]["retrieval"], "offline");

    // The same question as server-sent events: the stages in order, then the same result.
    let (st, stream, headers) = get(&format!(
        "{}/api/ask/stream?question=Which%20compounds%20treat%20hypertension%3F",
        s.base
    ));
    assert_eq!(st, 200, "{stream}");
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream")),
        "{headers:?}"
    );
    let events: Vec<serde_json::Value> = stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["stage", "stage", "stage", "result"], "{stream}");
    assert_eq!(
        events
            .iter()
            .take(3)
            .map(|e| e["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["retrieval", "exploration", "scoring"]
    );
    assert_eq!(events[3]["answers"], r["answers"]);
    let (st, reply, _) = get(&format!("{}/api/ask/stream?question=%20", s.base));
    assert_eq!(st, 400, "{reply}");

    for (body, code) in [
        (r#"{"question":"  "}"#, "empty_question"),
        (r#"{"question":"x","model":"gpt-9"}"#, "unknown_model"),
        ("{", "bad_json"),
    ] {
        let (st, reply) = post_json(&format!("{}/api/ask", s.base), body);
        assert_error(st, &reply, 400, code, body);
    }

    let (_, doc, _) = get(&format!("{}/api/openapi.json", s.base));
    for p in [
        "/api/ask",
        "/api/runs",
        "/api/runs/compare",
        "/api/runs/{id}/questions",
        "/api/runs/{id}/questions/{qid}",
    ] {
        assert!(doc.contains(p), "OpenAPI lists {p}");
    }
    let (st, body, _) = get(&format!("{}/api/runs", s.base));
    assert_eq!(st, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["runs"][0]["id"], "offline-1234");
    assert_eq!(v["runs"][0]["aggregate"]["table2"]["all"]["f1"], 40.0);
    assert_eq!(v["runs"][0]["settings"]["label"], "offline");
    assert_eq!(
        v["runs"][0]["settings"]["beam"], 30,
        "a manifest without settings has the defaults"
    );
    // A run compared with itself: every Δ is 0, each question a tie.
    let (st, body, _) = get(&format!(
        "{}/api/runs/compare?a=offline-1234&b=offline-1234",
        s.base
    ));
    assert_eq!(st, 200, "{body}");
    let c: serde_json::Value = serde_json::from_str(&body).unwrap();
    let f1 = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["table"] == "table2" && r["column"] == "all" && r["metric"] == "f1")
        .expect("T1 F1 row");
    assert_eq!(
        (
            f1["n"].as_u64(),
            f1["delta"].as_f64(),
            f1["ties"].as_u64(),
            f1["mean_a"].as_f64()
        ),
        (Some(2), Some(0.0), Some(2), Some(50.0))
    );
    for (url, status, code) in [
        ("/api/runs/compare?a=offline-1234&b=nope", 404, "no_run"),
        ("/api/runs/compare?a=offline-1234", 400, "bad_query"),
        ("/api/runs/compare?a=..&b=offline-1234", 404, "no_run"),
    ] {
        let (st, body, _) = get(&format!("{}{url}", s.base));
        assert_error(st, &body, status, code, url);
    }
    let (st, body, _) = get(&format!("{}/api/runs/offline-1234/questions", s.base));
    assert_eq!(st, 200, "{body}");
    let qs: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(
        qs.iter()
            .map(|q| q["qid"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [7, 8]
    );
    let (st, body, _) = get(&format!("{}/api/runs/offline-1234/questions/7", s.base));
    assert_eq!(st, 200, "{body}");
    let q: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(q["t1"][0]["f1"], 1.0);
    for (url, status, code) in [
        ("/api/runs/offline-1234/questions/99", 404, "no_trace"),
        ("/api/runs/nope/questions/7", 404, "no_trace"),
        ("/api/runs/offline-1234/questions/x", 400, "bad_qid"),
    ] {
        let (st, body, _) = get(&format!("{}{url}", s.base));
        assert_error(st, &body, status, code, url);
    }
}
