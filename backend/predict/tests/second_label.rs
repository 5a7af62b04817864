//! The second label (CpD, palliates): its own head, cross-validated without leakage, served
//! next to the treats score, deterministic.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_graph::filter::without_edges;
use serenqa_graph::Graph;
use serenqa_predict::dwpc::{dwpc_all, step_matrices, EdgeMask, LocalIndex};
use serenqa_predict::eval::{assign_folds, cross_validate, fold_mask, FoldKind};
use serenqa_predict::features::{FeatureParams, Space};
use serenqa_predict::metagraph::Metagraph;
use serenqa_predict::{predict, PredictParams, Predictions};

fn cpd(g: &Graph) -> u16 {
    let s = Space::new(g, &FeatureParams::default()).unwrap();
    let r = s.task.second.expect("CpD is detected as the second label");
    assert_eq!(g.relation(r).abbrev, "CpD");
    r
}

#[test]
fn palliates_is_the_second_label() {
    let g = common::graph_with_palliation(60, 15, 40, 1);
    let s = Space::new(&g, &FeatureParams::default()).unwrap();
    let labels = s.task.labels();
    assert_eq!(labels.len(), 2);
    assert_eq!(g.relation(labels[0]).abbrev, "CtD");
    assert_eq!(g.relation(labels[1]).abbrev, "CpD");
    let pos = s.task.positives(&g, &s.li);
    let (nt, np) = (
        pos[0].iter().filter(|&&b| b).count(),
        pos[1].iter().filter(|&&b| b).count(),
    );
    assert!(
        nt > 20 && np > 20,
        "the test graph must have both labels ({nt} CtD, {np} CpD pairs)"
    );
}

#[test]
fn every_held_out_cpd_edge_is_masked_in_its_fold_and_only_there() {
    let g = common::graph_with_palliation(60, 15, 40, 2);
    let r = cpd(&g);
    let s = Space::new(&g, &FeatureParams::default()).unwrap();
    let pos = s.task.positives(&g, &s.li);
    let treat = s.task.edges_of(&g, &s.li, &s.task.treatment);
    let cpd_edges = s.task.edges_of(&g, &s.li, &[r]);
    for kind in [FoldKind::Edges, FoldKind::Diseases] {
        let k = 4;
        let fold = assign_folds(&pos, s.task.diseases.len(), k, kind, 11);
        // Both labels are spread over every fold.
        for (h, lab) in pos.iter().enumerate() {
            for f in 0..k {
                assert!(
                    (0..lab.len()).any(|p| lab[p] && fold[p] == f),
                    "label {h} has no pair in fold {f} ({kind:?})"
                );
            }
        }
        for f in 0..k {
            let mask = fold_mask(&g, &treat, &pos, &fold, f, kind);
            for &(p, e) in &cpd_edges {
                assert_eq!(
                    mask.contains(e),
                    fold[p] == f,
                    "CpD edge {e} of a pair in fold {} vs mask of fold {f} ({kind:?})",
                    fold[p]
                );
            }
        }
    }
}

#[test]
fn a_fold_with_held_out_cpd_edges_has_the_features_of_the_graph_without_them() {
    let g = common::graph_with_palliation(40, 12, 30, 3);
    let r = cpd(&g);
    let params = FeatureParams {
        min_support: 0.0,
        ..FeatureParams::default()
    };
    let s = Space::new(&g, &params).unwrap();
    let pos = s.task.positives(&g, &s.li);
    let treat = s.task.edges_of(&g, &s.li, &s.task.treatment);
    let fold = assign_folds(&pos, s.task.diseases.len(), 3, FoldKind::Edges, 5);
    let mask = fold_mask(&g, &treat, &pos, &fold, 0, FoldKind::Edges);
    let held_cpd = s
        .task
        .edges_of(&g, &s.li, &[r])
        .iter()
        .filter(|&&(p, _)| fold[p] == 0)
        .count();
    assert!(held_cpd >= 3, "fold 0 must hold out CpD edges ({held_cpd})");
    let masked = s.features(&mask, &params);
    let held: Vec<u32> = (0..g.edge_count() as u32)
        .filter(|&e| mask.contains(e))
        .collect();
    let g2 = without_edges(&g, &|e| held.contains(&e));
    let rebuilt = Space::new(&g2, &params)
        .unwrap()
        .features(&EdgeMask::empty(g2.edge_count()), &params);
    assert_eq!(masked.names, rebuilt.names);
    for (j, (a, b)) in masked.cols.iter().zip(&rebuilt.cols).enumerate() {
        assert_eq!(
            a, b,
            "feature {} differs between the masked graph and the graph without the fold's edges",
            masked.names[j]
        );
    }
}

