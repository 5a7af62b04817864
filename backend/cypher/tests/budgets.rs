//! Resource budgets and read-only checks on a small graph built here, so they run on every
//! machine (no data needed): each budget is hit by the query that would otherwise exhaust
//! it, ends with a `budget exceeded: <which>: …` error, and legitimate queries still answer
//! exactly. `budget_memory.rs` checks the process memory while the hostile queries run.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::time::Duration;

use serenqa_cypher::{execute, Budget, ErrorKind, Options, Out};
use serenqa_graph::Graph;

mod common;
use common::graph;

fn opts(budget: Budget) -> Options {
    Options {
        budget,
        ..Default::default()
    }
}

/// Runs `q` and returns its budget error message (panics on success or another error).
fn budget_error(g: &Graph, q: &str, budget: Budget) -> String {
    let e = execute(g, q, &opts(budget)).expect_err(q);
    assert_eq!(e.kind, ErrorKind::Budget, "{q}: {e}");
    let msg = e.to_string();
    assert!(msg.starts_with("budget exceeded: "), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    msg
}

fn count(g: &Graph, q: &str) -> i64 {
    let r = execute(g, q, &Options::default()).unwrap_or_else(|e| panic!("{q}: {e}"));
    match r.rows.first().and_then(|row| row.first()) {
        Some(Out::Int(n)) => *n,
        other => panic!("{q}: {other:?}"),
    }
}

#[test]
fn doubling_a_string_hits_the_value_cap() {
    let g = graph();
    let msg = budget_error(
        &g,
        r#"RETURN size(reduce(s = "xx", i IN range(1,40) | s + s)) AS n"#,
        Budget::STANDARD,
    );
    assert!(
        msg.contains("value size") && msg.contains("16 MiB"),
        "{msg}"
    );
    // Lists double the same way.
    let msg = budget_error(
        &g,
        "RETURN size(reduce(l = [1, 2], i IN range(1, 40) | l + l)) AS n",
        Budget::STANDARD,
    );
    assert!(msg.contains("value size"), "{msg}");
    // Just under the cap is fine.
    assert_eq!(
        count(
            &g,
            r#"RETURN size(reduce(s = "xx", i IN range(1, 20) | s + s)) AS n"#
        ),
        2 << 20
    );
}

#[test]
fn builders_are_checked_before_they_allocate() {
    let g = graph();
    for q in [
        "RETURN size(range(1, 9000000)) AS n",
        "WITH reduce(s = 'a', i IN range(1, 23) | s + s) AS s RETURN size(split(s, '')) AS n",
        "WITH reduce(s = 'a', i IN range(1, 22) | s + s) AS s RETURN size(replace(s, 'a', 'aaaaaaaa')) AS n",
        "RETURN size([i IN range(1, 2000000) | 'abcdefghijklmnopqrstuvwxyz' + i]) AS n",
    ] {
        let msg = budget_error(&g, q, Budget::STANDARD);
        assert!(msg.contains("value size") || msg.contains("memory"), "{q}: {msg}");
    }
}

#[test]
fn unbounded_star_stops_at_the_stated_depth() {
    let g = graph();
    let msg = budget_error(
        &g,
        "MATCH (a:Disease)-[*]->(b) RETURN count(*)",
        Budget::STANDARD,
    );
    assert!(
        msg.contains("depth") && msg.contains("32") && msg.contains("*1..32"),
        "{msg}"
    );
    let shallow = Budget {
        max_depth: 3,
        ..Budget::STANDARD
    };
    let msg = budget_error(&g, "MATCH (a:Disease)-[*2..]->(b) RETURN count(*)", shallow);
    assert!(msg.contains("deeper than 3 hops"), "{msg}");
    // A bounded walk is not limited by max_depth and counts what the fixed-length patterns count.
    let one = count(&g, "MATCH (a:Disease)-->(b) RETURN count(*)");
    let two = count(&g, "MATCH (a:Disease)-->()-->(b) RETURN count(*)");
    assert!(one >= 40 && two > one, "{one} {two}");
    assert_eq!(
        count(&g, "MATCH (a:Disease)-[*1..2]->(b) RETURN count(*)"),
        one + two
    );
    // Unbounded `*` on a graph with no deep walk still answers.
    assert_eq!(
        count(&g, "MATCH (c:Compound)-[:TREATS_CtD*]->(d) RETURN count(*)"),
        60
    );
}

#[test]
fn materialised_rows_are_charged() {
    let g = graph();
    let small = Budget {
        bytes: 1 << 20,
        ..Budget::STANDARD
    };
    // ~270k rows of two node ids would need ~25 MB held: over a 1 MiB budget.
    let msg = budget_error(
        &g,
        "MATCH (a:Gene), (b:Gene) WITH a, b ORDER BY b.name RETURN a.name LIMIT 1",
        small,
    );
    assert!(msg.contains("memory") && msg.contains("1 MiB"), "{msg}");
    let msg = budget_error(
        &g,
        "MATCH (a:Gene), (b:Gene) RETURN collect(a.name + b.name) AS xs",
        small,
    );
    assert!(
        msg.contains("memory") || msg.contains("value size"),
        "{msg}"
    );
    let msg = budget_error(
        &g,
        "MATCH (a:Gene), (b:Gene) RETURN DISTINCT a.name + '/' + b.name AS k",
        small,
    );
    assert!(msg.contains("memory"), "{msg}");
    // Streaming aggregation: counting the same rows holds almost nothing.
    let r = execute(
        &g,
        "MATCH (a:Gene), (b:Gene) RETURN count(*) AS n",
        &opts(small),
    )
    .expect("count streams");
    assert_eq!(r.rows, vec![vec![Out::Int(300 * 300)]]);
    let r = execute(
        &g,
        "MATCH (a:Gene), (b:Gene) RETURN a.name AS x, count(*) AS n ORDER BY x LIMIT 2",
        &opts(small),
    )
    .expect("grouped count");
    assert_eq!(
        r.rows,
        vec![
            vec![Out::Str("GENE0".into()), Out::Int(300)],
            vec![Out::Str("GENE1".into()), Out::Int(300)]
        ]
    );
}

#[test]
fn cartesian_products_hit_the_row_budget() {
    let g = graph();
    let b = Budget::with_time_rows(Duration::from_secs(20), 100_000);
    let msg = budget_error(&g, "MATCH (a), (b), (c) RETURN count(*) AS n", b);
    assert!(msg.contains("rows") && msg.contains("100000"), "{msg}");
}

#[test]
fn time_budget_names_itself() {
    let g = graph();
    let b = Budget {
        time: Duration::from_millis(50),
        rows: u64::MAX,
        ..Budget::STANDARD
    };
    let msg = budget_error(&g, "MATCH (a)-[*1..12]-(b) RETURN count(*) AS n", b);
    assert!(msg.contains("time") && msg.contains("50 ms"), "{msg}");
}

#[test]
fn results_are_cut_before_detaching() {
    let g = graph();
    let o = Options {
        max_rows: Some(5),
        ..Default::default()
    };
    let r = execute(&g, "MATCH (n:Gene) RETURN n", &o).expect("query");
    assert_eq!(r.rows.len(), 5);
    assert!(r.truncated);
    let r = execute(&g, "MATCH (n:Disease) RETURN n LIMIT 5", &o).expect("query");
    assert_eq!(r.rows.len(), 5);
    assert!(!r.truncated);
}

#[test]
fn writing_clauses_are_refused() {
    let g = graph();
    for (q, clause) in [
        ("CREATE (n:Compound {id: 'X'})", "CREATE"),
        ("MATCH (n:Compound) SET n.name = 'x'", "SET"),
        ("MATCH (n:Compound) DETACH DELETE n", "DELETE"),
        ("MERGE (n:Compound {id: 'X'})", "MERGE"),
        ("MATCH (n) REMOVE n.name", "REMOVE"),
    ] {
        let e = execute(&g, q, &Options::default()).expect_err(q);
        assert_eq!(e.kind, ErrorKind::ReadOnly);
        assert_eq!(
            e.to_string(),
            format!("read-only: {clause} is not supported")
        );
    }
}

#[test]
fn many_distinct_regexes_do_not_grow_without_bound() {
    let g = graph();
    // 5,000 different patterns built from data: answered (the cache is bounded, not the query).
    let n = count(&g, "UNWIND range(1, 5000) AS i WITH i WHERE ('x' + i) =~ ('x' + i + '.*') RETURN count(*) AS n");
    assert_eq!(n, 5000);
}
