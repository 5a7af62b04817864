//! The gradient-boosted trees of `predict eval --learners`: a fold's trees never read its
//! held-out edges or labels, and the comparison is the same whatever the thread count.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_graph::filter::without_edges;
use serenqa_predict::dwpc::EdgeMask;
use serenqa_predict::eval::{assign_folds, cross_validate_learners, fold_mask, FoldKind};
use serenqa_predict::features::Space;
use serenqa_predict::gbdt::GbdtParams;
use serenqa_predict::model::fit_gbdt_on;
use serenqa_predict::{predict, PredictParams};

fn small_trees() -> GbdtParams {
    GbdtParams {
        rounds: 30,
        min_leaf: 5,
        ..GbdtParams::default()
    }
}

#[test]
fn a_folds_trees_equal_the_trees_of_the_graph_without_its_held_out_edges() {
    let g = common::graph_with_palliation(40, 12, 30, 3);
    let mut params = PredictParams::default();
    params.features.min_support = 0.0;
    let s = Space::new(&g, &params.features).unwrap();
    let pos = s.task.positives(&g, &s.li);
    let treat = s.task.edges_of(&g, &s.li, &s.task.treatment);
    for kind in [FoldKind::Edges, FoldKind::Diseases] {
        let fold = assign_folds(&pos, s.task.diseases.len(), 3, kind, 5);
        let mask = fold_mask(&g, &treat, &pos, &fold, 0, kind);
        let held_pos = (0..fold.len())
            .filter(|&p| fold[p] == 0 && pos[0][p])
            .count();
        assert!(
            held_pos >= 3,
            "fold 0 must hold out treatments ({held_pos})"
        );
        let train = |p: usize| fold[p] != 0;
        let masked = s.features(&mask, &params.features);
        let a = fit_gbdt_on(&masked, &pos[0], &train, &params, &small_trees()).logits_all(&masked);
        // The graph rebuilt without the fold's edges, its own labels (the held-out pairs are
        // negatives there).
        let held: Vec<u32> = (0..g.edge_count() as u32)
            .filter(|&e| mask.contains(e))
            .collect();
        let g2 = without_edges(&g, &|e| held.contains(&e));
        let s2 = Space::new(&g2, &params.features).unwrap();
        let pos2 = s2.task.positives(&g2, &s2.li);
        let rebuilt = s2.features(&EdgeMask::empty(g2.edge_count()), &params.features);
        let b =
            fit_gbdt_on(&rebuilt, &pos2[0], &train, &params, &small_trees()).logits_all(&rebuilt);
        assert!(a == b, "{kind:?}: the fold's trees read its held-out edges");
        // Flipping every held-out label changes nothing either.
        let flipped: Vec<bool> = (0..pos[0].len())
            .map(|p| if fold[p] == 0 { !pos[0][p] } else { pos[0][p] })
            .collect();
        let c = fit_gbdt_on(&masked, &flipped, &train, &params, &small_trees()).logits_all(&masked);
        assert!(
            a == c,
            "{kind:?}: the fold's trees read its held-out labels"
        );
        // And the trees learned something from the rows they had.
        let full =
            fit_gbdt_on(&masked, &pos[0], &|_| true, &params, &small_trees()).logits_all(&masked);
        assert!(full != a);
    }
}

#[test]
fn the_learner_comparison_is_identical_across_thread_counts() {
    let g = common::graph(60, 15, 40, 4);
    let params = PredictParams {
        trees: Some(small_trees()),
        ..PredictParams::default()
    };
    let grid = [small_trees()];
    let run = |t: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
            .install(|| {
                let r = cross_validate_learners(
                    &g,
                    &params,
                    None,
                    3,
                    FoldKind::Edges,
                    &grid,
                    &mut |_, _| {},
                )
                .unwrap();
                let l = r.label("CtD").unwrap();
                serde_json::to_string(
                    &l.learners
                        .iter()
                        .map(|x| (&x.name, &x.overall, &x.folds))
                        .collect::<Vec<_>>(),
                )
                .unwrap()
            })
    };
    let a = run(1);
    assert_eq!(a, run(3));
    let r = cross_validate_learners(&g, &params, None, 3, FoldKind::Edges, &grid, &mut |_, _| {})
        .unwrap();
    let l = r.label("CtD").unwrap();
    // The logistic head, the trees, three combinations, two other weights.
    assert_eq!(l.learners.len(), 7);
    // The served head is the equal-weight standardised combination (the 4th), the first
    // the logistic regression alone, as served without trees.
    assert_eq!(
        l.learners[3].name,
        "logistic + GBDT depth 3 lr 0.1 × 30 (mean z)"
    );
    assert_eq!(l.learners[3].overall.auroc, l.overall.auroc);
    assert_eq!(l.learners[3].overall.auprc, l.overall.auprc);
    let alone = cross_validate_learners(
        &g,
        &PredictParams {
            trees: None,
            ..params.clone()
        },
        None,
        3,
        FoldKind::Edges,
        &[],
        &mut |_, _| {},
    )
    .unwrap();
    let alone = &alone.label("CtD").unwrap().overall;
    assert_eq!(l.learners[0].overall.auroc, alone.auroc);
    assert_eq!(l.learners[0].overall.auprc, alone.auprc);
    for x in &l.learners {
        assert!(x.overall.auroc > 0.7, "{}: {}", x.name, x.overall.auroc);
    }
}

#[test]
fn the_served_treats_score_combines_the_trees_and_keeps_the_logistic_explanations() {
    let g = common::graph_with_palliation(60, 15, 40, 7);
    let both = predict(&g, &PredictParams::default(), None).unwrap();
    let logistic = predict(
        &g,
        &PredictParams {
            trees: None,
            ..PredictParams::default()
        },
        None,
    )
    .unwrap();
    assert!(both.info.trees.is_some() && logistic.info.trees.is_none());
    assert_ne!(both.scores, logistic.scores);
    assert_ne!(both.disease_pct, logistic.disease_pct);
    // The metapath contributions shown are the logistic part's, the same in both runs; the
    // palliation head is logistic in both.
    assert_eq!(both.top_idx, logistic.top_idx);
    assert_eq!(both.top_val, logistic.top_val);
    assert_eq!(both.info.coefficients, logistic.info.coefficients);
    assert_eq!(both.palliates, logistic.palliates);
}
