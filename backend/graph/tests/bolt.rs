//! Loading from a live Neo4j. Runs only with the `neo4j` feature and `NEO4J_URI` set.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[cfg(feature = "neo4j")]
#[test]
#[ignore = "needs a live Neo4j: set NEO4J_URI and run `cargo test --features neo4j -- --ignored`"]
fn loads_from_live_neo4j() {
    let Ok(uri) = std::env::var("NEO4J_URI") else {
        panic!("NEO4J_URI is not set: this ignored test needs a live Neo4j");
    };
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_default();
    let g = serenqa_graph::load::bolt::load(&uri, &user, &password, &Default::default())
        .expect("load from neo4j");
    assert!(
        g.node_count() > 0,
        "the database should hold at least one node"
    );
}

#[cfg(not(feature = "neo4j"))]
#[test]
#[ignore = "needs the `neo4j` feature and a live Neo4j (NEO4J_URI)"]
fn loads_from_live_neo4j() {
    panic!("built without the `neo4j` feature: run `NEO4J_URI=… cargo test -p serenqa-graph --features neo4j -- --ignored`");
}
