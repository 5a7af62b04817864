//! The SQL behind what admins and reviewers read about the work (schema migration 7 for the
//! invites): one valid invite link per address, pending invites and their revocation,
//! per-annotator progress and the submitted rankings page by page.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

use super::{json_err, role_of};
use crate::repo::{RankingFilter, Result, StoreError};
use crate::types::*;

const PENDING_COLS: &str = "i.id, i.email, i.role, i.created_at, i.expires_at, u.email";

fn pending_row(r: &rusqlite::Row) -> rusqlite::Result<PendingInvite> {
    Ok(PendingInvite {
        id: r.get(0)?,
        email: r.get(1)?,
        role: role_of(r.get(2)?)?,
        created_at: r.get(3)?,
        expires_at: r.get(4)?,
        created_by: r.get(5)?,
    })
}

pub(super) fn create_invite(
    c: &mut Connection,
    token_hash: &str,
    email: &str,
    role: Role,
    created_by: Option<i64>,
    expires_at: i64,
    now: i64,
) -> Result<Option<PendingInvite>> {
    let tx = c.transaction()?;
    let exists: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM users WHERE email = ?1)",
        [email],
        |r| r.get(0),
    )?;
    if exists {
        return Err(StoreError::Conflict(format!(
            "{email} already has an account"
        )));
    }
    // At most one (the unique index `invites_one_open`).
    let earlier: Option<PendingInvite> = tx
        .query_row(
            &format!("SELECT {PENDING_COLS} FROM invites i LEFT JOIN users u ON u.id = i.created_by WHERE i.email = ?1 COLLATE NOCASE AND i.used_at IS NULL AND i.revoked IS NULL"),
            [email],
            pending_row,
        )
        .optional()?;
    tx.execute(
        "UPDATE invites SET revoked = 'replaced', revoked_at = ?2 WHERE email = ?1 COLLATE NOCASE AND used_at IS NULL AND revoked IS NULL",
        params![email, now],
    )?;
    tx.execute(
        "INSERT INTO invites (token_hash, email, role, created_by, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![token_hash, email, role.as_str(), created_by, now, expires_at],
    )?;
    tx.commit()?;
    // An expired link did not work anyway: nothing to warn about.
    Ok(earlier.filter(|p| p.expires_at >= now))
}

pub(super) fn pending_invites(c: &Connection, now: i64) -> Result<Vec<PendingInvite>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {PENDING_COLS} FROM invites i LEFT JOIN users u ON u.id = i.created_by \
         WHERE i.used_at IS NULL AND i.revoked IS NULL AND i.expires_at >= ?1 ORDER BY i.id DESC"
    ))?;
    let v = st
        .query_map([now], pending_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(v)
}

pub(super) fn revoke_invite(c: &mut Connection, id: i64, now: i64) -> Result<PendingInvite> {
    let tx = c.transaction()?;
    let row: Option<(PendingInvite, Option<i64>)> = tx
        .query_row(
            &format!("SELECT {PENDING_COLS}, i.used_at FROM invites i LEFT JOIN users u ON u.id = i.created_by WHERE i.id = ?1"),
            [id],
            |r| Ok((pending_row(r)?, r.get(6)?)),
        )
        .optional()?;
    let Some((inv, used_at)) = row else {
        return Err(StoreError::NotFound("invite"));
    };
    if used_at.is_some() {
        return Err(StoreError::Conflict(format!(
            "the invite for {} has already been accepted; there is nothing to revoke",
            inv.email
        )));
    }
    tx.execute(
        "UPDATE invites SET revoked = 'withdrawn', revoked_at = ?2 WHERE id = ?1 AND revoked IS NULL",
        params![id, now],
    )?;
    tx.commit()?;
    Ok(inv)
}

pub(super) fn annotator_progress(
    c: &Connection,
    with_identity: bool,
) -> Result<Vec<AnnotatorProgress>> {
    let mut assigned: HashMap<i64, Vec<BatchRef>> = HashMap::new();
    {
        let mut st = c.prepare_cached(
            "SELECT a.user_id, b.id, b.name FROM assignments a JOIN batches b ON b.id = a.batch_id ORDER BY b.source DESC, b.id",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                BatchRef {
                    id: r.get(1)?,
                    name: r.get(2)?,
                },
            ))
        })?;
        for row in rows {
            let (u, b) = row?;
            assigned.entry(u).or_default().push(b);
        }
    }
    let mut st = c.prepare_cached(
        "SELECT u.id, u.email, u.name, u.role, \
           COALESCE(SUM(r.status = 'complete' AND r.skipped = 0), 0), \
           COALESCE(SUM(r.status = 'complete' AND r.skipped = 1), 0), \
           COALESCE(SUM(r.status = 'draft'), 0), \
           COALESCE(SUM(r.status = 'complete' AND r.pending IS NOT NULL), 0), \
           MAX(r.updated_at) \
         FROM users u LEFT JOIN responses r ON r.user_id = u.id \
         GROUP BY u.id HAVING u.role = 'annotator' OR COUNT(r.id) > 0 ORDER BY u.id",
    )?;
    let rows = st.query_map([], |r| {
        let id: i64 = r.get(0)?;
        Ok(AnnotatorProgress {
            annotator: pseudonym(id),
            email: Some(r.get(1)?),
            name: Some(r.get(2)?),
            role: role_of(r.get(3)?)?,
            assigned: Vec::new(),
            submitted: r.get(4)?,
            skipped: r.get(5)?,
            in_progress: r.get(6)?,
            pending_edits: r.get(7)?,
            last_activity: r.get(8)?,
        })
        .map(|p| (id, p))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, mut p) = row?;
        p.assigned = assigned.remove(&id).unwrap_or_default();
        out.push(if with_identity { p } else { p.pseudonymised() });
    }
    Ok(out)
}

