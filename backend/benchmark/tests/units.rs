//! Small, hand-made cases: global conflict resolution in edge removal, the expert-rankings
//! format, LLM reply parsing, and the questionnaire import.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_benchmark::partition::{
    ensemble, parse_score_list, parse_scores, scoring_prompt, ExpertPartition, ExpertRankings,
    LoadExpertRankings, Obviousness, ObviousnessSignal, Scorer, ScoringRequest,
};
use serenqa_benchmark::query::{QEdge, QNode, Query, View};
use serenqa_benchmark::removal::{resolve, verify, Task};
use serenqa_graph::{Graph, GraphBuilder, GraphMeta, NodeId, RelationType};

/// Compounds c1..c3, diseases d1..d2; c1,c2,c3 treat d1; c1,c2 treat d2; c3 binds g1.
fn tiny() -> (Graph, Vec<NodeId>) {
    let mut b = GraphBuilder::new(GraphMeta {
        name: "tiny".into(),
        ..Default::default()
    });
    let c = b.node_type("Compound", "Compound");
    let d = b.node_type("Disease", "Disease");
    let gt = b.node_type("Gene", "Gene");
    let rel = |name: &str, verb: &str, ab: &str, s, t| RelationType {
        name: name.into(),
        verb: verb.into(),
        abbrev: ab.into(),
        source_type: Some(s),
        target_type: Some(t),
        directed: false,
    };
    let treats = b
        .relation(rel("TREATS_CtD", "treats", "CtD", c, d))
        .unwrap();
    let binds = b.relation(rel("BINDS_CbG", "binds", "CbG", c, gt)).unwrap();
    let c1 = b.add_node(c, "DB1", "one");
    let c2 = b.add_node(c, "DB2", "two");
    let c3 = b.add_node(c, "DB3", "three");
    let d1 = b.add_node(d, "DOID:1", "first disease");
    let d2 = b.add_node(d, "DOID:2", "second disease");
    let g1 = b.add_node(gt, "1", "G1");
    for (s, t) in [(c1, d1), (c2, d1), (c3, d1), (c1, d2), (c2, d2)] {
        b.add_edge(s, treats, t, None);
    }
    b.add_edge(c3, binds, g1, None);
    (b.build(), vec![c1, c2, c3, d1, d2, g1])
}

#[test]
fn removal_resolves_conflicts_globally_and_drops_the_unsatisfiable() {
    let (g, n) = tiny();
    let (c1, c2, c3, d1, d2) = (n[0], n[1], n[2], n[3], n[4]);
    let treats = g.relation_id("TREATS_CtD").unwrap();
    let ctype = g.node_type(c1);
    let dtype = g.node_type(d1);
    // Q1: compounds treating d1 = {c1, c2, c3}; serendipity c1 → cut c1–d1.
    let q1 = Query {
        nodes: vec![QNode::Class(ctype), QNode::Entity(d1)],
        edges: vec![QEdge {
            start: 0,
            end: 1,
            rel: treats,
        }],
    };
    // Q2: diseases treated by c1 = {d1, d2}; existing d1 needs exactly the edge Q1 cuts.
    let q2 = Query {
        nodes: vec![QNode::Class(dtype), QNode::Entity(c1)],
        edges: vec![QEdge {
            start: 1,
            end: 0,
            rel: treats,
        }],
    };
    // Q3: compounds treating d2 = {c1, c2}; serendipity c2 → cut c2–d2 (no conflict).
    let q3 = Query {
        nodes: vec![QNode::Class(ctype), QNode::Entity(d2)],
        edges: vec![QEdge {
            start: 0,
            end: 1,
            rel: treats,
        }],
    };
    let full = View::full(&g);
    let (a1, a2, a3) = (
        q1.answers(full, 1000).unwrap(),
        q2.answers(full, 1000).unwrap(),
        q3.answers(full, 1000).unwrap(),
    );
    assert_eq!(a1, vec![c1, c2, c3]);
    assert_eq!(a2, vec![d1, d2]);
    let (e1, s1, e2, s2, e3, s3) = ([c2, c3], [c1], [d1], [d2], [c1], [c2]);
    let tasks = vec![
        Task {
            query: &q1,
            candidates: &a1,
            existing: &e1,
            serendipity: &s1,
        },
        Task {
            query: &q2,
            candidates: &a2,
            existing: &e2,
            serendipity: &s2,
        },
        Task {
            query: &q3,
            candidates: &a3,
            existing: &e3,
            serendipity: &s3,
        },
    ];
    let r = resolve(&g, &tasks);
    // Q1's only cut removes the edge Q2's existing answer relies on: one of the two must go;
    // Q1 comes first, so Q2 is dropped (and its own cut, c1–d2, is not made).
    assert!(r.dropped[1].is_some(), "{:?}", r.dropped);
    assert!(
        r.dropped[0].is_none() && r.dropped[2].is_none(),
        "{:?}",
        r.dropped
    );
    let view = View::without(&g, &r.removed);
    verify(view, &tasks[0]).unwrap();
    verify(view, &tasks[2]).unwrap();
    assert!(verify(view, &tasks[1]).is_err());
    assert_eq!(r.removed.len(), 2, "only the c1–d1 and c2–d2 edges");
}

