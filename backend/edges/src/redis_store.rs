//! The Redis edge store: export a graph's edges into Redis (single instance or Cluster) and
//! answer neighbour lookups from there.
//!
//! Lookups are batched: [`RedisEdges::incident_many`] sends one `MGET` for a whole frontier.
//! On a cluster the client splits a multi-slot `MGET` by slot and sends the parts to their
//! shards concurrently (redirects after a resharding are followed by the client too), so a
//! batch stays one logical round trip.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serenqa_graph::{Graph, NodeId};

use crate::keys::{self, Meta};
use crate::memory::MemoryEdges;
use crate::{BoxFuture, EdgeError, EdgeResult, EdgeSource, Incident};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the Redis edge store lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisTarget {
    /// `redis://host:port[/db]`
    Single(String),
    /// `redis+cluster://host:port[,host:port…]` — seed nodes of a Redis Cluster.
    Cluster(Vec<String>),
}

impl RedisTarget {
    pub fn parse(s: &str) -> Result<RedisTarget, String> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("redis+cluster://") {
            let nodes: Vec<String> = rest
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| format!("redis://{}", n.trim_end_matches('/')))
                .collect();
            if nodes.is_empty() {
                return Err(format!(
                    "{s:?}: no cluster nodes (expected redis+cluster://host:port,host:port,…)"
                ));
            }
            for n in &nodes {
                redis::Client::open(n.as_str()).map_err(|e| format!("{n}: {e}"))?;
            }
            return Ok(RedisTarget::Cluster(nodes));
        }
        if s.starts_with("redis://") || s.starts_with("rediss://") || s.starts_with("unix://") {
            redis::Client::open(s).map_err(|e| format!("{:?}: {e}", redact(s)))?;
            return Ok(RedisTarget::Single(s.to_string()));
        }
        Err(format!("{:?}: not a Redis URL (expected redis://host:port[/db] or redis+cluster://host:port,host:port,…)", redact(s)))
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, RedisTarget::Cluster(_))
    }
}

/// `redis://user:secret@host` → `redis://***@host`: URLs are shown, passwords never.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***{}", &url[..s + 3], &url[at..]),
        _ => url.to_string(),
    }
}

impl std::fmt::Display for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisTarget::Single(u) => f.write_str(&redact(u)),
            RedisTarget::Cluster(nodes) => {
                let hosts: Vec<String> = nodes
                    .iter()
                    .map(|n| redact(n).trim_start_matches("redis://").to_string())
                    .collect();
                write!(f, "redis+cluster://{}", hosts.join(","))
            }
        }
    }
}

/// A connection to either kind of deployment; cheap to clone (both multiplex one socket per
/// server).
#[derive(Clone)]
pub enum RedisConn {
    Single(redis::aio::MultiplexedConnection),
    Cluster(redis::cluster_async::ClusterConnection),
}

impl RedisConn {
    pub async fn connect(target: &RedisTarget) -> EdgeResult<RedisConn> {
        let fail = |e: redis::RedisError| EdgeError::Redis(connect_message(target, &e));
        match target {
            RedisTarget::Single(url) => {
                let client = redis::Client::open(url.as_str()).map_err(fail)?;
                let cfg = redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(RESPONSE_TIMEOUT));
                let conn = client
                    .get_multiplexed_async_connection_with_config(&cfg)
                    .await
                    .map_err(fail)?;
                Ok(RedisConn::Single(conn))
            }
            RedisTarget::Cluster(nodes) => {
                let client = redis::cluster::ClusterClient::builder(nodes.clone())
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(RESPONSE_TIMEOUT)
                    .build()
                    .map_err(fail)?;
                let conn = client.get_async_connection().await.map_err(fail)?;
                Ok(RedisConn::Cluster(conn))
            }
        }
    }

    pub async fn query<T: redis::FromRedisValue>(
        &mut self,
        cmd: &redis::Cmd,
    ) -> redis::RedisResult<T> {
        match self {
            RedisConn::Single(c) => cmd.query_async(c).await,
            RedisConn::Cluster(c) => cmd.query_async(c).await,
        }
    }

    /// A Lua script (`EVALSHA`, loaded on `NOSCRIPT`); on a cluster it runs on the shard of
    /// its keys, which must share a hash slot.
    pub async fn invoke<T: redis::FromRedisValue>(
        &mut self,
        inv: &redis::ScriptInvocation<'_>,
    ) -> redis::RedisResult<T> {
        match self {
            RedisConn::Single(c) => inv.invoke_async(c).await,
            RedisConn::Cluster(c) => inv.invoke_async(c).await,
        }
    }

    /// An explicit pipeline (single instance only: a cluster pipeline must stay in one slot).
    pub async fn pipeline<T: redis::FromRedisValue>(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> redis::RedisResult<T> {
        match self {
            RedisConn::Single(c) => pipe.query_async(c).await,
            RedisConn::Cluster(c) => pipe.query_async(c).await,
        }
    }
}

