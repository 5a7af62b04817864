//! Snapshots (round trip, corruption, truncation), the subgraph filter and the synthetic
//! generator.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use serenqa_graph::filter::{apply, FilterSpec};
use serenqa_graph::load::hetionet::{load, HetionetFiles};
use serenqa_graph::load::LoadOptions;
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_graph::{Direction, Graph, GraphBuilder, GraphMeta, RelationType};

fn fixture() -> Graph {
    let dir = tempfile::tempdir().unwrap();
    let f = HetionetFiles {
        nodes: write(dir.path(), "n.tsv", NODES),
        edges: write(dir.path(), "e.sif", EDGES),
        metagraph: None,
    };
    load(&f, &LoadOptions::default()).unwrap()
}

fn same(a: &Graph, b: &Graph) {
    assert_eq!(a.node_count(), b.node_count());
    assert_eq!(a.edge_count(), b.edge_count());
    assert_eq!(a.meta(), b.meta());
    assert_eq!(a.relations(), b.relations());
    for v in 0..a.node_count() as u32 {
        assert_eq!(a.key(v), b.key(v));
        assert_eq!(a.name(v), b.name(v));
        assert_eq!(
            a.edges(v, Direction::Both).collect::<Vec<_>>(),
            b.edges(v, Direction::Both).collect::<Vec<_>>()
        );
    }
}

#[test]
fn snapshot_round_trip() {
    let g = fixture();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.snap");
    g.save(&p).unwrap();
    let h = Graph::load(&p).unwrap();
    same(&g, &h);
    assert_eq!(h.find_by_name("cetuximab").len(), 1);
    assert_eq!(h.relation_id("CtD"), g.relation_id("CtD"));
}

#[test]
fn corrupted_and_truncated_snapshots_are_rejected() {
    let g = fixture();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.snap");
    g.save(&p).unwrap();
    let bytes = std::fs::read(&p).unwrap();

    let mut flipped = bytes.clone();
    let last = flipped.len() - 3;
    flipped[last] ^= 0xff;
    std::fs::write(&p, &flipped).unwrap();
    let e = Graph::load(&p).err().unwrap().to_string();
    assert!(e.contains("corrupted") || e.contains("inconsistent"), "{e}");

    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    let e = Graph::load(&p).err().unwrap().to_string();
    assert!(e.contains("truncated"), "{e}");

    std::fs::write(&p, b"not a snapshot at all").unwrap();
    let e = Graph::load(&p).err().unwrap().to_string();
    assert!(e.contains("not a valid serenqa snapshot"), "{e}");
}

#[test]
fn builder_orders_adjacency_by_relation_then_neighbour() {
    let mut b = GraphBuilder::new(GraphMeta::default());
    let t = b.node_type("Thing", "Thing");
    let r = |name: &str| RelationType {
        name: name.into(),
        verb: name.into(),
        abbrev: name.into(),
        source_type: None,
        target_type: None,
        directed: true,
    };
    let (ra, rb) = (b.relation(r("A")).unwrap(), b.relation(r("B")).unwrap());
    let n: Vec<u32> = (0..5)
        .map(|i| b.add_node(t, &format!("n{i}"), &format!("N{i}")))
        .collect();
    b.add_edge(n[0], rb, n[3], None);
    b.add_edge(n[0], ra, n[4], Some(0.5));
    b.add_edge(n[0], ra, n[1], None);
    b.add_edge(n[0], rb, n[2], None);
    b.add_edge(n[2], ra, n[0], None);
    let g = b.build();
    let (targets, rels) = g.out_neighbors(n[0]);
    assert_eq!(targets, &[n[1], n[4], n[2], n[3]]);
    assert_eq!(rels, &[ra, ra, rb, rb]);
    assert_eq!(g.out_range_rel(n[0], rb).len(), 2);
    assert_eq!(g.in_range_rel(n[0], ra).len(), 1);
    let scored: Vec<_> = g
        .edges(n[0], Direction::Out)
        .filter_map(|e| g.edge_score(e.id))
        .collect();
    assert_eq!(scored, vec![0.5]);
}

#[test]
fn filter_drops_types_and_reports_them() {
    let mut b = GraphBuilder::new(GraphMeta::default());
    let gene = b.node_type("Gene", "Gene");
    let publication = b.node_type("Publication", "Publication");
    let immunity = b.node_type("Immunity", "Immunity");
    let rel = |name: &str, s, t| RelationType {
        name: name.into(),
        verb: name.into(),
        abbrev: name.into(),
        source_type: Some(s),
        target_type: Some(t),
        directed: true,
    };
    let mentioned = b
        .relation(rel("MENTIONED_IN_PUBLICATION", gene, publication))
        .unwrap();
    let interacts = b.relation(rel("INTERACTS_WITH", gene, gene)).unwrap();
    let has = b.relation(rel("HAS_IMMUNITY", gene, immunity)).unwrap();
    let (g1, g2) = (b.add_node(gene, "g1", "G1"), b.add_node(gene, "g2", "G2"));
    let p = b.add_node(publication, "p1", "P1");
    let i = b.add_node(immunity, "i1", "I1");
    b.add_edge(g1, mentioned, p, None);
    b.add_edge(g2, mentioned, p, None);
    b.add_edge(g1, interacts, g2, None);
    b.add_edge(g1, has, i, None);
    let (g, report) = apply(b.build(), &FilterSpec::default());
    assert_eq!(
        g.node_count(),
        3,
        "Immunity must survive: `unit` is a word, not a substring"
    );
    assert_eq!(g.edge_count(), 2);
    assert_eq!(report.node_types, vec![("Publication".to_string(), 1)]);
    assert_eq!(
        report.relations,
        vec![("MENTIONED_IN_PUBLICATION".to_string(), 2)]
    );
    assert!(g.relation_id("MENTIONED_IN_PUBLICATION").is_none());
    assert_eq!(g.meta().dropped.len(), 2);
    let (same_graph, empty) = apply(g, &FilterSpec::none());
    assert!(empty.is_empty());
    assert_eq!(same_graph.edge_count(), 2);
}