#[test]
fn cyclic_and_chain_queries_evaluate_like_their_definition() {
    let (g, n) = tiny();
    let (c3, d1, g1) = (n[2], n[3], n[5]);
    let treats = g.relation_id("TREATS_CtD").unwrap();
    let binds = g.relation_id("BINDS_CbG").unwrap();
    // Diseases treated by a compound that binds G1: only d1 (via c3).
    let q = Query {
        nodes: vec![
            QNode::Class(g.node_type(d1)),
            QNode::Class(g.node_type(c3)),
            QNode::Entity(g1),
        ],
        edges: vec![
            QEdge {
                start: 1,
                end: 0,
                rel: treats,
            },
            QEdge {
                start: 1,
                end: 2,
                rel: binds,
            },
        ],
    };
    assert_eq!(q.answers(View::full(&g), 1000).unwrap(), vec![d1]);
    let w = q.witnesses(View::full(&g), d1, 10, 1000).unwrap().unwrap();
    assert_eq!(w.count, 1);
    // Over budget is an error, not a wrong answer.
    assert!(q.answers(View::full(&g), 1).is_err());
}

#[test]
fn expert_rankings_format_errors_are_one_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("e.json");
    for (text, needle) in [
        ("{", "not an expert-rankings file"),
        (
            r#"{"format":"other","version":1,"questions":[]}"#,
            "expected format",
        ),
        (
            r#"{"format":"serenqa-expert-rankings","version":1,"questions":[{"qid":1,"ranking":[]},{"qid":1,"ranking":[]}]}"#,
            "ranked twice",
        ),
    ] {
        std::fs::write(&p, text).unwrap();
        let e = ExpertRankings::load(&p).unwrap_err().to_string();
        assert!(e.contains(needle) && !e.contains('\n'), "{e}");
    }
    let (g, n) = tiny();
    std::fs::write(&p, r#"{"format":"serenqa-expert-rankings","version":1,"questions":[{"qid":4,"question":"Q?","ranking":["Compound::DB9","Compound::DB2"]}]}"#).unwrap();
    let r = ExpertRankings::load(&p).unwrap();
    let er = r.get(4).unwrap();
    let ac = vec![n[0], n[1], n[2]];
    let (part, ignored) = er.partition(&g, "Q?", &ac).unwrap();
    assert_eq!((part.serendipity, ignored), (vec![n[1]], 1));
    assert!(er.partition(&g, "Another question?", &ac).is_err());
    assert!(
        er.partition(&g, "Q?", &[n[0], n[2]]).is_err(),
        "names none of these candidates"
    );
}

