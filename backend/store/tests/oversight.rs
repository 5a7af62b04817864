//! What admins and reviewers read about the work (issue 39, item 4): one valid invite link
//! per address, pending invites and their revocation, per-annotator progress, the submitted
//! rankings page by page, and pseudonyms that are stable and carry no identity.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_store::aggregate::export_rows;
use serenqa_store::repo::{NewBatch, NewCandidate, NewQuestion};
use serenqa_store::*;

fn open() -> (tempfile::TempDir, SqliteRepo) {
    let dir = tempfile::tempdir().unwrap();
    let repo = SqliteRepo::open(&dir.path().join("o.sqlite")).unwrap();
    (dir, repo)
}

fn refusal(r: Result<User, StoreError>) -> String {
    match r {
        Err(StoreError::Conflict(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn reinviting_an_address_replaces_its_earlier_link() {
    let (_d, repo) = open();
    let admin = repo
        .create_user("root@example.org", "Root", Role::Admin, "h")
        .unwrap();
    let t = now();
    assert_eq!(
        repo.create_invite("t1", "x@y.org", Role::Annotator, Some(admin.id), t + 600)
            .unwrap(),
        None,
        "nothing replaced the first time"
    );
    // The same address in another case is the same address.
    let replaced = repo
        .create_invite("t2", "X@Y.org", Role::Reviewer, Some(admin.id), t + 600)
        .unwrap()
        .expect("the first link was still valid");
    assert_eq!(
        (replaced.email.as_str(), replaced.role),
        ("x@y.org", Role::Annotator)
    );
    assert_eq!(replaced.created_by.as_deref(), Some("root@example.org"));
    let pending = repo.pending_invites(t).unwrap();
    assert_eq!(pending.len(), 1, "one valid link per address: {pending:?}");
    assert_eq!(
        (pending[0].email.as_str(), pending[0].role),
        ("X@Y.org", Role::Reviewer)
    );
    assert_eq!(
        repo.invite("t1").unwrap().unwrap().revoked.as_deref(),
        Some(REVOKED_REPLACED)
    );
    let why = refusal(repo.accept_invite("t1", "X", "h", t));
    assert!(why.contains("replaced by a newer one"), "{why}");
    let u = repo.accept_invite("t2", "X", "h", t).unwrap();
    assert_eq!(u.role, Role::Reviewer);
    assert!(repo.pending_invites(t).unwrap().is_empty());
    // Once the address has an account, no new invite for it.
    assert!(matches!(
        repo.create_invite("t3", "x@y.ORG", Role::Annotator, None, t + 600),
        Err(StoreError::Conflict(_))
    ));
}

#[test]
fn an_expired_link_is_replaced_without_a_warning() {
    let (_d, repo) = open();
    let t = now();
    repo.create_invite("old", "late@y.org", Role::Annotator, None, t - 1)
        .unwrap();
    assert!(
        repo.pending_invites(t).unwrap().is_empty(),
        "expired is not pending"
    );
    let why = refusal(repo.accept_invite("old", "L", "h", t));
    assert!(why.contains("expired"), "{why}");
    assert_eq!(
        repo.create_invite("new", "late@y.org", Role::Annotator, None, t + 60)
            .unwrap(),
        None
    );
    assert_eq!(repo.pending_invites(t).unwrap().len(), 1);
    // The expired one now says it was replaced, the stronger reason.
    let why = refusal(repo.accept_invite("old", "L", "h", t));
    assert!(why.contains("replaced"), "{why}");
}

#[test]
fn a_revoked_link_fails_at_accept_and_leaves_the_pending_list() {
    let (_d, repo) = open();
    let t = now();
    repo.create_invite("a", "a@y.org", Role::Annotator, None, t + 60)
        .unwrap();
    repo.create_invite("b", "b@y.org", Role::Reviewer, None, t + 60)
        .unwrap();
    let pending = repo.pending_invites(t).unwrap();
    assert_eq!(
        pending.iter().map(|p| p.email.as_str()).collect::<Vec<_>>(),
        ["b@y.org", "a@y.org"],
        "newest first"
    );
    let a = pending[1].id;
    let revoked = repo.revoke_invite(a, t).unwrap();
    assert_eq!(revoked.email, "a@y.org");
    assert_eq!(
        repo.revoke_invite(a, t).unwrap().id,
        a,
        "revoking twice changes nothing"
    );
    assert_eq!(repo.pending_invites(t).unwrap().len(), 1);
    let why = refusal(repo.accept_invite("a", "A", "h", t));
    assert!(why.contains("withdrawn"), "{why}");
    assert_eq!(
        repo.invite("a").unwrap().unwrap().revoked.as_deref(),
        Some(REVOKED_WITHDRAWN)
    );
    // A used invite cannot be revoked; an unknown one is not found.
    repo.accept_invite("b", "B", "h", t).unwrap();
    let b = repo.pending_invites(t - 10).unwrap();
    assert!(b.is_empty());
    let used_id = a + 1;
    assert!(matches!(
        repo.revoke_invite(used_id, t),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        repo.revoke_invite(999, t),
        Err(StoreError::NotFound(_))
    ));
    // After a revocation the address can be invited again.
    assert_eq!(
        repo.create_invite("a2", "a@y.org", Role::Annotator, None, t + 60)
            .unwrap(),
        None,
        "a withdrawn link is not reported as replaced"
    );
    repo.accept_invite("a2", "A", "h", t).unwrap();
}

fn two_questions() -> NewBatch {
    let cand = |q: i64, i: i64| NewCandidate {
        name: format!("Drug {q}.{i}"),
        kind: "Compound".into(),
        ident: format!("DB{q}{i}"),
        link: None,
        llm_rank: Some(i + 1),
    };
    NewBatch {
        source: Source::Serenqa,
        key: "batch1".into(),
        name: "Batch one".into(),
        questions: (1..=2)
            .map(|q| NewQuestion {
                qid: q,
                text: format!("Question {q}?"),
                category: "c:s".into(),
                pattern: None,
                resources: vec![],
                candidates: (0..3).map(|i| cand(q, i)).collect(),
            })
            .collect(),
    }
}

fn save(
    repo: &SqliteRepo,
    user: i64,
    q: &Question,
    sub: &str,
    base: i64,
    status: Status,
    unsure: bool,
    comment: &str,
) {
    let ids: Vec<i64> = q.candidates.iter().rev().map(|c| c.id).collect();
    let r = NewResponse {
        submission_id: sub.into(),
        base_revision: base,
        ranking: ids
            .iter()
            .enumerate()
            .map(|(i, &c)| RankEntry {
                candidate: c,
                rank: Some(i as u32 + 1),
                unsure,
            })
            .collect(),
        confidence: Some(4),
        comment: comment.into(),
        status,
        confirm_shown_order: true,
        time_ms: Some(90_500),
    };
    repo.save_response(user, q.id, &r).unwrap();
}

/// Two annotators, an admin who annotated too and a reviewer who did not.
struct Work {
    _d: tempfile::TempDir,
    repo: SqliteRepo,
    ann1: User,
    ann2: User,
    admin: User,
    qs: Vec<Question>,
    batch: i64,
}

fn work() -> Work {
    let (d, repo) = open();
    let admin = repo
        .create_user("boss@example.org", "Boss", Role::Admin, "h")
        .unwrap();
    let ann1 = repo
        .create_user("ann.one@example.org", "Ann One", Role::Annotator, "h")
        .unwrap();
    let ann2 = repo
        .create_user("ann.two@example.org", "Ann Two", Role::Annotator, "h")
        .unwrap();
    repo.create_user("rev@example.org", "Rev", Role::Reviewer, "h")
        .unwrap();
    repo.import_batches(&[two_questions()]).unwrap();
    let qs = repo.questions_of_source(Source::Serenqa).unwrap();
    let batch = qs[0].batch_id;
    // ann1: a submission updated once, then edited (pending), and a skip.
    save(&repo, ann1.id, &qs[0], "1a", 0, Status::Draft, false, "");
    save(
        &repo,
        ann1.id,
        &qs[0],
        "1b",
        1,
        Status::Complete,
        false,
        "first thought",
    );
    save(
        &repo,
        ann1.id,
        &qs[0],
        "1c",
        2,
        Status::Complete,
        false,
        "the surprising one",
    );
    save(&repo, ann1.id, &qs[0], "1d", 3, Status::Draft, true, "hm");
    save(
        &repo,
        ann1.id,
        &qs[1],
        "1e",
        0,
        Status::Complete,
        true,
        "no idea",
    );
    // ann2: a draft only. The admin: one submission.
    save(&repo, ann2.id, &qs[1], "2a", 0, Status::Draft, false, "");
    save(
        &repo,
        admin.id,
        &qs[1],
        "3a",
        0,
        Status::Complete,
        false,
        "admin note",
    );
    repo.set_assignment(batch, &[ann1.id], Some(2)).unwrap();
    Work {
        _d: d,
        repo,
        ann1,
        ann2,
        admin,
        qs,
        batch,
    }
}

#[test]
fn progress_counts_each_annotators_work() {
    let w = work();
    let p = w.repo.annotator_progress(true).unwrap();
    let who: Vec<&str> = p.iter().map(|x| x.email.as_deref().unwrap()).collect();
    assert_eq!(
        who,
        [
            "boss@example.org",
            "ann.one@example.org",
            "ann.two@example.org"
        ],
        "annotators and anyone who saved a response; not the reviewer"
    );
    let one = &p[1];
    assert_eq!(one.annotator, pseudonym(w.ann1.id));
    assert_eq!(one.name.as_deref(), Some("Ann One"));
    assert_eq!(
        (
            one.submitted,
            one.skipped,
            one.in_progress,
            one.pending_edits
        ),
        (1, 1, 0, 1)
    );
    assert_eq!(one.assigned.len(), 1);
    assert_eq!(one.assigned[0].id, w.batch);
    assert!(one.last_activity.is_some());
    let two = &p[2];
    assert_eq!((two.submitted, two.skipped, two.in_progress), (0, 0, 1));
    assert!(two.assigned.is_empty());
    let boss = &p[0];
    assert_eq!((boss.role, boss.submitted), (Role::Admin, 1));

    // Someone who never saved anything has no last activity.
    let new = w
        .repo
        .create_user("new@example.org", "", Role::Annotator, "h")
        .unwrap();
    let p = w.repo.annotator_progress(true).unwrap();
    let n = p.iter().find(|x| x.annotator == pseudonym(new.id)).unwrap();
    assert_eq!((n.submitted, n.in_progress, n.last_activity), (0, 0, None));
}

#[test]
fn submitted_rankings_name_the_candidates_page_by_page() {
    let w = work();
    let all = RankingFilter::default();
    let (total, page) = w.repo.submitted_rankings(&all, 0, 100, true).unwrap();
    assert_eq!(
        total, 3,
        "ann1's two submissions and the admin's; drafts are not listed"
    );
    assert_eq!(page.len(), 3);
    let first = &page[0];
    assert_eq!(first.question_id, w.qs[0].id);
    assert_eq!(first.annotator, pseudonym(w.ann1.id));
    assert_eq!(first.email.as_deref(), Some("ann.one@example.org"));
    assert_eq!(first.batch, "Batch one");
    assert_eq!(first.question, "Question 1?");
    let names: Vec<&str> = first.ranking.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["Drug 1.2", "Drug 1.1", "Drug 1.0"],
        "the annotator's order, by name"
    );
    assert_eq!(first.ranking[0].key, "Compound::DB12");
    assert_eq!(first.ranking[0].rank, Some(1));
    // The submission, not the pending edit: its comment, with the edit flagged.
    assert_eq!(first.comment, "the surprising one");
    assert!(first.pending_edit && !first.skipped && first.confirmed_shown_order);
    assert_eq!((first.saves, first.submissions), (4, 2));
    assert_eq!(first.confidence, Some(4));
    assert_eq!(first.time_on_task_s, Some(90.5));
    assert!(
        page[1].skipped || page[2].skipped,
        "the skip is listed and marked"
    );

    // Paging and filters.
    let (total, p2) = w.repo.submitted_rankings(&all, 1, 1, true).unwrap();
    assert_eq!((total, p2.len()), (3, 1));
    assert_eq!(p2[0].response_id, page[1].response_id);
    let (_, past) = w.repo.submitted_rankings(&all, 10, 5, true).unwrap();
    assert!(past.is_empty());
    let by_q = RankingFilter {
        question: Some(w.qs[1].id),
        ..all
    };
    assert_eq!(w.repo.submitted_rankings(&by_q, 0, 10, true).unwrap().0, 2);
    let by_user = RankingFilter {
        user: Some(w.admin.id),
        ..all
    };
    let (n, v) = w.repo.submitted_rankings(&by_user, 0, 10, true).unwrap();
    assert_eq!((n, v[0].comment.as_str()), (1, "admin note"));
    let by_batch = RankingFilter {
        batch: Some(w.batch + 1),
        ..all
    };
    assert_eq!(
        w.repo.submitted_rankings(&by_batch, 0, 10, true).unwrap().0,
        0
    );
    let none = RankingFilter {
        user: Some(w.ann2.id),
        ..all
    };
    assert_eq!(w.repo.submitted_rankings(&none, 0, 10, true).unwrap().0, 0);
}

#[test]
fn pseudonyms_are_stable_and_identify_nobody() {
    let w = work();
    let (_, ranked) = w
        .repo
        .submitted_rankings(&RankingFilter::default(), 0, 100, false)
        .unwrap();
    let progress = w.repo.annotator_progress(false).unwrap();
    let export = export_rows(&w.repo, false).unwrap();
    let text = serde_json::to_string(&(&ranked, &progress, &export)).unwrap();
    for secret in ["@example.org", "Ann One", "Ann Two", "Boss", "ann.one"] {
        assert!(
            !text.contains(secret),
            "{secret} in the pseudonymised views"
        );
    }
    // One pseudonym per person, the same in all three views.
    let p1 = pseudonym(w.ann1.id);
    assert!(ranked
        .iter()
        .filter(|r| r.response_id == ranked[0].response_id)
        .all(|r| r.annotator == p1));
    assert!(progress.iter().any(|p| p.annotator == p1));
    assert!(export.iter().any(|e| e.annotator == p1));
    assert_ne!(pseudonym(w.ann1.id), pseudonym(w.ann2.id));
    // Stable: more accounts and more work change nobody's pseudonym.
    let before: Vec<String> = progress.iter().map(|p| p.annotator.clone()).collect();
    w.repo
        .create_user("later@example.org", "", Role::Annotator, "h")
        .unwrap();
    save(
        &w.repo,
        w.ann2.id,
        &w.qs[0],
        "2b",
        0,
        Status::Complete,
        false,
        "",
    );
    let after: Vec<String> = w
        .repo
        .annotator_progress(false)
        .unwrap()
        .into_iter()
        .map(|p| p.annotator)
        .take(before.len())
        .collect();
    assert_eq!(before, after);
    let (_, again) = w
        .repo
        .submitted_rankings(&RankingFilter::default(), 0, 100, false)
        .unwrap();
    assert_eq!(again[0].annotator, ranked[0].annotator);
    assert_eq!(parse_pseudonym(&p1), Some(w.ann1.id));
}

#[test]
fn an_annotators_assigned_batch_comes_first_and_is_marked() {
    let (_d, repo) = open();
    let ann = repo
        .create_user("a@example.org", "", Role::Annotator, "h")
        .unwrap();
    let other = repo
        .create_user("o@example.org", "", Role::Annotator, "h")
        .unwrap();
    let mk = |key: &str, qid: i64| NewBatch {
        key: key.into(),
        name: key.into(),
        questions: vec![NewQuestion {
            qid,
            ..two_questions().questions[0].clone()
        }],
        ..two_questions()
    };
    repo.import_batches(&[mk("b1", 1), mk("b2", 2), mk("b3", 3)])
        .unwrap();
    let ids: Vec<i64> = repo.batches().unwrap().iter().map(|b| b.id).collect();
    repo.set_assignment(ids[2], &[ann.id], None).unwrap();
    repo.set_assignment(ids[1], &[other.id], None).unwrap();
    let p = repo.progress(ann.id).unwrap();
    let got: Vec<(&str, bool)> = p
        .iter()
        .map(|x| (x.batch.name.as_str(), x.assigned))
        .collect();
    assert_eq!(
        got,
        [("b3", true), ("b1", false)],
        "assigned first; another's batch hidden"
    );
}
