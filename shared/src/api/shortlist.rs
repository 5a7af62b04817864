//! A signed-in clinician's shortlist of candidates (`GET/POST/DELETE /api/shortlist`) and its
//! CSV export.

use serde::{Deserialize, Serialize};

/// Most items one shortlist may hold (server-side per user, and in the browser's storage).
pub const SHORTLIST_MAX_ITEMS: usize = 200;

/// An entity named in a shortlist: type, source identifier and name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShortlistEntity {
    pub kind: String,
    pub id: String,
    pub name: String,
}

impl ShortlistEntity {
    /// `Type::identifier`, the key the API takes.
    pub fn key(&self) -> String {
        format!("{}::{}", self.kind, self.id)
    }
}

/// Scores of a candidate as shown when it was kept, with the weights then in force.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShortlistScores {
    /// Plausibility (0–1) of the treatment pair, when predictions are loaded.
    #[serde(default)]
    pub plausibility: Option<f64>,
    /// Its percentile (0–100) among the query's predictions.
    #[serde(default)]
    pub percentile: Option<f64>,
    pub rns: f64,
    pub r: f64,
    pub n: f64,
    /// None where S cannot tell candidates apart (one known entity, one candidate:
    /// [`crate::rns::surprise_informative`]); the page then shows no S and RNS leaves it out.
    #[serde(default)]
    pub s: Option<f64>,
    /// The RNS weights (α, β, γ) the scores were computed with.
    pub weights: crate::rns::Weights,
    /// The plausibility/RNS blend of the page (0 = serendipity only, 1 = plausibility only).
    #[serde(default)]
    pub blend: Option<f64>,
}

impl ShortlistScores {
    /// A one-line reason when a score is out of its range or not finite.
    pub fn check(&self) -> Result<(), String> {
        let in_range = |name: &str, v: f64, lo: f64, hi: f64| -> Result<(), String> {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be a number from {lo} to {hi} (got {v})"
                ))
            }
        };
        if let Some(p) = self.plausibility {
            in_range("plausibility", p, 0.0, 1.0)?;
        }
        if let Some(p) = self.percentile {
            in_range("percentile", p, 0.0, 100.0)?;
        }
        if let Some(b) = self.blend {
            in_range("blend", b, 0.0, 1.0)?;
        }
        // RNS is a weighted mean of terms in [0, 1] with weights that may be negative.
        in_range("rns", self.rns, -1.0, 1.0)?;
        in_range("r", self.r, 0.0, 1.0)?;
        in_range("n", self.n, 0.0, 1.0)?;
        if let Some(v) = self.s {
            in_range("s", v, 0.0, 1.0)?;
        }
        let w = self.weights;
        in_range("alpha", w.alpha, -1.0, 1.0)?;
        in_range("beta", w.beta, -1.0, 1.0)?;
        in_range("gamma", w.gamma, -1.0, 1.0)?;
        Ok(())
    }
}

/// One kept candidate: the entity whose page proposed it, the candidate, its scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShortlistItem {
    pub query: ShortlistEntity,
    pub candidate: ShortlistEntity,
    pub scores: ShortlistScores,
    /// When it was kept (seconds since the Unix epoch).
    pub added_at: i64,
}

/// `POST /api/shortlist`: keep a candidate (again: its scores are replaced).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShortlistAdd {
    /// `Type::identifier` of the entity whose page proposed the candidate.
    pub query: String,
    /// `Type::identifier` of the candidate.
    pub candidate: String,
    pub scores: ShortlistScores,
}

/// `GET /api/shortlist` (and the reply of every change): the signed-in user's shortlist,
/// oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Shortlist {
    pub items: Vec<ShortlistItem>,
    pub max_items: usize,
}

