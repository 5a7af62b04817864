//! A live Neo4j over Bolt (`neo4rs`), behind the `neo4j` feature: the CKG's home.
//!
//! Streams all nodes (`id`, `name`, first label) and all relationships (type, optional
//! `score`/`confidence`) and builds the same in-memory graph as the file loaders. The
//! integration test runs only when `NEO4J_URI` is set.

use std::collections::HashMap;

use neo4rs::{query, Graph as Neo4j};

use super::{label_of, LoadOptions};
use crate::error::{GraphError, Result};
use crate::{Graph, GraphBuilder, GraphMeta, NodeId, RelationType};

fn neo(e: impl std::fmt::Display) -> GraphError {
    GraphError::invalid(format!("neo4j: {e}"))
}

pub fn load(uri: &str, user: &str, password: &str, opts: &LoadOptions) -> Result<Graph> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(neo)?;
    rt.block_on(load_async(uri, user, password, opts))
}

async fn load_async(uri: &str, user: &str, password: &str, opts: &LoadOptions) -> Result<Graph> {
    let db = Neo4j::new(uri, user, password).await.map_err(neo)?;
    let meta = GraphMeta {
        name: "neo4j".into(),
        source: format!("Neo4j at {uri}"),
        synthetic: false,
        dropped: Vec::new(),
    };
    let mut b = GraphBuilder::new(meta);
    let mut ids: HashMap<i64, NodeId> = HashMap::new();

    let bar = crate::progress::spinner("neo4j nodes", opts.progress);
    let mut rows = db
        .execute(query("MATCH (n) RETURN id(n) AS nid, labels(n) AS labels, toString(coalesce(n.id, id(n))) AS ident, toString(coalesce(n.name, n.id, id(n))) AS name"))
        .await
        .map_err(neo)?;
    while let Some(row) = rows.next().await.map_err(neo)? {
        let nid: i64 = row.get("nid").map_err(neo)?;
        let labels: Vec<String> = row.get("labels").map_err(neo)?;
        let ident: String = row.get("ident").map_err(neo)?;
        let name: String = row.get("name").map_err(neo)?;
        let display = labels.first().cloned().unwrap_or_else(|| "Node".into());
        let t = b.node_type(&label_of(&display), &display);
        ids.insert(nid, b.add_node(t, &ident, &name));
        bar.inc(1);
    }
    bar.finish_and_clear();

    let bar = crate::progress::spinner("neo4j relationships", opts.progress);
    let mut rows = db
        .execute(query("MATCH (a)-[r]->(b) RETURN id(a) AS s, id(b) AS t, type(r) AS type, toFloat(coalesce(r.score, r.confidence)) AS score"))
        .await
        .map_err(neo)?;
    while let Some(row) = rows.next().await.map_err(neo)? {
        let s: i64 = row.get("s").map_err(neo)?;
        let t: i64 = row.get("t").map_err(neo)?;
        let ty: String = row.get("type").map_err(neo)?;
        let score: Option<f64> = row.get("score").ok();
        let (Some(&src), Some(&dst)) = (ids.get(&s), ids.get(&t)) else {
            return Err(GraphError::invalid(format!(
                "neo4j: relationship {s}->{t} refers to a node not returned by the node scan"
            )));
        };
        let rel = match b.relation_id(&ty) {
            Some(r) => r,
            None => b
                .relation(RelationType {
                    name: ty.clone(),
                    verb: ty.to_lowercase().replace('_', " "),
                    abbrev: ty.clone(),
                    source_type: None,
                    target_type: None,
                    directed: true,
                })
                .map_err(GraphError::invalid)?,
        };
        b.add_edge(src, rel, dst, score.map(|x| x as f32));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(b.build())
}
