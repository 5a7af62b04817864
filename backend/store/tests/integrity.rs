//! Annotation integrity (issue 39): the engagement gate of a submission, all-unsure
//! submissions as skips, the recorded presentation order, time on task and revision history in
//! the export, and the weights in force as an explicit, gated and revertible choice.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_store::aggregate::{aggregate_question, export_csv, export_rows};
use serenqa_store::repo::{NewBatch, NewCandidate, NewQuestion};
use serenqa_store::*;

fn repo_with_question() -> (tempfile::TempDir, SqliteRepo, Question) {
    let dir = tempfile::tempdir().unwrap();
    let repo = SqliteRepo::open(&dir.path().join("i.sqlite")).unwrap();
    let cand = |i: i64| NewCandidate {
        name: format!("D{i}"),
        kind: "Compound".into(),
        ident: format!("DB0000{i}"),
        link: None,
        llm_rank: Some(i + 1),
    };
    repo.import_batches(&[NewBatch {
        source: Source::Serenqa,
        key: "batch1".into(),
        name: "Batch one".into(),
        questions: vec![NewQuestion {
            qid: 7,
            text: "Which drugs treat X?".into(),
            category: "c:s".into(),
            pattern: None,
            resources: vec![],
            candidates: (0..4).map(cand).collect(),
        }],
    }])
    .unwrap();
    let qid = repo.questions_of_source(Source::Serenqa).unwrap()[0].id;
    let q = repo.question(qid).unwrap().unwrap();
    (dir, repo, q)
}

/// A complete response listing `order` with ranks 1, 2, 3 …
fn ranked(sub: &str, order: &[i64], unsure: bool) -> NewResponse {
    NewResponse {
        submission_id: sub.into(),
        ranking: order
            .iter()
            .enumerate()
            .map(|(i, &c)| RankEntry {
                candidate: c,
                rank: Some(i as u32 + 1),
                unsure,
            })
            .collect(),
        confidence: Some(3),
        comment: String::new(),
        status: Status::Complete,
        base_revision: 0,
        confirm_shown_order: false,
        time_ms: Some(42_000),
    }
}

#[test]
fn an_untouched_order_needs_the_confirmation_and_a_moved_one_does_not() {
    let (_d, repo, q) = repo_with_question();
    let u = repo
        .create_user("a@example.org", "A", Role::Annotator, "h")
        .unwrap();
    let shown: Vec<i64> = q.candidates.iter().rev().map(|c| c.id).collect();

    // The shown order, untouched, submitted: refused with its code, nothing stored.
    let err = repo
        .save_response_shown(u.id, q.id, &ranked("s1", &shown, false), &shown)
        .unwrap_err();
    match err {
        StoreError::Refused { code, message } => {
            assert_eq!(code, "untouched_order");
            assert!(message.contains("move at least one"), "{message}");
        }
        e => panic!("expected a refusal, got {e:?}"),
    }
    assert!(repo.response_for(u.id, q.id).unwrap().is_none());

    // The same order as a draft is fine (autosave of an untouched page).
    let mut draft = ranked("s2", &shown, false);
    draft.status = Status::Draft;
    let out = repo
        .save_response_shown(u.id, q.id, &draft, &shown)
        .unwrap();

    // Confirmed: accepted and recorded as confirmed.
    let mut confirmed = ranked("s3", &shown, false);
    confirmed.confirm_shown_order = true;
    confirmed.base_revision = out.revision;
    let out = repo
        .save_response_shown(u.id, q.id, &confirmed, &shown)
        .unwrap();
    let r = repo.response_for(u.id, q.id).unwrap().unwrap();
    assert!(r.confirmed_shown_order);
    assert_eq!(r.presented, shown);
    assert_eq!(r.time_ms, Some(42_000));

    // One move is engagement: no confirmation needed. A tie alone is a change too.
    let mut moved = shown.clone();
    moved.swap(0, 1);
    let mut m = ranked("s4", &moved, false);
    m.base_revision = out.revision;
    let out = repo.save_response_shown(u.id, q.id, &m, &shown).unwrap();
    let mut tied = ranked("s5", &shown, false);
    tied.ranking[1].rank = Some(1);
    for e in tied.ranking.iter_mut().skip(2) {
        e.rank = e.rank.map(|k| k - 1);
    }
    tied.base_revision = out.revision;
    repo.save_response_shown(u.id, q.id, &tied, &shown).unwrap();
    let r = repo.response_for(u.id, q.id).unwrap().unwrap();
    assert!(!r.confirmed_shown_order);
    // The presentation order is the first one recorded, whatever later saves send.
    assert_eq!(r.presented, shown);

    // The shared rule the page shows is the same rule.
    assert!(serenqa_shared::annotate::is_shown_order(
        &shown,
        &ranked("x", &shown, false).ranking
    ));
    assert!(!serenqa_shared::annotate::is_shown_order(
        &shown,
        &ranked("x", &moved, false).ranking
    ));
}