/// The shortlist as CSV: a comment line with the research-only caveat, a header, one row per
/// item. Text cells are neutralised against spreadsheet formulas ([`crate::csv::cell`]).
pub fn shortlist_csv(items: &[ShortlistItem]) -> String {
    use crate::csv::cell;
    let opt = |v: Option<f64>, d: usize| v.map(|x| format!("{x:.d$}")).unwrap_or_default();
    let mut s = String::from("# serenqa shortlist: research hypotheses, not clinical advice; they do not account for druggability, dosing or safety and need preclinical and clinical validation\n");
    s.push_str("query_id,query_name,query_kind,candidate_id,candidate_name,candidate_kind,plausibility,percentile,rns,r,n,s,alpha,beta,gamma,blend,added_at\n");
    for it in items {
        let sc = &it.scores;
        let row = [
            cell(&it.query.id),
            cell(&it.query.name),
            cell(&it.query.kind),
            cell(&it.candidate.id),
            cell(&it.candidate.name),
            cell(&it.candidate.kind),
            opt(sc.plausibility, 4),
            opt(sc.percentile, 2),
            format!("{:.4}", sc.rns),
            format!("{:.4}", sc.r),
            format!("{:.4}", sc.n),
            opt(sc.s, 4),
            format!("{:.2}", sc.weights.alpha),
            format!("{:.2}", sc.weights.beta),
            format!("{:.2}", sc.weights.gamma),
            opt(sc.blend, 2),
            it.added_at.to_string(),
        ];
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod shortlist_tests {
    use super::*;
    use crate::rns::Weights;

    fn scores() -> ShortlistScores {
        ShortlistScores {
            plausibility: Some(0.5),
            percentile: Some(99.5),
            rns: 0.4,
            r: 0.5,
            n: 0.2,
            s: Some(0.3),
            weights: Weights {
                alpha: 0.5,
                beta: 0.25,
                gamma: -0.25,
            },
            blend: Some(0.5),
        }
    }

    #[test]
    fn scores_out_of_range_are_refused() {
        assert!(scores().check().is_ok());
        let bad = [
            ShortlistScores {
                plausibility: Some(1.5),
                ..scores()
            },
            ShortlistScores {
                percentile: Some(-1.0),
                ..scores()
            },
            ShortlistScores {
                rns: f64::NAN,
                ..scores()
            },
            ShortlistScores {
                s: Some(2.0),
                ..scores()
            },
            ShortlistScores {
                weights: Weights {
                    alpha: f64::INFINITY,
                    beta: 0.0,
                    gamma: 0.0,
                },
                ..scores()
            },
            ShortlistScores {
                blend: Some(3.0),
                ..scores()
            },
        ];
        for b in bad {
            assert!(b.check().is_err(), "{b:?}");
        }
    }

    #[test]
    fn csv_has_the_caveat_first_and_neutralised_cells() {
        let e = |kind: &str, id: &str, name: &str| ShortlistEntity {
            kind: kind.into(),
            id: id.into(),
            name: name.into(),
        };
        let items = vec![ShortlistItem {
            query: e("Disease", "DOID:2841", "asthma"),
            candidate: e("Compound", "DB1", "=HYPERLINK(\"x\"), evil"),
            scores: scores(),
            added_at: 7,
        }];
        let csv = shortlist_csv(&items);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].starts_with('#') && lines[0].contains("not clinical advice"));
        assert!(lines[1].starts_with("query_id,query_name"));
        assert_eq!(lines.len(), 3);
        assert!(
            lines[2].contains("\"'=HYPERLINK(\"\"x\"\"), evil\""),
            "{}",
            lines[2]
        );
        assert!(
            lines[2].contains(",0.5000,99.50,0.4000,0.5000,0.2000,0.3000,0.50,0.25,-0.25,0.50,7"),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn scores_without_s_are_valid_and_items_kept_before_still_read() {
        let none = ShortlistScores {
            s: None,
            ..scores()
        };
        assert!(none.check().is_ok());
        let json = serde_json::to_string(&none).expect("serialise");
        let back: ShortlistScores = serde_json::from_str(&json).expect("read back");
        assert_eq!(back.s, None);
        // An item stored before S became optional carries a number.
        let old = r#"{"rns":0.4,"r":0.5,"n":0.2,"s":0.3,"weights":{"alpha":0.5,"beta":0.25,"gamma":-0.25}}"#;
        let old: ShortlistScores = serde_json::from_str(old).expect("old item");
        assert_eq!(old.s, Some(0.3));
        let e = |id: &str| ShortlistEntity {
            kind: "Disease".into(),
            id: id.into(),
            name: id.into(),
        };
        let csv = shortlist_csv(&[ShortlistItem {
            query: e("DOID:1"),
            candidate: e("DB1"),
            scores: none,
            added_at: 1,
        }]);
        assert!(
            csv.lines()
                .nth(2)
                .is_some_and(|l| l.contains(",0.4000,0.5000,0.2000,,0.50,")),
            "{csv}"
        );
    }
}
