//! Loading from a live Neo4j. Runs only with the `neo4j` feature and `NEO4J_URI` set.

#[cfg(feature = "neo4j")]
#[test]
fn loads_from_live_neo4j() {
    let Ok(uri) = std::env::var("NEO4J_URI") else {
        eprintln!("SKIPPED: NEO4J_URI is not set, so the live Neo4j loader test did not run");
        return;
    };
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_default();
    let g = serenqa_graph::load::bolt::load(&uri, &user, &password, &Default::default()).expect("load from neo4j");
    assert!(g.node_count() > 0, "the database should hold at least one node");
}

#[cfg(not(feature = "neo4j"))]
#[test]
fn loads_from_live_neo4j() {
    eprintln!("SKIPPED: built without the `neo4j` feature; the live Neo4j loader test did not run");
}