fn connect_message(target: &RedisTarget, e: &redis::RedisError) -> String {
    let hint = if e.is_connection_refusal() || e.is_timeout() {
        " — is redis-server running there?"
    } else {
        ""
    };
    format!("{target}: {e}{hint}")
}

fn redis_err(target: &RedisTarget, what: &str, e: redis::RedisError) -> EdgeError {
    EdgeError::Redis(format!("{target}: {what}: {e}"))
}

/// Reads the meta key (None when no finished export is there).
pub async fn read_meta(conn: &mut RedisConn, target: &RedisTarget) -> EdgeResult<Option<Meta>> {
    let raw: Option<String> = conn
        .query(redis::cmd("GET").arg(keys::META_KEY))
        .await
        .map_err(|e| redis_err(target, "reading the meta key", e))?;
    match raw {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| EdgeError::Store {
                store: target.to_string(),
                message: format!(
                    "{} is not a serenqa edge-store meta record: {e}",
                    keys::META_KEY
                ),
            }),
    }
}

/// The meta record an export of `g` writes.
pub fn meta_for(g: &Graph, edge_keys: bool) -> Meta {
    Meta {
        format: keys::META_FORMAT.into(),
        graph_hash: g.content_hash(),
        nodes: g.node_count() as u64,
        edges: g.edge_count() as u64,
        relations: g.relations().iter().map(|r| r.name.clone()).collect(),
        types: (0..g.type_count())
            .map(|t| g.type_label(t as u16).to_string())
            .collect(),
        edge_keys,
        exported_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    }
}

/// Neighbour lookups answered by Redis.
pub struct RedisEdges {
    target: RedisTarget,
    conn: RedisConn,
    g: Arc<Graph>,
}

impl RedisEdges {
    /// Connects and checks that the store holds a finished export of exactly this graph.
    pub async fn open(target: RedisTarget, g: Arc<Graph>) -> EdgeResult<RedisEdges> {
        let mut conn = RedisConn::connect(&target).await?;
        let store = target.to_string();
        let meta = read_meta(&mut conn, &target)
            .await?
            .ok_or_else(|| EdgeError::Store {
                store: store.clone(),
                message: "no finished export here (run `serenqa edges export --to …` first)".into(),
            })?;
        if meta.format != keys::META_FORMAT {
            return Err(EdgeError::Store {
                store,
                message: format!(
                    "format {:?}, this build reads {:?}",
                    meta.format,
                    keys::META_FORMAT
                ),
            });
        }
        let want = meta_for(&g, meta.edge_keys);
        if meta.graph_hash != want.graph_hash
            || meta.relations != want.relations
            || meta.types != want.types
        {
            return Err(EdgeError::Store {
                store,
                message: format!(
                    "exported from another graph (content hash {}, {} nodes, {} edges; this graph: {}, {} nodes, {} edges) — re-export it",
                    meta.graph_hash, meta.nodes, meta.edges, want.graph_hash, want.nodes, want.edges
                ),
            });
        }
        Ok(RedisEdges { target, conn, g })
    }

    pub fn target(&self) -> &RedisTarget {
        &self.target
    }

    fn adj_key(&self, u: NodeId) -> String {
        keys::adj_key(self.g.ident(u), self.g.type_label(self.g.node_type(u)))
    }

    fn decode(&self, u: NodeId, raw: Option<Vec<u8>>) -> EdgeResult<Vec<Incident>> {
        match raw {
            None => Err(EdgeError::Store {
                store: self.target.to_string(),
                message: format!(
                    "{} is missing: the export is incomplete or was partly deleted (re-export)",
                    self.adj_key(u)
                ),
            }),
            Some(bytes) => keys::decode_adjacency(&bytes).map_err(|m| EdgeError::Store {
                store: self.target.to_string(),
                message: format!("{}: {m}", self.adj_key(u)),
            }),
        }
    }

    /// One node, one `GET` (the unbatched path the benchmark measures).
    pub async fn incident(&self, u: NodeId) -> EdgeResult<Vec<Incident>> {
        let mut conn = self.conn.clone();
        let raw: Option<Vec<u8>> = conn
            .query(redis::cmd("GET").arg(self.adj_key(u)))
            .await
            .map_err(|e| redis_err(&self.target, "GET", e))?;
        self.decode(u, raw)
    }

