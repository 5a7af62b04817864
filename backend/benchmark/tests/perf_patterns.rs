//! The nine SerenQA pattern types of `serenqa_benchmark::perf` run by the Cypher executor on
//! the real Hetionet graph, checked against answers computed here by direct traversal of the
//! CSR (moved from the cypher crate with `perf`). Skipped (with a message) when the data is
//! not present.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use serenqa_benchmark::perf::{in_n, out_n, pattern_cases, Case, PATTERNS};
use serenqa_cypher::{execute, Options, Out};
use serenqa_graph::load::hetionet::{load, HetionetFiles};
use serenqa_graph::load::LoadOptions;
use serenqa_graph::{Graph, NodeId};

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
