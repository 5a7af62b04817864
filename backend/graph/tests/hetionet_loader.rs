//! The Hetionet loader on small fixtures (every error path) and on the real rebuild.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use serenqa_graph::load::hetionet::{load, HetionetFiles};
use serenqa_graph::load::LoadOptions;
use serenqa_graph::{Direction, GraphError};

fn files(dir: &std::path::Path, nodes: &str, edges: &str) -> HetionetFiles {
    HetionetFiles {
        nodes: write(dir, "nodes.tsv", nodes),
        edges: write(dir, "edges.sif", edges),
        metagraph: None,
    }
}

fn load_err(nodes: &str, edges: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    match load(&files(dir.path(), nodes, edges), &LoadOptions::default()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn loads_fixture_with_types_relations_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let g = load(&files(dir.path(), NODES, EDGES), &LoadOptions::default()).unwrap();
    assert_eq!(g.node_count(), 6);
    assert_eq!(g.edge_count(), 8);
    let cetuximab = g.find_by_key("Compound::DB00002").unwrap();
    assert_eq!(g.name(cetuximab), "Cetuximab");
    assert_eq!(g.type_label(g.node_type(cetuximab)), "Compound");
    assert_eq!(g.find_by_name("CETUXIMAB"), &[cetuximab]);
    assert_eq!(g.find_by_ident("DOID:1612").len(), 1);
    let binds = g.relation_id("BINDS_CbG").unwrap();
    assert_eq!(g.relation_id("CbG"), Some(binds));
    let targets: Vec<&str> = g
        .out_range_rel(cetuximab, binds)
        .map(|i| g.ident(g.out_csr().1[i]))
        .collect();
    assert_eq!(targets, ["1017", "5743"]);
    let regulates = g.relation(g.relation_id("Gr>G").unwrap());
    assert!(regulates.directed && regulates.name == "REGULATES_GrG");
    // In-edges keep the stored orientation.
    let cdk2 = g.find_by_key("Gene::1017").unwrap();
    let into: Vec<String> = g
        .edges(cdk2, Direction::In)
        .map(|e| g.key(e.source))
        .collect();
    assert_eq!(into.len(), 3);
    assert!(into.contains(&"Disease::DOID:1612".to_string()));
    for e in g.edges(cdk2, Direction::Both) {
        assert_eq!(g.edge(e.id), e);
    }
    assert_eq!(g.search_prefix("ce", 10), vec![cetuximab]);
    assert_eq!(g.search_prefix("type 2", 10).len(), 1);
}

#[test]
fn gzip_input_is_detected_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let f = HetionetFiles {
        nodes: write_gz(dir.path(), "n.tsv.gz", NODES),
        edges: write_gz(dir.path(), "e.sif", EDGES),
        metagraph: None,
    };
    let g = load(&f, &LoadOptions::default()).unwrap();
    assert_eq!((g.node_count(), g.edge_count()), (6, 8));
}

#[test]
fn malformed_node_line_names_file_and_line() {
    let nodes = format!("{NODES}Gene::7\tonly two columns\n");
    let e = load_err(&nodes, EDGES);
    assert!(
        e.contains("nodes.tsv:8:") && e.contains("expected 3 tab-separated columns"),
        "{e}"
    );
}

#[test]
fn duplicate_ids_are_rejected_with_both_lines() {
    let nodes = format!("{NODES}Gene::1017\tCDK2 again\tGene\n");
    let e = load_err(&nodes, EDGES);
    assert!(
        e.contains("nodes.tsv:8:") && e.contains("duplicate node id") && e.contains("line 6"),
        "{e}"
    );
}

#[test]
fn unknown_metaedge_is_rejected() {
    let edges = format!("{EDGES}Gene::1017\tGxG\tGene::5743\n");
    let e = load_err(NODES, &edges);
    assert!(
        e.contains("edges.sif:10:") && e.contains("unknown metaedge \"GxG\""),
        "{e}"
    );
}

#[test]
fn edge_to_unknown_node_is_rejected() {
    let edges = format!("{EDGES}Gene::1017\tGiG\tGene::999999\n");
    let e = load_err(NODES, &edges);
    assert!(
        e.contains("edges.sif:10:") && e.contains("unknown target node"),
        "{e}"
    );
}

