//! The executor on the real Hetionet graph: lookups, counts and shortest paths checked against
//! direct traversal of the CSR, plus budget and error behaviour (the nine SerenQA pattern
//! types are checked with their generator, in `serenqa-benchmark`'s `tests/perf_patterns.rs`).
//! Skipped (with a message) when the data is not present.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serenqa_cypher::{execute, Budget, ErrorKind, Options, Out};
use serenqa_graph::load::hetionet::{load, HetionetFiles};
use serenqa_graph::load::LoadOptions;
use serenqa_graph::{Graph, NodeId, RelId};

/// `hetionet/` under the tests' data directory (`serenqa_graph::datadir::data_dir_above`).
fn data_dir() -> Option<PathBuf> {
    serenqa_graph::datadir::data_dir_above(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
        .map(|d| d.join("hetionet"))
        .filter(|p| p.is_dir())
}

/// One graph for all tests of this file (loading takes seconds).
fn graph() -> Option<&'static Graph> {
    static G: OnceLock<Option<Graph>> = OnceLock::new();
    G.get_or_init(|| {
        let dir = data_dir()?;
        let files = HetionetFiles::in_dir(&dir).ok()?;
        let t = Instant::now();
        let g = load(&files, &LoadOptions::default()).ok()?;
        eprintln!(
            "hetionet loaded in {:.1}s: {} nodes, {} edges",
            t.elapsed().as_secs_f64(),
            g.node_count(),
            g.edge_count()
        );
        Some(g)
    })
    .as_ref()
}

macro_rules! need_graph {
    () => {
        match graph() {
            Some(g) => g,
            None => {
                serenqa_graph::datadir::missing_resource(
                    "no Hetionet data (../shared/data/hetionet or $SERENQA_DATA/hetionet)",
                );
                return;
            }
        }
    };
}

fn rel(g: &Graph, name: &str) -> u16 {
    g.relation_id(name)
        .unwrap_or_else(|| panic!("Hetionet has no relation {name}"))
}

/// Out-neighbours of `n` over relation `rel`.
fn out_n(g: &Graph, n: NodeId, rel: RelId) -> &[NodeId] {
    let (_, targets, _) = g.out_csr();
    &targets[g.out_range_rel(n, rel)]
}

#[test]
fn index_and_label_lookups() {
    let g = need_graph!();
    // id index, exact name, case-sensitive equality after the case-insensitive index.
    let r = execute(
        g,
        "MATCH (c:Compound {id: 'DB00188'}) RETURN c.name AS n",
        &Options::default(),
    )
    .unwrap();
    let c = g
        .find_by_key("Compound::DB00188")
        .expect("bortezomib in Hetionet");
    assert_eq!(r.rows, vec![vec![Out::Str(g.name(c).to_string())]]);
    let q = format!(
        "MATCH (c:Compound) WHERE c.name = '{}' RETURN c.id AS id",
        g.name(c).to_uppercase()
    );
    let r = execute(g, &q, &Options::default()).unwrap();
    assert_eq!(
        r.rows.len(),
        usize::from(g.name(c).to_uppercase() == g.name(c))
    );
    // Counting by label agrees with the store.
    let r = execute(
        g,
        "MATCH (d:Disease) RETURN count(d) AS n",
        &Options::default(),
    )
    .unwrap();
    let disease = g.type_id("Disease").unwrap();
    assert_eq!(
        r.rows,
        vec![vec![Out::Int(g.nodes_of_type(disease).len() as i64)]]
    );
    // Unknown labels and types: empty, not an error.
    let r = execute(
        g,
        "MATCH (x:NoSuchLabel)-[:NO_SUCH_TYPE]->(y) RETURN x",
        &Options::default(),
    )
    .unwrap();
    assert!(r.rows.is_empty());
    let r = execute(
        g,
        "MATCH (c:Compound {id: 'DB00188'})-[:NO_SUCH_TYPE|BINDS_CbG]->(x) RETURN count(*) AS n",
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        r.rows,
        vec![vec![
            Out::Int(out_n(g, c, rel(g, "BINDS_CbG")).len() as i64)
        ]]
    );
}

