//! Calibration recovers known weights: expert partitions are generated as the RNS-guided
//! partitions at hidden weights on random slices; the fit must find weights that reproduce
//! them and lie near the hidden ones.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_shared::rns::{budget, Scorer, Slice, Weights};
use serenqa_store::calibrate::{calibrate, Before, Item};

/// Deterministic test data from the workspace's SplitMix64.
use serenqa_shared::rng::SplitMix64 as Rng;

fn random_slice(rng: &mut Rng, n: usize, dim: usize) -> Slice {
    let embeddings = (0..n * dim)
        .map(|_| (rng.unit() * 2.0 - 1.0) as f32)
        .collect();
    let marginals = (0..n).map(|_| 0.001 + rng.unit()).collect();
    // Sparse-ish positive block with a few strong entries, like P3 between related entities.
    let block = (0..n * n)
        .map(|_| {
            let x = rng.unit();
            if x < 0.6 {
                x * 0.01
            } else {
                x
            }
        })
        .collect();
    Slice {
        ids: (0..n as u32).collect(),
        keys: Vec::new(),
        dim,
        embeddings,
        marginals,
        block,
    }
}

fn items_for(truth: &Weights, seed: u64, count: usize) -> Vec<Item> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|k| {
            let n = 5 + k % 8; // |Ac| from 5 to 12, so b is 1 or 2
            let slice = random_slice(&mut rng, n, 8);
            let ac: Vec<usize> = (0..n).collect();
            let sc = Scorer::new(&slice).unwrap();
            // The "ensemble" start: the first b candidates.
            let ens: Vec<usize> = (0..budget(n)).collect();
            let expert = sc.greedy_swap(&ac, Some(&ens), truth).unwrap().serendipity;
            Item {
                slice,
                ac,
                anchors: Vec::new(),
                expert,
                ensemble: Some(ens),
                annotators: vec![(k % 4) as i64],
                kendall_w: Some(0.5),
            }
        })
        .collect()
}

#[test]
fn recovers_known_weights_on_synthetic_expert_partitions() {
    let before = Before {
        weights: Weights::default(),
        label: "equal".into(),
    };
    for (truth, seed) in [
        (
            Weights {
                alpha: 0.6,
                beta: 0.3,
                gamma: 0.1,
            },
            1,
        ),
        (
            Weights {
                alpha: 0.2,
                beta: 0.2,
                gamma: 0.6,
            },
            2,
        ),
        // Signed: the shipped weights' shape, which a simplex grid could not express.
        (
            Weights {
                alpha: -0.3,
                beta: 0.7,
                gamma: 0.0,
            },
            4,
        ),
    ] {
        let items = items_for(&truth, seed, 120);
        let rep = calibrate(&items, 0.05, &before).unwrap();
        assert!(
            (rep.agreement - 1.0).abs() < 1e-12,
            "the hidden weights reproduce every expert partition, so the best agreement is 1: {}",
            rep.agreement
        );
        let dist = (rep.alpha - truth.alpha).abs()
            + (rep.beta - truth.beta).abs()
            + (rep.gamma - truth.gamma).abs();
        assert!(dist <= 0.2, "fitted ({:.2}, {:.2}, {:.2}) vs hidden {truth:?}: L1 distance {dist:.3}; {} best points", rep.alpha, rep.beta, rep.gamma, rep.best_points);
        assert!((rep.alpha.abs() + rep.beta.abs() + rep.gamma.abs() - 1.0).abs() < 1e-9);
        assert_eq!(rep.surface.len(), 1602);
        // Every fifth question is held out: the fitted weights reproduce those partitions
        // too, and the comparison names the weights in force before.
        let h = rep.heldout.as_ref().unwrap();
        assert_eq!((h.questions, rep.questions), (24, 120));
        assert!((h.after - 1.0).abs() < 1e-12, "held out: {}", h.after);
        assert!(h.before <= h.after);
        assert_eq!(h.before_label, "equal");
        assert_eq!(rep.annotators, 4);
        assert_eq!(rep.mean_kendall_w, Some(0.5));
        let ex_rns = &rep.pairs[0];
        assert_eq!(
            (ex_rns.a.as_str(), ex_rns.b.as_str()),
            ("expert", "rns-guided")
        );
        assert!((ex_rns.pearson.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(rep.pairs.len(), 3);
    }
}

#[test]
fn rejects_empty_and_inconsistent_input() {
    let before = Before {
        weights: Weights::default(),
        label: String::new(),
    };
    assert!(calibrate(&[], 0.05, &before).is_err());
    let mut items = items_for(&Weights::default(), 3, 2);
    items[0].expert = vec![];
    assert!(calibrate(&items, 0.05, &before)
        .unwrap_err()
        .contains("b = 1"));
    let items = items_for(&Weights::default(), 3, 2);
    assert!(calibrate(&items, 0.0, &before).is_err());
    // Fewer than five questions: nothing held out.
    assert!(calibrate(&items, 0.1, &before).unwrap().heldout.is_none());
}
