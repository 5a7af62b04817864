//! Small end-to-end checks on a hand-built graph.

use std::collections::BTreeMap;

use serenqa_cypher::{execute, ErrorKind, MemGraph, Options, Out, Value};

fn props(kv: &[(&str, Value)]) -> BTreeMap<String, Value> {
    kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn graph() -> MemGraph {
    let mut g = MemGraph::new();
    let a = g.add_node(&["Compound"], props(&[("id", Value::Str("DB1".into())), ("name", Value::Str("Aspirin".into()))]));
    let b = g.add_node(&["Disease"], props(&[("id", Value::Str("D1".into())), ("name", Value::Str("Pain".into()))]));
    let c = g.add_node(&["Gene"], props(&[("id", Value::Str("G1".into())), ("name", Value::Str("PTGS1".into()))]));
    g.add_rel(a, "TREATS_CtD", b, BTreeMap::new());
    g.add_rel(a, "BINDS_CbG", c, props(&[("score", Value::Float(0.5))]));
    g.add_rel(b, "ASSOCIATES_DaG", c, BTreeMap::new());
    g
}

fn run(q: &str) -> Vec<Vec<String>> {
    let g = graph();
    let r = execute(&g, q, &Options::default()).unwrap_or_else(|e| panic!("{q}: {e}"));
    r.rows.iter().map(|row| row.iter().map(Out::to_cypher).collect()).collect()
}

#[test]
fn one_hop_and_aggregates() {
    assert_eq!(run("MATCH (c:Compound {name: 'Aspirin'})-[:TREATS_CtD]->(d) RETURN d.name"), vec![vec!["'Pain'"]]);
    assert_eq!(run("MATCH (c:Compound)--(x) RETURN count(*) AS n, collect(DISTINCT labels(x)[0]) AS l"), vec![vec!["2", "['Disease', 'Gene']"]]);
    assert_eq!(
        run("MATCH (c)-[:TREATS_CtD]->(d)-[:ASSOCIATES_DaG]->(g)<-[:BINDS_CbG]-(c) RETURN {id: g.id, name: g.name} AS m"),
        vec![vec!["{id: 'G1', name: 'PTGS1'}"]]
    );
    assert_eq!(run("UNWIND [3, 1, 2] AS x WITH x WHERE x > 1 RETURN x ORDER BY x DESC"), vec![vec!["3"], vec!["2"]]);
    assert_eq!(run("MATCH (n) WHERE n.name STARTS WITH 'P' RETURN n.id ORDER BY n.id"), vec![vec!["'D1'"], vec!["'G1'"]]);
    assert_eq!(run("MATCH (n:Nope) RETURN n"), Vec::<Vec<String>>::new());
    assert_eq!(run("MATCH p = (:Compound)-[*1..2]->(g:Gene) RETURN length(p) AS l ORDER BY l"), vec![vec!["1"], vec!["2"]]);
    assert_eq!(run("RETURN 1 AS x UNION RETURN 1 AS x"), vec![vec!["1"]]);
    assert_eq!(run("MATCH (c:Compound) OPTIONAL MATCH (c)-[:NOPE]->(x) RETURN c.id, x"), vec![vec!["'DB1'", "null"]]);
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
