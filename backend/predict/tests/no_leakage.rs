//! No fold's features read its held-out edges.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_graph::filter::without_edges;
use serenqa_graph::Graph;
use serenqa_predict::dwpc::{dwpc_all, step_matrices, EdgeMask, LocalIndex};
use serenqa_predict::features::{FeatureParams, Space};
use serenqa_predict::metagraph::Metagraph;

fn label_edges(g: &Graph) -> Vec<(usize, u32)> {
    let s = Space::new(g, &FeatureParams::default()).unwrap();
    s.task.edges_of(g, &s.li, &[s.task.label])
}

#[test]
fn masked_features_equal_features_of_the_graph_without_the_edges() {
    let g = common::graph(40, 12, 30, 1);
    let params = FeatureParams {
        min_support: 0.0,
        ..FeatureParams::default()
    };
    let edges = label_edges(&g);
    assert!(
        edges.len() > 20,
        "the test graph must have treatment edges ({})",
        edges.len()
    );
    // Hold out every third treatment edge.
    let held: Vec<u32> = edges.iter().step_by(3).map(|&(_, e)| e).collect();
    let mut mask = EdgeMask::empty(g.edge_count());
    for &e in &held {
        mask.insert(e);
    }
    let masked = Space::new(&g, &params).unwrap().features(&mask, &params);
    let g2 = without_edges(&g, &|e| held.contains(&e));
    assert_eq!(g2.edge_count() + held.len(), g.edge_count());
    let rebuilt = Space::new(&g2, &params)
        .unwrap()
        .features(&EdgeMask::empty(g2.edge_count()), &params);
    assert_eq!(masked.names, rebuilt.names);
    for (j, (a, b)) in masked.cols.iter().zip(&rebuilt.cols).enumerate() {
        assert_eq!(
            a, b,
            "feature {} differs between the masked graph and the graph without the edges",
            masked.names[j]
        );
    }
    // And the mask matters: the full graph gives different features.
    let full = Space::new(&g, &params)
        .unwrap()
        .features(&EdgeMask::empty(g.edge_count()), &params);
    assert_ne!(full.cols, masked.cols);
}

#[test]
fn removing_a_held_out_edge_changes_the_features_of_its_pair() {
    let g = common::graph(40, 12, 30, 2);
    let params = FeatureParams {
        min_support: 0.0,
        ..FeatureParams::default()
    };
    let space = Space::new(&g, &params).unwrap();
    let full = space.features(&EdgeMask::empty(g.edge_count()), &params);
    let mut changed = 0;
    let edges = label_edges(&g);
    for &(p, e) in edges.iter().take(10) {
        let mut mask = EdgeMask::empty(g.edge_count());
        mask.insert(e);
        let f = space.features(&mask, &params);
        assert_eq!(f.names, full.names);
        if f.cols.iter().zip(&full.cols).any(|(a, b)| a[p] != b[p]) {
            changed += 1;
        }
    }
    assert_eq!(
        changed, 10,
        "every removed treatment edge must change some feature of its own pair"
    );
}

#[test]
fn a_pairs_own_treatment_edge_is_never_a_walk_of_it() {
    // c0 binds g, c0 treats d, nothing else: the only CbGbCtD walk of (c0, d) is
    // c0 → g → c0 → d, over the pair's own edge, so its DWPC must be 0; c1 also binds g and
    // gets a walk c1 → g → c0 → d.
    use serenqa_graph::{GraphBuilder, GraphMeta, RelationType};
    let mut b = GraphBuilder::new(GraphMeta::default());
    let (tc, td, tg) = (
        b.node_type("Compound", "Compound"),
        b.node_type("Disease", "Disease"),
        b.node_type("Gene", "Gene"),
    );
    let r = |b: &mut GraphBuilder, n: &str, a: &str, s, t| {
        b.relation(RelationType {
            name: n.into(),
            verb: n.to_lowercase(),
            abbrev: a.into(),
            source_type: Some(s),
            target_type: Some(t),
            directed: false,
        })
        .unwrap()
    };
    let ctd = r(&mut b, "TREATS_CtD", "CtD", tc, td);
    let cbg = r(&mut b, "BINDS_CbG", "CbG", tc, tg);
    let c0 = b.add_node(tc, "c0", "c0");
    let c1 = b.add_node(tc, "c1", "c1");
    let d = b.add_node(td, "d", "d");
    let g0 = b.add_node(tg, "g", "g");
    b.add_edge(c0, cbg, g0, None);
    b.add_edge(c1, cbg, g0, None);
    b.add_edge(c0, ctd, d, None);
    let g = b.build();
    let space = Space::new(&g, &FeatureParams::default()).unwrap();
    let k = space
        .names
        .iter()
        .position(|n| n == "CbGbCtD")
        .expect("CbGbCtD is enumerated");
    let mg = Metagraph::of(&g, &space.task.treatment);
    let li = LocalIndex::of(&g);
    let mats = step_matrices(&g, &mg, &li, &EdgeMask::empty(g.edge_count()), 0.4);
    let dw = dwpc_all(&mats, &mg, &space.paths, 1);
    let m = &dw[k];
    assert_eq!(
        m[li.local[c0 as usize] as usize], 0.0,
        "the pair's own edge counted as evidence"
    );
    // c1 → g → c0 → d: degrees CbG(c1)=1, CbG(g)=2, CbG(c0)=1, CtD(c0)=1, CtD(d)=1.
    let want = ((1.0f64 * 2.0) * (2.0 * 1.0) * (1.0 * 1.0)).powf(-0.4);
    assert!(
        (m[li.local[c1 as usize] as usize] as f64 - want).abs() < 1e-6,
        "{} vs {want}",
        m[li.local[c1 as usize] as usize]
    );
}
