//! The paper's metrics (Table 2, Table 3, Appendix E), as pure functions over ids.
//!
//! - T1: [`hit`] = |A ∩ A′| / |A|, [`f1`] of A′ against A, Executability = share of queries
//!   that ran without error (non-executable queries score Hit = F1 = 0).
//! - T2: [`seren_cov`] — share of ground-truth serendipity paths whose source and target ids
//!   both appear in the summary text (whole-token match, so `DB001` does not match `DB0012`).
//! - T3: [`type_match`] — 1 if any predicted leaf has a ground-truth type; [`seren_hit`] — 1 if
//!   any predicted leaf is in the ground-truth serendipity set.
//! - Judges: [`parse_score`] reads `Score: N` (1–5); anything unparsable scores 1.

use std::collections::BTreeSet;

/// |gold ∩ pred| / |gold| (0 when gold is empty).
pub fn hit(gold: &BTreeSet<String>, pred: &BTreeSet<String>) -> f64 {
    if gold.is_empty() {
        return 0.0;
    }
    gold.intersection(pred).count() as f64 / gold.len() as f64
}

/// Harmonic mean of precision and recall of `pred` against `gold`.
pub fn f1(gold: &BTreeSet<String>, pred: &BTreeSet<String>) -> f64 {
    let inter = gold.intersection(pred).count() as f64;
    if inter == 0.0 {
        return 0.0;
    }
    let p = inter / pred.len() as f64;
    let r = inter / gold.len() as f64;
    2.0 * p * r / (p + r)
}

/// Share of `true` in `executable` (0 for none).
pub fn executability(executable: &[bool]) -> f64 {
    if executable.is_empty() {
        return 0.0;
    }
    executable.iter().filter(|&&e| e).count() as f64 / executable.len() as f64
}

/// Word-like tokens of a text: runs of characters that can occur in an identifier.
pub fn id_tokens(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, ':' | '_' | '.' | '-')))
        .map(|t| t.trim_end_matches(['.', ':', '-']))
        .filter(|t| !t.is_empty())
        .collect()
}

/// Does `id` appear in `text` as a whole token (identifiers such as `DOID:2841` contain `:`).
pub fn mentions_id(tokens: &BTreeSet<&str>, id: &str) -> bool {
    tokens.contains(id)
}

/// Share of `(source id, target id)` path endpoints both mentioned in `summary` (0 if no paths).
pub fn seren_cov(summary: &str, paths: &[(String, String)]) -> f64 {
    if paths.is_empty() {
        return 0.0;
    }
    let toks = id_tokens(summary);
    paths
        .iter()
        .filter(|(s, t)| mentions_id(&toks, s) && mentions_id(&toks, t))
        .count() as f64
        / paths.len() as f64
}

/// 1 if any predicted type is among the ground-truth types.
pub fn type_match(pred_types: &[String], gold_types: &BTreeSet<String>) -> f64 {
    if pred_types.iter().any(|t| gold_types.contains(t)) {
        1.0
    } else {
        0.0
    }
}

/// 1 if any predicted leaf is in the ground-truth serendipity set.
pub fn seren_hit(pred: &[String], gold: &BTreeSet<String>) -> f64 {
    if pred.iter().any(|p| gold.contains(p)) {
        1.0
    } else {
        0.0
    }
}

/// A judge's `Score: N` with N in 1..=5; `None` when the reply has none (scored 1).
pub fn parse_score(reply: &str) -> Option<u8> {
    for line in reply.lines() {
        let l = line.trim().trim_start_matches(['*', '#', ' ']);
        let lower = l.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("score") {
            let rest = rest.trim_start_matches(['*', ':', ' ', '=']);
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse::<u8>() {
                if (1..=5).contains(&n) {
                    return Some(n);
                }
            }
            return None;
        }
    }
    None
}

/// Mean of values (0 for none).
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(std::string::ToString::to_string).collect()
    }

    #[test]
    fn hit_and_f1_on_hand_made_cases() {
        let gold = set(&["a", "b", "c", "d"]);
        assert_eq!(hit(&gold, &set(&["a", "b", "x"])), 0.5);
        // P = 2/3, R = 1/2, F1 = 2·(1/3)/(7/6) = 4/7.
        assert!((f1(&gold, &set(&["a", "b", "x"])) - 4.0 / 7.0).abs() < 1e-12);
        assert_eq!(f1(&gold, &gold), 1.0);
        assert_eq!(hit(&gold, &gold), 1.0);
        assert_eq!(f1(&gold, &set(&[])), 0.0);
        assert_eq!(hit(&gold, &set(&["x"])), 0.0);
        assert_eq!(hit(&set(&[]), &set(&["x"])), 0.0);
        // Superset: recall 1, precision 1/2.
        assert_eq!(hit(&set(&["a"]), &set(&["a", "b"])), 1.0);
        assert!((f1(&set(&["a"]), &set(&["a", "b"])) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn executability_share() {
        assert_eq!(executability(&[true, false, true, true]), 0.75);
        assert_eq!(executability(&[]), 0.0);
    }

    #[test]
    fn seren_cov_needs_both_ends_as_whole_tokens() {
        let paths = vec![
            ("DB00001".to_string(), "DOID:2841".to_string()),
            ("DB00002".to_string(), "DOID:9352".to_string()),
            ("1234".to_string(), "DOID:2841".to_string()),
        ];
        let s = "Lepirudin (DB00001) relates to asthma (DOID:2841). Gene 12345 and DB00002 appear.";
        // Path 1: both; path 2: target missing; path 3: 1234 only inside 12345.
        assert!((seren_cov(s, &paths) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(seren_cov("", &paths), 0.0);
        assert_eq!(seren_cov(s, &[]), 0.0);
        assert_eq!(seren_cov("DB00002, DOID:9352.", &paths[1..2]), 1.0);
    }

    #[test]
    fn type_match_and_seren_hit() {
        let gold_types = set(&["Compound"]);
        assert_eq!(
            type_match(&["Gene".into(), "Compound".into()], &gold_types),
            1.0
        );
        assert_eq!(type_match(&["Gene".into()], &gold_types), 0.0);
        assert_eq!(type_match(&[], &gold_types), 0.0);
        let gold = set(&["DB1", "DB2"]);
        assert_eq!(seren_hit(&["DB9".into(), "DB2".into()], &gold), 1.0);
        assert_eq!(seren_hit(&["DB9".into()], &gold), 0.0);
        assert_eq!(seren_hit(&[], &gold), 0.0);
    }

    #[test]
    fn judge_scores() {
        assert_eq!(parse_score("Score: 4\n#END"), Some(4));
        assert_eq!(parse_score("  **Score:** 5\n#END"), Some(5));
        assert_eq!(parse_score("I think...\nscore = 2"), Some(2));
        assert_eq!(parse_score("Score: 9\n#END"), None);
        assert_eq!(parse_score("Score: high"), None);
        assert_eq!(parse_score(""), None);
        assert_eq!(parse_score("The answer is 4"), None);
    }
}
