//! What admins and reviewers read about the work, and the invites admins manage.
//!
//! | route | who |
//! |---|---|
//! | `GET /api/review/progress`, `GET /api/review/rankings` | reviewer (pseudonyms only), admin (e-mails and names too) |
//! | `GET /api/admin/invites`, `DELETE /api/admin/invites/{id}` | admin |
//!
//! A reviewer's reply never holds an e-mail, a name or a user id: annotators appear as their
//! pseudonym (`serenqa_shared::annotate::pseudonym`, the export's label), which is also how a
//! reviewer filters the rankings by annotator. `backend/server/tests/annotate.rs` checks every
//! rule for every kind of caller.

use axum::extract::Path;
use axum::response::Response as HttpResponse;
use axum::Json;
use serde::Deserialize;
use serenqa_shared::annotate::*;
use serenqa_store::RankingFilter;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::Q;
use super::session::{db, Authed};
use super::AppState;

const REVIEW: &[Role] = &[Role::Reviewer];
const ADMIN: &[Role] = &[Role::Admin];

/// Rankings per page when the query does not say.
const DEFAULT_PAGE: usize = 20;

/// What to do when a page is past the reply budget.
const PAGE_TOO_LARGE: &str = "ask for fewer rankings per page (`limit`)";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(progress))
        .routes(routes!(rankings))
        .routes(routes!(pending_invites))
        .routes(routes!(revoke_invite))
}

#[utoipa::path(get, path = "/review/progress", tag = "review", description = "Per-annotator progress: submitted, skipped, in-progress counts, unsubmitted edits, assigned batches and last save. Reviewers see pseudonyms only; admins also e-mails and names.", responses((status = 200, description = "`[AnnotatorProgress]`"), (status = 403, description = "Not a reviewer or admin")))]
pub(crate) async fn progress(a: Authed) -> Result<HttpResponse, HttpError> {
    a.require(REVIEW)?;
    let ident = a.role() == Role::Admin;
    let rows = db(&a.svc, move |r| r.annotator_progress(ident)).await?;
    super::reply::json(
        rows,
        "export the responses from the server with `serenqa annotate export`",
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct RankingsQuery {
    batch: Option<i64>,
    question: Option<i64>,
    /// A pseudonym (`A12`).
    annotator: Option<String>,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

#[utoipa::path(get, path = "/review/rankings", tag = "review", description = "Submitted rankings one page at a time (batch, question, annotator order): each ranking's order with candidate names, unsure marks, confidence, comment, time on task, saves and submissions. Reviewers see pseudonyms only; admins also e-mails.", params(("batch" = Option<i64>, Query, description = "Only this batch"), ("question" = Option<i64>, Query, description = "Only this question"), ("annotator" = Option<String>, Query, description = "Only this annotator, by pseudonym (`A12`)"), ("offset" = Option<usize>, Query, description = "Rankings to skip"), ("limit" = Option<usize>, Query, description = "Rankings per page (default 20, at most 100)")), responses((status = 200, description = "`RankingsPage`"), (status = 400, description = "Not a pseudonym, or limit outside 1–100"), (status = 403, description = "Not a reviewer or admin")))]
pub(crate) async fn rankings(a: Authed, Q(q): Q<RankingsQuery>) -> Result<HttpResponse, HttpError> {
    a.require(REVIEW)?;
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=RANKINGS_PAGE_MAX).contains(&limit) {
        return Err(HttpError::bad_request(
            "bad_limit",
            format!("limit must lie in 1–{RANKINGS_PAGE_MAX}, not {limit}"),
        ));
    }
    let user = match q.annotator.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(p) => Some(parse_pseudonym(p).ok_or_else(|| {
            HttpError::bad_request(
                "bad_annotator",
                format!("{p:?} is not an annotator's pseudonym (such as A12)"),
            )
        })?),
    };
    let filter = RankingFilter {
        batch: q.batch,
        question: q.question,
        user,
    };
    let ident = a.role() == Role::Admin;
    let offset = q.offset;
    let (total, items) = db(&a.svc, move |r| {
        r.submitted_rankings(&filter, offset, limit, ident)
    })
    .await?;
    let page = RankingsPage {
        total,
        offset,
        limit,
        items,
    };
    super::reply::json(page, PAGE_TOO_LARGE).await
}

#[utoipa::path(get, path = "/admin/invites", tag = "admin", description = "Invites that can still be accepted (unused, not revoked, not expired), newest first (admins). Their links cannot be shown again: only a digest of each token is stored.", responses((status = 200, description = "`[PendingInvite]`"), (status = 403, description = "Not an admin")))]
pub(crate) async fn pending_invites(a: Authed) -> Result<Json<Vec<PendingInvite>>, HttpError> {
    a.require(ADMIN)?;
    let now = serenqa_store::now();
    Ok(Json(db(&a.svc, move |r| r.pending_invites(now)).await?))
}

#[utoipa::path(delete, path = "/admin/invites/{id}", tag = "admin", description = "Revokes an invite: its link stops working (accepting it answers 410 `invite_revoked`). Revoking it again changes nothing (admins).", params(("id" = i64, Path, description = "Invite id (from `GET /api/admin/invites`)")), responses((status = 200, description = "The revoked `PendingInvite`"), (status = 403, description = "Not an admin"), (status = 404, description = "No such invite"), (status = 409, description = "Already accepted")))]
pub(crate) async fn revoke_invite(
    a: Authed,
    Path(id): Path<i64>,
) -> Result<Json<PendingInvite>, HttpError> {
    a.require(ADMIN)?;
    let now = serenqa_store::now();
    db(&a.svc, move |r| r.revoke_invite(id, now))
        .await
        .map(Json)
        .map_err(|e| {
            if e.code == "not_found" {
                HttpError::not_found("unknown_invite", format!("no invite {id}"))
            } else {
                e
            }
        })
}
