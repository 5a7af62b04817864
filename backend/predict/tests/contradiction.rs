//! The contradiction features (issue 35 item 3): the graph records the compound as causing the
//! disease (by identifier, by name) or a symptom specific to it. They fire where they should,
//! agree with the records the explanation shows, and never read a treatment edge: a pair's
//! values do not change when its own treatment edge is removed or added.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_graph::filter::without_edges;
use serenqa_graph::load::disease_ontology::{DiseaseOntology, NAMES as DO_NAMES, SUBSUMED, XREFS};
use serenqa_predict::contra::{Contradiction, NAMES};
use serenqa_predict::dwpc::EdgeMask;
use serenqa_predict::eval::{assign_folds, fold_mask, FoldKind};
use serenqa_predict::features::{FeatureParams, Features, Space};
use serenqa_predict::{predict, PredictParams};

fn params() -> FeatureParams {
    FeatureParams {
        min_support: 0.0,
        ..FeatureParams::default()
    }
}

fn contradiction_cols(f: &Features) -> Vec<&Vec<f32>> {
    assert_eq!(f.contradiction.len(), NAMES.len());
    f.contradiction.iter().map(|&j| &f.cols[j]).collect()
}

/// Disease Ontology files cross-referencing `DOID:j` to the side effect `C<j>` for the first
/// `n` diseases.
fn ontology(n: usize) -> (tempfile::TempDir, DiseaseOntology) {
    let dir = tempfile::tempdir().unwrap();
    let mut xrefs = String::from("doid_code\tdoid_name\tresource\tresource_id\n");
    let mut subsumed =
        String::from("slim_id\tslim_name\tsubsumed_id\tsubsumed_name\tmin_distance\n");
    let mut names = String::from("doid\tname\ttype\n");
    for j in 0..n {
        xrefs += &format!("DOID:{j}\td{j}\tUMLS\tC{j:07}\n");
        subsumed += &format!("DOID:{j}\td{j}\tDOID:{j}\td{j}\t0\n");
        names += &format!("DOID:{j}\tdisease {j}\tname\n");
    }
    std::fs::write(dir.path().join(XREFS), xrefs).unwrap();
    std::fs::write(dir.path().join(SUBSUMED), subsumed).unwrap();
    std::fs::write(dir.path().join(DO_NAMES), names).unwrap();
    let d = DiseaseOntology::load(dir.path()).unwrap();
    (dir, d)
}

#[test]
fn the_features_fire_and_equal_the_records_the_explanation_shows() {
    let g = common::graph_with_side_effects(40, 12, 30, 3);
    let space = Space::new(&g, &params()).unwrap();
    let f = space.features(&EdgeMask::empty(g.edge_count()), &params());
    let cols = contradiction_cols(&f);
    for (k, name) in NAMES.iter().enumerate() {
        assert_eq!(&f.names[f.contradiction[k]], name);
    }
    // Without the Disease Ontology: no identifier matches, but names and symptoms fire.
    assert!(cols[0].iter().all(|&v| v == 0.0));
    assert!(cols[1].iter().filter(|&&v| v > 0.0).count() > 20);
    assert!(cols[2].iter().filter(|&&v| v > 0.0).count() > 5);
    // The records behind a pair (what the explanation lists) give the pair's values.
    let nd = space.task.diseases.len();
    for (ci, &c) in space.task.compounds.iter().enumerate() {
        for (di, &d) in space.task.diseases.iter().enumerate() {
            let v = Contradiction::values(&space.contra.index.flags(&g, c, d));
            for k in 0..3 {
                assert_eq!(v[k], cols[k][ci * nd + di], "pair ({c}, {d}), feature {k}");
            }
        }
    }
    // Off: not in the table.
    let off = FeatureParams {
        contradiction: false,
        ..params()
    };
    let f2 = space.features(&EdgeMask::empty(g.edge_count()), &off);
    assert!(f2.contradiction.is_empty());
    assert_eq!(f2.cols.len() + 3, f.cols.len());
}

#[test]
fn identifier_matches_need_the_disease_ontology() {
    let g = common::graph_with_side_effects(40, 12, 30, 3);
    let (_dir, o) = ontology(12);
    let space = Space::with_ontology(&g, &params(), Some(&o)).unwrap();
    let f = space.features(&EdgeMask::empty(g.edge_count()), &params());
    let cols = contradiction_cols(&f);
    // The side effects named after a disease are now matched by identifier first.
    assert!(cols[0].iter().filter(|&&v| v > 0.0).count() > 20);
    assert!(cols[1].iter().all(|&v| v == 0.0));
    let without = Space::new(&g, &params())
        .unwrap()
        .features(&EdgeMask::empty(g.edge_count()), &params());
    assert_eq!(cols[0], &without.cols[without.contradiction[1]]);
}