#[test]
fn all_unsure_is_a_skip_not_coverage() {
    let (_d, repo, q) = repo_with_question();
    let a = repo
        .create_user("a@example.org", "A", Role::Annotator, "h")
        .unwrap();
    let b = repo
        .create_user("b@example.org", "B", Role::Annotator, "h")
        .unwrap();
    let ids: Vec<i64> = q.candidates.iter().map(|c| c.id).collect();
    repo.set_assignment(q.batch_id, &[], Some(1)).unwrap();

    // Every candidate unsure: accepted (the annotator is done with it) but a skip.
    repo.save_response(a.id, q.id, &ranked("a1", &ids, true))
        .unwrap();
    let r = repo.response_for(a.id, q.id).unwrap().unwrap();
    assert!(r.skipped());
    let cov = |repo: &SqliteRepo| {
        let asg = repo.assignments().unwrap();
        (asg[0].coverage.clone(), asg[0].covered)
    };
    assert_eq!(cov(&repo), (vec![0], 0), "a skip covers nothing");
    let rs = repo.responses_for_question(q.id).unwrap();
    assert_eq!(aggregate_question(&q, &rs).annotators, 0);

    // One unsure candidate is not a skip.
    let mut partly = ranked("b1", &ids, false);
    partly.ranking[0].unsure = true;
    repo.save_response(b.id, q.id, &partly).unwrap();
    assert_eq!(cov(&repo), (vec![1], 1));
    let rs = repo.responses_for_question(q.id).unwrap();
    assert_eq!(aggregate_question(&q, &rs).annotators, 1);

    // The export says which is which.
    let rows = export_rows(&repo, false).unwrap();
    let skipped: Vec<(String, bool)> = rows
        .iter()
        .map(|r| (r.annotator.clone(), r.skipped))
        .collect();
    assert_eq!(
        skipped,
        vec![(format!("A{}", a.id), true), (format!("A{}", b.id), false)]
    );
}

#[test]
fn every_save_is_kept_and_exported_with_the_shown_order_and_time() {
    let (_d, repo, q) = repo_with_question();
    let u = repo
        .create_user("a@example.org", "A", Role::Annotator, "h")
        .unwrap();
    let shown: Vec<i64> = q.candidates.iter().map(|c| c.id).collect();
    let mut mine = shown.clone();
    mine.reverse();
    let mut d = ranked("h1", &mine, false);
    d.status = Status::Draft;
    d.confidence = None;
    d.time_ms = Some(5_000);
    let out = repo.save_response_shown(u.id, q.id, &d, &shown).unwrap();
    // A retry of the same save is stored once, in the history too.
    repo.save_response_shown(u.id, q.id, &d, &shown).unwrap();
    let mut c = ranked("h2", &mine, false);
    c.base_revision = out.revision;
    c.time_ms = Some(61_500);
    let out = repo.save_response_shown(u.id, q.id, &c, &shown).unwrap();
    // An edit after submitting stays a pending draft, and is in the history.
    let mut e = ranked("h3", &shown, false);
    e.status = Status::Draft;
    e.base_revision = out.revision;
    e.time_ms = Some(70_000);
    repo.save_response_shown(u.id, q.id, &e, &shown).unwrap();

    let hist = repo.revisions().unwrap();
    let got: Vec<(i64, &str, Status, Option<u64>)> = hist
        .iter()
        .map(|h| (h.revision, h.submission_id.as_str(), h.status, h.time_ms))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "h1", Status::Draft, Some(5_000)),
            (2, "h2", Status::Complete, Some(61_500)),
            (3, "h3", Status::Draft, Some(70_000)),
        ]
    );

    let rows = export_rows(&repo, false).unwrap();
    let row = &rows[0];
    let keys: Vec<String> = shown
        .iter()
        .map(|id| {
            q.candidates
                .iter()
                .find(|c| c.id == *id)
                .unwrap()
                .key
                .clone()
        })
        .collect();
    assert_eq!(row.presented, keys);
    assert_eq!(row.time_on_task_s, Some(70.0));
    assert_eq!(row.history.len(), 3);
    assert_eq!(row.history[1].status, Status::Complete);
    assert_eq!(row.history[1].ranking[0].key, keys[3], "saved order kept");
    // The CSV carries the shown position, time and the number of saves.
    let csv = export_csv(&rows).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with("skipped,confirmed_shown_order,shown_position,time_on_task_s,revisions"),
        "{header}"
    );
    let first = csv.lines().nth(1).unwrap();
    assert!(first.ends_with("false,false,1,70.0,3"), "{first}");

    // A time on task far beyond a day is capped, not refused.
    let mut long = ranked("h4", &mine, false);
    long.base_revision = 3;
    long.time_ms = Some(u64::MAX);
    repo.save_response_shown(u.id, q.id, &long, &shown).unwrap();
    let r = repo.response_for(u.id, q.id).unwrap().unwrap();
    assert_eq!(
        r.time_ms,
        Some(serenqa_shared::annotate::MAX_TIME_ON_TASK_MS)
    );
}

