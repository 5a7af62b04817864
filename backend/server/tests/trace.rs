//! `GET /api/runs/{id}/trace/{qid}` on a live `serenqa serve`: one question of a run as the
//! trace page reads it (typed `QuestionTrace`: names, hits, metrics, the beam's tree), and
//! one-line JSON errors with a code for a bad run id, an unknown question and a bad key.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_pipeline::reasoning::Judged;
use serenqa_pipeline::retrieval::Retrieved;
use serenqa_pipeline::trace::{T1Record, T2Scores, T3Record, T3Scores};
use serenqa_shared::api::QuestionTrace;
use serenqa_testkit::http::{assert_error_line, get};
use serenqa_testkit::serve::{import_hetionet, spawn_serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

/// A four-node graph and one run with question 7 (T1 and one exploration) and question 9
/// (T1 only); the trace file ends in a half-written line, as a running eval leaves it.
fn start() -> Served {
    let dir = tempfile::tempdir().unwrap();
    import_hetionet(
        EXE,
        dir.path(),
        "id\tname\tkind\nCompound::DB00945\tAcetylsalicylic acid\tCompound\nCompound::DB00316\tAcetaminophen\tCompound\nDisease::DOID:10763\thypertension\tDisease\nGene::5743\tPTGS2\tGene\n",
        "source\tmetaedge\ttarget\nCompound::DB00945\tCtD\tDisease::DOID:10763\nCompound::DB00945\tCbG\tGene::5743\nCompound::DB00316\tCbG\tGene::5743\n",
    );
    let run = dir.path().join("runs").join("offline-1234");
    std::fs::create_dir_all(&run).unwrap();
    let mut manifest = serenqa_pipeline::runs_dir::Manifest {
        format: "serenqa-run".into(),
        run_id: "offline-1234".into(),
        label: "offline".into(),
        status: "complete".into(),
        ..Default::default()
    };
    manifest.explore.beam_width = 10;
    manifest.explore.nodes_per_node = 5;
    std::fs::write(
        run.join("manifest.json"),
        serde_json::to_string(&manifest).unwrap(),
    )
    .unwrap();
    let t1 =
        |qid: u32, answers: &[&str], gold: &[&str], f1: f64| {
            serde_json::to_string(&T1Record {
            key: format!("t1:{qid}"),
            qid,
            pattern: "1.1".into(),
            group: "one_hop".into(),
            question: "Which compounds treat hypertension?".into(),
            agent: "offline".into(),
            gold: gold.iter().map(std::string::ToString::to_string).collect(),
            retrieved: Retrieved {
                cypher: Some(
                    "MATCH (c:Compound)-[:TREATS_CtD]->(d:Disease {name: 'hypertension'}) RETURN c"
                        .into(),
                ),
                executable: true,
                error: None,
                answers: answers.iter().map(std::string::ToString::to_string).collect(),
                rows: answers.len(),
            },
            hit: 0.5,
            f1,
            // `call: None` and any field added later.
            ..T1Record::default()
        })
        .unwrap()
        };
    let judged = |score: f64| Judged {
        score,
        judge: "proxy".into(),
        unparsable: false,
    };
    let t3 = T3Record {
        key: "t3:7:llm:with".into(),
        qid: 7,
        pattern: "1.1".into(),
        partition: "llm".into(),
        mode: "with".into(),
        question: "Which compounds treat hypertension?".into(),
        roots: vec!["DOID:10763".into()],
        gold: vec!["DB00316".into()],
        gold_paths: vec![],
        levels: vec![],
        // As `explore::path_line` writes them: end, then root -[REL]-> node … .
        paths: vec![
            "DB00945: DOID:10763 (hypertension, Disease) <-[TREATS_CtD]- DB00945 (Acetylsalicylic acid, Compound)".into(),
            "5743: DOID:10763 (hypertension, Disease) <-[TREATS_CtD]- DB00945 (Acetylsalicylic acid, Compound) -[BINDS_CbG]-> 5743 (PTGS2, Gene)".into(),
            "DB00316: DOID:10763 (hypertension, Disease) <-[TREATS_CtD]- DB00945 (Acetylsalicylic acid, Compound) -[BINDS_CbG]-> 5743 (PTGS2, Gene) <-[BINDS_CbG]- DB00316 (Acetaminophen, Compound)".into(),
        ],
        leaves: vec!["DB00316".into()],
        leaf_types: vec!["Compound".into()],
        summaries: vec!["Aspirin treats hypertension and binds PTGS2.".into()],
        t2: Some(T2Scores { faithfulness: judged(4.0), comprehensiveness: judged(3.0), seren_cov: 0.0 }),
        t3: Some(T3Scores { relevance: judged(5.0), type_match: 1.0, seren_hit: 1.0 }),
        calls: vec![],
        error: None,
    };
    std::fs::write(
        run.join("t1.jsonl"),
        format!(
            "{}\n{}\n",
            t1(7, &["DB00945", "DB00316"], &["DB00945", "DB99999"], 0.5),
            t1(9, &[], &["DB00945"], 0.0)
        ),
    )
    .unwrap();
    std::fs::write(
        run.join("t3.jsonl"),
        format!(
            "{}\n{{\"key\":\"t3:11:llm",
            serde_json::to_string(&t3).unwrap()
        ),
    )
    .unwrap();

    spawn_serve(
        EXE,
        dir.path(),
        &[
            "--graph",
            "g.snap",
            "--dist",
            "nodist",
            "--runs",
            "runs",
            "--no-baseline",
        ],
    )
    .with_dir(dir)
}

#[test]
fn a_question_trace_reads_as_names_hits_metrics_and_a_tree() {
    let s = start();
    let (st, body) = get(&format!("{}/api/runs/offline-1234/trace/7", s.base));
    assert_eq!(st, 200, "{body}");
    let t: QuestionTrace = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (t.run_id.as_str(), t.qid, t.question.as_str()),
        ("offline-1234", 7, "Which compounds treat hypertension?")
    );
    assert_eq!(
        (t.settings.beam, t.settings.nodes),
        (10, 5),
        "the run's settings come along"
    );
    assert_eq!(
        (t.prev_qid, t.next_qid),
        (None, Some(9)),
        "neighbours in the run (the torn line's question 11 is not one)"
    );
    assert!(t.other_graph, "DB99999 is not in the served graph");

    // T1: predicted vs gold, each hit marked, names from the graph.
    let r = t.retrieval.expect("T1 of question 7");
    assert!(r
        .cypher
        .as_deref()
        .is_some_and(|c| c.contains("TREATS_CtD")));
    let pred: Vec<(&str, &str, bool)> = r
        .predicted
        .iter()
        .map(|e| (e.id.as_str(), e.name.as_str(), e.hit))
        .collect();
    assert_eq!(
        pred,
        [
            ("DB00945", "Acetylsalicylic acid", true),
            ("DB00316", "Acetaminophen", false)
        ]
    );
    let gold: Vec<(&str, &str, bool)> = r
        .gold
        .iter()
        .map(|e| (e.id.as_str(), e.name.as_str(), e.hit))
        .collect();
    assert_eq!(
        gold,
        [
            ("DB00945", "Acetylsalicylic acid", true),
            ("DB99999", "", false)
        ]
    );
    let m: Vec<(&str, f64, f64)> = r
        .metrics
        .iter()
        .map(|m| (m.key.as_str(), m.value, m.max))
        .collect();
    assert_eq!(m, [("hit", 0.5, 1.0), ("f1", 0.5, 1.0), ("exe", 1.0, 1.0)]);
    assert!(r
        .metrics
        .iter()
        .all(|m| !m.label.is_empty() && !m.meaning.is_empty()));

    // T2/T3: the recorded scores, the leaves against the serendipity set, the beam as a tree.
    assert_eq!(t.explorations.len(), 1);
    let e = &t.explorations[0];
    assert_eq!(
        (e.partition_title.as_str(), e.with_summaries),
        ("LLM Ensemble", true)
    );
    let m: Vec<(&str, f64, f64, &str)> = e
        .metrics
        .iter()
        .map(|m| (m.key.as_str(), m.value, m.max, m.judge.as_str()))
        .collect();
    assert_eq!(
        m,
        [
            ("faithfulness", 4.0, 5.0, "proxy"),
            ("comprehensiveness", 3.0, 5.0, "proxy"),
            ("seren_cov", 0.0, 1.0, ""),
            ("relevance", 5.0, 5.0, "proxy"),
            ("type_match", 1.0, 1.0, ""),
            ("seren_hit", 1.0, 1.0, "")
        ]
    );
    assert!(e.leaves[0].hit && e.gold[0].hit && e.gold[0].name == "Acetaminophen");
    // (depth, parent, entity name, relation, forward, hit) per tree node.
    type Row<'a> = (usize, Option<usize>, &'a str, &'a str, bool, bool);
    let tree: Vec<Row> = e
        .tree
        .iter()
        .map(|n| {
            (
                n.depth,
                n.parent,
                n.entity.name.as_str(),
                n.relation.as_str(),
                n.forward,
                n.entity.hit,
            )
        })
        .collect();
    assert_eq!(
        tree,
        [
            (0, None, "hypertension", "", true, false),
            (
                1,
                Some(0),
                "Acetylsalicylic acid",
                "TREATS_CtD",
                false,
                false
            ),
            (2, Some(1), "PTGS2", "BINDS_CbG", true, false),
            (3, Some(2), "Acetaminophen", "BINDS_CbG", false, true),
        ],
        "shared prefixes are one branch"
    );
    assert_eq!(
        e.summaries,
        ["Aspirin treats hypertension and binds PTGS2."]
    );

    // A question with T1 only.
    let (st, body) = get(&format!("{}/api/runs/offline-1234/trace/9", s.base));
    assert_eq!(st, 200, "{body}");
    let t: QuestionTrace = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (t.prev_qid, t.next_qid, t.explorations.len()),
        (Some(7), None, 0)
    );

    // The endpoint is in the OpenAPI document with its typed reply.
    let (_, doc) = get(&format!("{}/api/openapi.json", s.base));
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
    assert!(
        doc["paths"].get("/api/runs/{id}/trace/{qid}").is_some(),
        "OpenAPI lists the trace endpoint"
    );
    assert!(
        doc["components"]["schemas"].get("QuestionTrace").is_some(),
        "OpenAPI has the QuestionTrace schema"
    );
}

