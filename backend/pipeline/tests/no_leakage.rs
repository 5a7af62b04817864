//! Exploration (T3) sees only G = Gc − R: running T3 on Gc with a partition's removed set R,
//! and on a graph from which R's edges were really deleted, gives byte-identical records.
//! Before per-partition views, the explorer's degrees, P3 slices, marginals and type
//! statistics came from Gc, so the removed edges that hide the serendipity set steered it.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use common::{hetionet, small_bench};
use serenqa_model::{Model, ModelConfig};
use serenqa_pipeline::bench::Benchmark;
use serenqa_pipeline::run::{run_eval, EvalConfig, TaskKind, T3_FILE};

fn t3_lines(dir: &std::path::Path, partition: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join(T3_FILE)).expect("t3 trace");
    text.lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["partition"] == partition)
                .then(|| (v["key"].as_str().unwrap_or("").to_string(), l.to_string()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t3_records_do_not_depend_on_the_removed_edges() {
    let gc = hetionet();
    let bench_dir = small_bench();
    let bench = Benchmark::load(&bench_dir, &gc).expect("benchmark");
    let (partition, removed) = bench
        .removed
        .iter()
        .find(|(_, m)| !m.is_empty())
        .map(|(p, m)| (p.clone(), m.clone()))
        .expect("a partition with removed edges");
    let cfg = ModelConfig::default();
    let model = Arc::new(Model::compute(&gc, &cfg, false));

    let config = |runs: &std::path::Path| {
        let mut c = EvalConfig::new(bench_dir.clone(), runs.to_path_buf());
        c.limit = Some(12);
        c.concurrency = 4;
        c.run_id = Some("leak".into());
        c.tasks = BTreeSet::from([TaskKind::T2, TaskKind::T3]);
        c.partitions = vec![partition.clone()];
        c
    };
    let a = tempfile::tempdir().expect("tempdir");
    let on_gc = run_eval(&config(a.path()), gc.clone(), Some(model.clone()))
        .await
        .expect("T3 on Gc with R masked");

    // G as the complete graph: R's edges are gone, so the benchmark's R matches nothing.
    let g = Arc::new(serenqa_graph::filter::without_edges(&gc, &|e| {
        removed.contains(e)
    }));
    assert_eq!(
        g.edge_count(),
        gc.edge_count() - removed.len(),
        "R's edges are deleted"
    );
    let model_g = Arc::new(Model::compute(&g, &cfg, false));
    let b = tempfile::tempdir().expect("tempdir");
    let on_g = run_eval(&config(b.path()), g, Some(model_g))
        .await
        .expect("T3 on G");

    let (x, y) = (
        t3_lines(&on_gc.dir, &partition),
        t3_lines(&on_g.dir, &partition),
    );
    assert!(
        x.len() >= 12,
        "the comparison covers explorations ({} records)",
        x.len()
    );
    assert!(
        x.values().any(|l| l.contains("\"leaves\":[\"")),
        "some exploration found leaves"
    );
    assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
    for (k, line) in &x {
        assert_eq!(
            line, &y[k],
            "T3 record {k} differs between Gc (R masked) and G"
        );
    }
}
