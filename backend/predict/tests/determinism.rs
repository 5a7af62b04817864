//! Two runs give identical bytes, whatever the thread count; CV finds the planted signal.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_predict::eval::{auroc, cross_validate, FoldKind};
use serenqa_predict::{predict, PredictParams};

fn tsv(g: &serenqa_graph::Graph, params: &PredictParams) -> Vec<u8> {
    let p = predict(g, params, None).unwrap();
    let mut out = Vec::new();
    p.write_tsv(g, &mut out).unwrap();
    out
}

#[test]
fn predictions_with_contradiction_features_are_byte_identical_across_thread_counts() {
    // Side effects named after diseases and their symptoms: the contradiction features fire.
    let g = common::graph_with_side_effects(50, 12, 30, 9);
    let params = PredictParams::default();
    let a = tsv(&g, &params);
    for n in [1, 3] {
        let b = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(|| tsv(&g, &params));
        assert!(a == b, "{n} threads gave other bytes");
    }
    let p = predict(&g, &params, None).unwrap();
    assert!(p
        .info
        .contradiction
        .is_some_and(|c| c.fitted && c.pairs_flagged > 0));
}

#[test]
fn predictions_are_byte_identical_across_runs_and_thread_counts() {
    let g = common::graph(60, 15, 40, 3);
    // Few negatives per positive, so the seed decides which are sampled.
    let params = PredictParams {
        seed: 7,
        negatives_per_positive: 2.0,
        ..PredictParams::default()
    };
    let a = tsv(&g, &params);
    let b = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| tsv(&g, &params));
    let c = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| tsv(&g, &params));
    assert!(a == b, "1 thread gave other bytes");
    assert!(a == c, "3 threads gave other bytes");
    let text = String::from_utf8(a).unwrap();
    let mut lines = text.lines();
    // The six required columns in order, then the palliation head's.
    assert_eq!(lines.next(), Some("compound_id\tdisease_id\tscore\tdisease_percentile\tcompound_percentile\ttop_metapaths\tpalliates_score\tpalliates_disease_percentile"));
    assert_eq!(lines.clone().count(), 60 * 15);
    let first: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(first.len(), 8);
    assert!(
        first[0].starts_with("Compound::DB") && first[1].starts_with("Disease::DOID:"),
        "{first:?}"
    );
    // Another seed samples other negatives: different bytes.
    let other = tsv(
        &g,
        &PredictParams {
            seed: 8,
            ..params.clone()
        },
    );
    assert!(text.as_bytes() != &other[..], "the seed has no effect");
}

#[test]
fn cross_validation_finds_the_planted_signal() {
    let g = common::graph(60, 15, 40, 4);
    let params = PredictParams::default();
    let r = cross_validate(&g, &params, None, 3, FoldKind::Edges, &mut |_, _| {}).unwrap();
    let ctd = r.label("CtD").expect("a CtD report");
    assert_eq!(ctd.folds.len(), 3);
    assert!(
        ctd.overall.auroc > 0.75,
        "out-of-fold AUROC {}",
        ctd.overall.auroc
    );
    let table = r.table();
    assert!(
        table.contains("AUROC") && table.lines().count() >= 6,
        "{table}"
    );
    let d = cross_validate(&g, &params, None, 3, FoldKind::Diseases, &mut |_, _| {}).unwrap();
    assert!(d
        .label("CtD")
        .expect("a CtD report")
        .overall
        .auroc
        .is_finite());
}

#[test]
fn metrics_on_known_rankings() {
    assert_eq!(
        auroc(&[0.9, 0.8, 0.1, 0.2], &[true, true, false, false]),
        1.0
    );
    assert_eq!(
        auroc(&[0.1, 0.2, 0.9, 0.8], &[true, true, false, false]),
        0.0
    );
    assert_eq!(auroc(&[0.5, 0.5], &[true, false]), 0.5);
    assert!(
        (serenqa_predict::eval::auprc(&[0.9, 0.8, 0.7], &[true, false, true])
            - (1.0 + 2.0 / 3.0) / 2.0)
            .abs()
            < 1e-12
    );
}