#[test]
fn metaedge_joining_wrong_kinds_is_rejected() {
    let edges = format!("{EDGES}Gene::1017\tCtD\tDisease::DOID:1612\n");
    let e = load_err(NODES, &edges);
    assert!(
        e.contains("edges.sif:10:") && e.contains("metaedge CtD joins"),
        "{e}"
    );
}

#[test]
fn wrong_header_and_kind_mismatch() {
    let e = load_err("identifier\tname\tkind\n", EDGES);
    assert!(e.contains("nodes.tsv:1:") && e.contains("header"), "{e}");
    let e = load_err(&format!("{NODES}Gene::8\tX\tDisease\n"), EDGES);
    assert!(e.contains("does not match its kind"), "{e}");
}

#[test]
fn truncated_gzip_is_a_clear_error_not_a_partial_graph() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = String::from(EDGES);
    for _ in 0..2000 {
        big.push_str("Gene::1017\tGiG\tGene::5743\n");
    }
    let full = write_gz(dir.path(), "full.sif.gz", &big);
    let bytes = std::fs::read(&full).unwrap();
    let cut = dir.path().join("cut.sif.gz");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let f = HetionetFiles {
        nodes: write(dir.path(), "n.tsv", NODES),
        edges: cut,
        metagraph: None,
    };
    let e = load(&f, &LoadOptions::default())
        .expect_err("truncated input must fail")
        .to_string();
    assert!(e.contains("cut.sif.gz:") && e.contains("truncated"), "{e}");
}

#[test]
fn missing_file_is_a_file_error() {
    let f = HetionetFiles {
        nodes: "/nonexistent/nodes.tsv".into(),
        edges: "/nonexistent/e.sif".into(),
        metagraph: None,
    };
    let e = load(&f, &LoadOptions::default()).err().unwrap();
    assert!(matches!(e, GraphError::File { .. }));
    assert!(e
        .to_string()
        .contains("/nonexistent/nodes.tsv: cannot open"));
}

/// The real rebuild: 47,031 nodes, 2,049,746 edges, and per-kind edge counts equal to the
/// `edges` column of `metaedges.tsv`.
#[test]
fn real_hetionet_counts_match_metaedges_tsv() {
    let Some(data) = shared_data() else {
        serenqa_graph::datadir::missing_resource("no Hetionet data: ../shared/data not found");
        return;
    };
    let dir = data.join("hetionet");
    let g = load(
        &HetionetFiles::in_dir(&dir).unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(g.node_count(), 47_031);
    assert_eq!(g.edge_count(), 2_049_746);
    assert_eq!(g.type_count(), 11);
    assert_eq!(g.relation_count(), 24);
    let table = std::fs::read_to_string(dir.join("metaedges.tsv")).unwrap();
    let counts = g.relation_counts();
    let mut checked = 0;
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (abbrev, edges): (&str, u64) = (cols[0], cols[5].parse().unwrap());
        let r = g
            .relation_id(abbrev)
            .unwrap_or_else(|| panic!("no relation {abbrev}"));
        assert_eq!(counts[r as usize].1, edges, "{abbrev}");
        checked += 1;
    }
    assert_eq!(checked, 24);
    let aspirin = g.find_by_name("ACETYLSALICYLIC ACID");
    assert_eq!(aspirin.len(), 1);
    assert_eq!(g.key(aspirin[0]), "Compound::DB00945");
}

#[test]
fn source_names_the_files_and_their_resolved_directory() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    files(dir.path(), NODES, EDGES);
    // The same files reached through `a/b/../..`, as a test run from a crate directory would.
    let roundabout = HetionetFiles {
        nodes: sub.join("../../nodes.tsv"),
        edges: sub.join("../../edges.sif"),
        metagraph: None,
    };
    let g = load(&roundabout, &LoadOptions::default()).unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        g.meta().source,
        format!(
            "Hetionet files nodes.tsv and edges.sif in {}",
            real.display()
        )
    );
    assert!(!g.meta().source.contains(".."));
}
