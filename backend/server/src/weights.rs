//! Which RNS weights are in force, and where they came from. Order of precedence:
//! 1. the calibration on expert rankings an admin put in force in the annotation store
//!    (`PUT /api/admin/weights` or `serenqa annotate weights --use`; the store's newest
//!    `weights_history` entry), when the server has a store and one is in force — storing a
//!    calibration never puts it in force by itself, and an admin can go back to the shipped
//!    weights or any earlier calibration;
//! 2. the weights shipped with the project (`backend/model/rns-weights.json`, fitted by
//!    `serenqa rns fit` to the questionnaire's LLM-ensemble ranks).
//!
//! Weights given with a request override both for that request and are labelled `request`.

use serenqa_model::weights::{iso_date, shipped};
use serenqa_shared::rns::{Weights, WeightsInForce, WeightsSource};
use serenqa_store::{CalibrationRecord, Repo};

/// The weights of a stored calibration, labelled.
pub fn of_calibration(c: &CalibrationRecord) -> Option<WeightsInForce> {
    let w = Weights::new(c.alpha, c.beta, c.gamma).ok()?;
    if w.alpha.abs() + w.beta.abs() + w.gamma.abs() == 0.0 {
        return None;
    }
    Some(WeightsInForce {
        weights: w.normalised(),
        source: WeightsSource {
            kind: "calibration".into(),
            label: format!(
                "calibrated on expert rankings in the annotation store (calibration #{}, {} questions, agreement {:.3})",
                c.id, c.questions, c.agreement
            ),
            date: iso_date(c.created_at),
            fit: None,
            heldout: None,
        },
    })
}

/// The defaults in force given an optional annotation store.
pub fn in_force(repo: Option<&dyn Repo>) -> WeightsInForce {
    repo.and_then(|r| r.weights_in_force().ok().flatten())
        .and_then(|c| of_calibration(&c))
        .unwrap_or_else(shipped)
}

/// The defaults of a running server.
pub fn of_state(s: &crate::api::AppState) -> WeightsInForce {
    in_force(s.annotation.as_ref().map(|a| a.repo.as_ref()))
}

/// The weights for one request: the caller's (labelled `request`) or the defaults.
pub fn for_request(given: Option<Weights>, defaults: &WeightsInForce) -> WeightsInForce {
    match given {
        Some(w) => WeightsInForce {
            weights: w,
            source: WeightsSource::request(),
        },
        None => defaults.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serenqa_store::{CalibrationRecord, SqliteRepo};

    /// No store, or a store with nothing put in force: the shipped weights, even with stored
    /// calibrations. A calibration an admin put in force: it, normalised and labelled — what
    /// Discover, Ask, the partition endpoints and `bench build --db` (the builder's manifest)
    /// use — until an admin reverts.
    #[test]
    fn precedence_calibration_in_force_then_shipped() {
        let shipped = shipped();
        assert_eq!(in_force(None), shipped);
        let dir = tempfile::tempdir().unwrap();
        let repo = SqliteRepo::open(&dir.path().join("c.sqlite")).unwrap();
        assert_eq!(in_force(Some(&repo)), shipped);
        let rec = |created_at, alpha, beta, gamma| CalibrationRecord {
            id: 0,
            created_at,
            alpha,
            beta,
            gamma,
            agreement: 0.5,
            questions: 90,
            annotators: 4,
            provenance: serde_json::json!({}),
        };
        let older = repo
            .add_calibration(&rec(1_700_000_000, 1.0, 1.0, 2.0))
            .unwrap();
        let newest = repo
            .add_calibration(&rec(1_780_000_000, -0.2, 0.6, 0.2))
            .unwrap();
        assert_eq!(in_force(Some(&repo)), shipped, "stored is not in force");
        repo.use_weights(Some(newest), "t", "", 1).unwrap();
        let w = in_force(Some(&repo));
        assert_eq!(w.source.kind, "calibration");
        assert!(
            w.source.label.contains(&format!("calibration #{newest}")),
            "{}",
            w.source.label
        );
        assert!((w.weights.alpha + 0.2).abs() < 1e-12 && (w.weights.beta - 0.6).abs() < 1e-12);
        repo.use_weights(Some(older), "t", "", 2).unwrap();
        assert!(in_force(Some(&repo))
            .source
            .label
            .contains(&format!("calibration #{older}")));
        repo.use_weights(None, "t", "", 3).unwrap();
        assert_eq!(in_force(Some(&repo)), shipped);
        let given = Weights {
            alpha: 1.0,
            beta: 0.0,
            gamma: 0.0,
        };
        let r = for_request(Some(given), &w);
        assert_eq!((r.weights, r.source.kind.as_str()), (given, "request"));
        assert_eq!(for_request(None, &w), w);
    }
}
