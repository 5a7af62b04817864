//! Read-only Cypher over serenqa's in-memory graph.
//!
//! A query goes through named stages, one module each:
//!
//! - [`parse`] — text → `open-cypher` syntax tree; parser diagnostics become
//!   [`CypherError`]s with line and column.
//! - [`semantic`] — rejects writing clauses (`read-only: CREATE is not supported`), resolves
//!   variables to row slots, checks scoping, variable kinds, aggregate placement and aliases,
//!   and lowers the tree to a [`plan`].
//! - [`plan`] — the logical plan: per UNION branch a pipeline of MATCH / UNWIND / projection
//!   operators; patterns are anchored at run time on the most selective node (bound variable,
//!   then `id`/`name` index, then the smallest label, then all nodes).
//! - [`exec`] — runs the plan over a [`store::Store`] with a [`Budget`]: wall time (the clock
//!   is read every 64 inner-loop steps and after every large value), rows produced, bytes held
//!   (materialised rows, collected values, DISTINCT keys; 64 MiB by default), the size of any
//!   one string/list/map (16 MiB, checked *before* concatenation, `range`, `split` and
//!   `replace` allocate) and the depth of an unbounded `*` (32). A MATCH or UNWIND feeding a
//!   projection streams into it, so `count(*)` holds nothing per row, and an anonymous
//!   variable-length relationship keeps no list of the walk. Running out of any limit is an
//!   [`ErrorKind::Budget`] error naming it (`budget exceeded: memory: …`), never an abort.
//!   [`func`] holds scalar functions and operators.
//! - [`value`] — Cypher values with null semantics, comparability and ordering.
//! - [`result`] — results detached from the store, rendered as table or JSON.
//! - [`store`] — the [`Store`] trait the executor reads, implemented by the CSR
//!   [`serenqa_graph::Graph`] (fast path, typed adjacency sub-ranges, indexes) and by
//!   [`MemGraph`] (multi-label property graph for the TCK, fuzzing and tests).
//! - `neo4j` (cargo feature `neo4j`) — the same API against a live Neo4j over Bolt.
//!
//! Entry point: [`execute`]`(&store, query, &Options)` → [`QueryResult`] or [`CypherError`].
//!
//! Supported: MATCH / OPTIONAL MATCH (labels, property maps, relationship type alternatives,
//! any direction, `*`, `*1..3`, comma patterns, path variables, `shortestPath` /
//! `allShortestPaths`), WHERE (comparisons, AND/OR/XOR/NOT, IN, STARTS WITH / ENDS WITH /
//! CONTAINS, `=~`, `IS [NOT] NULL`, label tests, pattern predicates, `EXISTS { }`,
//! `COUNT { }`), WITH, UNWIND, `RETURN [DISTINCT]` with aliases, map literals and projections,
//! CASE, list comprehensions, quantifiers, reduce, aggregates (count, collect, sum, avg, min,
//! max, stDev, percentiles; DISTINCT), ORDER BY / SKIP / LIMIT, `UNION [ALL]`, parameters.
//! Not supported (clear `unsupported:` error): CALL, temporal and spatial types, GQL-only forms.
//! Unknown labels or relationship types match nothing, as in Neo4j.
//!
//! Tests: `tests/tck.rs` (openCypher TCK, per-area table and baseline), `tests/hetionet.rs`
//! (SerenQA patterns against traversal, budgets, errors), `tests/basic.rs`; `fuzz/` is a
//! cargo-fuzz target (`cargo +nightly fuzz run parse_execute`).

// Stages import only stages below them: ids < value < store < plan < func < semantic < exec;
// parse, error and result sit beside them (see the code map above). Only `plan` (the output
// of [`prepare`]) and `neo4j` are public modules; the rest is reached through the re-exports.
mod error;
mod exec;
mod func;
mod ids;
#[cfg(feature = "neo4j")]
pub mod neo4j;
mod parse;
pub mod plan;
mod result;
mod semantic;
mod store;
mod value;

use std::collections::HashMap;

pub use error::{CypherError, ErrorKind};
pub use exec::Budget;
pub use ids::{Dir, NodeId, RelRef};
pub use parse::MAX_TOKENS;
pub use result::{NodeOut, Out, QueryResult, RelOut};
pub use store::{prop_to_value, MemGraph, Store};
pub use value::{Path, Value};

/// Per-query options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub budget: Budget,
    /// Query parameters (`$name`).
    pub params: HashMap<String, Value>,
    /// Most result rows to return: longer results are cut *before* their nodes and
    /// relationships are detached from the store, and flagged [`QueryResult::truncated`].
    pub max_rows: Option<usize>,
}

/// Parses and checks a query without running it.
pub fn prepare(query: &str) -> Result<plan::QueryPlan, CypherError> {
    let program = parse::parse(query)?;
    semantic::lower(query, &program)
}

/// Stack for the thread a query runs on: parsing, lowering and evaluation recurse over the
/// syntax tree, and a long operator chain (up to [`parse::MAX_TOKENS`]) is a deep tree. The
/// memory is reserved, not committed, so an ordinary query touches only a few pages of it.
pub const QUERY_STACK_BYTES: usize = 512 << 20;

/// Runs a read-only query (on a helper thread with a [`QUERY_STACK_BYTES`] stack, so no
/// input can overflow the caller's stack).
pub fn execute(store: &dyn Store, query: &str, opts: &Options) -> Result<QueryResult, CypherError> {
    std::thread::scope(|s| {
        match std::thread::Builder::new()
            .name("cypher".into())
            .stack_size(QUERY_STACK_BYTES)
            .spawn_scoped(s, || execute_here(store, query, opts))
        {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(CypherError::new(
                    ErrorKind::Runtime,
                    "internal error while running the query",
                ))
            }),
            // No thread (resource limits): run here rather than fail.
            Err(_) => execute_here(store, query, opts),
        }
    })
}

/// Runs a read-only query on the calling thread.
pub fn execute_here(
    store: &dyn Store,
    query: &str,
    opts: &Options,
) -> Result<QueryResult, CypherError> {
    let plan = prepare(query)?;
    let ctx = exec::Ctx::new(store, &opts.params, opts.budget);
    let (columns, mut rows) = ctx.run(&plan)?;
    let truncated = opts.max_rows.is_some_and(|m| rows.len() > m);
    if let Some(m) = opts.max_rows {
        rows.truncate(m);
    }
    let rows = rows
        .iter()
        .map(|r| r.iter().map(|v| result::detach(store, v)).collect())
        .collect();
    Ok(QueryResult {
        columns,
        rows,
        truncated,
    })
}

/// A store bound to default options, for callers that run many queries.
pub struct Engine<'g> {
    store: &'g dyn Store,
    pub options: Options,
}

impl<'g> Engine<'g> {
    pub fn new(store: &'g dyn Store) -> Self {
        Engine {
            store,
            options: Options::default(),
        }
    }
    pub fn execute(&self, query: &str) -> Result<QueryResult, CypherError> {
        execute(self.store, query, &self.options)
    }
}
