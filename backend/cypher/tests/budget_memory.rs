//! The process's peak memory while hostile queries run, on the small in-code graph. One test
//! in its own binary, so no other test shares the measured process.
//!
//! Before the byte budget, streaming aggregation and anonymous walks without relationship
//! lists, each of these queries grew the heap by gigabytes before any limit stopped it.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::time::Duration;

use serenqa_cypher::{execute, Budget, ErrorKind, Options};

mod common;

/// Peak resident set of this process (Linux `VmHWM`), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmHWM value");
    kb * 1024
}

#[test]
fn hostile_queries_stay_within_the_byte_budget() {
    let g = common::graph();
    let before = peak_rss();
    let budget = Budget {
        time: Duration::from_secs(3),
        rows: u64::MAX,
        ..Budget::STANDARD
    };
    for q in [
        r#"RETURN size(reduce(s = "xx", i IN range(1,40) | s + s)) AS n"#,
        "MATCH (a:Disease)-[*]->(b) RETURN count(*)",
        // Millions of rows, each carrying an 8-hop walk, before the aggregate counts them.
        "MATCH (a)-[*1..8]-(b) RETURN count(*)",
        "MATCH p = (a)-[*1..8]-(b) RETURN count(p)",
        "MATCH (a)-[*1..8]-(b) RETURN DISTINCT a.name, b.name",
        "MATCH (a), (b), (c) RETURN a.name + b.name + c.name AS x ORDER BY x",
        "UNWIND range(1, 1000) AS i RETURN reduce(s = 'abcdefgh', j IN range(1, 20) | s + s) AS big",
    ] {
        let e = execute(&g, q, &Options { budget, ..Default::default() }).expect_err(q);
        assert_eq!(e.kind, ErrorKind::Budget, "{q}: {e}");
        let grown = peak_rss().saturating_sub(before);
        eprintln!("{q}: {e} (peak grew {} MB)", grown >> 20);
        assert!(grown < 256 << 20, "{q}: peak RSS grew by {} MB", grown >> 20);
    }
}