#[test]
fn synth_is_ckg_shaped_and_deterministic() {
    let spec = SynthSpec {
        nodes: 10_000,
        edges: 50_000,
        seed: 3,
        progress: false,
    };
    let a = generate(&spec);
    let b = generate(&spec);
    assert!(a.meta().synthetic);
    assert_eq!(a.type_count(), 36);
    assert_eq!(a.relation_count(), 47);
    assert_eq!(a.node_count(), 10_000);
    assert_eq!(a.edge_count(), 50_000);
    same(&a, &b);
    let c = generate(&SynthSpec { seed: 4, ..spec });
    assert!(
        (0..a.node_count() as u32).any(|v| a.out_neighbors(v) != c.out_neighbors(v)),
        "another seed gives another graph"
    );
    // Heavy tail: the busiest node has far more edges than the average.
    let max = (0..a.node_count() as u32)
        .map(|v| a.degree(v))
        .max()
        .unwrap();
    let mean = 2.0 * a.edge_count() as f64 / a.node_count() as f64;
    assert!(max as f64 > 20.0 * mean, "max degree {max}, mean {mean}");
    // Every edge respects its relation's schema.
    for v in 0..a.node_count() as u32 {
        for e in a.edges(v, Direction::Out) {
            let r = a.relation(e.rel);
            assert_eq!(Some(a.node_type(e.source)), r.source_type);
            assert_eq!(Some(a.node_type(e.target)), r.target_type);
        }
    }
}

/// A snapshot read through the memory map reads exactly like one copied into the heap: the
/// same graph, and saving either again gives the original file byte for byte.
#[test]
fn mapped_snapshot_reads_identically_to_an_owned_read() {
    use serenqa_graph::snapshot::SnapshotReader;
    let g = generate(&SynthSpec {
        nodes: 400,
        edges: 3_000,
        seed: 7,
        progress: false,
    });
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.snap");
    g.save(&p).unwrap();
    let original = std::fs::read(&p).unwrap();

    let mut r = SnapshotReader::open(&p).unwrap();
    assert!(r.is_mapped());
    let mapped = Graph::read_sections(&mut r).unwrap();
    let mut r = SnapshotReader::open_unmapped(&p).unwrap();
    assert!(!r.is_mapped());
    let owned = Graph::read_sections(&mut r).unwrap();
    assert!(
        mapped.mapped_bytes() > 0,
        "the big arrays point into the map"
    );
    assert_eq!(owned.mapped_bytes(), 0);
    same(&mapped, &owned);
    same(&mapped, &g);
    assert_eq!(mapped.content_hash(), owned.content_hash());
    for (name, h) in [("mapped", &mapped), ("owned", &owned)] {
        let q = dir.path().join(format!("{name}.snap"));
        h.save(&q).unwrap();
        assert!(
            std::fs::read(&q).unwrap() == original,
            "{name} re-save differs"
        );
    }
    // A clone shares the map; the graph outlives the reader that opened it.
    let c = mapped.clone();
    drop(mapped);
    same(&c, &owned);
    // Rewriting the file under the same name (temp file + rename) leaves the mapped graph intact.
    fixture().save(&p).unwrap();
    same(&c, &owned);
}

/// Corruption and truncation give the same one-line errors with and without the map.
#[test]
fn mapped_and_owned_reads_reject_the_same_corrupt_files() {
    use serenqa_graph::snapshot::SnapshotReader;
    let g = fixture();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.snap");
    g.save(&p).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    let read = |mapped: bool| -> String {
        let r = if mapped {
            SnapshotReader::open(&p)
        } else {
            SnapshotReader::open_unmapped(&p)
        };
        match r.and_then(|mut r| Graph::read_sections(&mut r)) {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    };
    // A flipped byte inside the largest array (out_targets): checksum mismatch either way.
    let mut flipped = bytes.clone();
    let at = find_section(&bytes, "graph.out_targets");
    flipped[at] ^= 0x01;
    std::fs::write(&p, &flipped).unwrap();
    for mapped in [true, false] {
        let e = read(mapped);
        assert!(
            e.contains("section graph.out_targets is corrupted (checksum mismatch)"),
            "{e}"
        );
        assert!(!e.contains('\n'), "one line: {e}");
    }
    std::fs::write(&p, &bytes[..bytes.len() - 5]).unwrap();
    for mapped in [true, false] {
        let e = read(mapped);
        assert!(e.contains("truncated"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    std::fs::write(&p, b"").unwrap();
    for mapped in [true, false] {
        let e = read(mapped);
        assert!(e.contains("not a valid serenqa snapshot"), "{e}");
    }
}

/// Byte offset of a section's first byte, read from the snapshot's table (layout in
/// `snapshot.rs`).
fn find_section(bytes: &[u8], name: &str) -> usize {
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()) as usize;
    let count = u32_at(12);
    let mut i = 16;
    for _ in 0..count {
        let n = u32_at(i);
        let this = &bytes[i + 4..i + 4 + n];
        let offset = u64_at(i + 4 + n);
        if this == name.as_bytes() {
            return offset;
        }
        i += 4 + n + 24;
    }
    panic!("no section {name}");
}
