//! Which RNS weights are in force, and where they came from. Order of precedence:
//! 1. the newest calibration on expert rankings in the annotation store (`serenqa calibrate`
//!    or `POST /api/admin/calibrations`), when the server has a store and one exists;
//! 2. the weights shipped with the project (`backend/model/rns-weights.json`, fitted by
//!    `serenqa rns fit` to the questionnaire's LLM-ensemble ranks).
//!
//! Weights given with a request override both for that request and are labelled `request`.

use serenqa_model::weights::{iso_date, shipped};
use serenqa_shared::rns::{Weights, WeightsInForce, WeightsSource};
use serenqa_store::Repo;

/// The defaults in force given an optional annotation store.
pub fn in_force(repo: Option<&dyn Repo>) -> WeightsInForce {
    if let Some(repo) = repo {
        if let Ok(cals) = repo.calibrations() {
            if let Some(c) = cals.iter().max_by_key(|c| (c.created_at, c.id)) {
                if let Ok(w) = Weights::new(c.alpha, c.beta, c.gamma) {
                    if w.alpha.abs() + w.beta.abs() + w.gamma.abs() > 0.0 {
                        return WeightsInForce {
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
                        };
                    }
                }
            }
        }
    }
    shipped()
}

/// The defaults of a running server.
pub fn of_state(s: &crate::api::AppState) -> WeightsInForce {
    in_force(s.annotation.as_ref().map(|a| a.repo.as_ref()))
}

/// The weights for one request: the caller's (labelled `request`) or the defaults.
pub fn for_request(given: Option<Weights>, defaults: &WeightsInForce) -> WeightsInForce {
    match given {
        Some(w) => WeightsInForce { weights: w, source: WeightsSource::request() },
        None => defaults.clone(),
    }
}