/// The filter's condition over `responses r` and `questions q` (parameters ?1–?3).
const RANKING_FILTER: &str = "r.status = 'complete' AND (?1 IS NULL OR q.batch_id = ?1) \
     AND (?2 IS NULL OR q.id = ?2) AND (?3 IS NULL OR r.user_id = ?3)";

pub(super) fn submitted_rankings(
    c: &Connection,
    f: &RankingFilter,
    offset: usize,
    limit: usize,
    with_identity: bool,
) -> Result<(usize, Vec<RankingView>)> {
    let total: i64 = c.query_row(
        &format!("SELECT COUNT(*) FROM responses r JOIN questions q ON q.id = r.question_id WHERE {RANKING_FILTER}"),
        params![f.batch, f.question, f.user],
        |r| r.get(0),
    )?;
    type Raw = (RankingView, String);
    let rows: Vec<Raw> = {
        let mut st = c.prepare_cached(&format!(
            "SELECT r.id, r.user_id, u.email, q.batch_id, b.name, q.id, q.text, r.ranking, r.confidence, r.comment, \
               r.skipped, r.confirmed, r.time_ms, r.pending IS NOT NULL, \
               (SELECT COUNT(*) FROM response_history h WHERE h.response_id = r.id), \
               (SELECT COUNT(*) FROM response_history h WHERE h.response_id = r.id AND h.status = 'complete'), \
               COALESCE((SELECT MAX(h.saved_at) FROM response_history h WHERE h.response_id = r.id AND h.status = 'complete'), r.updated_at) \
             FROM responses r JOIN questions q ON q.id = r.question_id JOIN batches b ON b.id = q.batch_id JOIN users u ON u.id = r.user_id \
             WHERE {RANKING_FILTER} ORDER BY b.source DESC, b.id, q.position, r.user_id LIMIT ?4 OFFSET ?5"
        ))?;
        let v = st
            .query_map(
                params![
                    f.batch,
                    f.question,
                    f.user,
                    i64::try_from(limit).unwrap_or(i64::MAX),
                    i64::try_from(offset).unwrap_or(i64::MAX)
                ],
                |r| {
                    let user: i64 = r.get(1)?;
                    let email: String = r.get(2)?;
                    let conf: Option<i64> = r.get(8)?;
                    let time_ms: Option<i64> = r.get(12)?;
                    Ok((
                        RankingView {
                            response_id: r.get(0)?,
                            annotator: pseudonym(user),
                            email: with_identity.then_some(email),
                            batch_id: r.get(3)?,
                            batch: r.get(4)?,
                            question_id: r.get(5)?,
                            question: r.get(6)?,
                            ranking: Vec::new(),
                            confidence: conf.and_then(|c| u8::try_from(c).ok()),
                            comment: r.get(9)?,
                            skipped: r.get(10)?,
                            confirmed_shown_order: r.get(11)?,
                            time_on_task_s: time_ms.map(|t| t as f64 / 1000.0),
                            saves: r.get(14)?,
                            submissions: r.get(15)?,
                            pending_edit: r.get(13)?,
                            submitted_at: r.get(16)?,
                        },
                        r.get(7)?,
                    ))
                },
            )?
            .collect::<rusqlite::Result<_>>()?;
        v
    };
    let mut names: HashMap<i64, HashMap<i64, (String, String)>> = HashMap::new();
    let mut cands = c.prepare_cached(
        "SELECT id, name, kind || '::' || ident FROM candidates WHERE question_id = ?1",
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for (mut v, ranking) in rows {
        if let std::collections::hash_map::Entry::Vacant(slot) = names.entry(v.question_id) {
            let m = cands
                .query_map([v.question_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
                .collect::<rusqlite::Result<HashMap<i64, (String, String)>>>()?;
            slot.insert(m);
        }
        let ranking: Vec<RankEntry> = serde_json::from_str(&ranking).map_err(json_err)?;
        let q = names.get(&v.question_id);
        v.ranking = ranking
            .iter()
            .map(|e| {
                let (name, key) = q
                    .and_then(|m| m.get(&e.candidate))
                    .cloned()
                    .unwrap_or_else(|| (format!("candidate {}", e.candidate), String::new()));
                NamedRank {
                    name,
                    key,
                    rank: e.rank,
                    unsure: e.unsure,
                }
            })
            .collect();
        out.push(v);
    }
    Ok((usize::try_from(total).unwrap_or(0), out))
}
