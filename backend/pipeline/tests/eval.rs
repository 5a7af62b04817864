//! End-to-end evaluation runs on a small Hetionet benchmark: the offline pipeline, resume
//! after a crash, the LLM path with bad model output, and `ask`.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{hetionet, small_bench, start, Answer};
use serenqa_pipeline::ask::{ask, AskContext, AskRequest};
use serenqa_pipeline::failures::{FailedItem, FAILED_FILE};
use serenqa_pipeline::llm::{ModelSpec, ModelsFile};
use serenqa_pipeline::run::{run_eval, EvalConfig};
use serenqa_pipeline::trace::{read_trace, T1Record, T3Record, T1_FILE, T3_FILE};

fn config(runs: &std::path::Path) -> EvalConfig {
    let mut c = EvalConfig::new(small_bench(), runs.to_path_buf());
    c.limit = Some(16);
    c.concurrency = 8;
    c.run_id = Some("test-run".into());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_run_produces_both_tables_and_real_scores() {
    let runs = tempfile::tempdir().unwrap();
    let out = run_eval(&config(runs.path()), hetionet(), None)
        .await
        .expect("offline run");
    println!("{}", out.markdown);
    let t2 = out.aggregate.table2.as_ref().expect("table 2");
    let all = &t2["all"];
    assert_eq!(all.n, 16);
    assert!(
        all.exe > 50.0,
        "the grammar agent parses most benchmark questions: exe {}",
        all.exe
    );
    assert!(all.f1 > 30.0, "and answers many of them: F1 {}", all.f1);
    let t3 = out.aggregate.table3_exploration.as_ref().expect("table 3");
    let llm = &t3["llm"];
    assert!(llm.n > 0);
    assert!((0.0..=1.0).contains(&llm.type_match) && (0.0..=1.0).contains(&llm.seren_hit));
    assert!((1.0..=5.0).contains(&llm.relevance));
    let reasoning = &out.aggregate.table3_reasoning.as_ref().expect("T2")["llm"];
    assert!(
        reasoning.faithfulness > 4.5,
        "template summaries state only subgraph facts: {}",
        reasoning.faithfulness
    );
    assert_eq!(out.aggregate.judge, "proxy");
    // The small benchmark has no expert rankings: its Table 3 columns exist and stay empty.
    assert_eq!(t3["expert"].n, 0);
    assert!(out.markdown.contains("Expert Crowdsourced") && out.markdown.contains("– | – | –"));
    assert!(
        out.markdown.contains("Faithful. (proxy)")
            && out.markdown.contains("Table 2")
            && out.markdown.contains("w.o. summary")
    );
    // Files of the runs directory.
    for f in [
        "manifest.json",
        "aggregate.json",
        "aggregate.csv",
        "aggregate.md",
        T1_FILE,
        T3_FILE,
    ] {
        assert!(out.dir.join(f).is_file(), "{f}");
    }
    assert_eq!(out.manifest.status, "complete");
    let t1: Vec<T1Record> = read_trace(&out.dir.join(T1_FILE)).unwrap();
    assert_eq!(t1.len(), 16);
    assert!(t1
        .iter()
        .any(|r| r.retrieved.cypher.is_some() && r.f1 == 1.0));
    // Listing for the web app.
    let listed = serenqa_pipeline::runs_dir::list_runs(runs.path());
    assert_eq!(listed.len(), 1);
    assert!(listed[0].aggregate.is_some());
    let q = serenqa_pipeline::runs_dir::question_lines(runs.path(), "test-run", t1[0].qid).unwrap();
    assert_eq!(q.t1.len(), 1);
    assert!(serenqa_pipeline::runs_dir::question_lines(runs.path(), "../etc", 1).is_err());
}

fn sorted_keys<T>(xs: &[T], key: impl Fn(&T) -> String) -> Vec<String> {
    let mut k: Vec<String> = xs.iter().map(key).collect();
    k.sort();
    k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_run_resumes_to_the_uninterrupted_result() {
    let g = hetionet();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let full = run_eval(&config(a.path()), g.clone(), None)
        .await
        .expect("uninterrupted run");

    let mut crash = config(b.path());
    crash.crash_after = Some(9);
    let err = run_eval(&crash, g.clone(), None)
        .await
        .err()
        .expect("the simulated crash stops the run");
    assert!(err.contains("simulated crash"), "{err}");
    let dir = b.path().join("test-run");
    let partial_t1 = std::fs::read_to_string(dir.join(T1_FILE)).unwrap_or_default();
    let partial_t3 = std::fs::read_to_string(dir.join(T3_FILE)).unwrap_or_default();
    // The premise of the resume check: the simulated crash left a half-written last line.
    let torn = |t: &str| !t.is_empty() && !t.ends_with('\n');
    assert!(
        torn(&partial_t1) || torn(&partial_t3),
        "the crash should leave a torn last line behind (t1 {} bytes, t3 {} bytes)",
        partial_t1.len(),
        partial_t3.len()
    );
    let before = partial_t1.lines().count() + partial_t3.lines().count();
    assert!(
        before < 16 + full.aggregate.table3_exploration.as_ref().unwrap()["llm"].n,
        "the crash happened mid-way"
    );

    let resumed = run_eval(&config(b.path()), g, None)
        .await
        .expect("resumed run");
    assert_eq!(
        resumed.aggregate, full.aggregate,
        "same tables as the uninterrupted run"
    );
    assert_eq!(resumed.markdown, full.markdown);
    let (t1a, t1b): (Vec<T1Record>, Vec<T1Record>) = (
        read_trace(&full.dir.join(T1_FILE)).unwrap(),
        read_trace(&resumed.dir.join(T1_FILE)).unwrap(),
    );
    let (t3a, t3b): (Vec<T3Record>, Vec<T3Record>) = (
        read_trace(&full.dir.join(T3_FILE)).unwrap(),
        read_trace(&resumed.dir.join(T3_FILE)).unwrap(),
    );
    assert_eq!(
        sorted_keys(&t1a, |r| r.key.clone()),
        sorted_keys(&t1b, |r| r.key.clone()),
        "nothing lost or duplicated (T1)"
    );
    assert_eq!(
        sorted_keys(&t3a, |r| r.key.clone()),
        sorted_keys(&t3b, |r| r.key.clone()),
        "nothing lost or duplicated (T3)"
    );
    let by_key = |xs: Vec<T3Record>| {
        xs.into_iter()
            .map(|r| (r.key.clone(), r))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(by_key(t3a), by_key(t3b), "identical records");
    // A third invocation has nothing left to do and changes nothing.
    let again = run_eval(&config(b.path()), hetionet(), None).await.unwrap();
    assert_eq!(again.aggregate, full.aggregate);
    assert_eq!(
        read_trace::<T1Record>(&again.dir.join(T1_FILE))
            .unwrap()
            .len(),
        16
    );
}

/// A scripted model playing every role, with bad output mixed in.
fn role_script() -> common::Script {
    let retrievals = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |v, n| {
        let sys = common::system_text(v);
        let user = common::user_text(v);
        if sys.contains("translate biomedical questions into Cypher") {
            // Per-role counter, so every kind of bad reply occurs whatever the interleaving.
            return match retrievals.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 4 {
                0 => Answer::ok("I am not sure, sorry."),
                1 => Answer::ok("```cypher\nMATCH (x:Compound) RETURN x.id AS id LIMIT 3\n```"),
                2 => Answer::ok("```cypher\nMATCH (x:Compound {name: 'nothing' RETURN x\n```"),
                _ => Answer::ok("```cypher\nCREATE (x:Compound {id: 'evil'})\n```"),
            };
        }
        if sys.contains("RELEVANCE") && n % 3 == 0 {
            // A failed call: its item is recorded as failed, not scored.
            return Answer::status(500);
        }
        if sys.contains("pick the relation types") {
            // The first offered relation, plus a hallucinated one.
            let rel = user
                .lines()
                .skip_while(|l| !l.starts_with("Relation types available"))
                .nth(1)
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            return Answer::ok(&format!("{rel}, MADE_UP_REL"));
        }
        if sys.contains("Choose the ones to expand next") {
            let ids: Vec<String> = user
                .lines()
                .skip_while(|l| !l.starts_with("Candidates"))
                .skip(1)
                .take(5)
                .filter_map(|l| l.split(" | ").next().map(str::to_string))
                .collect();
            return Answer::ok(&format!("{}, NOT_A_NODE", ids.join(", ")));
        }
        if sys.contains("going one level deeper") {
            return Answer::ok(
                "The paths link the roots to related compounds.\n\nYES\n\nPlausible.",
            );
        }
        if sys.contains("Summarise the subgraph") {
            return Answer::ok("A summary naming nothing in particular.");
        }
        if sys.contains("Rate FAITHFULNESS") || sys.contains("Rate COMPREHENSIVENESS") {
            return if n % 3 == 0 {
                Answer::ok("Very good work overall!")
            } else {
                Answer::ok("Score: 4\n#END")
            };
        }
        if sys.contains("RELEVANCE") {
            return Answer::ok("Score: 2\n#END");
        }
        Answer::ok("")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_path_records_bad_output_and_keeps_going() {
    let srv = start(role_script()).await;
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let spec = ModelSpec {
        name: "scripted".into(),
        base_url: srv.base_url.clone(),
        model: "scripted-1".into(),
        api_key_env: None,
        temperature: 0.0,
        max_tokens: 256,
        timeout_secs: 10.0,
        max_retries: 0,
        backoff_ms: 1,
        concurrency: 16,
        params_b: None,
    };
    let mut cfg = config(runs.path());
    cfg.limit = Some(6);
    cfg.models = ModelsFile {
        models: vec![spec],
        roles: [("default".to_string(), "scripted".to_string())].into(),
        cache_dir: None,
        ensemble: Vec::new(),
    };
    cfg.cache_dir = Some(cache.path().to_path_buf());
    cfg.explore.beam_width = 5;
    cfg.explore.depth = 2;
    let out = run_eval(&cfg, hetionet(), None)
        .await
        .expect("LLM run completes despite bad output");
    println!("{}", out.markdown);
    let t2 = out.aggregate.table2.as_ref().unwrap();
    assert!(
        t2["all"].exe < 100.0,
        "non-Cypher, syntax errors and CREATE are non-executable"
    );
    let t1: Vec<T1Record> = read_trace(&out.dir.join(T1_FILE)).unwrap();
    assert!(
        t1.iter().any(|r| r
            .retrieved
            .error
            .as_deref()
            .is_some_and(|e| e.contains("read-only") || e.contains("CREATE"))),
        "write query refused"
    );
    assert!(t1.iter().any(|r| r
        .call
        .as_ref()
        .is_some_and(|c| c.issues.iter().any(|i| i.contains("no Cypher")))));
    let failed: Vec<_> = t1.iter().filter(|r| !r.retrieved.executable).collect();
    assert!(
        !failed.is_empty(),
        "the scripted model sends non-executable queries"
    );
    assert!(failed.iter().all(|r| r.hit == 0.0 && r.f1 == 0.0));
    let t3: Vec<T3Record> = read_trace(&out.dir.join(T3_FILE)).unwrap();
    assert!(!t3.is_empty());
    assert_eq!(out.aggregate.judge, "scripted");
    let calls: Vec<_> = t3.iter().flat_map(|r| r.calls.iter()).collect();
    assert!(
        calls.iter().any(|c| c
            .issues
            .iter()
            .any(|i| i.contains("not an offered relation"))),
        "hallucinated relation recorded"
    );
    assert!(
        calls
            .iter()
            .any(|c| c.issues.iter().any(|i| i.contains("not a candidate id"))),
        "hallucinated node recorded"
    );
    let errors: Vec<_> = t1
        .iter()
        .filter_map(|r| r.call.as_ref())
        .chain(calls.iter().copied())
        .filter_map(|c| c.error.clone())
        .collect();
    assert!(errors.is_empty(), "no failed call is scored: {errors:?}");
    let failed: Vec<FailedItem> = read_trace(&out.dir.join(FAILED_FILE)).unwrap();
    assert!(
        failed
            .iter()
            .any(|f| f.error_kind == "http" && f.error.contains("500")),
        "HTTP error recorded as a failed item: {failed:?} ({} calls)",
        srv.count.load(std::sync::atomic::Ordering::SeqCst)
    );
    assert!(failed
        .iter()
        .all(|f| f.key.starts_with("t3:") && !t3.iter().any(|r| r.key == f.key)));
    assert_eq!(out.manifest.status, "incomplete");
    assert_eq!(out.manifest.failed, failed.len());
    assert_eq!(
        out.manifest.failed_by_kind,
        BTreeMap::from([("http".to_string(), failed.len())])
    );
    let unparsable: Vec<_> = t3
        .iter()
        .filter_map(|r| r.t2.as_ref())
        .filter(|s| s.faithfulness.unparsable || s.comprehensiveness.unparsable)
        .collect();
    assert!(
        !unparsable.is_empty(),
        "the scripted judges send unparsable replies"
    );
    assert!(unparsable.iter().all(
        |s| (s.faithfulness.unparsable && s.faithfulness.score == 1.0)
            || (s.comprehensiveness.unparsable && s.comprehensiveness.score == 1.0)
    ));
    assert!(
        t3.iter().any(|r| r.mode == "without"),
        "LLM explorers also run without summaries"
    );
    assert!(out.manifest.llm.calls > 0);

    // Rerun: every reply that succeeded comes from the cache.
    let before = srv.count.load(std::sync::atomic::Ordering::SeqCst);
    let runs2 = tempfile::tempdir().unwrap();
    let mut cfg2 = cfg.clone();
    cfg2.runs_dir = runs2.path().to_path_buf();
    let again = run_eval(&cfg2, hetionet(), None).await.unwrap();
    assert!(again.manifest.llm.cache_hits > 0);
    let after = srv.count.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        after - before < before / 2,
        "rerun is mostly cached ({} new calls of {before})",
        after - before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_answers_a_free_text_question_offline() {
    let g = hetionet();
    let ctx = AskContext::new(g, None, ModelsFile::offline(), None).unwrap();
    let r = ask(
        &ctx,
        &AskRequest {
            question: "Which compounds treat asthma?".into(),
            model: None,
            limit: Some(10),
        },
    )
    .await
    .unwrap();
    assert!(
        r.cypher
            .as_deref()
            .is_some_and(|c| c.contains("TREATS_CtD")),
        "{:?}",
        r.cypher
    );
    assert!(r.answers.len() >= 2, "{:?}", r.answers);
    // Ae (the answers and asthma) holds more than one entity: S is informative and shown.
    assert!(!r.s_hidden);
    assert!(!r.candidates.is_empty());
    assert!(r
        .candidates
        .iter()
        .all(|c| c.node.kind == "Compound" && !r.answers.iter().any(|a| a.id == c.node.id)));
    assert!(r.candidates.iter().all(|c| !c.paths.is_empty()));
    assert_eq!(
        r.stages.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["retrieval", "exploration", "scoring"]
    );
    assert!(ask(
        &ctx,
        &AskRequest {
            question: "  ".into(),
            model: None,
            limit: None
        }
    )
    .await
    .is_err());
    assert!(ask(
        &ctx,
        &AskRequest {
            question: "hi".into(),
            model: Some("gpt-x".into()),
            limit: None
        }
    )
    .await
    .is_err());
    let none = ask(
        &ctx,
        &AskRequest {
            question: "Tell me a joke".into(),
            model: None,
            limit: None,
        },
    )
    .await
    .unwrap();
    assert!(none.answers.is_empty() && none.cypher.is_none());
}
