//! Honest statistics of the tables and of run-vs-run comparisons, on records built in code
//! (no data needed): n per cell, "–" for n = 0 (never 0.000), bootstrap intervals, the
//! grammar-oracle label of the offline T1 row, proxy judges named as such, and the paired
//! comparison of two runs written to a runs directory.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_pipeline::compare::{compare_runs, markdown as compare_md};
use serenqa_pipeline::reasoning::Judged;
use serenqa_pipeline::report::{aggregate, markdown};
use serenqa_pipeline::runs_dir::{write_json, Manifest};
use serenqa_pipeline::trace::{T1Record, T2Scores, T3Record, T3Scores};
use serenqa_shared::results::GRAMMAR_ORACLE;
use serenqa_shared::tidy::{csv, HEADER};

fn t1(qid: u32, group: &str, f1: f64, agent: &str) -> T1Record {
    let mut r = T1Record {
        key: format!("t1:{qid}"),
        qid,
        group: group.into(),
        agent: agent.into(),
        hit: f1,
        f1,
        ..Default::default()
    };
    r.retrieved.executable = true;
    r
}

fn t3(qid: u32, partition: &str, hit: f64, judge: &str) -> T3Record {
    let j = |score| Judged {
        score,
        judge: judge.into(),
        unparsable: false,
    };
    T3Record {
        key: format!("t3:{qid}:{partition}:with"),
        qid,
        partition: partition.into(),
        mode: "with".into(),
        gold_paths: vec![format!("G{qid}: root -[R]-> G{qid}")],
        t2: Some(T2Scores {
            faithfulness: j(5.0),
            comprehensiveness: j(4.0),
            seren_cov: hit / 2.0,
        }),
        t3: Some(T3Scores {
            relevance: j(3.0),
            type_match: 1.0,
            seren_hit: hit,
        }),
        ..Default::default()
    }
}

fn parts() -> Vec<String> {
    ["llm", "expert", "sscore"]
        .iter()
        .map(std::string::ToString::to_string)
        .collect()
}

