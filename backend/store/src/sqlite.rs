//! SQLite implementation of [`Repo`]: WAL journal (readers never block the writer, a killed
//! process loses no committed transaction), `synchronous = FULL` (every commit is fsynced
//! before it returns, so a write the server acknowledged survives an OS crash or power loss
//! too, not only a killed process), foreign keys enforced, and a busy timeout. Schema changes
//! are numbered migrations recorded in `PRAGMA user_version`.
//!
//! Saving a response is one transaction that checks, in order: the submission id (a retry of
//! a stored save returns its outcome again; the id used by another user or on another question
//! is a conflict), then the base revision (a save based on anything but the stored revision is
//! [`StoreError::Stale`] with the stored response), then stores and bumps the revision. A draft
//! save of a submitted response is kept in the `pending` column beside the submission.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::repo::*;
use crate::types::*;

mod oversight;

/// Numbered schema migrations; index + 1 is the `user_version` after applying it.
const MIGRATIONS: &[&str] = &[
    // 1: accounts, questions, responses, results.
    r#"
    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        name TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL CHECK (role IN ('admin', 'annotator', 'reviewer')),
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    );
    CREATE TABLE invites (
        token_hash TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('admin', 'annotator', 'reviewer')),
        created_by INTEGER REFERENCES users(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        used_by INTEGER REFERENCES users(id)
    );
    CREATE TABLE batches (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL CHECK (source IN ('serenqa', 'benchmark')),
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        UNIQUE (source, key)
    );
    CREATE TABLE questions (
        id INTEGER PRIMARY KEY,
        batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        qid INTEGER NOT NULL,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        category TEXT NOT NULL,
        pattern TEXT,
        resources TEXT NOT NULL,
        UNIQUE (source, qid)
    );
    CREATE INDEX questions_batch ON questions(batch_id, position);
    CREATE TABLE candidates (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        ident TEXT NOT NULL,
        link TEXT,
        llm_rank INTEGER,
        UNIQUE (question_id, position)
    );
    CREATE TABLE responses (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        question_id INTEGER NOT NULL REFERENCES questions(id),
        status TEXT NOT NULL CHECK (status IN ('draft', 'complete')),
        ranking TEXT NOT NULL,
        confidence INTEGER CHECK (confidence BETWEEN 1 AND 5),
        comment TEXT NOT NULL,
        revision INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (user_id, question_id)
    );
    CREATE INDEX responses_question ON responses(question_id);
    -- Every accepted submission, once (idempotency and the audit trail).
    CREATE TABLE submissions (
        id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        response_id INTEGER NOT NULL REFERENCES responses(id),
        revision INTEGER NOT NULL,
        received_at INTEGER NOT NULL
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        imported_at INTEGER NOT NULL,
        manifest TEXT NOT NULL,
        aggregate TEXT NOT NULL
    );
    CREATE TABLE calibrations (
        id INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL,
        alpha REAL NOT NULL, beta REAL NOT NULL, gamma REAL NOT NULL,
        agreement REAL NOT NULL,
        questions INTEGER NOT NULL,
        provenance TEXT NOT NULL
    );
    "#,
    // 2: unsubmitted edits of a submitted response (JSON `PendingEdit`, NULL when none).
    r#"
    ALTER TABLE responses ADD COLUMN pending TEXT;
    "#,
    // 3: candidate ids in name order within each question (a data step, `blind_candidate_ids`),
    // so an id no longer reveals the questionnaire's (LLM) order.
    "SELECT 1;",
    // 4: batch assignment with an overlap target, admin-issued password resets.
    r#"
    CREATE TABLE assignments (
        batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        PRIMARY KEY (batch_id, user_id)
    );
    CREATE TABLE batch_overlap (
        batch_id INTEGER PRIMARY KEY REFERENCES batches(id) ON DELETE CASCADE,
        overlap INTEGER NOT NULL CHECK (overlap BETWEEN 1 AND 1000)
    );
    CREATE TABLE password_resets (
        token_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_by INTEGER REFERENCES users(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
    );
    "#,
    // 5: clinicians' shortlists (one row per kept candidate; the item as JSON `ShortlistItem`).
    r#"
    CREATE TABLE shortlist (
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        query_key TEXT NOT NULL,
        candidate_key TEXT NOT NULL,
        item TEXT NOT NULL,
        added_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, query_key, candidate_key)
    );
    "#,
    // 6: annotation integrity. Responses record the order first shown, time on task, the
    // "shown order is my ranking" confirmation and whether the submission is a skip (every
    // candidate unsure: no coverage); every save is kept in `response_history` (seeded with
    // each existing response as it stands, a data step `integrity_data`). Calibrations record
    // their annotators; which weights are in force is an explicit, dated choice
    // (`weights_history`, newest row wins, `calibration_id` NULL = the shipped weights),
    // seeded with the newest calibration, which was in force by the old rule.
    r#"
    ALTER TABLE responses ADD COLUMN presented TEXT;
    ALTER TABLE responses ADD COLUMN time_ms INTEGER;
    ALTER TABLE responses ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE responses ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE response_history (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        revision INTEGER NOT NULL,
        submission_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('draft', 'complete')),
        ranking TEXT NOT NULL,
        confidence INTEGER,
        comment TEXT NOT NULL,
        time_ms INTEGER,
        confirmed INTEGER NOT NULL DEFAULT 0,
        saved_at INTEGER NOT NULL,
        PRIMARY KEY (response_id, revision)
    );
    INSERT INTO response_history (response_id, revision, submission_id, status, ranking, confidence, comment, time_ms, confirmed, saved_at)
        SELECT r.id, r.revision,
               COALESCE((SELECT s.id FROM submissions s WHERE s.response_id = r.id AND s.revision = r.revision), ''),
               r.status, r.ranking, r.confidence, r.comment, NULL, 0, r.updated_at
        FROM responses r;
    ALTER TABLE calibrations ADD COLUMN annotators INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE weights_history (
        id INTEGER PRIMARY KEY,
        calibration_id INTEGER REFERENCES calibrations(id),
        set_at INTEGER NOT NULL,
        set_by TEXT NOT NULL,
        note TEXT NOT NULL
    );
    INSERT INTO weights_history (calibration_id, set_at, set_by, note)
        SELECT id, created_at, 'migration 6', 'in force before putting weights in force needed a confirmation'
        FROM calibrations ORDER BY created_at DESC, id DESC LIMIT 1;
    "#,
    // 7: invites get an id (to list and revoke them) and a revocation (`replaced` by a newer
    // link for the same address, or `withdrawn` by an admin). One valid link per address: of
    // several unused links for one address the newest stays, the others are marked replaced,
    // and a partial unique index keeps it so.
    r#"
    CREATE TABLE invites_v7 (
        id INTEGER PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('admin', 'annotator', 'reviewer')),
        created_by INTEGER REFERENCES users(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        used_by INTEGER REFERENCES users(id),
        revoked TEXT CHECK (revoked IN ('replaced', 'withdrawn')),
        revoked_at INTEGER
    );
    INSERT INTO invites_v7 (token_hash, email, role, created_by, created_at, expires_at, used_at, used_by)
        SELECT token_hash, email, role, created_by, created_at, expires_at, used_at, used_by
        FROM invites ORDER BY created_at, rowid;
    DROP TABLE invites;
    ALTER TABLE invites_v7 RENAME TO invites;
    UPDATE invites SET revoked = 'replaced', revoked_at = CAST(strftime('%s', 'now') AS INTEGER)
        WHERE used_at IS NULL AND EXISTS (
            SELECT 1 FROM invites n WHERE n.email = invites.email COLLATE NOCASE AND n.used_at IS NULL AND n.id > invites.id);
    CREATE UNIQUE INDEX invites_one_open ON invites (email COLLATE NOCASE) WHERE used_at IS NULL AND revoked IS NULL;
    "#,
];

