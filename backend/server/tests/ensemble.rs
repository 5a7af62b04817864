//! The benchmark's LLM-ensemble partition against the scripted OpenAI-compatible server
//! (`src/scripted_llm.rs`, a test double, not a model): four ensemble models — two that
//! rank the answers by name, one whose first reply repeats one score (invalid: scores must be
//! distinct) and is accepted on its retry, and one that always replies with words. The build
//! must average the three valid models, take the top b, drop the malformed model for every
//! question and record that in the manifest. Nine questions on Hetionet, no RNS model: fast.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[path = "../src/scripted_llm.rs"]
mod scripted_llm;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serenqa_benchmark::build::{build, BuildConfig, Strategy};
use serenqa_benchmark::partition::{budget, Scorer, ScoringRequest};
use serenqa_graph::filter::{self, FilterSpec};
use serenqa_graph::load::{hetionet, LoadOptions};
use serenqa_graph::{datadir, Graph};
use serenqa_pipeline::ensemble::{answer_list, llm_scorers};
use serenqa_pipeline::llm::{LlmClient, ModelsFile};

/// Hetionet as the CLI loads it (default filter), through the cached snapshot when present.
fn hetionet_graph(data: &Path) -> Graph {
    let files = hetionet::HetionetFiles::in_dir(&data.join("hetionet")).expect("Hetionet files");
    let snap = files.snapshot_path();
    if let Ok(g) = Graph::load(&snap) {
        return g;
    }
    let g = hetionet::load(&files, &LoadOptions { progress: false }).expect("load Hetionet");
    filter::apply(g, &FilterSpec::default()).0
}

const MODELS: [&str; 4] = ["ens-a", "ens-b", "ens-flaky", "ens-bad"];

#[test]
fn four_model_ensemble_averages_the_valid_models_and_records_the_dropped_one() {
    let Some(data) = datadir::data_dir_above(Path::new(env!("CARGO_MANIFEST_DIR"))) else {
        datadir::missing_resource("no Hetionet data (../shared/data or $SERENQA_DATA)");
        return;
    };
    let g = hetionet_graph(&data);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let llm = rt.block_on(scripted_llm::start(Duration::ZERO)).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let models: ModelsFile = serde_json::from_value(serde_json::json!({
        "models": MODELS.iter().map(|m| serde_json::json!({
            "name": m, "base_url": llm.base_url, "model": m, "temperature": 0.0,
            "max_tokens": 64, "timeout_secs": 30.0, "max_retries": 0, "backoff_ms": 10, "concurrency": 4
        })).collect::<Vec<_>>(),
        "ensemble": MODELS,
    }))
    .unwrap();
    models.validate().unwrap();
    let client = Arc::new(LlmClient::new(&models, Some(cache.path().to_path_buf())).unwrap());
    let scorers: Vec<Box<dyn Scorer>> = llm_scorers(&models, client, rt.handle().clone())
        .into_iter()
        .map(|s| Box::new(s) as Box<dyn Scorer>)
        .collect();
    assert_eq!(scorers.len(), 4);
    let mut cfg = BuildConfig::default();
    cfg.gen.questions = 9;
    let b = build(&g, None, &scorers, None, &cfg).expect("build");
    let nq = b.questions.len();
    assert!(nq >= 5, "{nq} questions");

    // The expected partition, computed here from the scripted models' scores: the mean of
    // the three valid models (the flaky one counts: its retry is valid), top b by mean, ties
    // by lower node id.
    let ens = b
        .strategies
        .iter()
        .find(|s| s.strategy == Strategy::Ensemble)
        .unwrap();
    for (i, q) in b.questions.iter().enumerate() {
        let req = ScoringRequest::new(&g, q.qid, &q.text, &q.answers);
        let list = answer_list(&req);
        let names: Vec<&str> = list.split(", ").collect();
        assert_eq!(
            names.len(),
            req.candidates.len(),
            "one list item per answer"
        );
        let valid =
            ["ens-a", "ens-b", "ens-flaky"].map(|m| scripted_llm::ensemble_scores(m, &names));
        let mean: Vec<f64> = (0..names.len())
            .map(|k| valid.iter().map(|s| f64::from(s[k])).sum::<f64>() / 3.0)
            .collect();
        assert_eq!(
            b.ensemble_scores[i], mean,
            "question {}: mean over the valid models",
            q.qid
        );
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&x, &y| {
            mean[y]
                .total_cmp(&mean[x])
                .then(req.candidates[x].node.cmp(&req.candidates[y].node))
        });
        let mut want: Vec<u32> = order
            .iter()
            .take(budget(names.len()))
            .map(|&k| req.candidates[k].node)
            .collect();
        want.sort_unstable();
        let got = ens.partitions[i].as_ref().expect("an ensemble partition");
        assert_eq!(got.serendipity, want, "question {}", q.qid);
        // Had the malformed model's scores counted, this is what could differ; the flaky
        // model's ranking (descending names) is the reverse of ens-a's, so dropping it
        // instead would change the mean too.
        let two: Vec<f64> = (0..names.len())
            .map(|k| f64::from(valid[0][k] + valid[1][k]) / 2.0)
            .collect();
        assert_ne!(
            two, mean,
            "the flaky model's retried scores are part of the mean"
        );
    }

    // The manifest: every scorer is an LLM; the malformed model is dropped for every question.
    let m = &b.manifest;
    assert_eq!(m.ensemble, "llm");
    assert!(m.scorers.iter().all(|s| s.llm) && m.scorers.iter().any(|s| s.label == "llm:ens-bad"));
    assert_eq!(m.ensemble_dropped.len(), nq, "{:?}", m.ensemble_dropped);
    let mut qids: Vec<u32> = b.questions.iter().map(|q| q.qid).collect();
    qids.sort_unstable();
    assert_eq!(
        m.ensemble_dropped.iter().map(|d| d.qid).collect::<Vec<_>>(),
        qids
    );
    for d in &m.ensemble_dropped {
        assert_eq!(d.scorer, "llm:ens-bad");
        assert!(
            d.reason.contains("is not an integer") && d.reason.contains("after 3 attempts"),
            "{}",
            d.reason
        );
    }
    // Calls: 1 each for the two good models, 2 for the flaky one, 3 for the malformed one.
    assert_eq!(llm.calls.load(Ordering::Relaxed), 7 * nq);
    let dir = tempfile::tempdir().unwrap();
    b.write(&g, dir.path()).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(written["ensemble"], "llm");
    assert_eq!(written["ensemble_dropped"].as_array().unwrap().len(), nq);
    assert_eq!(written["ensemble_dropped"][0]["scorer"], "llm:ens-bad");
    let stats =
        serenqa_benchmark::stats::table1(&serenqa_benchmark::stats::load_dir(dir.path()).unwrap());
    assert!(
        stats.contains("dropped: question") && stats.contains("llm:ens-bad"),
        "{stats}"
    );
}