#[test]
fn empty_partition_has_no_value_and_cells_have_n_and_intervals() {
    let t1s: Vec<T1Record> = (0..40)
        .map(|q| {
            t1(
                q,
                if q % 2 == 0 { "one_hop" } else { "two_hop" },
                if q % 4 == 0 { 0.0 } else { 1.0 },
                "offline",
            )
        })
        .collect();
    let t3s: Vec<T3Record> = (0..40)
        .map(|q| t3(q, "llm", if q % 5 == 0 { 1.0 } else { 0.0 }, "proxy"))
        .chain((0..30).map(|q| t3(q, "sscore", 0.5, "proxy")))
        .collect();
    let a = aggregate("offline", &t1s, &t3s, &parts(), true, true, true, true);
    // Questions without a ground-truth path are not rational samples: T2 and the judge leave
    // them out (they would average SerenCov down as zeros), TypeMatch / SerenHit keep them.
    let mut with_irrational = t3s.clone();
    for q in 100..110 {
        let mut r = t3(q, "llm", 0.0, "proxy");
        r.gold_paths.clear();
        r.t2.as_mut().unwrap().seren_cov = 0.0;
        r.t3.as_mut().unwrap().relevance.score = 1.0;
        with_irrational.push(r);
    }
    let b = aggregate(
        "offline",
        &t1s,
        &with_irrational,
        &parts(),
        true,
        true,
        true,
        true,
    );
    let (ra, rb) = (
        &a.table3_reasoning.as_ref().unwrap()["llm"],
        &b.table3_reasoning.as_ref().unwrap()["llm"],
    );
    assert_eq!((ra.n, rb.n), (40, 40), "T2 counts rational samples");
    assert_eq!(ra.seren_cov, rb.seren_cov);
    let (ea, eb) = (
        &a.table3_exploration.as_ref().unwrap()["llm"],
        &b.table3_exploration.as_ref().unwrap()["llm"],
    );
    assert_eq!((eb.n, eb.n_rational), (50, Some(40)));
    assert_eq!(
        ea.relevance, eb.relevance,
        "the judge averages rational samples"
    );
    assert!(
        (eb.seren_hit - 8.0 / 50.0).abs() < 1e-12,
        "SerenHit over every question"
    );
    assert!(markdown(&b, &[]).contains("50 (40 rational)"));
    let e = &a.table3_exploration.as_ref().unwrap()["expert"];
    assert_eq!(e.n, 0);
    assert!(e.ci.is_empty(), "no interval without questions");
    let l = &a.table3_exploration.as_ref().unwrap()["llm"];
    assert_eq!(l.n, 40);
    assert!((l.seren_hit - 0.2).abs() < 1e-12);
    let ci = l.ci["seren_hit"];
    assert!(
        ci.lo < 0.2 && 0.2 < ci.hi && ci.lo >= 0.0 && ci.hi <= 1.0,
        "{ci:?}"
    );
    // A metric equal on every question still has an honest (exact, not zero-width) interval.
    let s = &a.table3_exploration.as_ref().unwrap()["sscore"];
    let c = s.ci["seren_hit"];
    assert!(c.lo < 0.5 && 0.5 < c.hi && c.hi - c.lo > 0.1, "{c:?}");
    // Deterministic: the same traces give the same intervals.
    assert_eq!(
        a,
        aggregate("offline", &t1s, &t3s, &parts(), true, true, true, true)
    );
    assert_eq!(a.retrieval, "offline");

    let md = markdown(&a, &[]);
    println!("{md}");
    let expl = md
        .lines()
        .find(|l| l.starts_with("| offline |") && l.contains("0.200"))
        .expect("the T3 row");
    assert!(
        expl.contains("| – | – | – | 0 |"),
        "expert cell is – with n 0: {expl}"
    );
    assert!(expl.contains("0.200 ["), "value with its interval: {expl}");
    assert!(
        expl.contains("| 40 (40 rational) |") && expl.contains("| 30 (30 rational) |"),
        "n per partition: {expl}"
    );
    assert!(
        md.contains(&format!("offline — {GRAMMAR_ORACLE}")),
        "the offline T1 row is a grammar oracle"
    );
    assert!(md.contains("Relevance (proxy)") && md.contains("Faithful. (proxy)"));
    assert!(
        !md.contains("0.000 | 0.000 | 0.000"),
        "no zeros for an empty partition"
    );

    let text = csv("run-1", &a);
    assert!(text.starts_with(HEADER));
    let expert = text
        .lines()
        .find(|l| l.contains(",expert,seren_hit,"))
        .unwrap();
    assert!(expert.ends_with(",expert,seren_hit,,,,0,0"), "{expert}");
    assert!(
        text.lines()
            .any(|l| l.contains(",llm,relevance_proxy,3.0000,2.3521,3.6479,40")),
        "proxy judge columns are named: {text}"
    );
    assert!(text
        .lines()
        .any(|l| l.starts_with("run-1,offline,table2,") && l.contains(GRAMMAR_ORACLE)));
}

#[test]
fn an_llm_retriever_is_not_labelled_an_oracle() {
    let t1s: Vec<T1Record> = (0..4).map(|q| t1(q, "one_hop", 1.0, "gpt-x")).collect();
    let a = aggregate("gpt-x", &t1s, &[], &parts(), true, true, false, false);
    let md = markdown(&a, &[]);
    assert!(
        md.contains("| gpt-x |") && !md.contains(GRAMMAR_ORACLE),
        "{md}"
    );
}

