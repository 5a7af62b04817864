//! Neo4j admin-import CSV and generic table loaders.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::*;
use serenqa_graph::load::table::{EdgeTable, Field, NodeTable, TableSpec};
use serenqa_graph::load::{neo4j_csv, table, LoadOptions};
use serenqa_graph::PropValue;

const N4J_NODES: &str = "id:ID,name,:LABEL,synonyms:string[],mass:float
DB00945,Aspirin,Drug;Chemical,ASA;acetylsalicylic acid,180.16
DB00316,Acetaminophen,Drug,,151.16
DOID:9352,type 2 diabetes,Disease,,
";
const N4J_RELS: &str = ":START_ID,:END_ID,:TYPE,score:float,source
DB00945,DOID:9352,IS_INDICATED_FOR,0.8,curated
DB00316,DOID:9352,IS_INDICATED_FOR,,text mining
DB00945,DB00316,INTERACTS_WITH,0.1,
";

fn n4j(nodes: &str, rels: &str) -> Result<serenqa_graph::Graph, String> {
    let dir = tempfile::tempdir().unwrap();
    let n = write(dir.path(), "nodes.csv", nodes);
    let r = write(dir.path(), "rels.csv", rels);
    neo4j_csv::load(&[n], &[r], b',', &LoadOptions::default()).map_err(|e| e.to_string())
}

#[test]
fn neo4j_csv_loads_labels_properties_and_scores() {
    let g = n4j(N4J_NODES, N4J_RELS).unwrap();
    assert_eq!((g.node_count(), g.edge_count()), (3, 3));
    let aspirin = g.find_by_key("Drug::DB00945").unwrap();
    assert_eq!(g.name(aspirin), "Aspirin");
    assert_eq!(
        g.node_props().get(aspirin, "synonyms"),
        Some(&PropValue::List(vec![
            PropValue::Str("ASA".into()),
            PropValue::Str("acetylsalicylic acid".into())
        ]))
    );
    assert_eq!(
        g.node_props().get(aspirin, "mass"),
        Some(&PropValue::Float(180.16))
    );
    assert!(g.node_props().get(aspirin, "labels").is_some());
    let indicated = g.relation_id("IS_INDICATED_FOR").unwrap();
    let e = g.out_range_rel(aspirin, indicated).start as u32;
    assert!((g.edge_score(e).unwrap() - 0.8).abs() < 1e-6);
    assert_eq!(
        g.edge_props().get(e, "source"),
        Some(&PropValue::Str("curated".into()))
    );
    let acet = g.find_by_key("Drug::DB00316").unwrap();
    let e2 = g.out_range_rel(acet, indicated).start as u32;
    assert_eq!(g.edge_score(e2), None);
}

#[test]
fn neo4j_csv_errors_name_file_and_line() {
    let e = n4j(&format!("{N4J_NODES}DB00945,Dup,Drug,,\n"), N4J_RELS).unwrap_err();
    assert!(
        e.contains("nodes.csv:5:") && e.contains("duplicate node id"),
        "{e}"
    );
    let e = n4j(N4J_NODES, &format!("{N4J_RELS}DB00945,NOPE,X,,\n")).unwrap_err();
    assert!(
        e.contains("rels.csv:5:") && e.contains("unknown :END_ID"),
        "{e}"
    );
    let e = n4j(
        "id:ID,name,:LABEL,mass:float\nA,a,Drug,heavy\n",
        ":START_ID,:END_ID,:TYPE\n",
    )
    .unwrap_err();
    assert!(
        e.contains("nodes.csv:2:") && e.contains("not a number"),
        "{e}"
    );
    let e = n4j(N4J_NODES, ":START_ID,:END_ID,:TYPE\nDB00945,DB00316\n").unwrap_err();
    assert!(
        e.contains("rels.csv:2:") && e.contains("expected 3 fields"),
        "{e}"
    );
    let e = n4j("name,:LABEL\na,Drug\n", ":START_ID,:END_ID,:TYPE\n").unwrap_err();
    assert!(e.contains("needs an :ID column"), "{e}");
    let e = n4j(N4J_NODES, ":START_ID,:END_ID,:TYPE\nDB00945,DB00316,\n").unwrap_err();
    assert!(e.contains("empty :TYPE"), "{e}");
}

#[test]
fn neo4j_csv_truncated_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let mut rels = String::from(N4J_RELS);
    for _ in 0..3000 {
        rels.push_str("DB00945,DB00316,INTERACTS_WITH,0.5,x\n");
    }
    let full = write_gz(dir.path(), "r.csv.gz", &rels);
    let bytes = std::fs::read(&full).unwrap();
    std::fs::write(&full, &bytes[..bytes.len() / 2]).unwrap();
    let n = write(dir.path(), "nodes.csv", N4J_NODES);
    let e = neo4j_csv::load(&[n], &[full], b',', &LoadOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("r.csv.gz") && e.contains("truncated"), "{e}");
}

fn spec(dir: &std::path::Path, nodes: &str, edges: &str, create_missing: bool) -> TableSpec {
    TableSpec {
        nodes: vec![NodeTable {
            path: write(dir, "n.tsv", nodes),
            id: Field::Column("gid".into()),
            name: Some(Field::Index(1)),
            kind: Field::Const("Gene".into()),
        }],
        edges: vec![EdgeTable {
            path: write(dir, "e.tsv", edges),
            source: Field::Column("a".into()),
            target: Field::Column("b".into()),
            relation: Field::Const("INTERACTS".into()),
            score: Some(Field::Column("w".into())),
        }],
        delimiter: b'\t',
        has_header: true,
        create_missing,
    }
}

#[test]
fn table_loader_with_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let g = table::load(
        &spec(
            dir.path(),
            "gid\tsymbol\n1\tTP53\n2\tBRCA1\n",
            "a\tb\tw\n1\t2\t0.9\n2\t1\t\n",
            false,
        ),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!((g.node_count(), g.edge_count()), (2, 2));
    let tp53 = g.find_by_name("tp53")[0];
    assert_eq!(g.key(tp53), "Gene::1");
    assert_eq!(g.edge_score(g.out_range(tp53).start as u32), Some(0.9));
}

#[test]
fn table_loader_errors_and_create_missing() {
    let dir = tempfile::tempdir().unwrap();
    let e = table::load(
        &spec(
            dir.path(),
            "gid\tsymbol\n1\tTP53\n",
            "a\tb\tw\n1\t3\t0.9\n",
            false,
        ),
        &LoadOptions::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("e.tsv:2:") && e.contains("unknown target node \"3\""),
        "{e}"
    );
    let g = table::load(
        &spec(
            dir.path(),
            "gid\tsymbol\n1\tTP53\n",
            "a\tb\tw\n1\t3\t0.9\n",
            true,
        ),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(g.node_count(), 2);
    let e = table::load(
        &spec(dir.path(), "id\tsymbol\n1\tTP53\n", "a\tb\tw\n", false),
        &LoadOptions::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("n.tsv:1:") && e.contains("no column named \"gid\""),
        "{e}"
    );
    let e = table::load(
        &spec(
            dir.path(),
            "gid\tsymbol\n1\tTP53\n1\tdup\n",
            "a\tb\tw\n",
            false,
        ),
        &LoadOptions::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("n.tsv:3:") && e.contains("duplicate node id"),
        "{e}"
    );
    let e = table::load(
        &spec(
            dir.path(),
            "gid\tsymbol\n1\tTP53\n",
            "a\tb\tw\n1\t1\tstrong\n",
            false,
        ),
        &LoadOptions::default(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("e.tsv:2:") && e.contains("score is not a number"),
        "{e}"
    );
}
