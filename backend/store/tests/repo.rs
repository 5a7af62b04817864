//! The SQLite repository: migrations, invites, sessions, idempotent responses, aggregation,
//! expert-rankings file and export — on a real database file.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_store::aggregate::{batch_aggregates, expert_rankings, export_csv, export_rows};
use serenqa_store::repo::{NewBatch, NewCandidate, NewQuestion};
use serenqa_store::*;

fn batch() -> NewBatch {
    let cand = |n: &str, id: &str, r: i64| NewCandidate {
        name: n.into(),
        kind: "Compound".into(),
        ident: id.into(),
        link: None,
        llm_rank: Some(r),
    };
    NewBatch {
        source: Source::Serenqa,
        key: "batch1".into(),
        name: "Batch one".into(),
        questions: vec![NewQuestion {
            qid: 7,
            text: "Which drugs treat X?".into(),
            category: "c:s".into(),
            pattern: None,
            resources: vec![],
            candidates: (0..5)
                .map(|i| cand(&format!("D{i}"), &format!("DB0000{i}"), i + 1))
                .collect(),
        }],
    }
}

fn complete(sub: &str, cands: &[i64], ranks: &[u32]) -> NewResponse {
    NewResponse {
        submission_id: sub.into(),
        ranking: cands
            .iter()
            .zip(ranks)
            .map(|(&c, &r)| RankEntry {
                candidate: c,
                rank: Some(r),
                unsure: false,
            })
            .collect(),
        confidence: Some(4),
        comment: "ok, \"quoted\"".into(),
        status: Status::Complete,
        base_revision: 0,
        confirm_shown_order: false,
        time_ms: None,
    }
}

fn based(mut r: NewResponse, base: i64, status: Status) -> NewResponse {
    r.base_revision = base;
    r.status = status;
    r
}

