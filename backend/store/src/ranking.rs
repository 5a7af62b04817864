//! Validation of a submitted ranking, and ranks for the statistics.
//!
//! A ranking gives every candidate a rank (1 = most serendipitous) or none (a draft not
//! finished yet) and an "unsure" flag. It is a **proper order** when the ranks used are
//! exactly 1..=k for some k (dense ranking: equal ranks are ties, no gaps). A *complete*
//! response must rank every candidate of the question and carry a confidence 1–5.

use std::collections::BTreeSet;

use crate::types::{NewResponse, RankEntry, Status};

/// Why a submission was refused (the message is shown to the annotator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankingError {
    pub code: &'static str,
    pub message: String,
}

fn err(code: &'static str, message: String) -> RankingError {
    RankingError { code, message }
}

/// Longest comment accepted, in characters (one home: `serenqa_shared::annotate`).
pub use serenqa_shared::annotate::MAX_COMMENT_CHARS as MAX_COMMENT;
/// Longest submission id accepted.
pub const MAX_SUBMISSION_ID: usize = 64;

/// Checks `r` against the question's candidate ids. On success the ranking is returned in
/// the submitted order, with unmentioned candidates appended unranked.
pub fn validate(candidates: &[i64], r: &NewResponse) -> Result<Vec<RankEntry>, RankingError> {
    if r.submission_id.is_empty()
        || r.submission_id.len() > MAX_SUBMISSION_ID
        || !r
            .submission_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(
            "bad_submission_id",
            format!("submission_id must be 1–{MAX_SUBMISSION_ID} characters of [A-Za-z0-9_-]"),
        ));
    }
    let chars = r.comment.chars().count();
    if chars > MAX_COMMENT {
        return Err(err(
            "comment_too_long",
            format!("the comment has {chars} characters; at most {MAX_COMMENT} are accepted"),
        ));
    }
    if let Some(c) = r.confidence {
        if !(1..=5).contains(&c) {
            return Err(err(
                "bad_confidence",
                format!("confidence must be 1–5, not {c}"),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for e in &r.ranking {
        if !candidates.contains(&e.candidate) {
            return Err(err(
                "unknown_candidate",
                format!("candidate {} does not belong to this question", e.candidate),
            ));
        }
        if !seen.insert(e.candidate) {
            return Err(err(
                "not_an_order",
                format!("candidate {} is ranked twice", e.candidate),
            ));
        }
    }
    let n = candidates.len() as u32;
    let used: BTreeSet<u32> = r.ranking.iter().filter_map(|e| e.rank).collect();
    if let Some(&bad) = used.iter().find(|&&k| k == 0 || k > n) {
        return Err(err("not_an_order", format!("rank {bad} is outside 1–{n}")));
    }
    // Dense: the distinct ranks are 1..=k.
    if let Some((i, &k)) = used.iter().enumerate().find(|&(i, &k)| k != i as u32 + 1) {
        return Err(err("not_an_order", format!("ranks must run 1, 2, 3 … without gaps (ties share a rank); rank {} is missing before {k}", i + 1)));
    }
    if r.status == Status::Complete {
        let missing: Vec<i64> = candidates
            .iter()
            .copied()
            .filter(|c| {
                !r.ranking
                    .iter()
                    .any(|e| e.candidate == *c && e.rank.is_some())
            })
            .collect();
        if !missing.is_empty() {
            return Err(err(
                "incomplete",
                format!("{} candidate(s) are not ranked yet", missing.len()),
            ));
        }
        if r.confidence.is_none() {
            return Err(err(
                "incomplete",
                "choose a confidence from 1 to 5 before submitting".into(),
            ));
        }
    }
    // Keep the submitted order (the annotator's list order, which orders items within a tie)
    // and append candidates the submission did not mention, unranked.
    let mut out: Vec<RankEntry> = r.ranking.clone();
    for &c in candidates {
        if !out.iter().any(|e| e.candidate == c) {
            out.push(RankEntry {
                candidate: c,
                rank: None,
                unsure: false,
            });
        }
    }
    out.shrink_to_fit();
    Ok(out)
}

/// The engagement gate of a submission (`serenqa_shared::annotate::submission_gate`, the
/// rule the page shows): a complete save in the untouched shown order needs the explicit
/// confirmation. `presented` empty (not known) passes.
pub fn gate(presented: &[i64], r: &NewResponse) -> Result<(), RankingError> {
    serenqa_shared::annotate::submission_gate(
        presented,
        &r.ranking,
        r.status,
        r.confirm_shown_order,
    )
    .map_err(|g| err(g.code, g.message))
}

/// Average ("fractional") ranks of `dense` ranks, 1-based: ties share the mean of the
/// positions they occupy (dense 1, 1, 2 → 1.5, 1.5, 3). `None` stays `None`.
pub fn average_ranks(dense: &[Option<u32>]) -> Vec<Option<f64>> {
    let mut vals: Vec<u32> = dense.iter().flatten().copied().collect();
    vals.sort_unstable();
    dense
        .iter()
        .map(|d| {
            d.map(|k| {
                let below = vals.iter().filter(|&&v| v < k).count() as f64;
                let equal = vals.iter().filter(|&&v| v == k).count() as f64;
                below + (equal + 1.0) / 2.0
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(ranks: &[(i64, Option<u32>)], status: Status, confidence: Option<u8>) -> NewResponse {
        NewResponse {
            submission_id: "s1".into(),
            ranking: ranks
                .iter()
                .map(|&(c, r)| RankEntry {
                    candidate: c,
                    rank: r,
                    unsure: false,
                })
                .collect(),
            confidence,
            comment: String::new(),
            status,
            base_revision: 0,
            confirm_shown_order: false,
            time_ms: None,
        }
    }

    #[test]
    fn the_comment_limit_counts_characters_not_bytes() {
        let c = [10];
        let with = |text: String| NewResponse {
            comment: text,
            ..resp(&[(10, Some(1))], Status::Draft, None)
        };
        // 3,900 Greek and German characters are ~7,000 bytes: accepted.
        let greek: String = "αβγδεäöüß".chars().cycle().take(3900).collect();
        assert!(greek.len() > MAX_COMMENT);
        assert!(validate(&c, &with(greek)).is_ok());
        let full: String = "λ".repeat(MAX_COMMENT);
        assert!(validate(&c, &with(full)).is_ok());
        let over = validate(&c, &with("λ".repeat(MAX_COMMENT + 1))).unwrap_err();
        assert_eq!(over.code, "comment_too_long");
        assert!(over.message.contains("4001 characters"), "{}", over.message);
    }

    #[test]
    fn proper_orders_pass_and_others_fail_with_their_code() {
        let c = [10, 11, 12];
        assert!(validate(
            &c,
            &resp(
                &[(10, Some(1)), (11, Some(2)), (12, Some(3))],
                Status::Complete,
                Some(3)
            )
        )
        .is_ok());
        assert!(
            validate(
                &c,
                &resp(
                    &[(10, Some(1)), (11, Some(1)), (12, Some(2))],
                    Status::Complete,
                    Some(3)
                )
            )
            .is_ok(),
            "ties"
        );
        assert!(
            validate(
                &c,
                &resp(
                    &[(10, Some(1)), (11, Some(1)), (12, Some(1))],
                    Status::Complete,
                    Some(1)
                )
            )
            .is_ok(),
            "all tied"
        );
        assert!(
            validate(&c, &resp(&[(10, Some(1))], Status::Draft, None)).is_ok(),
            "partial draft"
        );
        let code = |r: NewResponse| validate(&c, &r).unwrap_err().code;
        assert_eq!(
            code(resp(
                &[(10, Some(1)), (11, Some(3)), (12, Some(3))],
                Status::Draft,
                None
            )),
            "not_an_order",
            "gap"
        );
        assert_eq!(
            code(resp(
                &[(10, Some(2)), (11, Some(3)), (12, Some(4))],
                Status::Draft,
                None
            )),
            "not_an_order",
            "out of range / no 1"
        );
        assert_eq!(
            code(resp(&[(10, Some(0))], Status::Draft, None)),
            "not_an_order"
        );
        assert_eq!(
            code(resp(&[(10, Some(1)), (10, Some(2))], Status::Draft, None)),
            "not_an_order",
            "duplicate candidate"
        );
        assert_eq!(
            code(resp(&[(99, Some(1))], Status::Draft, None)),
            "unknown_candidate"
        );
        assert_eq!(
            code(resp(
                &[(10, Some(1)), (11, Some(2))],
                Status::Complete,
                Some(2)
            )),
            "incomplete"
        );
        assert_eq!(
            code(resp(
                &[(10, Some(1)), (11, Some(2)), (12, Some(3))],
                Status::Complete,
                None
            )),
            "incomplete"
        );
        assert_eq!(
            code(resp(&[(10, Some(1))], Status::Draft, Some(6))),
            "bad_confidence"
        );
        let mut r = resp(&[], Status::Draft, None);
        r.submission_id = "bad id!".into();
        assert_eq!(code(r), "bad_submission_id");
    }

    #[test]
    fn average_ranks_split_ties() {
        assert_eq!(
            average_ranks(&[Some(1), Some(1), Some(2)]),
            vec![Some(1.5), Some(1.5), Some(3.0)]
        );
        assert_eq!(
            average_ranks(&[Some(2), None, Some(1), Some(2), Some(2)]),
            vec![Some(3.0), None, Some(1.0), Some(3.0), Some(3.0)]
        );
    }
}
