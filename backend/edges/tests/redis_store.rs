//! The Redis edge store against real Redis: export, lookups identical to the in-memory
//! store, the key scheme, graph checks and clear errors; on a single instance and on a
//! three-shard cluster.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;
use common as redis_fixture;

use std::sync::Arc;

use serenqa_edges::keys::{self, adj_key, rel_key};
use serenqa_edges::redis_store::{check, export, ExportOptions, RedisConn};
use serenqa_edges::{EdgeSource, MemoryEdges, RedisEdges, RedisTarget};
use serenqa_graph::{Graph, GraphBuilder, GraphMeta, NodeId, RelationType};

/// Scores on some edges, parallel edges, a self-loop, an isolated node, an identifier with
/// colons (as Hetionet's `DOID:1234`).
fn small_graph(extra_edge: bool) -> Graph {
    let mut b = GraphBuilder::new(GraphMeta::default());
    let c = b.node_type("Compound", "Compound");
    let d = b.node_type("Disease", "Disease");
    let rel = |name: &str, s, t| RelationType {
        name: name.into(),
        verb: name.into(),
        abbrev: name.into(),
        source_type: Some(s),
        target_type: Some(t),
        directed: true,
    };
    let treats = b.relation(rel("TREATS_CtD", c, d)).expect("relation");
    let resembles = b.relation(rel("RESEMBLES_CrC", c, c)).expect("relation");
    let c1 = b.add_node(c, "DB00945", "Aspirin");
    let c2 = b.add_node(c, "DB00316", "Acetaminophen");
    let d1 = b.add_node(d, "DOID:1234", "Pain");
    let d2 = b.add_node(d, "DOID:9352", "Type 2 diabetes");
    b.add_node(d, "DOID:0000", "Isolated");
    b.add_edge(c1, treats, d1, Some(0.75));
    b.add_edge(c1, treats, d1, Some(0.25)); // parallel
    b.add_edge(c2, treats, d1, None);
    b.add_edge(c1, resembles, c2, None);
    b.add_edge(c2, resembles, c2, None); // self-loop
    if extra_edge {
        b.add_edge(c2, treats, d2, None);
    }
    b.build()
}

async fn same_as_memory(g: &Graph, edges: &RedisEdges) {
    let mem = MemoryEdges::new(g);
    let all: Vec<NodeId> = (0..g.node_count() as NodeId).collect();
    let from_redis = edges.incident_many(&all).await.expect("batched lookup");
    let from_memory = mem.incident_many(&all).await.expect("memory lookup");
    assert_eq!(from_redis, from_memory);
    for &u in &all {
        assert_eq!(
            edges.incident(u).await.expect("single lookup"),
            mem.incident(u)
        );
    }
    assert!(check(g, edges, 2).await.expect("check").is_empty());
}

