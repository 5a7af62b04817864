//! Small end-to-end checks on a hand-built graph.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::collections::BTreeMap;

use serenqa_cypher::{execute, ErrorKind, MemGraph, Options, Out, Value};

fn props(kv: &[(&str, Value)]) -> BTreeMap<String, Value> {
    kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn graph() -> MemGraph {
    let mut g = MemGraph::new();
    let a = g.add_node(
        &["Compound"],
        props(&[
            ("id", Value::Str("DB1".into())),
            ("name", Value::Str("Aspirin".into())),
        ]),
    );
    let b = g.add_node(
        &["Disease"],
        props(&[
            ("id", Value::Str("D1".into())),
            ("name", Value::Str("Pain".into())),
        ]),
    );
    let c = g.add_node(
        &["Gene"],
        props(&[
            ("id", Value::Str("G1".into())),
            ("name", Value::Str("PTGS1".into())),
        ]),
    );
    g.add_rel(a, "TREATS_CtD", b, BTreeMap::new());
    g.add_rel(a, "BINDS_CbG", c, props(&[("score", Value::Float(0.5))]));
    g.add_rel(b, "ASSOCIATES_DaG", c, BTreeMap::new());
    g
}

fn run(q: &str) -> Vec<Vec<String>> {
    let g = graph();
    let r = execute(&g, q, &Options::default()).unwrap_or_else(|e| panic!("{q}: {e}"));
    r.rows
        .iter()
        .map(|row| row.iter().map(Out::to_cypher).collect())
        .collect()
}

#[test]
fn one_hop_and_aggregates() {
    assert_eq!(
        run("MATCH (c:Compound {name: 'Aspirin'})-[:TREATS_CtD]->(d) RETURN d.name"),
        vec![vec!["'Pain'"]]
    );
    assert_eq!(
        run("MATCH (c:Compound)--(x) RETURN count(*) AS n, collect(DISTINCT labels(x)[0]) AS l"),
        vec![vec!["2", "['Disease', 'Gene']"]]
    );
    assert_eq!(
        run("MATCH (c)-[:TREATS_CtD]->(d)-[:ASSOCIATES_DaG]->(g)<-[:BINDS_CbG]-(c) RETURN {id: g.id, name: g.name} AS m"),
        vec![vec!["{id: 'G1', name: 'PTGS1'}"]]
    );
    assert_eq!(
        run("UNWIND [3, 1, 2] AS x WITH x WHERE x > 1 RETURN x ORDER BY x DESC"),
        vec![vec!["3"], vec!["2"]]
    );
    assert_eq!(
        run("MATCH (n) WHERE n.name STARTS WITH 'P' RETURN n.id ORDER BY n.id"),
        vec![vec!["'D1'"], vec!["'G1'"]]
    );
    assert_eq!(run("MATCH (n:Nope) RETURN n"), Vec::<Vec<String>>::new());
    assert_eq!(
        run("MATCH p = (:Compound)-[*1..2]->(g:Gene) RETURN length(p) AS l ORDER BY l"),
        vec![vec!["1"], vec!["2"]]
    );
    assert_eq!(run("RETURN 1 AS x UNION RETURN 1 AS x"), vec![vec!["1"]]);
    assert_eq!(
        run("MATCH (c:Compound) OPTIONAL MATCH (c)-[:NOPE]->(x) RETURN c.id, x"),
        vec![vec!["'DB1'", "null"]]
    );
}

#[test]
fn errors() {
    let g = graph();
    let e = execute(&g, "MATCH (n RETURN n", &Options::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Syntax { line: 1, .. }), "{e}");
    let e = execute(&g, "CREATE (n:X)", &Options::default()).unwrap_err();
    assert_eq!(e.to_string(), "read-only: CREATE is not supported");
    let e = execute(&g, "MATCH (n) RETURN m", &Options::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Semantic);
    assert!(e.to_string().contains("`m`"), "{e}");
}

/// Hostile nesting must give an error, not a stack overflow, even on a 2 MB thread (tokio's
/// blocking pool and the HTTP API use that size).
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep_parens = format!("RETURN {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    let long_sum = format!("RETURN 1{}", " + 1".repeat(9_900));
    let many_nots = format!("RETURN {} true", "NOT ".repeat(19_000));
    let h = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let g = graph();
            let e = execute(&g, &deep_parens, &Options::default()).unwrap_err();
            assert!(matches!(e.kind, ErrorKind::Syntax { .. }), "{e}");
            for q in [long_sum, many_nots] {
                // Either a result or a clean error is fine; crashing is not.
                let _ = execute(&g, &q, &Options::default());
            }
        })
        .unwrap();
    h.join().unwrap();
}

#[test]
fn shortest_paths() {
    // Aspirin binds PTGS1; Pain associates PTGS1; Aspirin treats Pain.
    assert_eq!(run("MATCH p = shortestPath((c:Compound {id: 'DB1'})-[*]-(g:Gene {id: 'G1'})) RETURN length(p) AS l"), vec![vec!["1"]]);
    assert_eq!(
        run("MATCH (c:Compound {id: 'DB1'}), (g:Gene {id: 'G1'}) MATCH p = allShortestPaths((c)-[:TREATS_CtD|ASSOCIATES_DaG*..3]->(g)) RETURN [n IN nodes(p) | n.id] AS ids"),
        vec![vec!["['DB1', 'D1', 'G1']"]]
    );
    assert_eq!(
        run("MATCH p = shortestPath((g:Gene {id: 'G1'})-[*..1]->(c:Compound)) RETURN p"),
        Vec::<Vec<String>>::new()
    );
    assert_eq!(
        run("MATCH p = shortestPath((g:Gene {id: 'G1'})<-[*]-(c:Compound)) RETURN length(p) AS l"),
        vec![vec!["1"]]
    );
}

#[test]
fn exists_and_count_subqueries() {
    assert_eq!(run("MATCH (c:Compound) WHERE EXISTS { MATCH (c)-[:BINDS_CbG]->(g:Gene) WHERE g.name = 'PTGS1' } RETURN c.id"), vec![vec!["'DB1'"]]);
    assert_eq!(run("MATCH (c:Compound) WHERE NOT EXISTS { MATCH (c)-->(d:Disease {id: 'nope'}) RETURN d } RETURN c.id"), vec![vec!["'DB1'"]]);
    assert_eq!(
        run("MATCH (n) RETURN n.id AS id, COUNT { (n)--() } AS degree ORDER BY id"),
        vec![vec!["'D1'", "2"], vec!["'DB1'", "2"], vec!["'G1'", "2"],]
    );
}

#[test]
fn where_equalities_become_anchor_hints() {
    use serenqa_cypher::plan::Op;
    let plan = serenqa_cypher::prepare(
        "MATCH (x)-[:T]->(d) WHERE toLower(x.name) = 'a' AND d.id = $p RETURN d",
    )
    .unwrap();
    let Some(Op::Match { pattern, .. }) = plan.branches[0].ops.first() else {
        panic!("no match op")
    };
    let hints: Vec<(usize, &str)> = pattern.parts[0]
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.hints.iter().map(move |(k, _)| (i, k.as_str())))
        .collect();
    assert_eq!(hints, vec![(0, "name~"), (1, "id")]);
}

#[test]
fn values_stay_small() {
    // Rows are vectors of values: keep a value at 32 bytes (paths are boxed).
    assert!(
        std::mem::size_of::<Value>() <= 32,
        "{}",
        std::mem::size_of::<Value>()
    );
}
