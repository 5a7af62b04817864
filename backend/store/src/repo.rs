//! The repository interface. The server, the CLI and the statistics only see this trait;
//! [`crate::SqliteRepo`] is the embedded implementation.

use serde::{Deserialize, Serialize};

use crate::types::*;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(String),
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    /// A submission id already stored for another question or user (HTTP 409
    /// `submission_id_reused`).
    #[error("{0}")]
    SubmissionReused(String),
    /// A save based on a revision that is not the stored one (HTTP 409 `stale_revision`):
    /// the stored revision (`0`: none) and response.
    /// A bounded collection (a shortlist) is full (HTTP 409 `shortlist_full`).
    #[error("{0}")]
    Full(String),
    /// A rule refused the request (a submission gate, a calibration below the minimum):
    /// HTTP 422 with this machine code and reason.
    #[error("{message}")]
    Refused { code: &'static str, message: String },
    #[error("this response was changed elsewhere (stored revision {revision})")]
    Stale {
        revision: i64,
        current: Option<Box<Response>>,
    },
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Db(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A question to import.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewQuestion {
    pub qid: i64,
    pub text: String,
    pub category: String,
    pub pattern: Option<String>,
    pub resources: Vec<Resource>,
    pub candidates: Vec<NewCandidate>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewCandidate {
    pub name: String,
    pub kind: String,
    pub ident: String,
    pub link: Option<String>,
    pub llm_rank: Option<i64>,
}

/// A batch to import (questions in display order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewBatch {
    pub source: Source,
    /// Stable name in the source (`batch3`, a category); batches are matched on it.
    pub key: String,
    pub name: String,
    pub questions: Vec<NewQuestion>,
}

/// Which submitted rankings to list (`None`: any).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankingFilter {
    pub batch: Option<i64>,
    pub question: Option<i64>,
    pub user: Option<i64>,
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    pub batches: usize,
    pub questions_added: usize,
    pub questions_skipped: usize,
    pub candidates_added: usize,
}

pub trait Repo: Send + Sync {
    // ----- users and auth -----
    fn create_user(&self, email: &str, name: &str, role: Role, password_hash: &str)
        -> Result<User>;
    /// The user and their password hash.
    fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>>;
    fn user(&self, id: i64) -> Result<Option<User>>;
    fn users(&self) -> Result<Vec<User>>;
    /// Stores an invite. One valid link per address: every earlier unused link for the same
    /// address (any case) is revoked as replaced, in the same transaction; the earlier one is
    /// returned when it was still valid (its holder's link stops working). An address that
    /// has an account is a [`StoreError::Conflict`].
    fn create_invite(
        &self,
        token_hash: &str,
        email: &str,
        role: Role,
        created_by: Option<i64>,
        expires_at: i64,
    ) -> Result<Option<PendingInvite>>;
    fn invite(&self, token_hash: &str) -> Result<Option<Invite>>;
    /// Invites that can still be accepted at `now` (unused, not revoked, not expired), newest
    /// first.
    fn pending_invites(&self, now: i64) -> Result<Vec<PendingInvite>>;
    /// Withdraws an invite (its link stops working). Revoking a revoked invite changes
    /// nothing; a used one is a [`StoreError::Conflict`], an unknown one
    /// [`StoreError::NotFound`].
    fn revoke_invite(&self, id: i64, now: i64) -> Result<PendingInvite>;
    /// Creates the invited user and marks the invite used, atomically; fails if the invite is
    /// unknown, used, revoked or expired (`serenqa_shared::annotate::invite_refusal`), or the
    /// email is taken.
    fn accept_invite(
        &self,
        token_hash: &str,
        name: &str,
        password_hash: &str,
        now: i64,
    ) -> Result<User>;
    fn create_session(
        &self,
        token_hash: &str,
        user_id: i64,
        csrf: &str,
        expires_at: i64,
    ) -> Result<()>;
    /// A live session (expired ones are treated as absent).
    fn session(&self, token_hash: &str, now: i64) -> Result<Option<Session>>;
    fn delete_session(&self, token_hash: &str) -> Result<()>;

    /// Stores a one-time password-reset token for `user_id`.
    fn create_reset(
        &self,
        token_hash: &str,
        user_id: i64,
        created_by: Option<i64>,
        expires_at: i64,
    ) -> Result<()>;
    /// The user a live (unused, unexpired) reset token belongs to.
    fn reset_user(&self, token_hash: &str, now: i64) -> Result<Option<User>>;
    /// Sets the password of the reset token's user, marks the token used and ends every session
    /// of that user, atomically; fails if the token is unknown, used or expired.
    fn use_reset(&self, token_hash: &str, password_hash: &str, now: i64) -> Result<User>;

    // ----- shortlists (clinicians) -----
    /// The user's shortlist, oldest first.
    fn shortlist(&self, user_id: i64) -> Result<Vec<ShortlistItem>>;
    /// Keeps an item; the same (query, candidate) again replaces its scores in place. A new item
    /// past `cap` items is refused ([`StoreError::Full`]), atomically. True when it was new.
    fn shortlist_put(&self, user_id: i64, item: &ShortlistItem, cap: usize) -> Result<bool>;
    /// Removes one item by its query and candidate keys (`Type::identifier`); true if it was there.
    fn shortlist_remove(&self, user_id: i64, query_key: &str, candidate_key: &str) -> Result<bool>;

    // ----- assignment -----
    /// Replaces the batch's annotators (empty: open to every annotator) and overlap target.
    /// Every id must be an annotator's ([`StoreError::Invalid`] otherwise).
    fn set_assignment(&self, batch_id: i64, annotators: &[i64], overlap: Option<i64>)
        -> Result<()>;
    /// Every batch with its assignment and coverage.
    fn assignments(&self) -> Result<Vec<BatchAssignment>>;
    /// True when the batch is open to everyone or assigned to this user.
    fn may_annotate(&self, batch_id: i64, user_id: i64) -> Result<bool>;

    // ----- questions -----
    fn import_batches(&self, batches: &[NewBatch]) -> Result<ImportReport>;
    fn batches(&self) -> Result<Vec<Batch>>;
    fn batch(&self, id: i64) -> Result<Option<Batch>>;
    /// The batches this user may annotate (see [`Repo::may_annotate`]) with their progress.
    fn progress(&self, user_id: i64) -> Result<Vec<BatchProgress>>;
    fn questions_in_batch(&self, batch_id: i64, user_id: i64) -> Result<Vec<QuestionSummary>>;
    fn question(&self, id: i64) -> Result<Option<Question>>;
    fn questions_of_source(&self, source: Source) -> Result<Vec<Question>>;

    // ----- responses -----
    /// Stores a validated response (callers validate with [`crate::ranking::validate`]).
    /// Idempotent on `submission_id` (a reused id on another question or by another user is
    /// [`StoreError::SubmissionReused`]); refuses a save whose `base_revision` is not the
    /// stored revision with [`StoreError::Stale`]; a draft save of a submitted response is
    /// kept as its pending edit and leaves the submission as it was.
    fn save_response(
        &self,
        user_id: i64,
        question_id: i64,
        r: &NewResponse,
    ) -> Result<SaveOutcome> {
        self.save_response_shown(user_id, question_id, r, &[])
    }
    /// [`Repo::save_response`] recording `presented`, the candidate ids in the order the
    /// annotator was first shown them (kept from the first save on), and checking the
    /// engagement gate against it ([`crate::ranking::gate`]: a complete save in the untouched
    /// shown order needs `confirm_shown_order`, else [`StoreError::Refused`]
    /// `untouched_order`). Every save is kept in the revision history.
    fn save_response_shown(
        &self,
        user_id: i64,
        question_id: i64,
        r: &NewResponse,
        presented: &[i64],
    ) -> Result<SaveOutcome>;
    /// Every stored save of every response (oldest first per response), for the export.
    fn revisions(&self) -> Result<Vec<Revision>>;
    fn response(&self, id: i64) -> Result<Option<Response>>;
    fn response_for(&self, user_id: i64, question_id: i64) -> Result<Option<Response>>;
    fn responses_for_question(&self, question_id: i64) -> Result<Vec<Response>>;
    fn all_responses(&self) -> Result<Vec<Response>>;
    /// Every stored submission id with its user (the load and crash tests check these).
    fn submission_ids(&self) -> Result<Vec<(String, i64)>>;

    // ----- oversight (admins and reviewers) -----
    /// Every annotator (and anyone else who saved a response) with their counts, assigned
    /// batches and last save, by account number. Without `with_identity` the rows carry the
    /// pseudonym only.
    fn annotator_progress(&self, with_identity: bool) -> Result<Vec<AnnotatorProgress>>;
    /// Submitted rankings (skips included, marked) matching `filter`, in batch, question and
    /// annotator order: the number matching and the page `offset .. offset + limit`, with
    /// candidate names. Without `with_identity` no e-mail is filled in.
    fn submitted_rankings(
        &self,
        filter: &RankingFilter,
        offset: usize,
        limit: usize,
        with_identity: bool,
    ) -> Result<(usize, Vec<RankingView>)>;

    // ----- results -----
    fn put_run(&self, run: &RunRecord) -> Result<()>;
    fn runs(&self) -> Result<Vec<RunRecord>>;
    /// Stores a calibration. It is **not** put in force ([`Repo::use_weights`] does that).
    fn add_calibration(&self, c: &CalibrationRecord) -> Result<i64>;
    /// Every stored calibration, newest first.
    fn calibrations(&self) -> Result<Vec<CalibrationRecord>>;
    /// Puts a stored calibration in force (`Some(id)`) or goes back to the shipped weights
    /// (`None`), recording who did it. A calibration below the minimums
    /// (`serenqa_shared::annotate::calibration_gate`) is [`StoreError::Refused`]
    /// `below_minimum`; an unknown one [`StoreError::NotFound`].
    fn use_weights(
        &self,
        calibration: Option<i64>,
        by: &str,
        note: &str,
        now: i64,
    ) -> Result<WeightsChange>;
    /// The calibration in force (`None`: the shipped weights).
    fn weights_in_force(&self) -> Result<Option<CalibrationRecord>>;
    /// Every change of the weights in force, newest first.
    fn weights_history(&self) -> Result<Vec<WeightsChange>>;
}