fn calibration(created_at: i64, questions: i64, annotators: i64, alpha: f64) -> CalibrationRecord {
    CalibrationRecord {
        id: 0,
        created_at,
        alpha,
        beta: 0.5,
        gamma: 0.0,
        agreement: 0.4,
        questions,
        annotators,
        provenance: serde_json::json!({}),
    }
}

#[test]
fn weights_are_put_in_force_explicitly_within_the_minimums_and_revert() {
    use serenqa_shared::annotate::{
        CALIBRATION_MIN_ANNOTATORS as MA, CALIBRATION_MIN_QUESTIONS as MQ,
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = SqliteRepo::open(&dir.path().join("w.sqlite")).unwrap();
    assert!(
        repo.weights_in_force().unwrap().is_none(),
        "shipped at first"
    );

    // Storing a calibration puts nothing in force.
    let small = repo.add_calibration(&calibration(100, 4, 2, -0.5)).unwrap();
    assert!(repo.weights_in_force().unwrap().is_none());
    let stored = repo.calibrations().unwrap();
    assert_eq!((stored[0].questions, stored[0].annotators), (4, 2));

    // Below the minimums (the 4 questions by 2 annotators): refused, nothing changes.
    for (q, a) in [
        (4, 2),
        (MQ as i64 - 1, MA as i64),
        (MQ as i64, MA as i64 - 1),
    ] {
        let id = repo.add_calibration(&calibration(101, q, a, 0.1)).unwrap();
        match repo.use_weights(Some(id), "admin@x", "", 200).unwrap_err() {
            StoreError::Refused { code, message } => {
                assert_eq!(code, "below_minimum");
                assert!(message.contains("too little expert data"), "{message}");
            }
            e => panic!("expected below_minimum, got {e:?}"),
        }
    }
    assert!(repo.use_weights(Some(small), "admin@x", "", 200).is_err());
    assert!(matches!(
        repo.use_weights(Some(9_999), "admin@x", "", 200),
        Err(StoreError::NotFound(_))
    ));
    assert!(repo.weights_in_force().unwrap().is_none());
    assert!(repo.weights_history().unwrap().is_empty());

    // At the minimums: in force once an admin says so; a newer calibration does not replace it.
    let first = repo
        .add_calibration(&calibration(300, MQ as i64, MA as i64, -0.3))
        .unwrap();
    repo.use_weights(Some(first), "admin@x", "use these weights", 310)
        .unwrap();
    let second = repo
        .add_calibration(&calibration(400, 100, 5, 0.2))
        .unwrap();
    assert_eq!(repo.weights_in_force().unwrap().unwrap().id, first);
    repo.use_weights(Some(second), "admin@x", "", 410).unwrap();
    assert_eq!(repo.weights_in_force().unwrap().unwrap().id, second);

    // Revert to an earlier calibration, then to the shipped weights.
    repo.use_weights(Some(first), "admin@x", "revert", 420)
        .unwrap();
    assert_eq!(repo.weights_in_force().unwrap().unwrap().id, first);
    repo.use_weights(None, "admin@x", "revert to shipped", 430)
        .unwrap();
    assert!(repo.weights_in_force().unwrap().is_none());

    let h: Vec<(Option<i64>, i64, String)> = repo
        .weights_history()
        .unwrap()
        .into_iter()
        .map(|c| (c.calibration, c.at, c.note))
        .collect();
    assert_eq!(
        h,
        vec![
            (None, 430, "revert to shipped".to_string()),
            (Some(first), 420, "revert".to_string()),
            (Some(second), 410, String::new()),
            (Some(first), 310, "use these weights".to_string()),
        ]
    );
}