#[test]
fn store_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.sqlite");
    let repo = SqliteRepo::open(&path).unwrap();
    assert_eq!(repo.schema_version().unwrap(), 7);
    let mode: String = rusqlite_mode(&path);
    assert_eq!(mode, "wal");

    // Invites are one-time.
    let admin = repo
        .create_user("root@example.org", "Root", Role::Admin, "h")
        .unwrap();
    assert!(
        matches!(
            repo.create_user("ROOT@example.org", "", Role::Admin, "h"),
            Err(StoreError::Conflict(_))
        ),
        "emails are case-insensitive"
    );
    repo.create_invite(
        "t1",
        "ann@example.org",
        Role::Annotator,
        Some(admin.id),
        now() + 60,
    )
    .unwrap();
    let ann = repo.accept_invite("t1", "Ann", "h2", now()).unwrap();
    assert_eq!(ann.role, Role::Annotator);
    assert!(matches!(
        repo.accept_invite("t1", "Ann", "h2", now()),
        Err(StoreError::Conflict(_))
    ));
    repo.create_invite("t2", "old@example.org", Role::Reviewer, None, now() - 1)
        .unwrap();
    assert!(
        repo.accept_invite("t2", "Old", "h", now()).is_err(),
        "expired"
    );
    assert!(matches!(
        repo.accept_invite("nope", "x", "h", now()),
        Err(StoreError::NotFound(_))
    ));

    // Sessions expire.
    repo.create_session("s1", ann.id, "csrf1", now() + 100)
        .unwrap();
    assert_eq!(
        repo.session("s1", now()).unwrap().unwrap().user.email,
        "ann@example.org"
    );
    assert!(repo.session("s1", now() + 101).unwrap().is_none());
    repo.delete_session("s1").unwrap();
    assert!(repo.session("s1", now()).unwrap().is_none());

    // Import is idempotent.
    let rep = repo.import_batches(&[batch()]).unwrap();
    assert_eq!((rep.questions_added, rep.candidates_added), (1, 5));
    let rep = repo.import_batches(&[batch()]).unwrap();
    assert_eq!((rep.questions_added, rep.questions_skipped), (0, 1));
    let b = &repo.batches().unwrap()[0];
    assert_eq!(b.questions, 1);
    let q = repo.questions_of_source(Source::Serenqa).unwrap().remove(0);
    let cids: Vec<i64> = q.candidates.iter().map(|c| c.id).collect();
    assert_eq!(q.candidates[0].key, "Compound::DB00000");

    // Responses: a retried submission id is stored once; a new one bumps the revision.
    let bob = repo
        .create_user("bob@example.org", "Bob", Role::Annotator, "h")
        .unwrap();
    let r1 = repo
        .save_response(ann.id, q.id, &complete("a1", &cids, &[1, 2, 3, 4, 5]))
        .unwrap();
    let again = repo
        .save_response(ann.id, q.id, &complete("a1", &cids, &[5, 4, 3, 2, 1]))
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(again.revision, r1.revision);
    assert_eq!(
        repo.response(r1.response_id).unwrap().unwrap().ranking[0].rank,
        Some(1),
        "duplicate changed nothing"
    );
    assert!(matches!(
        repo.save_response(bob.id, q.id, &complete("a1", &cids, &[1, 1, 1, 1, 1])),
        Err(StoreError::SubmissionReused(_))
    ));
    repo.save_response(bob.id, q.id, &complete("b1", &cids, &[1, 2, 3, 5, 4]))
        .unwrap();
    let p = repo.progress(ann.id).unwrap();
    assert_eq!((p[0].complete, p[0].draft, p[0].resume_at), (1, 0, None));
    assert_eq!(repo.progress(admin.id).unwrap()[0].resume_at, Some(q.id));
    assert_eq!(repo.submission_ids().unwrap().len(), 2);

    // Aggregates: mean ranks (1,2,3,4.5,4.5) → As = {D0} (b = 1).
    let aggs = batch_aggregates(&repo).unwrap();
    assert_eq!(
        (aggs[0].answered, aggs[0].responses, aggs[0].annotators),
        (1, 2, 2)
    );
    // W by hand: R = (2, 4, 6, 9, 9), R̄ = 6, S = 16 + 4 + 0 + 9 + 9 = 38; W = 12·38/(4·120) = 0.95.
    assert!((aggs[0].mean_kendall_w.unwrap() - 0.95).abs() < 1e-12);
    let er = expert_rankings(&repo, Source::Serenqa, 1).unwrap();
    assert_eq!(er.format, "serenqa-expert-rankings");
    assert_eq!(er.questions[0].qid, 7);
    assert_eq!(
        er.questions[0].ranking[..3],
        [
            "Compound::DB00000",
            "Compound::DB00001",
            "Compound::DB00002"
        ]
    );
    assert_eq!(er.questions[0].annotators, Some(2));
    let json = serde_json::to_value(&er).unwrap();
    assert_eq!(json["questions"][0]["question"], "Which drugs treat X?");

    // Export: pseudonyms unless identities are asked for.
    let rows = export_rows(&repo, false).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| r.email.is_none() && r.annotator.starts_with('A')));
    let csv = export_csv(&rows).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 5);
    assert!(!csv.contains("ann@example.org"));
    assert!(csv.contains("\"ok, \"\"quoted\"\"\""));
    let csv = export_csv(&export_rows(&repo, true).unwrap()).unwrap();
    assert!(csv.lines().next().unwrap().contains("email") && csv.contains("ann@example.org"));
    // A comment a spreadsheet would run as a formula is written as text.
    let mut hostile = rows.clone();
    hostile[0].comment = "=HYPERLINK(\"http://x\",\"y\")".into();
    let csv = export_csv(&hostile).unwrap();
    assert!(
        csv.contains("\"'=HYPERLINK(")
            && !csv.contains(",\"=HYPERLINK")
            && !csv.contains(",=HYPERLINK"),
        "{csv}"
    );

    // Reopening keeps everything (and does not re-run migrations).
    drop(repo);
    let repo = SqliteRepo::open(&path).unwrap();
    assert_eq!(repo.all_responses().unwrap().len(), 2);
    assert_eq!(repo.schema_version().unwrap(), 7);
}

fn rusqlite_mode(path: &std::path::Path) -> String {
    // Ask SQLite itself (through a second connection) which journal mode the file uses.
    let out = std::process::Command::new("sqlite3")
        .arg(path)
        .arg("PRAGMA journal_mode;")
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        // No sqlite3 binary: the -wal file exists only in WAL mode.
        _ => {
            if path.with_extension("sqlite-wal").exists() {
                "wal".into()
            } else {
                "other".into()
            }
        }
    }
}

