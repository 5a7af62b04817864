//! What admins and reviewers read about the work itself: per-annotator progress, individual
//! submitted rankings (identities for admins only; reviewers see the [`pseudonym`]), and the
//! pending invites with the one reason a link no longer works ([`invite_refusal`]).

use serde::{Deserialize, Serialize};

use super::{Invite, Role, Status};

/// The one pseudonym of an annotator, stable for the life of the database: the export
/// (`annotator`), the progress table and the rankings list all use it, so a reviewer can read
/// them side by side. It is made from the account's number only; nothing a reviewer can read
/// maps that number to an e-mail or a name.
pub fn pseudonym(user_id: i64) -> String {
    format!("A{user_id}")
}

/// The user id a [`pseudonym`] stands for (`None`: not a pseudonym).
pub fn parse_pseudonym(s: &str) -> Option<i64> {
    let n = s.trim().strip_prefix('A')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// A batch by id and name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchRef {
    pub id: i64,
    pub name: String,
}

/// One annotator's work (`GET /api/review/progress`). Identity fields are sent to admins only;
/// a reviewer gets `annotator` (the [`pseudonym`]) and the counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorProgress {
    pub annotator: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub role: Role,
    /// Batches assigned to them (empty: they work on the open batches).
    pub assigned: Vec<BatchRef>,
    /// Submitted rankings, skips excluded.
    pub submitted: i64,
    /// Submissions marking every candidate unsure.
    pub skipped: i64,
    /// Questions with a saved draft and no submission.
    pub in_progress: i64,
    /// Submitted rankings with unsubmitted edits beside them.
    pub pending_edits: i64,
    /// Their last save (Unix seconds; `None`: nothing saved yet).
    pub last_activity: Option<i64>,
}

impl AnnotatorProgress {
    /// The same row without anything that identifies the person (for reviewers).
    pub fn pseudonymised(self) -> Self {
        AnnotatorProgress {
            email: None,
            name: None,
            ..self
        }
    }
}

/// One candidate's place in a submitted ranking, by name, in list order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedRank {
    pub name: String,
    /// `Type::identifier`.
    pub key: String,
    pub rank: Option<u32>,
    pub unsure: bool,
}

/// One submitted ranking as admins and reviewers read it (`GET /api/review/rankings`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankingView {
    pub response_id: i64,
    pub annotator: String,
    /// Admins only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub batch_id: i64,
    pub batch: String,
    pub question_id: i64,
    pub question: String,
    pub ranking: Vec<NamedRank>,
    pub confidence: Option<u8>,
    pub comment: String,
    /// Every candidate unsure: counted nowhere.
    pub skipped: bool,
    pub confirmed_shown_order: bool,
    pub time_on_task_s: Option<f64>,
    /// Stored saves of this response (drafts and submissions).
    pub saves: i64,
    /// Of those, submissions (more than one: the ranking was updated after submitting).
    pub submissions: i64,
    /// An unsubmitted edit lies beside this submission.
    pub pending_edit: bool,
    pub submitted_at: i64,
}

/// Most rankings per page of `GET /api/review/rankings`.
pub const RANKINGS_PAGE_MAX: usize = 100;

/// `GET /api/review/rankings`: one page of submitted rankings, oldest question first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankingsPage {
    /// Rankings matching the filter in all.
    pub total: usize,
    pub offset: usize,
    pub limit: usize,
    pub items: Vec<RankingView>,
}

/// An invite that can still be accepted, as the admin page lists it. Its link cannot be shown
/// again (only a digest of the token is stored): issuing a new link replaces it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingInvite {
    pub id: i64,
    pub email: String,
    pub role: Role,
    pub created_at: i64,
    pub expires_at: i64,
    /// Who created it (e-mail; `None`: the command line).
    pub created_by: Option<String>,
}

/// `POST /api/admin/invites`: the one-time link, and the earlier link for the same address
/// that it replaced (which no longer works).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InviteCreated {
    pub link: String,
    pub expires_at: i64,
    #[serde(default)]
    pub email: String,
    #[serde(default)]
    pub replaced: Option<PendingInvite>,
}

/// Why an invite link was revoked.
pub const REVOKED_REPLACED: &str = "replaced";
pub const REVOKED_WITHDRAWN: &str = "withdrawn";

/// Why `inv` cannot be accepted at `now`: a machine code and one line for the person holding
/// the link (`None`: it can be accepted). One rule for the invite page and the store.
pub fn invite_refusal(inv: &Invite, now: i64) -> Option<(&'static str, String)> {
    if inv.used_at.is_some() {
        return Some((
            "invite_used",
            "this invite link has already been used; sign in instead".into(),
        ));
    }
    match inv.revoked.as_deref() {
        Some(REVOKED_REPLACED) => {
            return Some((
                "invite_replaced",
                "this invite link was replaced by a newer one; use the latest link you were sent"
                    .into(),
            ))
        }
        Some(_) => {
            return Some((
                "invite_revoked",
                "this invite link was withdrawn by an administrator".into(),
            ))
        }
        None => {}
    }
    if inv.expires_at < now {
        return Some((
            "invite_expired",
            "this invite link has expired; ask an administrator for a new one".into(),
        ));
    }
    None
}

/// The status line a submitted ranking's page shows about it, e.g. "submitted, updated once".
pub fn status_words(status: Status, submissions: i64) -> String {
    match (status, submissions) {
        (Status::Draft, _) => "draft".into(),
        (_, n) if n <= 1 => "submitted".into(),
        (_, 2) => "submitted, updated once".into(),
        (_, n) => format!("submitted, updated {} times", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudonyms_round_trip_and_refuse_anything_else() {
        assert_eq!(pseudonym(7), "A7");
        assert_eq!(parse_pseudonym("A7"), Some(7));
        assert_eq!(parse_pseudonym(" A12 "), Some(12));
        for bad in ["", "A", "7", "a7", "A7x", "A-1", "Annotator 3"] {
            assert_eq!(parse_pseudonym(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_invite_is_refused_for_one_clear_reason() {
        let inv = Invite {
            email: "x@y.org".into(),
            role: Role::Annotator,
            created_at: 0,
            expires_at: 100,
            used_at: None,
            revoked: None,
        };
        assert_eq!(invite_refusal(&inv, 50), None);
        assert_eq!(
            invite_refusal(&inv, 101).map(|r| r.0),
            Some("invite_expired")
        );
        let used = Invite {
            used_at: Some(10),
            ..inv.clone()
        };
        assert_eq!(invite_refusal(&used, 50).map(|r| r.0), Some("invite_used"));
        let replaced = Invite {
            revoked: Some(REVOKED_REPLACED.into()),
            ..inv.clone()
        };
        assert_eq!(
            invite_refusal(&replaced, 50).map(|r| r.0),
            Some("invite_replaced")
        );
        let withdrawn = Invite {
            revoked: Some(REVOKED_WITHDRAWN.into()),
            ..inv
        };
        let (code, msg) = invite_refusal(&withdrawn, 500).unwrap();
        assert_eq!(code, "invite_revoked");
        assert!(!msg.contains('\n'));
    }
}