    /// A batch as an explicit pipeline of `GET`s (single instance only; the benchmark compares
    /// it with `MGET`).
    pub async fn incident_pipelined(&self, nodes: &[NodeId]) -> EdgeResult<Vec<Vec<Incident>>> {
        if self.target.is_cluster() {
            return Err(EdgeError::Store {
                store: self.target.to_string(),
                message: "explicit pipelines span slots; use MGET batches on a cluster".into(),
            });
        }
        let mut pipe = redis::pipe();
        for &u in nodes {
            pipe.cmd("GET").arg(self.adj_key(u));
        }
        let mut conn = self.conn.clone();
        let raws: Vec<Option<Vec<u8>>> = conn
            .pipeline(&pipe)
            .await
            .map_err(|e| redis_err(&self.target, "pipelined GET", e))?;
        nodes
            .iter()
            .zip(raws)
            .map(|(&u, r)| self.decode(u, r))
            .collect()
    }

    async fn mget(&self, nodes: &[NodeId]) -> EdgeResult<Vec<Vec<Incident>>> {
        if nodes.is_empty() {
            return Ok(Vec::new());
        }
        if nodes.len() == 1 {
            return Ok(vec![self.incident(nodes[0]).await?]);
        }
        let mut cmd = redis::cmd("MGET");
        for &u in nodes {
            cmd.arg(self.adj_key(u));
        }
        let mut conn = self.conn.clone();
        let raws: Vec<Option<Vec<u8>>> = conn
            .query(&cmd)
            .await
            .map_err(|e| redis_err(&self.target, "MGET", e))?;
        if raws.len() != nodes.len() {
            return Err(EdgeError::Store {
                store: self.target.to_string(),
                message: format!(
                    "MGET of {} keys returned {} values",
                    nodes.len(),
                    raws.len()
                ),
            });
        }
        nodes
            .iter()
            .zip(raws)
            .map(|(&u, r)| self.decode(u, r))
            .collect()
    }
}

impl EdgeSource for RedisEdges {
    fn incident_many<'a>(
        &'a self,
        nodes: &'a [NodeId],
    ) -> BoxFuture<'a, EdgeResult<Vec<Vec<Incident>>>> {
        Box::pin(self.mget(nodes))
    }

    fn describe(&self) -> String {
        self.target.to_string()
    }
}

/// What [`export`] did.
#[derive(Clone, Debug)]
pub struct ExportReport {
    pub adjacency_keys: u64,
    pub edge_keys: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// Options of [`export`].
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Also write the per-edge `rel:` keys (the paper's scheme). Adjacency keys alone are
    /// enough for exploration and take a fraction of the memory.
    pub edge_keys: bool,
    /// `FLUSHDB` first (every primary of a cluster): removes keys of an earlier export.
    pub flush: bool,
    /// Key/value pairs per `MSET`.
    pub batch: usize,
    /// `MSET`s in flight.
    pub in_flight: usize,
    pub progress: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            edge_keys: true,
            flush: false,
            batch: 2000,
            in_flight: 8,
            progress: false,
        }
    }
}