#[test]
fn revisions_are_checked_and_edits_of_a_submission_stay_pending() {
    let repo = SqliteRepo::in_memory().unwrap();
    let mut b = batch();
    let mut q2 = b.questions[0].clone();
    q2.qid = 8;
    b.questions.push(q2);
    repo.import_batches(&[b]).unwrap();
    let qs = repo.questions_of_source(Source::Serenqa).unwrap();
    let (q, q2) = (&qs[0], &qs[1]);
    let cids: Vec<i64> = q.candidates.iter().map(|c| c.id).collect();
    let ann = repo
        .create_user("ann@example.org", "Ann", Role::Annotator, "h")
        .unwrap();

    // A first save must be based on nothing (0); later ones on the stored revision.
    let stale = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("d1", &cids, &[1, 2, 3, 4, 5]), 3, Status::Draft),
        )
        .unwrap_err();
    assert!(
        matches!(
            stale,
            StoreError::Stale {
                revision: 0,
                current: None
            }
        ),
        "{stale:?}"
    );
    let r1 = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("d1", &cids, &[1, 2, 3, 4, 5]), 0, Status::Draft),
        )
        .unwrap();
    assert_eq!(
        (r1.revision, r1.status, r1.pending),
        (1, Status::Draft, false)
    );
    let r2 = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("d2", &cids, &[2, 1, 3, 4, 5]), 1, Status::Draft),
        )
        .unwrap();
    assert_eq!(r2.revision, 2);
    // A delayed older save (based on 1) cannot replace revision 2: 409 with what is stored.
    match repo.save_response(
        ann.id,
        q.id,
        &based(complete("d3", &cids, &[5, 4, 3, 2, 1]), 1, Status::Draft),
    ) {
        Err(StoreError::Stale {
            revision: 2,
            current: Some(c),
        }) => assert_eq!(c.ranking[0].rank, Some(2)),
        other => panic!("expected a stale revision, got {other:?}"),
    }
    assert_eq!(
        repo.response_for(ann.id, q.id).unwrap().unwrap().revision,
        2,
        "the stale save stored nothing"
    );
    // A retry of a stored save answers its outcome again, even though its base is now old.
    let again = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("d2", &cids, &[2, 1, 3, 4, 5]), 1, Status::Draft),
        )
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(again.revision, 2);
    // The same submission id on another question is a conflict, not a duplicate.
    let reused = repo
        .save_response(
            ann.id,
            q2.id,
            &based(complete("d2", &cids, &[1, 2, 3, 4, 5]), 0, Status::Draft),
        )
        .unwrap_err();
    assert!(
        matches!(reused, StoreError::SubmissionReused(_)),
        "{reused:?}"
    );
    assert!(repo.response_for(ann.id, q2.id).unwrap().is_none());

    // Submit; then an autosaved edit is kept beside the submission, which still counts as is.
    let s = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("s1", &cids, &[1, 2, 3, 4, 5]), 2, Status::Complete),
        )
        .unwrap();
    assert_eq!(
        (s.revision, s.status, s.pending),
        (3, Status::Complete, false)
    );
    let e = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("e1", &cids, &[5, 4, 3, 2, 1]), 3, Status::Draft),
        )
        .unwrap();
    assert_eq!(
        (e.revision, e.status, e.pending),
        (4, Status::Complete, true)
    );
    let stored = repo.response_for(ann.id, q.id).unwrap().unwrap();
    assert_eq!(stored.status, Status::Complete);
    assert_eq!(
        stored.ranking[0].rank,
        Some(1),
        "the submission is unchanged"
    );
    assert_eq!(
        stored.pending.as_ref().unwrap().ranking[0].rank,
        Some(5),
        "the edit is pending"
    );
    let er = expert_rankings(&repo, Source::Serenqa, 1).unwrap();
    assert_eq!(
        er.questions[0].ranking[0], "Compound::DB00000",
        "aggregates read the submission, not the edit"
    );
    // An edit back to the submitted ranking clears the pending edit.
    let back = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("e2", &cids, &[1, 2, 3, 4, 5]), 4, Status::Draft),
        )
        .unwrap();
    assert_eq!((back.revision, back.pending), (5, false));
    assert!(repo
        .response_for(ann.id, q.id)
        .unwrap()
        .unwrap()
        .pending
        .is_none());
    // "Update submission" replaces the submission and clears the edit.
    repo.save_response(
        ann.id,
        q.id,
        &based(complete("e3", &cids, &[3, 2, 1, 4, 5]), 5, Status::Draft),
    )
    .unwrap();
    let u = repo
        .save_response(
            ann.id,
            q.id,
            &based(complete("u1", &cids, &[3, 2, 1, 4, 5]), 6, Status::Complete),
        )
        .unwrap();
    assert_eq!(
        (u.revision, u.status, u.pending),
        (7, Status::Complete, false)
    );
    let stored = repo.response_for(ann.id, q.id).unwrap().unwrap();
    assert!(stored.pending.is_none());
    assert_eq!(stored.ranking[0].rank, Some(3));
}

