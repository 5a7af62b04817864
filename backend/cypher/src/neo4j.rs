//! Neo4j passthrough (cargo feature `neo4j`): the same query API against a live Neo4j over
//! Bolt, for the CKG that lives there. The read-only check still runs locally first, so the
//! passthrough can never write; results come back as the same [`QueryResult`].

use std::collections::{BTreeMap, HashMap};

use neo4rs::{
    query, BoltBoolean, BoltFloat, BoltInteger, BoltList, BoltMap, BoltNull, BoltString, BoltType,
    Graph as Neo4j,
};

use crate::error::{CypherError, ErrorKind, Result};
use crate::result::{NodeOut, Out, QueryResult, RelOut};
use crate::value::Value;
use crate::Options;

/// A connection to a Neo4j server plus a runtime to drive it from synchronous code.
pub struct Neo4jClient {
    db: Neo4j,
    rt: tokio::runtime::Runtime,
}

fn neo(e: impl std::fmt::Display) -> CypherError {
    CypherError::new(ErrorKind::Runtime, format!("neo4j: {e}"))
}

impl Neo4jClient {
    pub fn connect(uri: &str, user: &str, password: &str) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(neo)?;
        let db = rt.block_on(Neo4j::new(uri, user, password)).map_err(neo)?;
        Ok(Neo4jClient { db, rt })
    }

    /// From `NEO4J_URI`, `NEO4J_USER` (default `neo4j`) and `NEO4J_PASSWORD`; `None` when
    /// `NEO4J_URI` is not set.
    pub fn from_env() -> Option<Result<Self>> {
        let uri = std::env::var("NEO4J_URI").ok().filter(|u| !u.is_empty())?;
        let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
        let password = std::env::var("NEO4J_PASSWORD").unwrap_or_default();
        Some(Self::connect(&uri, &user, &password))
    }

    /// Runs a read-only query on the server. The query must pass this crate's parser and
    /// semantic checks (which also yields the column order).
    pub fn execute(&self, q: &str, opts: &Options) -> Result<QueryResult> {
        let plan = crate::prepare(q)?;
        let columns = plan
            .branches
            .first()
            .map(|b| b.columns.clone())
            .unwrap_or_default();
        let mut qq = query(q);
        for (k, v) in &opts.params {
            qq = qq.param(k, to_bolt(v));
        }
        let budget = opts.budget;
        self.rt.block_on(async {
            let run = async {
                let mut stream = self.db.execute(qq).await.map_err(neo)?;
                let mut rows = Vec::new();
                while let Some(row) = stream.next().await.map_err(neo)? {
                    if rows.len() as u64 >= budget.rows {
                        return Err(CypherError::new(
                            ErrorKind::Budget,
                            format!("query produced more than {} rows", budget.rows),
                        ));
                    }
                    let mut out = Vec::with_capacity(columns.len());
                    for c in &columns {
                        let v: BoltType = row.get(c).map_err(neo)?;
                        out.push(from_bolt(&v));
                    }
                    rows.push(out);
                }
                Ok(rows)
            };
            match tokio::time::timeout(budget.time, run).await {
                Ok(r) => r.map(|rows| QueryResult {
                    columns: columns.clone(),
                    rows,
                    truncated: false,
                }),
                Err(_) => Err(CypherError::new(
                    ErrorKind::Budget,
                    format!("query ran longer than {} ms", budget.time.as_millis()),
                )),
            }
        })
    }
}

fn to_bolt(v: &Value) -> BoltType {
    match v {
        Value::Null | Value::Node(_) | Value::Rel(_) | Value::Path(_) => BoltType::Null(BoltNull),
        Value::Bool(b) => BoltType::Boolean(BoltBoolean { value: *b }),
        Value::Int(i) => BoltType::Integer(BoltInteger { value: *i }),
        Value::Float(f) => BoltType::Float(BoltFloat { value: *f }),
        Value::Str(s) => BoltType::String(BoltString { value: s.clone() }),
        Value::List(xs) => BoltType::List(BoltList {
            value: xs.iter().map(to_bolt).collect(),
        }),
        Value::Map(m) => BoltType::Map(BoltMap {
            value: m
                .iter()
                .map(|(k, v)| (BoltString { value: k.clone() }, to_bolt(v)))
                .collect::<HashMap<_, _>>(),
        }),
    }
}

fn props(m: &BoltMap) -> BTreeMap<String, Out> {
    m.value
        .iter()
        .map(|(k, v)| (k.value.clone(), from_bolt(v)))
        .collect()
}

fn from_bolt(v: &BoltType) -> Out {
    match v {
        BoltType::Null(_) => Out::Null,
        BoltType::Boolean(b) => Out::Bool(b.value),
        BoltType::Integer(i) => Out::Int(i.value),
        BoltType::Float(f) => Out::Float(f.value),
        BoltType::String(s) => Out::Str(s.value.clone()),
        BoltType::List(xs) => Out::List(xs.value.iter().map(from_bolt).collect()),
        BoltType::Map(m) => Out::Map(props(m)),
        BoltType::Node(n) => Out::Node(NodeOut {
            id: n.id.value as u64,
            labels: n
                .labels
                .value
                .iter()
                .filter_map(|l| {
                    if let BoltType::String(s) = l {
                        Some(s.value.clone())
                    } else {
                        None
                    }
                })
                .collect(),
            props: props(&n.properties),
        }),
        BoltType::Relation(r) => Out::Rel(RelOut {
            id: r.id.value as u64,
            rel_type: r.typ.value.clone(),
            start: r.start_node_id.value as u64,
            end: r.end_node_id.value as u64,
            props: props(&r.properties),
        }),
        // Temporal, spatial, byte and path values are shown as text.
        other => Out::Str(other.to_string()),
    }
}