/// Writes `g`'s edges into Redis. The meta key is deleted first and written last, so a reader
/// never trusts a half-finished export.
pub async fn export(
    g: &Graph,
    target: &RedisTarget,
    opts: &ExportOptions,
) -> EdgeResult<ExportReport> {
    let started = std::time::Instant::now();
    let mut conn = RedisConn::connect(target).await?;
    if opts.flush {
        let _: () = conn
            .query(&redis::cmd("FLUSHDB"))
            .await
            .map_err(|e| redis_err(target, "FLUSHDB", e))?;
    }
    let _: i64 = conn
        .query(redis::cmd("DEL").arg(keys::META_KEY))
        .await
        .map_err(|e| redis_err(target, "DEL meta", e))?;

    let bar = if opts.progress {
        ProgressBar::new(g.node_count() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("export {bar:40} {pos}/{len} nodes {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mem = MemoryEdges::new(g);
    let mut report = ExportReport {
        adjacency_keys: 0,
        edge_keys: 0,
        bytes: 0,
        seconds: 0.0,
    };
    let mut batch: Vec<(String, Vec<u8>)> = Vec::with_capacity(opts.batch);
    let mut inflight = tokio::task::JoinSet::new();
    let batch_size = opts.batch.max(1);
    for u in 0..g.node_count() as NodeId {
        // Every node gets its adjacency key, even an empty one: a later export of another graph
        // must overwrite what an earlier one left, and a missing key means a broken export.
        let inc = mem.incident(u);
        let (uid, utype) = (g.ident(u), g.type_label(g.node_type(u)));
        if opts.edge_keys {
            // Out-edges are sorted by (relation, target): parallel edges are adjacent.
            let outs: Vec<&Incident> = inc.iter().filter(|i| i.forward).collect();
            let mut i = 0;
            while i < outs.len() {
                let (rel, tgt) = (outs[i].rel, outs[i].other);
                let mut attrs = Vec::new();
                while i < outs.len() && outs[i].rel == rel && outs[i].other == tgt {
                    let e = outs[i];
                    let mut a = serde_json::json!({ "edge": e.edge });
                    if let Some(s) = e.score {
                        a["score"] = serde_json::json!(s);
                    }
                    let props: serde_json::Map<String, serde_json::Value> = g
                        .edge_props()
                        .of(e.edge)
                        .map(|(k, v)| {
                            (
                                k.to_string(),
                                serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
                            )
                        })
                        .collect();
                    if !props.is_empty() {
                        a["props"] = serde_json::Value::Object(props);
                    }
                    attrs.push(a);
                    i += 1;
                }
                let key = keys::rel_key(
                    uid,
                    utype,
                    &g.relation(rel).name,
                    g.ident(tgt),
                    g.type_label(g.node_type(tgt)),
                );
                batch.push((
                    key,
                    serde_json::Value::Array(attrs).to_string().into_bytes(),
                ));
                report.edge_keys += 1;
            }
        }
        batch.push((keys::adj_key(uid, utype), keys::encode_adjacency(&inc)));
        report.adjacency_keys += 1;
        if batch.len() >= batch_size {
            report.bytes += send_batch(
                &mut inflight,
                &conn,
                target,
                std::mem::take(&mut batch),
                opts.in_flight,
            )
            .await?;
        }
        bar.inc(1);
    }
    if !batch.is_empty() {
        report.bytes += send_batch(&mut inflight, &conn, target, batch, opts.in_flight).await?;
    }
    while let Some(r) = inflight.join_next().await {
        r.map_err(|e| EdgeError::Redis(format!("export task: {e}")))??;
    }
    let meta = serde_json::to_string(&meta_for(g, opts.edge_keys))
        .map_err(|e| EdgeError::Redis(e.to_string()))?;
    let _: () = conn
        .query(redis::cmd("SET").arg(keys::META_KEY).arg(meta))
        .await
        .map_err(|e| redis_err(target, "SET meta", e))?;
    bar.finish_and_clear();
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

async fn send_batch(
    inflight: &mut tokio::task::JoinSet<EdgeResult<()>>,
    conn: &RedisConn,
    target: &RedisTarget,
    batch: Vec<(String, Vec<u8>)>,
    max_in_flight: usize,
) -> EdgeResult<u64> {
    while inflight.len() >= max_in_flight.max(1) {
        if let Some(r) = inflight.join_next().await {
            r.map_err(|e| EdgeError::Redis(format!("export task: {e}")))??;
        }
    }
    let bytes: u64 = batch.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum();
    let mut conn = conn.clone();
    let target = target.clone();
    inflight.spawn(async move {
        let mut cmd = redis::cmd("MSET");
        for (k, v) in &batch {
            cmd.arg(k).arg(v);
        }
        let _: () = conn
            .query(&cmd)
            .await
            .map_err(|e| redis_err(&target, "MSET", e))?;
        Ok(())
    });
    Ok(bytes)
}

/// Compares every node's adjacency in Redis with the graph's; returns the first mismatches
/// (empty = identical).
pub async fn check(g: &Graph, edges: &RedisEdges, batch: usize) -> EdgeResult<Vec<String>> {
    let mem = MemoryEdges::new(g);
    let mut bad = Vec::new();
    let all: Vec<NodeId> = (0..g.node_count() as NodeId).collect();
    for chunk in all.chunks(batch.max(1)) {
        let got = edges.incident_many(chunk).await?;
        for (&u, inc) in chunk.iter().zip(got) {
            if inc != mem.incident(u) {
                bad.push(format!(
                    "{}::{}: {} edges in Redis, {} in the graph (or different records)",
                    g.type_label(g.node_type(u)),
                    g.ident(u),
                    inc.len(),
                    g.degree(u)
                ));
                if bad.len() >= 10 {
                    return Ok(bad);
                }
            }
        }
    }
    Ok(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_never_show_passwords() {
        let t = RedisTarget::parse("redis://:s3cret@db.example:6379/2").expect("single");
        assert_eq!(t.to_string(), "redis://***@db.example:6379/2");
        let c = RedisTarget::parse("redis+cluster://a:7000, b:7001,").expect("cluster");
        assert_eq!(
            c,
            RedisTarget::Cluster(vec!["redis://a:7000".into(), "redis://b:7001".into()])
        );
        assert_eq!(c.to_string(), "redis+cluster://a:7000,b:7001");
        let e = RedisTarget::parse("http://u:pw@host").expect_err("not redis");
        assert!(!e.contains("pw") && e.contains("not a Redis URL"), "{e}");
    }
}