/// Migration 6's data step: marks existing submissions that mark every candidate unsure as
/// skips (their JSON ranking is read here, not in SQL).
fn integrity_data(tx: &rusqlite::Transaction) -> Result<()> {
    let rows: Vec<(i64, String)> = {
        let mut st = tx.prepare("SELECT id, ranking FROM responses WHERE status = 'complete'")?;
        let v = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        v
    };
    for (id, ranking) in rows {
        let ranking: Vec<RankEntry> = serde_json::from_str(&ranking).map_err(json_err)?;
        if is_skip(&ranking) {
            tx.execute("UPDATE responses SET skipped = 1 WHERE id = ?1", [id])?;
        }
    }
    Ok(())
}

/// Renumbers each question's candidates so that their ids ascend in name order (name, kind,
/// identifier, then position) instead of the questionnaire order they were inserted in: the
/// ids an annotator sees must not reveal the LLM ranking. A question keeps its own set of ids;
/// stored rankings (submitted and pending) are rewritten with the same mapping.
fn blind_candidate_ids(tx: &rusqlite::Transaction) -> Result<()> {
    let questions: Vec<i64> = tx
        .prepare("SELECT id FROM questions")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for q in questions {
        let mut rows: Vec<(i64, i64, String, String, String)> = tx
            .prepare_cached(
                "SELECT id, position, name, kind, ident FROM candidates WHERE question_id = ?1",
            )?
            .query_map([q], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
        ids.sort_unstable();
        rows.sort_by(|a, b| (&a.2, &a.3, &a.4, a.1).cmp(&(&b.2, &b.3, &b.4, b.1)));
        let map: std::collections::HashMap<i64, i64> =
            rows.iter().zip(&ids).map(|(r, &new)| (r.0, new)).collect();
        if map.iter().all(|(a, b)| a == b) {
            continue;
        }
        // Via negative ids, so no step collides with the primary key.
        tx.execute("UPDATE candidates SET id = -id WHERE question_id = ?1", [q])?;
        for (old, new) in &map {
            tx.execute(
                "UPDATE candidates SET id = ?1 WHERE id = ?2",
                params![new, -old],
            )?;
        }
        let resp: Vec<(i64, String, Option<String>)> = tx
            .prepare_cached("SELECT id, ranking, pending FROM responses WHERE question_id = ?1")?
            .query_map([q], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let remap = |v: &mut Vec<RankEntry>| {
            v.iter_mut()
                .for_each(|e| e.candidate = map.get(&e.candidate).copied().unwrap_or(e.candidate));
        };
        for (rid, ranking, pending) in resp {
            let mut r: Vec<RankEntry> = serde_json::from_str(&ranking).map_err(json_err)?;
            remap(&mut r);
            let pending = match pending {
                Some(p) => {
                    let mut e: PendingEdit = serde_json::from_str(&p).map_err(json_err)?;
                    remap(&mut e.ranking);
                    Some(serde_json::to_string(&e).map_err(json_err)?)
                }
                None => None,
            };
            tx.execute(
                "UPDATE responses SET ranking = ?1, pending = ?2 WHERE id = ?3",
                params![serde_json::to_string(&r).map_err(json_err)?, pending, rid],
            )?;
        }
    }
    Ok(())
}

pub struct SqliteRepo {
    conn: Mutex<Connection>,
}

fn json_err(e: serde_json::Error) -> StoreError {
    StoreError::Db(format!("stored JSON: {e}"))
}

impl SqliteRepo {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let conn = Connection::open(path)
            .map_err(|e| StoreError::Db(format!("{}: {e}", path.display())))?;
        Self::init(conn)
    }

    /// A private in-memory database (tests).
    pub fn in_memory() -> Result<Self> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> Result<Self> {
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version as usize > MIGRATIONS.len() {
            return Err(StoreError::Db(format!(
                "database schema version {version} is newer than this program ({})",
                MIGRATIONS.len()
            )));
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = conn.transaction()?;
            tx.execute_batch(m)?;
            if i + 1 == 3 {
                blind_candidate_ids(&tx)?;
            }
            if i + 1 == 6 {
                integrity_data(&tx)?;
            }
            tx.pragma_update(None, "user_version", (i + 1) as i64)?;
            tx.commit()?;
        }
        Ok(SqliteRepo {
            conn: Mutex::new(conn),
        })
    }

    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .c()
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    fn c(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection usable (SQLite rolls back an
        // unfinished transaction when it is dropped), so a poisoned lock is recovered.
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn role_of(s: String) -> rusqlite::Result<Role> {
    Role::parse(&s)
        .ok_or_else(|| rusqlite::Error::InvalidColumnType(0, s, rusqlite::types::Type::Text))
}

fn user_row(r: &Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        email: r.get(1)?,
        name: r.get(2)?,
        role: role_of(r.get(3)?)?,
        created_at: r.get(4)?,
    })
}

const USER_COLS: &str = "id, email, name, role, created_at";
const USER_COLS_U: &str = "u.id, u.email, u.name, u.role, u.created_at";

fn status_of(s: &str) -> Status {
    if s == "complete" {
        Status::Complete
    } else {
        Status::Draft
    }
}

fn source_of(s: &str) -> Source {
    Source::parse(s).unwrap_or(Source::Benchmark)
}

const RESPONSE_COLS: &str =
    "id, user_id, question_id, status, ranking, confidence, comment, revision, updated_at, pending, presented, time_ms, confirmed";

type ResponseRow = (Response, String, Option<String>, Option<String>);

fn response_row(r: &Row) -> rusqlite::Result<ResponseRow> {
    let status: String = r.get(3)?;
    let ranking: String = r.get(4)?;
    let conf: Option<i64> = r.get(5)?;
    let time_ms: Option<i64> = r.get(11)?;
    Ok((
        Response {
            id: r.get(0)?,
            user_id: r.get(1)?,
            question_id: r.get(2)?,
            status: status_of(&status),
            ranking: Vec::new(),
            confidence: conf.map(|c| c as u8),
            comment: r.get(6)?,
            revision: r.get(7)?,
            updated_at: r.get(8)?,
            pending: None,
            presented: Vec::new(),
            time_ms: time_ms.and_then(|t| u64::try_from(t).ok()),
            confirmed_shown_order: r.get(12)?,
        },
        ranking,
        r.get(9)?,
        r.get(10)?,
    ))
}

fn finish_response((mut resp, ranking, pending, presented): ResponseRow) -> Result<Response> {
    resp.ranking = serde_json::from_str(&ranking).map_err(json_err)?;
    resp.presented = presented
        .map(|p| serde_json::from_str(&p))
        .transpose()
        .map_err(json_err)?
        .unwrap_or_default();
    resp.pending = pending
        .map(|p| serde_json::from_str(&p))
        .transpose()
        .map_err(json_err)?;
    Ok(resp)
}

fn load_question(c: &Connection, id: i64) -> Result<Option<Question>> {
    let q = c
        .query_row(
            "SELECT id, batch_id, source, qid, position, text, category, pattern, resources FROM questions WHERE id = ?1",
            [id],
            |r| {
                let source: String = r.get(2)?;
                let resources: String = r.get(8)?;
                Ok((
                    Question {
                        id: r.get(0)?,
                        batch_id: r.get(1)?,
                        source: source_of(&source),
                        qid: r.get(3)?,
                        position: r.get(4)?,
                        text: r.get(5)?,
                        category: r.get(6)?,
                        pattern: r.get(7)?,
                        resources: Vec::new(),
                        candidates: Vec::new(),
                    },
                    resources,
                ))
            },
        )
        .optional()?;
    let Some((mut q, resources)) = q else {
        return Ok(None);
    };
    q.resources = serde_json::from_str(&resources).map_err(json_err)?;
    let mut st = c.prepare_cached("SELECT id, position, name, kind, ident, link, llm_rank FROM candidates WHERE question_id = ?1 ORDER BY position")?;
    q.candidates = st
        .query_map([id], |r| {
            let kind: String = r.get(3)?;
            let ident: String = r.get(4)?;
            Ok(Candidate {
                id: r.get(0)?,
                position: r.get(1)?,
                name: r.get(2)?,
                key: format!("{kind}::{ident}"),
                kind,
                ident,
                link: r.get(5)?,
                llm_rank: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(q))
}

fn batch_row(r: &Row) -> rusqlite::Result<Batch> {
    let source: String = r.get(1)?;
    Ok(Batch {
        id: r.get(0)?,
        source: source_of(&source),
        name: r.get(2)?,
        questions: r.get(3)?,
    })
}

const BATCH_SELECT: &str = "SELECT b.id, b.source, b.name, (SELECT COUNT(*) FROM questions q WHERE q.batch_id = b.id) FROM batches b";

impl Repo for SqliteRepo {
    fn create_user(
        &self,
        email: &str,
        name: &str,
        role: Role,
        password_hash: &str,
    ) -> Result<User> {
        let c = self.c();
        let now = crate::now();
        match c.execute(
            "INSERT INTO users (email, name, role, password_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![email, name, role.as_str(), password_hash, now],
        ) {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
                return Err(StoreError::Conflict(format!("a user with email {email} exists")))
            }
            Err(e) => return Err(e.into()),
        }
        Ok(User {
            id: c.last_insert_rowid(),
            email: email.to_string(),
            name: name.to_string(),
            role,
            created_at: now,
        })
    }

    fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>> {
        let c = self.c();
        Ok(c.query_row(
            &format!("SELECT {USER_COLS}, password_hash FROM users WHERE email = ?1"),
            [email],
            |r| Ok((user_row(r)?, r.get(5)?)),
        )
        .optional()?)
    }

    fn user(&self, id: i64) -> Result<Option<User>> {
        Ok(self
            .c()
            .query_row(
                &format!("SELECT {USER_COLS} FROM users WHERE id = ?1"),
                [id],
                user_row,
            )
            .optional()?)
    }

    fn users(&self) -> Result<Vec<User>> {
        let c = self.c();
        let mut st = c.prepare(&format!("SELECT {USER_COLS} FROM users ORDER BY id"))?;
        let v = st
            .query_map([], user_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(v)
    }

    fn create_invite(
        &self,
        token_hash: &str,
        email: &str,
        role: Role,
        created_by: Option<i64>,
        expires_at: i64,
    ) -> Result<Option<PendingInvite>> {
        oversight::create_invite(
            &mut self.c(),
            token_hash,
            email,
            role,
            created_by,
            expires_at,
            crate::now(),
        )
    }

    fn invite(&self, token_hash: &str) -> Result<Option<Invite>> {
        Ok(self
            .c()
            .query_row("SELECT email, role, created_at, expires_at, used_at, revoked FROM invites WHERE token_hash = ?1", [token_hash], |r| {
                Ok(Invite { email: r.get(0)?, role: role_of(r.get(1)?)?, created_at: r.get(2)?, expires_at: r.get(3)?, used_at: r.get(4)?, revoked: r.get(5)? })
            })
            .optional()?)
    }

    fn pending_invites(&self, now: i64) -> Result<Vec<PendingInvite>> {
        oversight::pending_invites(&self.c(), now)
    }

    fn revoke_invite(&self, id: i64, now: i64) -> Result<PendingInvite> {
        oversight::revoke_invite(&mut self.c(), id, now)
    }

    fn annotator_progress(&self, with_identity: bool) -> Result<Vec<AnnotatorProgress>> {
        oversight::annotator_progress(&self.c(), with_identity)
    }

    fn submitted_rankings(
        &self,
        filter: &RankingFilter,
        offset: usize,
        limit: usize,
        with_identity: bool,
    ) -> Result<(usize, Vec<RankingView>)> {
        oversight::submitted_rankings(&self.c(), filter, offset, limit, with_identity)
    }

    fn accept_invite(
        &self,
        token_hash: &str,
        name: &str,
        password_hash: &str,
        now: i64,
    ) -> Result<User> {
        let mut c = self.c();
        let tx = c.transaction()?;
        let inv: Option<Invite> = tx
            .query_row(
                "SELECT email, role, created_at, expires_at, used_at, revoked FROM invites WHERE token_hash = ?1",
                [token_hash],
                |r| Ok(Invite { email: r.get(0)?, role: role_of(r.get(1)?)?, created_at: r.get(2)?, expires_at: r.get(3)?, used_at: r.get(4)?, revoked: r.get(5)? }),
            )
            .optional()?;
        let Some(inv) = inv else {
            return Err(StoreError::NotFound("invite"));
        };
        // Used, revoked (replaced or withdrawn) or expired: one reason, in words.
        if let Some((_, message)) = invite_refusal(&inv, now) {
            return Err(StoreError::Conflict(message));
        }
        let (email, role) = (inv.email, inv.role);
        let exists: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM users WHERE email = ?1)",
            [&email],
            |r| r.get(0),
        )?;
        if exists {
            return Err(StoreError::Conflict(format!(
                "a user with email {email} exists"
            )));
        }
        tx.execute(
            "INSERT INTO users (email, name, role, password_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![email, name, role.as_str(), password_hash, now],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "UPDATE invites SET used_at = ?1, used_by = ?2 WHERE token_hash = ?3",
            params![now, id, token_hash],
        )?;
        tx.commit()?;
        Ok(User {
            id,
            email,
            name: name.to_string(),
            role,
            created_at: now,
        })
    }

    fn create_session(
        &self,
        token_hash: &str,
        user_id: i64,
        csrf: &str,
        expires_at: i64,
    ) -> Result<()> {
        let c = self.c();
        // Expired sessions are purged on the way (cheap: indexed by primary key scan of few rows).
        c.execute("DELETE FROM sessions WHERE expires_at < ?1", [crate::now()])?;
        c.execute(
            "INSERT INTO sessions (token_hash, user_id, csrf, expires_at) VALUES (?1, ?2, ?3, ?4)",
            params![token_hash, user_id, csrf, expires_at],
        )?;
        Ok(())
    }

    fn session(&self, token_hash: &str, now: i64) -> Result<Option<Session>> {
        Ok(self
            .c()
            .query_row(
                "SELECT u.id, u.email, u.name, u.role, u.created_at, s.csrf, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id \
                 WHERE s.token_hash = ?1 AND s.expires_at >= ?2",
                params![token_hash, now],
                |r| Ok(Session { user: user_row(r)?, csrf: r.get(5)?, expires_at: r.get(6)? }),
            )
            .optional()?)
    }

    fn delete_session(&self, token_hash: &str) -> Result<()> {
        self.c()
            .execute("DELETE FROM sessions WHERE token_hash = ?1", [token_hash])?;
        Ok(())
    }

    fn shortlist(&self, user_id: i64) -> Result<Vec<ShortlistItem>> {
        let c = self.c();
        let rows: Vec<String> = c
            .prepare_cached(
                "SELECT item FROM shortlist WHERE user_id = ?1 ORDER BY added_at, rowid",
            )?
            .query_map([user_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        rows.iter()
            .map(|j| serde_json::from_str(j).map_err(json_err))
            .collect()
    }

    fn shortlist_put(&self, user_id: i64, item: &ShortlistItem, cap: usize) -> Result<bool> {
        let mut c = self.c();
        let tx = c.transaction()?;
        let (qk, ck) = (item.query.key(), item.candidate.key());
        let exists: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM shortlist WHERE user_id = ?1 AND query_key = ?2 AND candidate_key = ?3)", params![user_id, qk, ck], |r| r.get(0))?;
        let json = serde_json::to_string(item).map_err(json_err)?;
        if exists {
            // Kept again: new scores, the original place in the list.
            tx.execute("UPDATE shortlist SET item = ?4 WHERE user_id = ?1 AND query_key = ?2 AND candidate_key = ?3", params![user_id, qk, ck, json])?;
        } else {
            let n: i64 = tx.query_row(
                "SELECT COUNT(*) FROM shortlist WHERE user_id = ?1",
                [user_id],
                |r| r.get(0),
            )?;
            if n as usize >= cap {
                return Err(StoreError::Full(format!("the shortlist already holds {n} items, the most allowed ({cap}); remove some first")));
            }
            tx.execute("INSERT INTO shortlist (user_id, query_key, candidate_key, item, added_at) VALUES (?1, ?2, ?3, ?4, ?5)", params![user_id, qk, ck, json, item.added_at])?;
        }
        tx.commit()?;
        Ok(!exists)
    }

    fn shortlist_remove(&self, user_id: i64, query_key: &str, candidate_key: &str) -> Result<bool> {
        let n = self.c().execute(
            "DELETE FROM shortlist WHERE user_id = ?1 AND query_key = ?2 AND candidate_key = ?3",
            params![user_id, query_key, candidate_key],
        )?;
        Ok(n > 0)
    }

    fn create_reset(
        &self,
        token_hash: &str,
        user_id: i64,
        created_by: Option<i64>,
        expires_at: i64,
    ) -> Result<()> {
        let c = self.c();
        let exists: bool = c.query_row(
            "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?1)",
            [user_id],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(StoreError::NotFound("user"));
        }
        c.execute(
            "INSERT INTO password_resets (token_hash, user_id, created_by, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![token_hash, user_id, created_by, crate::now(), expires_at],
        )?;
        Ok(())
    }

    fn reset_user(&self, token_hash: &str, now: i64) -> Result<Option<User>> {
        Ok(self
            .c()
            .query_row(
                &format!("SELECT {} FROM users u JOIN password_resets p ON p.user_id = u.id WHERE p.token_hash = ?1 AND p.used_at IS NULL AND p.expires_at >= ?2", USER_COLS_U),
                params![token_hash, now],
                user_row,
            )
            .optional()?)
    }

    fn use_reset(&self, token_hash: &str, password_hash: &str, now: i64) -> Result<User> {
        let mut c = self.c();
        let tx = c.transaction()?;
        let row: Option<(i64, i64, Option<i64>)> = tx
            .query_row(
                "SELECT user_id, expires_at, used_at FROM password_resets WHERE token_hash = ?1",
                [token_hash],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((uid, expires_at, used_at)) = row else {
            return Err(StoreError::NotFound("reset link"));
        };
        if used_at.is_some() {
            return Err(StoreError::Conflict(
                "this reset link has already been used".into(),
            ));
        }
        if expires_at < now {
            return Err(StoreError::Conflict("this reset link has expired".into()));
        }
        tx.execute(
            "UPDATE users SET password_hash = ?1 WHERE id = ?2",
            params![password_hash, uid],
        )?;
        tx.execute(
            "UPDATE password_resets SET used_at = ?1 WHERE token_hash = ?2",
            params![now, token_hash],
        )?;
        tx.execute("DELETE FROM sessions WHERE user_id = ?1", [uid])?;
        let user = tx.query_row(
            &format!("SELECT {USER_COLS} FROM users WHERE id = ?1"),
            [uid],
            user_row,
        )?;
        tx.commit()?;
        Ok(user)
    }

    fn set_assignment(
        &self,
        batch_id: i64,
        annotators: &[i64],
        overlap: Option<i64>,
    ) -> Result<()> {
        if let Some(k) = overlap {
            if !(1..=1000).contains(&k) {
                return Err(StoreError::Invalid(format!(
                    "the overlap target must lie in 1–1000, not {k}"
                )));
            }
        }
        let mut c = self.c();
        let tx = c.transaction()?;
        let exists: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM batches WHERE id = ?1)",
            [batch_id],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(StoreError::NotFound("batch"));
        }
        for &u in annotators {
            let role: Option<String> = tx
                .query_row("SELECT role FROM users WHERE id = ?1", [u], |r| r.get(0))
                .optional()?;
            match role.as_deref() {
                Some("annotator") => {}
                Some(r) => {
                    return Err(StoreError::Invalid(format!(
                        "user {u} is a {r}, not an annotator"
                    )))
                }
                None => return Err(StoreError::Invalid(format!("no user {u}"))),
            }
        }
        tx.execute("DELETE FROM assignments WHERE batch_id = ?1", [batch_id])?;
        for &u in annotators {
            tx.execute(
                "INSERT OR IGNORE INTO assignments (batch_id, user_id) VALUES (?1, ?2)",
                params![batch_id, u],
            )?;
        }
        match overlap {
            Some(k) => tx.execute("INSERT INTO batch_overlap (batch_id, overlap) VALUES (?1, ?2) ON CONFLICT (batch_id) DO UPDATE SET overlap = excluded.overlap", params![batch_id, k])?,
            None => tx.execute("DELETE FROM batch_overlap WHERE batch_id = ?1", [batch_id])?,
        };
        tx.commit()?;
        Ok(())
    }

    fn assignments(&self) -> Result<Vec<BatchAssignment>> {
        let batches = self.batches()?;
        let c = self.c();
        let mut out = Vec::with_capacity(batches.len());
        for batch in batches {
            let overlap: Option<i64> = c
                .query_row(
                    "SELECT overlap FROM batch_overlap WHERE batch_id = ?1",
                    [batch.id],
                    |r| r.get(0),
                )
                .optional()?;
            let annotators: Vec<i64> = c
                .prepare_cached(
                    "SELECT user_id FROM assignments WHERE batch_id = ?1 ORDER BY user_id",
                )?
                .query_map([batch.id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let coverage: Vec<i64> = c
                .prepare_cached(
                    "SELECT (SELECT COUNT(*) FROM responses r WHERE r.question_id = q.id AND r.status = 'complete' AND r.skipped = 0) FROM questions q WHERE q.batch_id = ?1 ORDER BY q.position",
                )?
                .query_map([batch.id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let k = overlap.unwrap_or(1);
            let covered = coverage.iter().filter(|&&n| n >= k).count() as i64;
            out.push(BatchAssignment {
                batch,
                overlap,
                annotators,
                coverage,
                covered,
            });
        }
        Ok(out)
    }

    fn may_annotate(&self, batch_id: i64, user_id: i64) -> Result<bool> {
        Ok(self.c().query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM assignments WHERE batch_id = ?1) OR EXISTS (SELECT 1 FROM assignments WHERE batch_id = ?1 AND user_id = ?2)",
            params![batch_id, user_id],
            |r| r.get(0),
        )?)
    }

    fn import_batches(&self, batches: &[NewBatch]) -> Result<ImportReport> {
        let mut c = self.c();
        let tx = c.transaction()?;
        let mut rep = ImportReport {
            batches: batches.len(),
            ..Default::default()
        };
        for b in batches {
            tx.execute(
                "INSERT INTO batches (source, key, name) VALUES (?1, ?2, ?3) ON CONFLICT (source, key) DO UPDATE SET name = excluded.name",
                params![b.source.as_str(), b.key, b.name],
            )?;
            let bid: i64 = tx.query_row(
                "SELECT id FROM batches WHERE source = ?1 AND key = ?2",
                params![b.source.as_str(), b.key],
                |r| r.get(0),
            )?;
            let mut pos: i64 = tx.query_row(
                "SELECT COALESCE(MAX(position), 0) FROM questions WHERE batch_id = ?1",
                [bid],
                |r| r.get(0),
            )?;
            for q in &b.questions {
                let exists: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM questions WHERE source = ?1 AND qid = ?2)",
                    params![b.source.as_str(), q.qid],
                    |r| r.get(0),
                )?;
                if exists {
                    rep.questions_skipped += 1;
                    continue;
                }
                pos += 1;
                let resources = serde_json::to_string(&q.resources).map_err(json_err)?;
                tx.execute(
                    "INSERT INTO questions (batch_id, source, qid, position, text, category, pattern, resources) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![bid, b.source.as_str(), q.qid, pos, q.text, q.category, q.pattern, resources],
                )?;
                let qid = tx.last_insert_rowid();
                // Inserted in name order (ids ascend by name), `position` keeps the source
                // order: an annotator sees ids, and they must not reveal the LLM order.
                let mut order: Vec<(usize, &NewCandidate)> =
                    q.candidates.iter().enumerate().collect();
                order.sort_by(|(i, a), (j, b)| {
                    (&a.name, &a.kind, &a.ident, i).cmp(&(&b.name, &b.kind, &b.ident, j))
                });
                for (i, cand) in order {
                    tx.execute(
                        "INSERT INTO candidates (question_id, position, name, kind, ident, link, llm_rank) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        params![qid, i as i64 + 1, cand.name, cand.kind, cand.ident, cand.link, cand.llm_rank],
                    )?;
                    rep.candidates_added += 1;
                }
                rep.questions_added += 1;
            }
        }
        tx.commit()?;
        Ok(rep)
    }

    fn batches(&self) -> Result<Vec<Batch>> {
        let c = self.c();
        let mut st = c.prepare(&format!("{BATCH_SELECT} ORDER BY b.source DESC, b.id"))?;
        let v = st
            .query_map([], batch_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(v)
    }

    fn batch(&self, id: i64) -> Result<Option<Batch>> {
        Ok(self
            .c()
            .query_row(&format!("{BATCH_SELECT} WHERE b.id = ?1"), [id], batch_row)
            .optional()?)
    }

    fn progress(&self, user_id: i64) -> Result<Vec<BatchProgress>> {
        let batches = self.batches()?;
        let c = self.c();
        let mut st = c.prepare_cached(
            "SELECT COALESCE(SUM(r.status = 'complete'), 0), COALESCE(SUM(r.status = 'draft'), 0) FROM responses r JOIN questions q ON q.id = r.question_id \
             WHERE q.batch_id = ?1 AND r.user_id = ?2",
        )?;
        let mut first = c.prepare_cached(
            "SELECT q.id FROM questions q LEFT JOIN responses r ON r.question_id = q.id AND r.user_id = ?2 \
             WHERE q.batch_id = ?1 AND (r.status IS NULL OR r.status <> 'complete') ORDER BY q.position LIMIT 1",
        )?;
        let mut open = c.prepare_cached(
            "SELECT NOT EXISTS (SELECT 1 FROM assignments WHERE batch_id = ?1) OR EXISTS (SELECT 1 FROM assignments WHERE batch_id = ?1 AND user_id = ?2)",
        )?;
        let mut mine = c.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM assignments WHERE batch_id = ?1 AND user_id = ?2)",
        )?;
        let mut out = Vec::with_capacity(batches.len());
        for b in batches {
            if !open.query_row(params![b.id, user_id], |r| r.get::<_, bool>(0))? {
                continue;
            }
            let (complete, draft): (i64, i64) =
                st.query_row(params![b.id, user_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let resume_at = first
                .query_row(params![b.id, user_id], |r| r.get(0))
                .optional()?;
            let assigned = mine.query_row(params![b.id, user_id], |r| r.get::<_, bool>(0))?;
            out.push(BatchProgress {
                batch: b,
                complete,
                draft,
                resume_at,
                assigned,
            });
        }
        // The batches assigned to this annotator by name first, then the open ones.
        out.sort_by_key(|p| !p.assigned);
        Ok(out)
    }

    fn questions_in_batch(&self, batch_id: i64, user_id: i64) -> Result<Vec<QuestionSummary>> {
        let c = self.c();
        let mut st = c.prepare_cached(
            "SELECT q.id, q.position, q.text, q.category, (SELECT COUNT(*) FROM candidates c WHERE c.question_id = q.id), r.status \
             FROM questions q LEFT JOIN responses r ON r.question_id = q.id AND r.user_id = ?2 WHERE q.batch_id = ?1 ORDER BY q.position",
        )?;
        let v = st
            .query_map(params![batch_id, user_id], |r| {
                let status: Option<String> = r.get(5)?;
                Ok(QuestionSummary {
                    id: r.get(0)?,
                    text: r.get(2)?,
                    category: r.get(3)?,
                    candidates: r.get(4)?,
                    status: status.map(|s| status_of(&s)),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(v)
    }

    fn question(&self, id: i64) -> Result<Option<Question>> {
        load_question(&self.c(), id)
    }

    fn questions_of_source(&self, source: Source) -> Result<Vec<Question>> {
        let c = self.c();
        let ids: Vec<i64> = {
            let mut st = c.prepare("SELECT q.id FROM questions q JOIN batches b ON b.id = q.batch_id WHERE q.source = ?1 ORDER BY b.id, q.position")?;
            let v = st
                .query_map([source.as_str()], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            v
        };
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(q) = load_question(&c, id)? {
                out.push(q);
            }
        }
        Ok(out)
    }

    fn save_response_shown(
        &self,
        user_id: i64,
        question_id: i64,
        r: &NewResponse,
        presented: &[i64],
    ) -> Result<SaveOutcome> {
        crate::ranking::gate(presented, r).map_err(|e| StoreError::Refused {
            code: e.code,
            message: e.message,
        })?;
        let presented_json = if presented.is_empty() {
            None
        } else {
            Some(serde_json::to_string(presented).map_err(json_err)?)
        };
        let time_ms = r
            .time_ms
            .map(|t| t.min(serenqa_shared::annotate::MAX_TIME_ON_TASK_MS) as i64);
        let mut c = self.c();
        let tx = c.transaction()?;
        let seen: Option<(i64, i64, i64, i64)> = tx
            .query_row(
                "SELECT s.user_id, s.response_id, s.revision, r.question_id FROM submissions s JOIN responses r ON r.id = s.response_id WHERE s.id = ?1",
                [&r.submission_id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .optional()?;
        let current = tx
            .query_row(
                &format!(
                    "SELECT {RESPONSE_COLS} FROM responses WHERE user_id = ?1 AND question_id = ?2"
                ),
                [user_id, question_id],
                response_row,
            )
            .optional()?
            .map(finish_response)
            .transpose()?;
        if let Some((uid, response_id, revision, qid)) = seen {
            if uid != user_id {
                return Err(StoreError::SubmissionReused(
                    "this submission id belongs to another user".into(),
                ));
            }
            if qid != question_id {
                return Err(StoreError::SubmissionReused(format!(
                    "submission id {:?} was already used for another question",
                    r.submission_id
                )));
            }
            // A retry of a stored save: its outcome again, nothing changes.
            let (status, pending) = current
                .as_ref()
                .map(|c| (c.status, c.pending.is_some()))
                .unwrap_or((Status::Draft, false));
            return Ok(SaveOutcome {
                response_id,
                revision,
                duplicate: true,
                status,
                pending,
            });
        }
        let stored_rev = current.as_ref().map_or(0, |c| c.revision);
        if r.base_revision != stored_rev {
            return Err(StoreError::Stale {
                revision: stored_rev,
                current: current.map(Box::new),
            });
        }
        let now = crate::now();
        let (response_id, revision, status, pending) = match current {
            // An edit of a submitted response stays beside it until it is submitted; an edit
            // that returns to the submitted ranking clears it.
            Some(cur) if cur.status == Status::Complete && r.status == Status::Draft => {
                let same = cur.ranking == r.ranking
                    && cur.confidence == r.confidence
                    && cur.comment == r.comment;
                let pending = if same {
                    None
                } else {
                    let p = PendingEdit {
                        ranking: r.ranking.clone(),
                        confidence: r.confidence,
                        comment: r.comment.clone(),
                        updated_at: now,
                    };
                    Some(serde_json::to_string(&p).map_err(json_err)?)
                };
                tx.execute("UPDATE responses SET pending = ?1, revision = revision + 1, updated_at = ?2, \
                     presented = COALESCE(presented, ?4), time_ms = COALESCE(?5, time_ms) WHERE id = ?3",
                     params![pending, now, cur.id, presented_json, time_ms])?;
                (
                    cur.id,
                    cur.revision + 1,
                    Status::Complete,
                    pending.is_some(),
                )
            }
            _ => {
                let ranking = serde_json::to_string(&r.ranking).map_err(json_err)?;
                let (id, rev): (i64, i64) = tx.query_row(
                    "INSERT INTO responses (user_id, question_id, status, ranking, confidence, comment, revision, updated_at, pending, presented, time_ms, confirmed, skipped) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, NULL, ?8, ?9, ?10, ?11) \
                     ON CONFLICT (user_id, question_id) DO UPDATE SET status = excluded.status, ranking = excluded.ranking, \
                     confidence = excluded.confidence, comment = excluded.comment, revision = responses.revision + 1, updated_at = excluded.updated_at, \
                     pending = NULL, presented = COALESCE(responses.presented, excluded.presented), \
                     time_ms = COALESCE(excluded.time_ms, responses.time_ms), confirmed = excluded.confirmed, skipped = excluded.skipped \
                     RETURNING id, revision",
                    params![user_id, question_id, r.status.as_str(), ranking, r.confidence.map(|c| c as i64), r.comment, now,
                        presented_json, time_ms, r.status == Status::Complete && r.confirm_shown_order,
                        r.status == Status::Complete && is_skip(&r.ranking)],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )?;
                (id, rev, r.status, false)
            }
        };
        tx.execute(
            "INSERT INTO submissions (id, user_id, response_id, revision, received_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![r.submission_id, user_id, response_id, revision, now],
        )?;
        tx.execute(
            "INSERT INTO response_history (response_id, revision, submission_id, status, ranking, confidence, comment, time_ms, confirmed, saved_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                response_id,
                revision,
                r.submission_id,
                r.status.as_str(),
                serde_json::to_string(&r.ranking).map_err(json_err)?,
                r.confidence.map(|c| c as i64),
                r.comment,
                time_ms,
                r.confirm_shown_order,
                now
            ],
        )?;
        tx.commit()?;
        Ok(SaveOutcome {
            response_id,
            revision,
            duplicate: false,
            status,
            pending,
        })
    }

    fn response(&self, id: i64) -> Result<Option<Response>> {
        let c = self.c();
        let r = c
            .query_row(
                &format!("SELECT {RESPONSE_COLS} FROM responses WHERE id = ?1"),
                [id],
                response_row,
            )
            .optional()?;
        r.map(finish_response).transpose()
    }

    fn response_for(&self, user_id: i64, question_id: i64) -> Result<Option<Response>> {
        let c = self.c();
        let r = c
            .query_row(
                &format!(
                    "SELECT {RESPONSE_COLS} FROM responses WHERE user_id = ?1 AND question_id = ?2"
                ),
                [user_id, question_id],
                response_row,
            )
            .optional()?;
        r.map(finish_response).transpose()
    }

    fn responses_for_question(&self, question_id: i64) -> Result<Vec<Response>> {
        let c = self.c();
        let mut st = c.prepare_cached(&format!(
            "SELECT {RESPONSE_COLS} FROM responses WHERE question_id = ?1 ORDER BY user_id"
        ))?;
        let rows: Vec<_> = st
            .query_map([question_id], response_row)?
            .collect::<rusqlite::Result<_>>()?;
        rows.into_iter().map(finish_response).collect()
    }

    fn all_responses(&self) -> Result<Vec<Response>> {
        let c = self.c();
        let mut st = c.prepare(&format!(
            "SELECT {RESPONSE_COLS} FROM responses ORDER BY question_id, user_id"
        ))?;
        let rows: Vec<_> = st
            .query_map([], response_row)?
            .collect::<rusqlite::Result<_>>()?;
        rows.into_iter().map(finish_response).collect()
    }

    fn revisions(&self) -> Result<Vec<Revision>> {
        let c = self.c();
        let mut st = c.prepare(
            "SELECT response_id, revision, submission_id, status, ranking, confidence, comment, time_ms, confirmed, saved_at \
             FROM response_history ORDER BY response_id, revision",
        )?;
        type Raw = (
            i64,
            i64,
            String,
            String,
            String,
            Option<i64>,
            String,
            Option<i64>,
            bool,
            i64,
        );
        let rows: Vec<Raw> = st
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        rows.into_iter()
            .map(
                |(
                    response_id,
                    revision,
                    submission_id,
                    status,
                    ranking,
                    conf,
                    comment,
                    time_ms,
                    confirmed,
                    saved_at,
                )| {
                    Ok(Revision {
                        response_id,
                        revision,
                        submission_id,
                        status: status_of(&status),
                        ranking: serde_json::from_str(&ranking).map_err(json_err)?,
                        confidence: conf.map(|c| c as u8),
                        comment,
                        time_ms: time_ms.and_then(|t| u64::try_from(t).ok()),
                        confirmed_shown_order: confirmed,
                        saved_at,
                    })
                },
            )
            .collect()
    }

    fn submission_ids(&self) -> Result<Vec<(String, i64)>> {
        let c = self.c();
        let mut st = c.prepare("SELECT id, user_id FROM submissions")?;
        let v = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(v)
    }

    fn put_run(&self, run: &RunRecord) -> Result<()> {
        self.c().execute(
            "INSERT INTO runs (id, imported_at, manifest, aggregate) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (id) DO UPDATE SET imported_at = excluded.imported_at, manifest = excluded.manifest, aggregate = excluded.aggregate",
            params![run.id, run.imported_at, run.manifest.to_string(), run.aggregate.to_string()],
        )?;
        Ok(())
    }

    fn runs(&self) -> Result<Vec<RunRecord>> {
        let c = self.c();
        let mut st =
            c.prepare("SELECT id, imported_at, manifest, aggregate FROM runs ORDER BY id")?;
        let rows: Vec<(String, i64, String, String)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        rows.into_iter()
            .map(|(id, imported_at, m, a)| {
                Ok(RunRecord {
                    id,
                    imported_at,
                    manifest: serde_json::from_str(&m).map_err(json_err)?,
                    aggregate: serde_json::from_str(&a).map_err(json_err)?,
                })
            })
            .collect()
    }

    fn add_calibration(&self, cr: &CalibrationRecord) -> Result<i64> {
        let c = self.c();
        c.execute(
            "INSERT INTO calibrations (created_at, alpha, beta, gamma, agreement, questions, provenance, annotators) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![cr.created_at, cr.alpha, cr.beta, cr.gamma, cr.agreement, cr.questions, cr.provenance.to_string(), cr.annotators],
        )?;
        Ok(c.last_insert_rowid())
    }

    fn calibrations(&self) -> Result<Vec<CalibrationRecord>> {
        let c = self.c();
        calibrations_where(&c, "1 = 1", [])
    }

    fn use_weights(
        &self,
        calibration: Option<i64>,
        by: &str,
        note: &str,
        now: i64,
    ) -> Result<WeightsChange> {
        let mut c = self.c();
        let tx = c.transaction()?;
        if let Some(id) = calibration {
            let cr = calibrations_where(&tx, "id = ?1", [id])?
                .pop()
                .ok_or(StoreError::NotFound("calibration"))?;
            serenqa_shared::annotate::calibration_gate(
                usize::try_from(cr.questions).unwrap_or(0),
                usize::try_from(cr.annotators).unwrap_or(0),
            )
            .map_err(|message| StoreError::Refused {
                code: "below_minimum",
                message: format!("calibration #{id}: {message}"),
            })?;
        }
        tx.execute(
            "INSERT INTO weights_history (calibration_id, set_at, set_by, note) VALUES (?1, ?2, ?3, ?4)",
            params![calibration, now, by, note],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(WeightsChange {
            id,
            calibration,
            at: now,
            by: by.to_string(),
            note: note.to_string(),
        })
    }

    fn weights_in_force(&self) -> Result<Option<CalibrationRecord>> {
        let c = self.c();
        let id: Option<Option<i64>> = c
            .query_row(
                "SELECT calibration_id FROM weights_history ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match id.flatten() {
            None => Ok(None),
            Some(id) => Ok(calibrations_where(&c, "id = ?1", [id])?.pop()),
        }
    }

    fn weights_history(&self) -> Result<Vec<WeightsChange>> {
        let c = self.c();
        let mut st = c.prepare(
            "SELECT id, calibration_id, set_at, set_by, note FROM weights_history ORDER BY id DESC",
        )?;
        let v = st
            .query_map([], |r| {
                Ok(WeightsChange {
                    id: r.get(0)?,
                    calibration: r.get(1)?,
                    at: r.get(2)?,
                    by: r.get(3)?,
                    note: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(v)
    }
}

/// Calibrations matching `filter` (an SQL condition over `calibrations`), newest first.
fn calibrations_where<P: rusqlite::Params>(
    c: &Connection,
    filter: &str,
    p: P,
) -> Result<Vec<CalibrationRecord>> {
    let mut st = c.prepare(&format!("SELECT id, created_at, alpha, beta, gamma, agreement, questions, provenance, annotators FROM calibrations WHERE {filter} ORDER BY id DESC"))?;
    let rows: Vec<(CalibrationRecord, String)> = st
        .query_map(p, |r| {
            Ok((
                CalibrationRecord {
                    id: r.get(0)?,
                    created_at: r.get(1)?,
                    alpha: r.get(2)?,
                    beta: r.get(3)?,
                    gamma: r.get(4)?,
                    agreement: r.get(5)?,
                    questions: r.get(6)?,
                    annotators: r.get(8)?,
                    provenance: serde_json::Value::Null,
                },
                r.get(7)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(mut cr, p)| {
            cr.provenance = serde_json::from_str(&p).map_err(json_err)?;
            Ok(cr)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database written before migration 3 (ids in questionnaire order, a stored response and
    /// a pending edit) is renumbered in name order, rankings included.
    #[test]
    fn migration_3_renumbers_candidates_and_their_rankings() {
        let conn = Connection::open_in_memory().unwrap();
        for m in &MIGRATIONS[..2] {
            conn.execute_batch(m).unwrap();
        }
        conn.pragma_update(None, "user_version", 2).unwrap();
        conn.execute_batch(
            "INSERT INTO users (id, email, role, password_hash, created_at) VALUES (1, 'a@x.org', 'annotator', 'h', 0);
             INSERT INTO batches (id, source, key, name) VALUES (1, 'serenqa', 'batch1', 'B');
             INSERT INTO questions (id, batch_id, source, qid, position, text, category, resources) VALUES (1, 1, 'serenqa', 9, 1, 'Q?', 'c', '[]');
             INSERT INTO candidates (id, question_id, position, name, kind, ident, llm_rank) VALUES
                (10, 1, 1, 'Zinc', 'Compound', 'DB3', 1), (11, 1, 2, 'Calcium', 'Compound', 'DB2', 2), (12, 1, 3, 'Acetone', 'Compound', 'DB1', 3);",
        )
        .unwrap();
        let ranking = r#"[{"candidate":10,"rank":1,"unsure":false},{"candidate":11,"rank":2,"unsure":true},{"candidate":12,"rank":3,"unsure":false}]"#;
        let pending =
            format!(r#"{{"ranking":{ranking},"confidence":2,"comment":"p","updated_at":5}}"#);
        conn.execute(
            "INSERT INTO responses (id, user_id, question_id, status, ranking, confidence, comment, revision, updated_at, pending) VALUES (1, 1, 1, 'complete', ?1, 3, '', 1, 0, ?2)",
            params![ranking, pending],
        )
        .unwrap();
        let repo = SqliteRepo::init(conn).unwrap();
        assert_eq!(repo.schema_version().unwrap(), MIGRATIONS.len() as i64);
        let q = repo.question(1).unwrap().unwrap();
        let got: Vec<(i64, &str, i64)> = q
            .candidates
            .iter()
            .map(|c| (c.id, c.name.as_str(), c.position))
            .collect();
        assert_eq!(
            got,
            [(12, "Zinc", 1), (11, "Calcium", 2), (10, "Acetone", 3)]
        );
        // The annotator's ranking still names the same entities: Zinc first, Calcium unsure.
        let r = repo.response(1).unwrap().unwrap();
        let named = |v: &[RankEntry]| {
            v.iter()
                .map(|e| {
                    (
                        q.candidates
                            .iter()
                            .find(|c| c.id == e.candidate)
                            .unwrap()
                            .name
                            .clone(),
                        e.rank,
                        e.unsure,
                    )
                })
                .collect::<Vec<_>>()
        };
        let want = vec![
            ("Zinc".to_string(), Some(1), false),
            ("Calcium".to_string(), Some(2), true),
            ("Acetone".to_string(), Some(3), false),
        ];
        assert_eq!(named(&r.ranking), want);
        assert_eq!(named(&r.pending.unwrap().ranking), want);
    }

    /// A database at schema 5 (two calibrations, a submission marking every candidate unsure,
    /// an ordinary one) upgrades losing nothing: the newest calibration stays in force (it was
    /// by the old rule) and is listed as put in force by the migration, the all-unsure
    /// submission becomes a skip, and each response seeds its revision history.
    #[test]
    fn migration_6_keeps_what_was_in_force_and_marks_skips() {
        let conn = Connection::open_in_memory().unwrap();
        for m in &MIGRATIONS[..5] {
            conn.execute_batch(m).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute_batch(
            r#"INSERT INTO users (id, email, role, password_hash, created_at) VALUES (1, 'a@x.org', 'annotator', 'h', 0), (2, 'b@x.org', 'annotator', 'h', 0);
             INSERT INTO batches (id, source, key, name) VALUES (1, 'serenqa', 'batch1', 'B');
             INSERT INTO questions (id, batch_id, source, qid, position, text, category, resources) VALUES (1, 1, 'serenqa', 9, 1, 'Q?', 'c', '[]');
             INSERT INTO candidates (id, question_id, position, name, kind, ident) VALUES (10, 1, 1, 'A', 'Compound', 'DB1'), (11, 1, 2, 'B', 'Compound', 'DB2');
             INSERT INTO responses (id, user_id, question_id, status, ranking, confidence, comment, revision, updated_at) VALUES
                (1, 1, 1, 'complete', '[{"candidate":10,"rank":1,"unsure":true},{"candidate":11,"rank":2,"unsure":true}]', 3, '', 2, 50),
                (2, 2, 1, 'complete', '[{"candidate":11,"rank":1,"unsure":false},{"candidate":10,"rank":2,"unsure":true}]', 4, 'n', 1, 60);
             INSERT INTO submissions (id, user_id, response_id, revision, received_at) VALUES ('s-a', 1, 1, 2, 50), ('s-b', 2, 2, 1, 60);
             INSERT INTO calibrations (id, created_at, alpha, beta, gamma, agreement, questions, provenance) VALUES
                (1, 100, 0.2, 0.6, 0.2, 0.5, 40, '{}'), (2, 200, 0.5, 0.5, 0.0, 0.6, 4, '{}');"#,
        )
        .unwrap();
        let repo = SqliteRepo::init(conn).unwrap();
        assert_eq!(repo.schema_version().unwrap(), MIGRATIONS.len() as i64);
        assert_eq!(repo.calibrations().unwrap().len(), 2);
        let now = repo.weights_in_force().unwrap().unwrap();
        assert_eq!((now.id, now.annotators), (2, 0));
        let h = repo.weights_history().unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(
            (h[0].calibration, h[0].by.as_str()),
            (Some(2), "migration 6")
        );
        // It stays revertible; it cannot be put back once reverted (no annotators recorded).
        repo.use_weights(None, "admin", "", 300).unwrap();
        assert!(repo.weights_in_force().unwrap().is_none());
        assert!(repo.use_weights(Some(2), "admin", "", 301).is_err());

        let r1 = repo.response(1).unwrap().unwrap();
        let r2 = repo.response(2).unwrap().unwrap();
        assert!(r1.skipped() && !r2.skipped());
        assert!(r1.presented.is_empty() && r1.time_ms.is_none());
        let skipped: Vec<bool> = repo
            .c()
            .prepare("SELECT skipped FROM responses ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(skipped, [true, false]);
        let hist: Vec<(i64, i64, String)> = repo
            .revisions()
            .unwrap()
            .into_iter()
            .map(|h| (h.response_id, h.revision, h.submission_id))
            .collect();
        assert_eq!(hist, [(1, 2, "s-a".to_string()), (2, 1, "s-b".to_string())]);
    }

    /// A database at schema 6 with two unused links for one address (in two cases), a used
    /// one and one for another address upgrades to one valid link per address: the newest
    /// stays, the older one is refused as replaced, the others are untouched, and every
    /// invite gets an id to be listed and revoked by.
    #[test]
    fn migration_7_keeps_one_valid_link_per_address() {
        let conn = Connection::open_in_memory().unwrap();
        for m in &MIGRATIONS[..6] {
            conn.execute_batch(m).unwrap();
        }
        conn.pragma_update(None, "user_version", 6).unwrap();
        let far = crate::now() + 3600;
        conn.execute_batch(&format!(
            "INSERT INTO users (id, email, role, password_hash, created_at) VALUES (1, 'root@x.org', 'admin', 'h', 0), (2, 'used@x.org', 'annotator', 'h', 0);
             INSERT INTO invites (token_hash, email, role, created_by, created_at, expires_at, used_at, used_by) VALUES
                ('old', 'x@y.org', 'annotator', 1, 10, {far}, NULL, NULL),
                ('new', 'X@y.org', 'reviewer', 1, 20, {far}, NULL, NULL),
                ('other', 'z@y.org', 'annotator', NULL, 15, {far}, NULL, NULL),
                ('done', 'used@x.org', 'annotator', 1, 5, {far}, 6, 2);"
        ))
        .unwrap();
        let repo = SqliteRepo::init(conn).unwrap();
        assert_eq!(repo.schema_version().unwrap(), 7);
        let pending = repo.pending_invites(crate::now()).unwrap();
        let got: Vec<(&str, Role, Option<&str>)> = pending
            .iter()
            .map(|p| (p.email.as_str(), p.role, p.created_by.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("X@y.org", Role::Reviewer, Some("root@x.org")),
                ("z@y.org", Role::Annotator, None)
            ]
        );
        assert!(pending.iter().all(|p| p.id > 0));
        match repo.accept_invite("old", "X", "h", crate::now()) {
            Err(StoreError::Conflict(m)) => assert!(m.contains("replaced"), "{m}"),
            other => panic!("the older link still works: {other:?}"),
        }
        assert_eq!(repo.invite("done").unwrap().unwrap().used_at, Some(6));
        repo.accept_invite("new", "X", "h", crate::now()).unwrap();
        // The index keeps it so: a second open link for one address cannot be inserted.
        repo.c()
            .execute(
                "INSERT INTO invites (token_hash, email, role, created_at, expires_at) VALUES ('a', 'q@y.org', 'annotator', 0, 1)",
                [],
            )
            .unwrap();
        assert!(repo
            .c()
            .execute(
                "INSERT INTO invites (token_hash, email, role, created_at, expires_at) VALUES ('b', 'Q@y.org', 'annotator', 0, 1)",
                [],
            )
            .is_err());
    }
}
