//! The executor on the real Hetionet graph: the nine SerenQA pattern types checked against
//! answers computed here by direct traversal of the CSR, plus budget and error behaviour.
//! Skipped (with a message) when the data is not present.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serenqa_cypher::perf::{in_n, out_n, pattern_cases, Case, PATTERNS};
use serenqa_cypher::{execute, Budget, ErrorKind, Options, Out};
use serenqa_graph::load::hetionet::{load, HetionetFiles};
use serenqa_graph::load::LoadOptions;
use serenqa_graph::{Graph, NodeId};

fn data_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SERENQA_DATA") {
        let p = PathBuf::from(d).join("hetionet");
        if p.is_dir() {
            return Some(p);
        }
    }
    let mut d = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        if std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.contains("[workspace]")) {
            let p = d.join("../shared/data/hetionet");
            return p.is_dir().then_some(p);
        }
        if !d.pop() {
            return None;
        }
    }
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

fn ids(g: &Graph, ns: impl IntoIterator<Item = NodeId>) -> BTreeSet<String> {
    ns.into_iter().map(|n| g.ident(n).to_string()).collect()
}

fn inter(a: &[NodeId], b: &[NodeId]) -> Vec<NodeId> {
    a.iter().copied().filter(|x| b.contains(x)).collect()
}

/// The ids in a result column holding a list of `{id, name}` maps or of ids.
fn column_ids(v: &Out) -> BTreeSet<String> {
    let Out::List(items) = v else {
        panic!("expected a list, got {v:?}")
    };
    items
        .iter()
        .map(|x| match x {
            Out::Map(m) => match m.get("id") {
                Some(Out::Str(s)) => s.clone(),
                other => panic!("map without id: {other:?}"),
            },
            Out::Str(s) => s.clone(),
            other => panic!("unexpected item {other:?}"),
        })
        .collect()
}

/// The answer of a case computed by traversal, independently of the executor.
fn expected(g: &Graph, c: &Case) -> Vec<BTreeSet<String>> {
    let (ctd, cbg, dag, gppw, gpbp, gig, ccse) = (
        rel(g, "TREATS_CtD"),
        rel(g, "BINDS_CbG"),
        rel(g, "ASSOCIATES_DaG"),
        rel(g, "PARTICIPATES_GpPW"),
        rel(g, "PARTICIPATES_GpBP"),
        rel(g, "INTERACTS_GiG"),
        rel(g, "CAUSES_CcSE"),
    );
    let a = &c.anchors;
    let has = |s: NodeId, r: u16, t: NodeId| out_n(g, s, r).contains(&t);
    match c.pattern {
        "1.1" => vec![ids(g, out_n(g, a[0], ctd).iter().copied())],
        "1.2" => vec![ids(g, in_n(g, a[0], ctd).iter().copied())],
        "2.1" => vec![if has(a[0], cbg, a[1]) {
            ids(g, out_n(g, a[1], gppw).iter().copied())
        } else {
            BTreeSet::new()
        }],
        "3.1" => {
            let linked = has(a[1], gig, a[2]) || has(a[2], gig, a[1]);
            vec![if has(a[0], cbg, a[1]) && linked {
                ids(g, out_n(g, a[2], gpbp).iter().copied())
            } else {
                BTreeSet::new()
            }]
        }
        "3.2" => vec![if has(a[0], dag, a[1]) && has(a[1], gppw, a[2]) {
            ids(g, in_n(g, a[0], ctd).iter().copied())
        } else {
            BTreeSet::new()
        }],
        "3.3" => vec![if has(a[0], gppw, a[1]) && has(a[0], gpbp, a[2]) {
            ids(g, in_n(g, a[0], cbg).iter().copied())
        } else {
            BTreeSet::new()
        }],
        "4.1" => vec![ids(g, inter(in_n(g, a[0], ctd), in_n(g, a[1], cbg)))],
        "4.2" => vec![ids(
            g,
            inter(
                &inter(in_n(g, a[0], ctd), in_n(g, a[1], cbg)),
                in_n(g, a[2], ccse),
            ),
        )],
        "4.3" => {
            let e1 = inter(in_n(g, a[0], cbg), in_n(g, a[1], cbg));
            let e4 = inter(in_n(g, a[0], dag), in_n(g, a[1], dag));
            if e1.is_empty() || e4.is_empty() {
                // One empty side empties the whole cross product.
                vec![BTreeSet::new(), BTreeSet::new()]
            } else {
                vec![ids(g, e1), ids(g, e4)]
            }
        }
        p => panic!("unknown pattern {p}"),
    }
}

#[test]
fn nine_pattern_types_match_traversal() {
    let g = need_graph!();
    let cases = pattern_cases(g, 5);
    for p in PATTERNS {
        let mine: Vec<&Case> = cases.iter().filter(|c| c.pattern == p).collect();
        assert!(!mine.is_empty(), "no case generated for pattern {p}");
        let mut answers = 0;
        for c in mine {
            let r = execute(g, &c.query, &Options::default())
                .unwrap_or_else(|e| panic!("{p}: {}\n{e}", c.query));
            assert_eq!(r.rows.len(), 1, "{p}: {}", c.query);
            let got: Vec<BTreeSet<String>> = r.rows[0].iter().map(column_ids).collect();
            let want = expected(g, c);
            assert_eq!(got, want, "pattern {p}: {}", c.query);
            answers += want.iter().map(BTreeSet::len).sum::<usize>();
        }
        assert!(
            answers > 0,
            "pattern {p}: all answers empty, the check would be vacuous"
        );
        eprintln!("pattern {p}: ok ({answers} answers)");
    }
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