fn assert_budget_error(q: &str, budget: Budget) {
    let g = need_graph!();
    let t = Instant::now();
    let e = execute(
        g,
        q,
        &Options {
            budget,
            ..Default::default()
        },
    )
    .expect_err(q);
    let took = t.elapsed();
    assert_eq!(e.kind, ErrorKind::Budget, "{q}: {e}");
    assert!(e.to_string().starts_with("budget exceeded"), "{e}");
    // The clock is read every 1024 inner steps: allow a small overshoot.
    assert!(
        took <= budget.time + Duration::from_millis(500),
        "{q}: took {took:?}, budget {:?}",
        budget.time
    );
    eprintln!("{q}\n  -> {e} after {took:?}");
}

#[test]
fn cartesian_product_hits_row_budget() {
    assert_budget_error(
        "MATCH (a), (b) RETURN count(*) AS n",
        Budget::with_time_rows(Duration::from_secs(20), 1_000_000),
    );
}

#[test]
fn long_variable_length_hits_time_budget() {
    assert_budget_error(
        "MATCH p = (c:Compound {id: 'DB00188'})-[*1..20]-(x) WHERE x.name STARTS WITH 'no such name' RETURN count(p) AS n",
        Budget::with_time_rows(Duration::from_secs(2), u64::MAX),
    );
    assert_budget_error(
        "MATCH p = (c:Compound)-[*1..20]-(x) RETURN count(p) AS n",
        Budget::with_time_rows(Duration::from_secs(2), 1_000_000),
    );
}

#[test]
fn errors_are_one_line_with_positions() {
    let g = need_graph!();
    let e = execute(
        g,
        "MATCH (c:Compound)\nWHERE c.name = 'x' AND\nRETURN c",
        &Options::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Syntax { line: 3, .. }), "{e:?}");
    assert!(!e.to_string().contains('\n'));
    let e = execute(g, "MATCH (c:Compound RETURN c", &Options::default()).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Syntax { line: 1, col } if col > 1),
        "{e:?}"
    );
    // Writing clauses: tests/budgets.rs checks them on a graph built in code.
    let e = execute(g, "MATCH (c:Compound) RETURN d.name", &Options::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Semantic);
    assert!(e.to_string().contains("`d`"), "{e}");
}

#[test]
fn limit_stops_matching_early() {
    let g = need_graph!();
    // Without the early stop this would hit the budget long before finishing.
    let budget = Budget::with_time_rows(Duration::from_secs(5), 100_000);
    let r = execute(
        g,
        "MATCH p = (c:Compound)-[*1..6]-(x) RETURN x.id AS id SKIP 2 LIMIT 3",
        &Options {
            budget,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.rows.len(), 3);
}

#[test]
fn shortest_path_length_matches_bfs() {
    let g = need_graph!();
    let src = g.find_by_key("Compound::DB00188").expect("bortezomib");
    let disease = g.type_id("Disease").unwrap();
    // Independent BFS over both directions.
    let mut dist = vec![u32::MAX; g.node_count()];
    dist[src as usize] = 0;
    let mut frontier = vec![src];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &u in &frontier {
            for e in g.edges(u, serenqa_graph::Direction::Both) {
                let v = if e.source == u { e.target } else { e.source };
                if dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    next.push(v);
                }
            }
        }
        frontier = next;
    }
    for &d in g.nodes_of_type(disease).iter().take(3) {
        let q = format!("MATCH (c:Compound {{id: 'DB00188'}}), (d:Disease {{id: '{}'}}) MATCH p = shortestPath((c)-[*..6]-(d)) RETURN length(p) AS l", g.ident(d));
        let r = execute(g, &q, &Options::default()).unwrap_or_else(|e| panic!("{q}: {e}"));
        let want: Vec<Vec<Out>> = if dist[d as usize] <= 6 {
            vec![vec![Out::Int(i64::from(dist[d as usize]))]]
        } else {
            vec![]
        };
        assert_eq!(r.rows, want, "{q}");
    }
}

#[test]
fn case_insensitive_name_filter() {
    let g = need_graph!();
    let c = g.find_by_key("Compound::DB00188").expect("bortezomib");
    let lower = g.name(c).to_lowercase();
    let budget = Budget::with_time_rows(Duration::from_secs(5), 1_000);
    let q = format!("MATCH (x)-[:TREATS_CtD]->(d:Disease) WHERE toLower(x.name) = '{lower}' RETURN count(d) AS n");
    let r = execute(
        g,
        &q,
        &Options {
            budget,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{q}: {e}"));
    assert_eq!(
        r.rows,
        vec![vec![Out::Int(
            out_n(g, c, rel(g, "TREATS_CtD")).len() as i64
        )]]
    );
}