#[test]
fn runs_import_for_the_leaderboard() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(runs.join("r1")).unwrap();
    std::fs::write(runs.join("r1/manifest.json"), r#"{"model": "m1"}"#).unwrap();
    std::fs::write(runs.join("r1/aggregate.json"), r#"{"t1": {"hit": 50}}"#).unwrap();
    std::fs::create_dir_all(runs.join("r2")).unwrap();
    std::fs::write(runs.join("r2/manifest.json"), r#"{"model": "m2"}"#).unwrap();
    std::fs::create_dir_all(runs.join("r3")).unwrap();
    std::fs::write(runs.join("r3/manifest.json"), "not json").unwrap();
    std::fs::write(runs.join("r3/aggregate.json"), "{}").unwrap();
    let repo = SqliteRepo::in_memory().unwrap();
    let (ids, skipped) = serenqa_store::runs::import_runs(&repo, &runs).unwrap();
    assert_eq!(ids, ["r1"]);
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped.iter().any(|s| s.contains("r2/aggregate.json")));
    let stored = repo.runs().unwrap();
    assert_eq!(stored[0].manifest["model"], "m1");
    assert_eq!(stored[0].aggregate["t1"]["hit"], 50);
    // Re-import replaces, never duplicates.
    serenqa_store::runs::import_runs(&repo, &runs).unwrap();
    assert_eq!(repo.runs().unwrap().len(), 1);
    assert!(serenqa_store::runs::import_runs(&repo, &dir.path().join("missing")).is_err());
}

#[test]
fn benchmark_records_import_batched_by_category() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("kgqa.jsonl");
    let rec = |qid: u32, cat: &str| {
        serde_json::json!({"qid": qid, "question": format!("Q{qid}?"), "pattern_type": "1.1", "category": cat, "partition": "test",
            "answer": [{"answer_type": "Compound", "answer_argument": "DB00945", "entity_name": "Aspirin"},
                       {"answer_type": "Compound", "answer_argument": "DB00316", "entity_name": "Acetaminophen"}]})
        .to_string()
    };
    std::fs::write(
        &f,
        format!(
            "{}\n{}\n\n{}\n",
            rec(1, "cancer:carcinoma"),
            rec(2, "cancer:sarcoma"),
            rec(3, "infection")
        ),
    )
    .unwrap();
    let batches = serenqa_store::questionnaire::read_benchmark(&f, |k, id| {
        Some(format!("https://x/{k}/{id}"))
    })
    .unwrap();
    assert_eq!(
        batches
            .iter()
            .map(|b| (b.key.as_str(), b.questions.len()))
            .collect::<Vec<_>>(),
        [("cancer", 2), ("infection", 1)]
    );
    let repo = SqliteRepo::in_memory().unwrap();
    let rep = repo.import_batches(&batches).unwrap();
    assert_eq!((rep.questions_added, rep.candidates_added), (3, 6));
    let q = repo
        .questions_of_source(Source::Benchmark)
        .unwrap()
        .remove(0);
    assert_eq!(q.candidates[0].key, "Compound::DB00945");
    assert_eq!(q.pattern.as_deref(), Some("1.1"));
    std::fs::write(&f, "{not json}\n").unwrap();
    assert!(
        serenqa_store::questionnaire::read_benchmark(&f, |_, _| None)
            .unwrap_err()
            .contains("line 1")
    );
}

