//! Any text through parse → semantic → plan → execute on a small fixed graph must return
//! `Ok` or `Err`, never panic, and stay within a small budget.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serenqa_cypher::{execute, Budget, MemGraph, Options, Value};

fn graph() -> &'static MemGraph {
    static G: OnceLock<MemGraph> = OnceLock::new();
    G.get_or_init(|| {
        let mut g = MemGraph::new();
        let p = |k: &str, v: Value| -> BTreeMap<String, Value> { [(k.to_string(), v)].into_iter().collect() };
        let a = g.add_node(&["Compound"], p("name", Value::Str("aspirin".into())));
        let b = g.add_node(&["Disease", "X"], p("id", Value::Int(7)));
        let c = g.add_node(&["Gene"], p("score", Value::Float(0.5)));
        let d = g.add_node(&[], p("list", Value::List(vec![Value::Int(1), Value::Null])));
        g.add_rel(a, "TREATS", b, p("w", Value::Int(1)));
        g.add_rel(a, "BINDS", c, BTreeMap::new());
        g.add_rel(b, "ASSOC", c, BTreeMap::new());
        g.add_rel(c, "SELF", c, BTreeMap::new());
        g.add_rel(d, "TREATS", a, BTreeMap::new());
        g
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(q) = std::str::from_utf8(data) {
        let opts = Options { budget: Budget::with_time_rows(Duration::from_millis(200), 20_000), ..Default::default() };
        let _ = execute(graph(), q, &opts);
    }
});