#[test]
fn llm_replies_parse_or_fail_clearly() {
    let (g, n) = tiny();
    let req = ScoringRequest::new(&g, 1, "Which compounds treat first disease?", &[n[0], n[1]]);
    let (sys, user) = scoring_prompt(&req);
    assert!(sys.contains("0 and 20") && user.contains("DB1") && user.contains("DB2"));
    let ok = "Sure:\n```json\n{\"scores\": [{\"id\": \"DB2\", \"score\": 15}, {\"id\": \"DB1\", \"score\": 3}]}\n```";
    assert_eq!(parse_scores(&req, ok).unwrap(), vec![3.0, 15.0]);
    assert!(parse_scores(&req, "no json")
        .unwrap_err()
        .contains("no JSON"));
    assert!(parse_scores(&req, r#"{"scores":[{"id":"DB1","score":3}]}"#)
        .unwrap_err()
        .contains("DB2"));
    assert!(parse_scores(
        &req,
        r#"{"scores":[{"id":"DB1","score":30},{"id":"DB2","score":1}]}"#
    )
    .unwrap_err()
    .contains("outside"));
    // The offline scorer is labelled as not an LLM and gives distinct 0–20 scores.
    let s = Obviousness {
        graph: &g,
        signal: ObviousnessSignal::Degree,
        marginals: None,
    };
    assert!(!s.is_llm() && s.label().contains("not an LLM"));
    let req3 = ScoringRequest::new(&g, 1, "q", &[n[0], n[1], n[2]]);
    let sc = s.score(&req3).unwrap();
    assert_eq!(sc.len(), 3);
    // c1 and c2 have degree 2, c3 degree 2 too (treats d1, binds g1): ties by node id, so
    // the scores are 0, 10, 20 in id order.
    assert_eq!(sc, vec![0.0, 10.0, 20.0]);
}

#[test]
fn ensemble_score_lists_are_validated_strictly() {
    assert_eq!(parse_score_list(3, "5, 7, 9").unwrap(), vec![5.0, 7.0, 9.0]);
    assert_eq!(
        parse_score_list(3, " [0,20, 3]. ").unwrap(),
        vec![0.0, 20.0, 3.0]
    );
    assert_eq!(
        parse_score_list(2, "```\n4, 2\n```").unwrap(),
        vec![4.0, 2.0]
    );
    for (reply, needle) in [
        ("5, 7", "2 scores for 3 answers"),
        ("5, 7, 9, 11", "4 scores for 3 answers"),
        ("5, 5, 9", "given twice"),
        ("5, 21, 9", "outside 0–20"),
        ("5, -1, 9", "not an integer"),
        ("5, 7.5, 9", "not an integer"),
        ("high, low, mid", "not an integer"),
        ("", "empty"),
        ("Scores: 5, 7, 9", "not an integer"),
    ] {
        let e = parse_score_list(3, reply).unwrap_err();
        assert!(e.contains(needle) && !e.contains('\n'), "{reply:?}: {e}");
    }
}

/// A scripted scorer: fixed scores, or a failure.
struct Fixed(&'static str, bool, Result<Vec<f64>, String>);

impl Scorer for Fixed {
    fn label(&self) -> String {
        self.0.into()
    }
    fn is_llm(&self) -> bool {
        self.1
    }
    fn score(&self, _: &ScoringRequest) -> Result<Vec<f64>, String> {
        self.2.clone()
    }
}

#[test]
fn a_failing_llm_is_dropped_for_the_question_and_the_rest_averaged() {
    let (g, n) = tiny();
    let req = ScoringRequest::new(&g, 7, "q", &[n[0], n[1], n[2]]);
    let scorers: Vec<Box<dyn Scorer>> = vec![
        Box::new(Fixed("llm:a", true, Ok(vec![0.0, 10.0, 20.0]))),
        Box::new(Fixed(
            "llm:b",
            true,
            Err("score 5 is given twice (after 3 attempts)".into()),
        )),
        Box::new(Fixed("llm:c", true, Ok(vec![20.0, 12.0, 0.0]))),
    ];
    let o = ensemble(&scorers, &req).unwrap();
    assert_eq!(o.mean, vec![10.0, 11.0, 10.0]);
    // b = max(1, ⌊0.2·3⌋) = 1: the highest mean.
    assert_eq!(o.partition.unwrap().serendipity, vec![n[1]]);
    assert_eq!(o.dropped.len(), 1);
    assert_eq!(
        (o.dropped[0].qid, o.dropped[0].scorer.as_str()),
        (7, "llm:b")
    );
    // Every model dropped: no partition for this question (the build goes on).
    let none: Vec<Box<dyn Scorer>> = vec![Box::new(Fixed("llm:b", true, Err("x".into())))];
    let o = ensemble(&none, &req).unwrap();
    assert!(o.partition.is_none() && o.dropped.len() == 1);
    // An offline scorer failing is a bug, not a dropped model.
    let offline: Vec<Box<dyn Scorer>> = vec![Box::new(Fixed(
        "offline proxy: x (not an LLM)",
        false,
        Err("broken".into()),
    ))];
    assert!(ensemble(&offline, &req).is_err());
}

#[test]
fn questionnaire_imports_and_links_drugbank_ids() {
    use serenqa_benchmark::questionnaire::{link, overlap, Link, Questionnaire};
    let Some(data) = common::shared_data() else {
        panic!("no ../shared/data")
    };
    let q = Questionnaire::load(&data.join("serenqa-questionnaire")).expect("load questionnaire");
    assert_eq!(q.batches.len(), 14);
    assert_eq!(q.items().count(), 1529);
    let g = common::hetionet();
    match link(
        g,
        "Bortezomib",
        Some("https://go.drugbank.com/drugs/DB00188"),
    ) {
        Link::ById(n) => assert_eq!(g.name(n), "Bortezomib"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        link(g, "x", Some("https://smpdb.ca/view/SMP0000001")),
        Link::Unlinked
    );
    let o = overlap(g, &q);
    let db = &o.by_source["drugbank"];
    assert!(
        db.mentions > 3000 && db.linked_by_id > 0 && db.linked_by_id <= db.mentions,
        "{db:?}"
    );
    assert!(o.questions_any_candidate_linked > 0 && o.questions_any_candidate_linked <= 1529);
}