async fn exercise(url: &str) {
    let target = RedisTarget::parse(url).expect("url");
    let g = Arc::new(small_graph(false));
    let mut conn = RedisConn::connect(&target).await.expect("connect");
    let _: () = conn.query(&redis::cmd("FLUSHDB")).await.expect("flushdb");

    // Nothing exported yet: a clear error.
    let err = RedisEdges::open(target.clone(), g.clone())
        .await
        .err()
        .expect("no export")
        .to_string();
    assert!(err.contains("no finished export"), "{err}");

    let report = export(
        &g,
        &target,
        &ExportOptions {
            batch: 3,
            in_flight: 2,
            ..Default::default()
        },
    )
    .await
    .expect("export");
    assert_eq!(
        report.adjacency_keys, 5,
        "one adjacency key per node, empty ones included"
    );
    assert_eq!(report.edge_keys, 4, "parallel edges share one rel key");
    let edges = RedisEdges::open(target.clone(), g.clone())
        .await
        .expect("open");
    same_as_memory(&g, &edges).await;

    // The paper's key scheme, readable with redis-cli; the parallel edges' attributes in one value.
    let key = rel_key("DB00945", "Compound", "TREATS_CtD", "DOID:1234", "Disease");
    let v: String = conn
        .query(redis::cmd("GET").arg(&key))
        .await
        .expect("rel key");
    let attrs: serde_json::Value = serde_json::from_str(&v).expect("json");
    assert_eq!(attrs.as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(attrs[0]["score"], serde_json::json!(0.75));
    let exists: bool = conn
        .query(redis::cmd("EXISTS").arg(adj_key("DB00945", "Compound")))
        .await
        .expect("exists");
    assert!(exists);

    // Another graph (one more edge) is refused.
    let other = Arc::new(small_graph(true));
    let err = RedisEdges::open(target.clone(), other.clone())
        .await
        .err()
        .expect("other graph")
        .to_string();
    assert!(err.contains("another graph"), "{err}");

    // A corrupt value is a clear error naming the key, not a panic or a wrong answer.
    let bad = adj_key("DB00316", "Compound");
    let _: () = conn
        .query(redis::cmd("SET").arg(&bad).arg("garbage"))
        .await
        .expect("set");
    let err = edges
        .incident_many(&[0, 1])
        .await
        .expect_err("corrupt")
        .to_string();
    assert!(err.contains(&bad) && err.contains("magic"), "{err}");

    // A deleted adjacency key is an error too, not "no edges".
    let _: () = conn
        .query(redis::cmd("DEL").arg(adj_key("DOID:0000", "Disease")))
        .await
        .expect("del");
    let err = edges
        .incident_many(&[4])
        .await
        .expect_err("missing key")
        .to_string();
    assert!(err.contains("missing"), "{err}");

    // Re-export repairs it; an adjacency-only export writes no rel keys.
    export(
        &other,
        &target,
        &ExportOptions {
            edge_keys: false,
            flush: true,
            ..Default::default()
        },
    )
    .await
    .expect("re-export");
    let edges = RedisEdges::open(target.clone(), other.clone())
        .await
        .expect("open other");
    same_as_memory(&other, &edges).await;
    let exists: bool = conn
        .query(redis::cmd("EXISTS").arg(&key))
        .await
        .expect("exists");
    assert!(!exists, "flush + adjacency-only export leaves no rel keys");
    let meta: String = conn
        .query(redis::cmd("GET").arg(keys::META_KEY))
        .await
        .expect("meta");
    assert!(meta.contains("\"edge_keys\":false"), "{meta}");
}

#[tokio::test]
async fn single_instance_matches_memory() {
    let Some((base, _guard)) = redis_fixture::single() else {
        return;
    };
    // Database 11: the other suites use their own.
    exercise(&format!("{base}/11")).await;
}

#[tokio::test]
async fn cluster_matches_memory_and_keeps_a_node_on_one_shard() {
    let Some((url, _guard)) = redis_fixture::cluster() else {
        return;
    };
    exercise(&url).await;
    // A node's adjacency and its out-edges' keys share a hash slot (the braces are hash tags).
    let a = adj_key("DB00945", "Compound");
    let r = rel_key("DB00945", "Compound", "TREATS_CtD", "DOID:1234", "Disease");
    let target = RedisTarget::parse(&url).expect("url");
    let mut conn = RedisConn::connect(&target).await.expect("connect");
    let sa: i64 = conn
        .query(redis::cmd("CLUSTER").arg("KEYSLOT").arg(&a))
        .await
        .expect("keyslot");
    let sr: i64 = conn
        .query(redis::cmd("CLUSTER").arg("KEYSLOT").arg(&r))
        .await
        .expect("keyslot");
    assert_eq!(sa, sr);
    assert_eq!(
        sa as u16,
        keys::hash_slot(&a),
        "our slot function agrees with the server"
    );

    // Resharding under a connected client: move every slot of the shard that holds this node
    // to another shard; lookups made through the old connection follow the MOVED redirects.
    let g = Arc::new(small_graph(false));
    export(&g, &target, &ExportOptions::default())
        .await
        .expect("export");
    let edges = RedisEdges::open(target.clone(), g.clone())
        .await
        .expect("open");
    same_as_memory(&g, &edges).await;
    let RedisTarget::Cluster(seeds) = &target else {
        panic!("a cluster target")
    };
    let seed = seeds[0].trim_start_matches("redis://");
    let (host, port) = seed.rsplit_once(':').expect("host:port");
    let nodes = redis_cli(&["-h", host, "-p", port, "cluster", "nodes"]);
    let owner = |slot: u16| -> Option<(String, usize)> {
        nodes.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let mut count = 0;
            let mut owns = false;
            for r in f.iter().skip(8) {
                let (lo, hi) = r.split_once('-').unwrap_or((r, r));
                let (lo, hi): (u16, u16) = (lo.parse().ok()?, hi.parse().ok()?);
                count += usize::from(hi - lo) + 1;
                owns |= (lo..=hi).contains(&slot);
            }
            owns.then(|| (f[0].to_string(), count))
        })
    };
    let (from, count) = owner(keys::hash_slot(&a)).expect("the key's shard");
    let to = nodes
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .find(|id| *id != from && !id.is_empty())
        .expect("another shard");
    redis_cli(&[
        "--cluster",
        "reshard",
        seed,
        "--cluster-from",
        &from,
        "--cluster-to",
        &to,
        "--cluster-slots",
        &count.to_string(),
        "--cluster-yes",
    ]);
    let after = redis_cli(&["-h", host, "-p", port, "cluster", "nodes"]);
    assert!(
        after
            .lines()
            .any(|l| l.starts_with(&from) && l.split_whitespace().count() == 8),
        "the source shard gave up all its slots:\n{after}"
    );
    same_as_memory(&g, &edges).await;
}

fn redis_cli(args: &[&str]) -> String {
    let o = std::process::Command::new("redis-cli")
        .args(args)
        .output()
        .expect("redis-cli");
    assert!(
        o.status.success(),
        "redis-cli {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test]
async fn unreachable_and_malformed_urls_are_one_line_errors() {
    let e = RedisTarget::parse("http://localhost").expect_err("not redis");
    assert!(e.contains("not a Redis URL"), "{e}");
    assert!(RedisTarget::parse("redis+cluster://").is_err());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    // Nothing listens on a port we just released.
    let t = RedisTarget::parse(&format!("redis://127.0.0.1:{port}")).expect("url");
    let g = Arc::new(small_graph(false));
    let e = RedisEdges::open(t, g)
        .await
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("127.0.0.1") && !e.contains('\n'), "{e}");
}
