//! A small graph built in code, shared by the budget tests (no data files needed).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_graph::{Graph, GraphBuilder, GraphMeta, RelationType};

/// A deterministic Hetionet-shaped graph: 40 diseases, 300 genes, 60 compounds, with cycles
/// (gene–gene interactions), so unbounded walks explode as on the real graph.
pub fn graph() -> Graph {
    let mut b = GraphBuilder::new(GraphMeta {
        name: "budget-test".into(),
        ..Default::default()
    });
    let c = b.node_type("Compound", "Compound");
    let d = b.node_type("Disease", "Disease");
    let g = b.node_type("Gene", "Gene");
    let rel = |b: &mut GraphBuilder, name: &str, verb: &str, abbrev: &str, s, t| {
        b.relation(RelationType {
            name: name.into(),
            verb: verb.into(),
            abbrev: abbrev.into(),
            source_type: Some(s),
            target_type: Some(t),
            directed: true,
        })
        .expect("relation")
    };
    let dag = rel(&mut b, "ASSOCIATES_DaG", "associates", "DaG", d, g);
    let gig = rel(&mut b, "INTERACTS_GiG", "interacts", "GiG", g, g);
    let cbg = rel(&mut b, "BINDS_CbG", "binds", "CbG", c, g);
    let ctd = rel(&mut b, "TREATS_CtD", "treats", "CtD", c, d);
    let ds: Vec<_> = (0..40)
        .map(|i| b.add_node(d, &format!("DOID:{i}"), &format!("disease {i}")))
        .collect();
    let gs: Vec<_> = (0..300)
        .map(|i| b.add_node(g, &format!("{i}"), &format!("GENE{i}")))
        .collect();
    let cs: Vec<_> = (0..60)
        .map(|i| b.add_node(c, &format!("DB{i:05}"), &format!("compound {i}")))
        .collect();
    // A fixed, seed-free edge list from the workspace's SplitMix64.
    let mut rng = serenqa_shared::rng::SplitMix64::new(serenqa_shared::rng::GOLDEN_GAMMA);
    let mut next = |n: usize| rng.below(n);
    for &dn in &ds {
        for _ in 0..8 {
            let t = gs[next(gs.len())];
            b.add_edge(dn, dag, t, None);
        }
    }
    for (i, &gn) in gs.iter().enumerate() {
        b.add_edge(gn, gig, gs[(i + 1) % gs.len()], None);
        for _ in 0..3 {
            let t = gs[next(gs.len())];
            b.add_edge(gn, gig, t, None);
        }
    }
    for &cn in &cs {
        for _ in 0..5 {
            let t = gs[next(gs.len())];
            b.add_edge(cn, cbg, t, None);
        }
        let t = ds[next(ds.len())];
        b.add_edge(cn, ctd, t, None);
    }
    b.build()
}
