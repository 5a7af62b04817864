//! The builder is schema-generic: on a CKG-shaped synthetic graph (other node types and
//! relation names, no hand-written phrases) it still produces clean questions whose Cypher
//! the executor answers identically, and valid removals, without a model.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serenqa_benchmark::build::{build, BuildConfig, Strategy};
use serenqa_benchmark::cypher;
use serenqa_benchmark::exec::run_question_cypher;
use serenqa_benchmark::partition::offline_scorers;
use serenqa_benchmark::phrasing::check_text;
use serenqa_benchmark::query::View;
use serenqa_graph::synth::{generate, SynthSpec};

#[test]
fn synthetic_ckg_schema_questions_cypher_and_removal() {
    let g = generate(&SynthSpec {
        nodes: 30_000,
        edges: 200_000,
        seed: 3,
        progress: false,
    });
    let scorers = offline_scorers(&g, None);
    let mut cfg = BuildConfig::default();
    cfg.gen.questions = 40;
    cfg.gen.seed = 11;
    let b = build(&g, None, &scorers, None, &cfg).expect("build");
    assert!(b.questions.len() >= 30, "{:?}", b.reports);
    assert!(b
        .manifest
        .notes
        .iter()
        .any(|n| n.contains("RNS-guided strategy was skipped")));
    for q in &b.questions {
        check_text(&q.text).unwrap_or_else(|e| panic!("{e}"));
        let text = cypher::render(&g, &q.query);
        assert_eq!(
            run_question_cypher(View::full(&g), &q.query, &text).expect("cypher"),
            q.answers,
            "{text}"
        );
    }
    let ens = b
        .strategies
        .iter()
        .find(|s| s.strategy == Strategy::Ensemble)
        .unwrap();
    let view = View::without(&g, &ens.removal.removed);
    let mut kept = 0;
    for (i, q) in b.questions.iter().enumerate() {
        let (Some(p), true) = (&ens.partitions[i], ens.kept[i]) else {
            continue;
        };
        kept += 1;
        let got = run_question_cypher(view, &q.query, &cypher::render(&g, &q.query))
            .expect("cypher on G");
        assert_eq!(got, p.existing, "qid {}", q.qid);
    }
    assert!(kept > 0);
}
