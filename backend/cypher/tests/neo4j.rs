//! Neo4j passthrough: runs only with the `neo4j` feature and `NEO4J_URI` set.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![cfg(feature = "neo4j")]

use serenqa_cypher::neo4j::Neo4jClient;
use serenqa_cypher::{ErrorKind, Options, Out};

#[test]
#[ignore = "needs a live Neo4j: set NEO4J_URI and run `cargo test --features neo4j -- --ignored`"]
fn passthrough_returns_rows_and_stays_read_only() {
    let Some(client) = Neo4jClient::from_env() else {
        panic!("NEO4J_URI is not set: this ignored test needs a live Neo4j");
    };
    let client = client.expect("connect to NEO4J_URI");
    let r = client
        .execute("RETURN 1 AS one, 'x' AS s", &Options::default())
        .expect("query");
    assert_eq!(r.columns, vec!["one", "s"]);
    assert_eq!(r.rows, vec![vec![Out::Int(1), Out::Str("x".into())]]);
    let e = client
        .execute("CREATE (n:ShouldNotExist)", &Options::default())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::ReadOnly);
}