#[test]
fn a_pairs_contradiction_features_ignore_its_own_treatment_edges() {
    let g = common::graph_with_side_effects(40, 12, 30, 4);
    let (_dir, o) = ontology(6);
    let space = Space::with_ontology(&g, &params(), Some(&o)).unwrap();
    let full = space.features(&EdgeMask::empty(g.edge_count()), &params());
    let full_cols = contradiction_cols(&full);
    let edges = space.task.edges_of(&g, &space.li, &space.task.treatment);
    assert!(edges.len() > 20, "treatment edges: {}", edges.len());
    // The features carry signal on this graph: treatments have records far more often.
    let flagged = |p: usize| full_cols.iter().any(|c| c[p] > 0.0);
    let treated: std::collections::BTreeSet<usize> = edges.iter().map(|&(p, _)| p).collect();
    let share_t = treated.iter().filter(|&&p| flagged(p)).count() as f64 / treated.len() as f64;
    let others: Vec<usize> = (0..space.task.pairs())
        .filter(|p| !treated.contains(p))
        .collect();
    let share_o = others.iter().filter(|&&p| flagged(p)).count() as f64 / others.len() as f64;
    assert!(share_t > 2.0 * share_o, "{share_t} vs {share_o}");
    let mut checked = 0;
    for &(p, e) in edges.iter().filter(|&&(p, _)| flagged(p)).take(10) {
        // Removed by the mask …
        let mut mask = EdgeMask::empty(g.edge_count());
        mask.insert(e);
        let f = space.features(&mask, &params());
        for (k, c) in contradiction_cols(&f).into_iter().enumerate() {
            assert_eq!(
                c[p], full_cols[k][p],
                "{} changed with the edge masked",
                NAMES[k]
            );
            assert_eq!(c, full_cols[k], "{} changed elsewhere", NAMES[k]);
        }
        // … or from the graph itself; and added back (the full graph) it is the same again.
        let g2 = without_edges(&g, &|x| x == e);
        let s2 = Space::with_ontology(&g2, &params(), Some(&o)).unwrap();
        let f2 = s2.features(&EdgeMask::empty(g2.edge_count()), &params());
        for (k, c) in contradiction_cols(&f2).into_iter().enumerate() {
            assert_eq!(c, full_cols[k], "{} differs without the edge", NAMES[k]);
        }
        checked += 1;
    }
    assert_eq!(checked, 10);
}

#[test]
fn masked_fold_features_equal_the_rebuilt_graphs_with_side_effects() {
    // The whole table (metapaths over side effects included) of each fold, masked against
    // rebuilt, on a graph where the contradiction features fire.
    let g = common::graph_with_side_effects(40, 12, 30, 5);
    let (_dir, o) = ontology(12);
    let p = params();
    let space = Space::with_ontology(&g, &p, Some(&o)).unwrap();
    let positives = space.task.positives(&g, &space.li);
    let nd = space.task.diseases.len();
    let treat = space.task.edges_of(&g, &space.li, &space.task.treatment);
    for kind in [FoldKind::Edges, FoldKind::Diseases] {
        let fold = assign_folds(&positives, nd, 3, kind, 0);
        let mask = fold_mask(&g, &treat, &positives, &fold, 1, kind);
        let masked = space.features(&mask, &p);
        let g2 = without_edges(&g, &|e| mask.contains(e));
        let rebuilt = Space::with_ontology(&g2, &p, Some(&o))
            .unwrap()
            .features(&EdgeMask::empty(g2.edge_count()), &p);
        assert_eq!(masked.names, rebuilt.names);
        for (j, (a, b)) in masked.cols.iter().zip(&rebuilt.cols).enumerate() {
            assert_eq!(a, b, "{kind:?}: {} differs", masked.names[j]);
        }
    }
}

#[test]
fn the_run_records_what_it_knew_and_learned() {
    let g = common::graph_with_side_effects(40, 12, 30, 6);
    let (_dir, o) = ontology(12);
    let with = predict(&g, &PredictParams::default(), Some(&o)).unwrap();
    let c = with.info.contradiction.clone().unwrap();
    assert!(c.ontology && c.fitted);
    assert_eq!(c.features.len(), 3);
    assert!(c.treatments_flagged > 0 && c.treatments_flagged <= c.treatments);
    assert!(c.features[0].beta != 0.0, "{:?}", c.features);
    // The degree features do not list them.
    assert!(with
        .info
        .degree_features
        .iter()
        .all(|(n, _)| !NAMES.contains(&n.as_str())));
    // Left out of the fit, they are still counted (evidence only) and the scores change.
    let mut off = PredictParams::default();
    off.features.contradiction = false;
    let without = predict(&g, &off, None).unwrap();
    let c2 = without.info.contradiction.clone().unwrap();
    assert!(!c2.ontology && !c2.fitted);
    assert!(c2.features.iter().all(|f| f.beta == 0.0));
    assert!(c2.pairs_flagged > 0);
    assert_eq!(c2.contributions(&[1.0, 1.0, 1.0]), [0.0; 3]);
    assert_ne!(with.scores, without.scores);
}