#[test]
fn removing_a_cpd_edge_changes_the_features_of_its_pair() {
    let g = common::graph_with_palliation(40, 12, 30, 4);
    let r = cpd(&g);
    let params = FeatureParams {
        min_support: 0.0,
        ..FeatureParams::default()
    };
    let space = Space::new(&g, &params).unwrap();
    let full = space.features(&EdgeMask::empty(g.edge_count()), &params);
    let edges = space.task.edges_of(&g, &space.li, &[r]);
    assert!(edges.len() >= 10);
    for &(p, e) in edges.iter().take(10) {
        let mut mask = EdgeMask::empty(g.edge_count());
        mask.insert(e);
        let f = space.features(&mask, &params);
        assert!(
            f.cols.iter().zip(&full.cols).any(|(a, b)| a[p] != b[p]),
            "removing CpD edge {e} left its pair's features unchanged"
        );
    }
}

#[test]
fn a_pairs_own_palliation_edge_is_never_evidence_for_it() {
    // c0 binds g, c0 palliates d, c0 treats d2; c1 binds g. The only CbGbCpD walk of (c0, d) is
    // c0 → g → c0 → d, over the pair's own CpD edge: its DWPC must be 0, while c1 gets the walk
    // c1 → g → c0 → d. And (c0, d)'s CpD degree features leave its own edge out.
    use serenqa_graph::{GraphBuilder, GraphMeta, RelationType};
    let mut b = GraphBuilder::new(GraphMeta::default());
    let (tc, td, tg) = (
        b.node_type("Compound", "Compound"),
        b.node_type("Disease", "Disease"),
        b.node_type("Gene", "Gene"),
    );
    let r = |b: &mut GraphBuilder, n: &str, v: &str, a: &str, s, t| {
        b.relation(RelationType {
            name: n.into(),
            verb: v.into(),
            abbrev: a.into(),
            source_type: Some(s),
            target_type: Some(t),
            directed: false,
        })
        .unwrap()
    };
    let ctd = r(&mut b, "TREATS_CtD", "treats", "CtD", tc, td);
    let cpd = r(&mut b, "PALLIATES_CpD", "palliates", "CpD", tc, td);
    let cbg = r(&mut b, "BINDS_CbG", "binds", "CbG", tc, tg);
    let c0 = b.add_node(tc, "c0", "c0");
    let c1 = b.add_node(tc, "c1", "c1");
    let d = b.add_node(td, "d", "d");
    let d2 = b.add_node(td, "d2", "d2");
    let g0 = b.add_node(tg, "g", "g");
    b.add_edge(c0, cbg, g0, None);
    b.add_edge(c1, cbg, g0, None);
    b.add_edge(c0, cpd, d, None);
    b.add_edge(c0, ctd, d2, None);
    let g = b.build();
    let params = FeatureParams {
        min_support: 0.0,
        ..FeatureParams::default()
    };
    let space = Space::new(&g, &params).unwrap();
    assert!(space.task.second.is_some());
    let k = space
        .names
        .iter()
        .position(|n| n == "CbGbCpD")
        .expect("CbGbCpD is enumerated");
    let mg = Metagraph::of(&g, &space.task.treatment);
    let li = LocalIndex::of(&g);
    let mats = step_matrices(&g, &mg, &li, &EdgeMask::empty(g.edge_count()), 0.4);
    let nc = space.task.compounds.len();
    let dw = dwpc_all(&mats, &mg, &space.paths, space.task.diseases.len());
    let m = &dw[k]; // disease-major
    let (lc0, lc1, ld) = (
        li.local[c0 as usize] as usize,
        li.local[c1 as usize] as usize,
        li.local[d as usize] as usize,
    );
    assert_eq!(
        m[ld * nc + lc0],
        0.0,
        "the pair's own CpD edge counted as a walk of it"
    );
    assert!(
        m[ld * nc + lc1] > 0.0,
        "c1's walk through c0's CpD edge is evidence for (c1, d)"
    );
    let f = space.features(&EdgeMask::empty(g.edge_count()), &params);
    let nd = space.task.diseases.len();
    let p = lc0 * nd + ld;
    let (cdeg, ddeg) = f.label_degree[1];
    let (cdeg, ddeg) = (
        cdeg.expect("compound CpD degree column"),
        ddeg.expect("disease CpD degree column"),
    );
    assert_eq!(
        f.cols[cdeg][p], 0.0,
        "c0's own CpD edge raised its own CpD degree"
    );
    assert_eq!(
        f.cols[ddeg][p], 0.0,
        "d's own CpD edge raised its own CpD degree"
    );
    // Another disease of c0 does see c0's palliation degree.
    assert!(f.cols[cdeg][lc0 * nd + li.local[d2 as usize] as usize] > 0.0);
}