#[test]
fn candidate_ids_do_not_follow_the_llm_order() {
    let repo = SqliteRepo::in_memory().unwrap();
    // LLM rank 1 is "Zinc", rank 4 is "Acetone": the questionnaire order is the LLM order.
    let names = ["Zinc", "Naproxen", "Calcium", "Acetone"];
    let mut b = batch();
    b.questions[0].candidates = names
        .iter()
        .enumerate()
        .map(|(i, n)| NewCandidate {
            name: (*n).into(),
            kind: "Compound".into(),
            ident: format!("DB1{i}"),
            link: None,
            llm_rank: Some(i as i64 + 1),
        })
        .collect();
    repo.import_batches(&[b]).unwrap();
    let q = repo.questions_of_source(Source::Serenqa).unwrap().remove(0);
    // Still loaded in the source order, with its positions and LLM ranks (server side only)…
    assert_eq!(
        q.candidates
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        names
    );
    assert_eq!(
        q.candidates.iter().map(|c| c.llm_rank).collect::<Vec<_>>(),
        [Some(1), Some(2), Some(3), Some(4)]
    );
    // …but the ids, which annotators see, ascend in name order.
    let mut by_id = q.candidates.clone();
    by_id.sort_by_key(|c| c.id);
    assert_eq!(
        by_id.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["Acetone", "Calcium", "Naproxen", "Zinc"]
    );
}