fn write_run(dir: &std::path::Path, id: &str, beam: usize, t1s: &[T1Record], t3s: &[T3Record]) {
    let d = dir.join(id);
    std::fs::create_dir_all(&d).unwrap();
    let mut m = Manifest {
        run_id: id.into(),
        label: "offline".into(),
        status: "complete".into(),
        created_unix: 1_796_166_000,
        tasks: vec!["t1".into(), "t2".into(), "t3".into()],
        partitions: parts(),
        ..Default::default()
    };
    m.explore.beam_width = beam;
    m.roles.insert("retrieval".into(), "offline".into());
    write_json(&d.join("manifest.json"), &m).unwrap();
    let lines = |xs: Vec<String>| xs.join("\n") + "\n";
    std::fs::write(
        d.join("t1.jsonl"),
        lines(
            t1s.iter()
                .map(|r| serde_json::to_string(r).unwrap())
                .collect(),
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("t3.jsonl"),
        lines(
            t3s.iter()
                .map(|r| serde_json::to_string(r).unwrap())
                .collect(),
        ),
    )
    .unwrap();
}

#[test]
fn two_runs_compare_question_by_question() {
    let runs = tempfile::tempdir().unwrap();
    // A hits on questions 0..10, B on 5..25 of the same 40: B wins on 10..25, A on 0..5.
    let a3: Vec<T3Record> = (0..40)
        .map(|q| t3(q, "llm", if q < 10 { 1.0 } else { 0.0 }, "proxy"))
        .collect();
    let b3: Vec<T3Record> = (0..40)
        .map(|q| {
            t3(
                q,
                "llm",
                if (5..25).contains(&q) { 1.0 } else { 0.0 },
                "gpt-judge",
            )
        })
        .collect();
    let a1: Vec<T1Record> = (0..40).map(|q| t1(q, "one_hop", 1.0, "offline")).collect();
    // B answered only 30 of the T1 questions.
    let b1: Vec<T1Record> = (0..30)
        .map(|q| t1(q, "one_hop", if q == 3 { 0.0 } else { 1.0 }, "offline"))
        .collect();
    write_run(runs.path(), "run-a", 30, &a1, &a3);
    write_run(runs.path(), "run-b", 10, &b1, &b3);
    let c = compare_runs(runs.path(), "run-a", "run-b").expect("comparison");
    assert_eq!(c.a.beam, 30);
    assert_eq!(c.b.beam, 10);
    let row = |table: &str, column: &str, metric: &str| {
        c.rows
            .iter()
            .find(|r| {
                r.table == table && r.row != "without" && r.column == column && r.metric == metric
            })
            .unwrap()
            .clone()
    };
    let hit = row("table3_exploration", "llm", "seren_hit");
    assert_eq!((hit.n_a, hit.n_b, hit.n), (40, 40, 40));
    assert!((hit.mean_a - 0.25).abs() < 1e-12 && (hit.mean_b - 0.5).abs() < 1e-12);
    assert!((hit.delta.unwrap() - 0.25).abs() < 1e-12);
    let ci = hit.ci.unwrap();
    assert!(ci.lo < 0.25 && 0.25 < ci.hi, "{ci:?}");
    assert_eq!(hit.a_wins, vec![0, 1, 2, 3, 4]);
    assert_eq!(hit.b_wins, (10..25).collect::<Vec<u32>>());
    assert_eq!(hit.ties, 20);
    assert!(hit.note.is_none());
    // Only paired questions count; the judged metric says its judges differ.
    let f1 = row("table2", "one_hop", "f1");
    assert_eq!((f1.n_a, f1.n_b, f1.n), (40, 30, 30));
    assert_eq!(f1.a_wins, vec![3]);
    let rel = row("table3_exploration", "llm", "relevance");
    assert!(
        rel.note
            .as_deref()
            .is_some_and(|n| n.contains("proxy") && n.contains("gpt-judge")),
        "{:?}",
        rel.note
    );
    // An empty partition pairs nothing: no Δ.
    let ex = row("table3_exploration", "expert", "seren_hit");
    assert_eq!((ex.n, ex.delta), (0, None));
    let text = compare_md(&c);
    println!("{text}");
    assert!(text.contains("+0.250 [") && text.contains("Q10, Q11"));
    assert!(
        text.contains(&format!("A's Table 2 rows: offline — {GRAMMAR_ORACLE}")),
        "{text}"
    );
    // The same inputs, the same intervals; unknown or hostile ids are errors.
    assert_eq!(c, compare_runs(runs.path(), "run-a", "run-b").unwrap());
    assert!(compare_runs(runs.path(), "run-a", "nope")
        .unwrap_err()
        .contains("no run"));
    assert!(compare_runs(runs.path(), "../run-a", "run-b").is_err());
    // A record still being written (no newline yet) is left out; a broken line is an error.
    let t3b = runs.path().join("run-b").join("t3.jsonl");
    let mut text = std::fs::read_to_string(&t3b).unwrap();
    text.push_str("{\"key\":\"t3:99:llm:wi");
    std::fs::write(&t3b, &text).unwrap();
    assert_eq!(c, compare_runs(runs.path(), "run-a", "run-b").unwrap());
    std::fs::write(&t3b, text + "th\"}\n").unwrap();
    let e = compare_runs(runs.path(), "run-a", "run-b").unwrap_err();
    assert!(e.contains("run run-b: t3.jsonl line 41"), "{e}");
}