#[test]
fn cross_validation_reports_both_labels_and_the_palliation_head_learns_its_own_signal() {
    let g = common::graph_with_palliation(80, 20, 50, 5);
    let params = PredictParams::default();
    let r = cross_validate(&g, &params, None, 3, FoldKind::Edges, &mut |_, _| {}).unwrap();
    assert_eq!(r.labels.len(), 2);
    let (t, p) = (r.label("CtD").unwrap(), r.label("CpD").unwrap());
    assert_eq!(p.folds.len(), 3);
    assert!(p
        .folds
        .iter()
        .all(|f| f.metrics.positives > 0 && f.metrics.auroc.is_finite()));
    assert!(
        t.overall.auroc > 0.75,
        "CtD out-of-fold AUROC {}",
        t.overall.auroc
    );
    assert!(
        p.overall.auroc > 0.75,
        "CpD out-of-fold AUROC {}",
        p.overall.auroc
    );
    // The signals differ (CbGaD vs CbGdD): the CpD head ranks CpD better than the CtD head does.
    let other = p.other_head_auroc.unwrap();
    assert!(
        p.overall.auroc > other + 0.05,
        "CpD head {} vs CtD head on CpD {other}",
        p.overall.auroc
    );
    let table = r.table();
    assert!(
        table.contains("CtD (treats)") && table.contains("CpD (palliates)"),
        "{table}"
    );
    let d = cross_validate(&g, &params, None, 3, FoldKind::Diseases, &mut |_, _| {}).unwrap();
    assert!(d.label("CpD").unwrap().overall.auroc.is_finite());
}

fn tsv(g: &Graph, params: &PredictParams) -> (Predictions, Vec<u8>) {
    let p = predict(g, params, None).unwrap();
    let mut out = Vec::new();
    p.write_tsv(g, &mut out).unwrap();
    (p, out)
}

#[test]
fn palliation_scores_are_served_and_byte_identical_across_thread_counts() {
    let g = common::graph_with_palliation(60, 15, 40, 6);
    let params = PredictParams {
        seed: 3,
        negatives_per_positive: 2.0,
        ..PredictParams::default()
    };
    let (p, a) = tsv(&g, &params);
    let (_, b) = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| tsv(&g, &params));
    let (_, c) = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| tsv(&g, &params));
    assert!(a == b, "1 thread gave other bytes");
    assert!(a == c, "3 threads gave other bytes");
    let h = p.info.palliates.as_ref().expect("a palliation head");
    assert_eq!(h.relation, "CpD");
    assert_eq!(p.palliates.len(), p.scores.len());
    assert!(p.palliates.iter().all(|s| (0.0..=1.0).contains(s)));
    assert_ne!(
        p.palliates, p.scores,
        "the palliation head is not a copy of the treats head"
    );
    let text = String::from_utf8(a).unwrap();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 8, "{line}");
        let s: f64 = cols[6].parse().unwrap_or(f64::NAN);
        let q: f64 = cols[7].parse().unwrap_or(f64::NAN);
        assert!(
            (0.0..=1.0).contains(&s) && (0.0..=100.0).contains(&q),
            "{line}"
        );
    }
    // Stored and read back unchanged, palliation included.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.snap");
    p.save(&path).unwrap();
    let back = Predictions::load(&path, &g).unwrap();
    assert_eq!(back, p);
}

#[test]
fn served_scores_are_calibrated_and_keep_the_ranking() {
    let g = common::graph_with_palliation(60, 15, 40, 7);
    let p = predict(&g, &PredictParams::default(), None).unwrap();
    let c = p.info.calibration.expect("a calibrated treats head");
    assert!(
        p.info
            .palliates
            .as_ref()
            .and_then(|h| h.calibration)
            .is_some(),
        "a calibrated palliates head"
    );
    let raw = predict(
        &g,
        &PredictParams {
            calibration_folds: 0,
            ..PredictParams::default()
        },
        None,
    )
    .unwrap();
    assert!(raw.info.calibration.is_none());
    // Calibration is monotone: the same percentiles, other scores.
    assert_eq!(p.disease_pct, raw.disease_pct);
    assert_eq!(p.palliates_disease_pct, raw.palliates_disease_pct);
    assert_ne!(p.scores, raw.scores);
    // The served score is the calibration of the uncalibrated model's logit.
    for i in (0..p.scores.len()).step_by(37) {
        let z = {
            let s = raw.scores[i] as f64;
            (s / (1.0 - s)).ln()
        };
        if z.is_finite() && z.abs() < 15.0 {
            assert!(
                (c.apply(z) - p.scores[i] as f64).abs() < 1e-4,
                "pair {i}: {} vs {}",
                c.apply(z),
                p.scores[i]
            );
        }
    }
}
