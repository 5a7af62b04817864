//! The RNS weights that ship with the project: `backend/model/rns-weights.json`, written by
//! `serenqa rns fit` (α, β, γ fitted to the SerenQA questionnaire's LLM-ensemble ranks on
//! batches 1–10, with the held-out agreement on batches 11–14 and the provenance of the fit).
//! They are compiled in, so a fresh server with an empty database uses them; a calibration on
//! expert rankings in the annotation store takes precedence (the server decides that).

use serde::{Deserialize, Serialize};
use serenqa_shared::rns::{Weights, WeightsInForce, WeightsSource};

/// The file as committed (compiled in).
pub const SHIPPED_JSON: &str = include_str!("../rns-weights.json");

/// Where `serenqa rns fit` writes the file in a source checkout.
pub const REPO_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rns-weights.json");

/// The weights file: weights, their source line and the full provenance of the fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightsFile {
    pub weights: Weights,
    pub source: WeightsSource,
    /// Command, graph, batches, grid, per-batch link rates and the held-out table.
    #[serde(default)]
    pub provenance: serde_json::Value,
}

/// Parses and checks a weights file: finite, not all zero; returned normalised to sum 1.
pub fn parse(text: &str) -> Result<WeightsFile, String> {
    let mut f: WeightsFile =
        serde_json::from_str(text).map_err(|e| format!("RNS weights file: {e}"))?;
    f.weights
        .validate()
        .map_err(|e| format!("RNS weights file: {e}"))?;
    let w = f.weights;
    if w.alpha.abs() + w.beta.abs() + w.gamma.abs() == 0.0 {
        return Err("RNS weights file: all three weights are 0".into());
    }
    f.weights = w.normalised();
    Ok(f)
}

/// The shipped weights with their source (equal weights if the compiled-in file were broken,
/// which `tests` rule out).
pub fn shipped() -> WeightsInForce {
    match parse(SHIPPED_JSON) {
        Ok(f) => WeightsInForce {
            weights: f.weights,
            source: f.source,
        },
        Err(e) => WeightsInForce {
            weights: Weights::default(),
            source: WeightsSource {
                label: format!("equal weights (⅓ each): {e}"),
                ..WeightsSource::equal()
            },
        },
    }
}

/// `YYYY-MM-DD` of a Unix time in seconds (UTC), without a date library.
pub fn iso_date(unix_secs: i64) -> String {
    let days = unix_secs.div_euclid(86_400);
    // Civil-from-days (proleptic Gregorian), days since 1970-01-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_file_parses_and_is_normalised() {
        let f = parse(SHIPPED_JSON).expect("the committed rns-weights.json parses");
        let w = f.weights;
        assert!((w.alpha.abs() + w.beta.abs() + w.gamma.abs() - 1.0).abs() < 1e-12);
        assert!(!f.source.kind.is_empty() && !f.source.label.is_empty());
        assert_eq!(shipped().weights, w);
    }

    #[test]
    fn bad_files_are_rejected() {
        assert!(parse("{").is_err());
        let zero =
            r#"{"weights":{"alpha":0,"beta":0,"gamma":0},"source":{"kind":"fitted","label":"x"}}"#;
        assert!(parse(zero).unwrap_err().contains("all three"));
        let two =
            r#"{"weights":{"alpha":1,"beta":1,"gamma":2},"source":{"kind":"fitted","label":"x"}}"#;
        assert_eq!(
            parse(two).unwrap().weights,
            Weights {
                alpha: 0.25,
                beta: 0.25,
                gamma: 0.5
            }
        );
    }

    #[test]
    fn dates() {
        assert_eq!(iso_date(0), "1970-01-01");
        assert_eq!(iso_date(951_782_400), "2000-02-29");
        assert_eq!(iso_date(1_798_761_599), "2026-12-31");
    }
}