#[test]
fn assignment_overlap_coverage_and_password_reset() {
    let repo = SqliteRepo::in_memory().unwrap();
    let mut two = batch();
    two.key = "batch2".into();
    two.questions[0].qid = 8;
    repo.import_batches(&[batch(), two]).unwrap();
    let ann = repo
        .create_user("ann@example.org", "Ann", Role::Annotator, "h")
        .unwrap();
    let bob = repo
        .create_user("bob@example.org", "Bob", Role::Annotator, "h")
        .unwrap();
    let rev = repo
        .create_user("rev@example.org", "Rev", Role::Reviewer, "h")
        .unwrap();
    let b1 = repo.batches().unwrap()[0].id;
    // Open to everyone until assigned.
    assert!(repo.may_annotate(b1, bob.id).unwrap());
    assert_eq!(repo.progress(bob.id).unwrap().len(), 2);
    repo.set_assignment(b1, &[ann.id], Some(2)).unwrap();
    assert!(repo.may_annotate(b1, ann.id).unwrap() && !repo.may_annotate(b1, bob.id).unwrap());
    assert_eq!(
        repo.progress(bob.id).unwrap().len(),
        1,
        "bob no longer sees batch 1"
    );
    assert!(
        matches!(
            repo.set_assignment(b1, &[rev.id], None),
            Err(StoreError::Invalid(_))
        ),
        "only annotators"
    );
    assert!(matches!(
        repo.set_assignment(b1, &[ann.id], Some(0)),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        repo.set_assignment(9999, &[], None),
        Err(StoreError::NotFound(_))
    ));
    // Coverage: submitted rankings per question against k = 2.
    let q = repo.questions_in_batch(b1, ann.id).unwrap()[0].id;
    let cids: Vec<i64> = repo
        .question(q)
        .unwrap()
        .unwrap()
        .candidates
        .iter()
        .map(|c| c.id)
        .collect();
    repo.save_response(ann.id, q, &complete("s1", &cids, &[1, 2, 3, 4, 5]))
        .unwrap();
    let a = repo
        .assignments()
        .unwrap()
        .into_iter()
        .find(|a| a.batch.id == b1)
        .unwrap();
    assert_eq!(
        (
            a.overlap,
            a.annotators.clone(),
            a.coverage.clone(),
            a.covered
        ),
        (Some(2), vec![ann.id], vec![1], 0)
    );
    repo.set_assignment(b1, &[ann.id, bob.id], Some(2)).unwrap();
    repo.save_response(bob.id, q, &complete("s2", &cids, &[2, 1, 3, 4, 5]))
        .unwrap();
    assert_eq!(
        repo.assignments()
            .unwrap()
            .into_iter()
            .find(|a| a.batch.id == b1)
            .unwrap()
            .covered,
        1
    );
    repo.set_assignment(b1, &[], None).unwrap();
    assert!(
        repo.may_annotate(b1, rev.id).unwrap(),
        "unassigned again: open"
    );
    // Reset: one use, ends the sessions, unknown and expired links refused.
    repo.create_session("sess", ann.id, "c", now() + 100)
        .unwrap();
    repo.create_reset("r1", ann.id, None, now() + 60).unwrap();
    assert_eq!(
        repo.reset_user("r1", now()).unwrap().unwrap().email,
        "ann@example.org"
    );
    let u = repo.use_reset("r1", "newhash", now()).unwrap();
    assert_eq!(u.id, ann.id);
    assert_eq!(
        repo.user_by_email("ann@example.org").unwrap().unwrap().1,
        "newhash"
    );
    assert!(
        repo.session("sess", now()).unwrap().is_none(),
        "sessions ended"
    );
    assert!(matches!(
        repo.use_reset("r1", "x", now()),
        Err(StoreError::Conflict(_))
    ));
    assert!(repo.reset_user("r1", now()).unwrap().is_none());
    repo.create_reset("r2", ann.id, None, now() - 1).unwrap();
    assert!(matches!(
        repo.use_reset("r2", "x", now()),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        repo.use_reset("nope", "x", now()),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        repo.create_reset("r3", 9999, None, now() + 60),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn shortlist_per_user_replaces_in_place_and_is_capped() {
    let repo = SqliteRepo::in_memory().unwrap();
    let ann = repo
        .create_user("ann@example.org", "Ann", Role::Annotator, "h")
        .unwrap();
    let bob = repo
        .create_user("bob@example.org", "Bob", Role::Reviewer, "h")
        .unwrap();
    let e = |kind: &str, id: &str| ShortlistEntity {
        kind: kind.into(),
        id: id.into(),
        name: format!("{kind} {id}"),
    };
    let scores = |rns: f64| ShortlistScores {
        plausibility: None,
        percentile: None,
        rns,
        r: 0.5,
        n: 0.5,
        s: Some(0.5),
        weights: serenqa_shared::rns::Weights {
            alpha: 0.5,
            beta: 0.5,
            gamma: 0.0,
        },
        blend: None,
    };
    let item = |c: &str, rns: f64, t: i64| ShortlistItem {
        query: e("Disease", "DOID:1"),
        candidate: e("Compound", c),
        scores: scores(rns),
        added_at: t,
    };
    assert!(repo
        .shortlist_put(ann.id, &item("DB1", 0.1, 10), 3)
        .unwrap());
    assert!(repo
        .shortlist_put(ann.id, &item("DB2", 0.2, 11), 3)
        .unwrap());
    // The same pair again: new scores, same place, not a new item.
    assert!(!repo
        .shortlist_put(ann.id, &item("DB1", 0.9, 12), 3)
        .unwrap());
    let got = repo.shortlist(ann.id).unwrap();
    assert_eq!(
        got.iter()
            .map(|i| (i.candidate.id.as_str(), i.scores.rns))
            .collect::<Vec<_>>(),
        [("DB1", 0.9), ("DB2", 0.2)]
    );
    assert!(
        repo.shortlist(bob.id).unwrap().is_empty(),
        "another user's list is separate"
    );
    assert!(repo
        .shortlist_put(ann.id, &item("DB3", 0.3, 13), 3)
        .unwrap());
    assert!(
        matches!(
            repo.shortlist_put(ann.id, &item("DB4", 0.4, 14), 3),
            Err(StoreError::Full(_))
        ),
        "a fourth item past the cap of 3"
    );
    assert!(
        !repo
            .shortlist_put(ann.id, &item("DB3", 0.5, 15), 3)
            .unwrap(),
        "replacing an item at the cap is fine"
    );
    assert!(repo
        .shortlist_remove(ann.id, "Disease::DOID:1", "Compound::DB2")
        .unwrap());
    assert!(!repo
        .shortlist_remove(ann.id, "Disease::DOID:1", "Compound::DB2")
        .unwrap());
    assert!(repo
        .shortlist_put(ann.id, &item("DB4", 0.4, 16), 3)
        .unwrap());
    assert_eq!(
        repo.shortlist(ann.id)
            .unwrap()
            .iter()
            .map(|i| i.candidate.id.as_str())
            .collect::<Vec<_>>(),
        ["DB1", "DB3", "DB4"]
    );
}