#[test]
fn bad_run_ids_and_keys_are_one_line_json_errors() {
    let s = start();
    let long = "x".repeat(201);
    for (url, status, code) in [
        ("/api/runs/nope/trace/7".to_string(), 404, "no_run"),
        ("/api/runs/..%2F..%2Fetc/trace/7".to_string(), 404, "no_run"),
        ("/api/runs/.hidden/trace/7".to_string(), 404, "no_run"),
        (format!("/api/runs/{long}/trace/7"), 400, "bad_run"),
        (
            "/api/runs/offline-1234/trace/11".to_string(),
            404,
            "no_question",
        ),
        (
            "/api/runs/offline-1234/trace/99".to_string(),
            404,
            "no_question",
        ),
        (
            "/api/runs/offline-1234/trace/t3:7:llm:with".to_string(),
            400,
            "bad_qid",
        ),
        (
            "/api/runs/offline-1234/trace/-1".to_string(),
            400,
            "bad_qid",
        ),
    ] {
        let (st, body) = get(&format!("{}{url}", s.base));
        assert_error_line(st, &body, status, code, &url);
    }
}

/// The loading shell's plain search form (`GET /api/find?q=`), which works before the app
/// has loaded: a name goes to its entity page, a question or an unmatched name to Ask.
#[test]
fn the_shell_search_form_sends_names_to_entities_and_questions_to_ask() {
    let s = start();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .build()
        .into();
    let location = |q: &str| {
        let resp = agent
            .get(&format!("{}/api/find", s.base))
            .query("q", q)
            .call()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 303, "{q}");
        resp.headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(location("hypertension"), "/entity/Disease::DOID:10763");
    assert_eq!(location("  acetylsalicylic  "), "/entity/Compound::DB00945");
    assert_eq!(
        location("Which compounds treat hypertension?"),
        "/?q=Which%20compounds%20treat%20hypertension%3F"
    );
    assert_eq!(
        location("zzzz"),
        "/?q=zzzz",
        "nothing matches: Ask says what it understood"
    );
    assert_eq!(location(""), "/");
}
