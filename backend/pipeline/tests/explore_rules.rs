//! Algorithm 3's rules on Hetionet: a continue decision of NO stops the walk before that
//! level is summarised; a frontier node without edge scores (Hetionet has no confidences)
//! keeps a uniform seeded sample of k edges; with the graph score on it keeps the top k.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use std::sync::Arc;

use common::{hetionet, start, Answer};
use serenqa_model::slice::BlockCache;
use serenqa_pipeline::agents::{ExploreAgents as Agents, LlmExplorer};
use serenqa_pipeline::explore::{explore, Env, ExploreConfig, Task, TypeStats};
use serenqa_pipeline::llm::{LlmClient, ModelSpec, ModelsFile, RoleModel};

fn spec(base: &str) -> ModelSpec {
    ModelSpec {
        name: "cont".into(),
        base_url: base.into(),
        model: "cont-1".into(),
        api_key_env: None,
        temperature: 0.0,
        max_tokens: 64,
        timeout_secs: 10.0,
        max_retries: 0,
        backoff_ms: 1,
        concurrency: 4,
        params_b: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_no_stops_before_summarising_and_unscored_frontiers_sample_uniformly() {
    let g = hetionet();
    let root = g.find_by_key("Disease::DOID:1612").expect("breast cancer");
    let stats = TypeStats::new(&g);
    let blocks = BlockCache::new(16);
    let edges = serenqa_edges::MemoryEdges::new(&g);
    let env = Env {
        g: &g,
        edges: &edges,
        removed: None,
        walk: &g,
        model: None,
        blocks: &blocks,
        stats: &stats,
        weights: serenqa_model::weights::shipped().weights,
    };
    // The continue agent answers YES at its first call and NO at its second.
    let server = start(Arc::new(|_body: &serde_json::Value, n: usize| {
        Answer::ok(if n == 0 {
            "Paths look fine.\n\nYES\n\nGo on."
        } else {
            "Off route.\n\nNO\n\nStop."
        })
    }))
    .await;
    let file = ModelsFile {
        models: vec![spec(&server.base_url)],
        ..Default::default()
    };
    let client = Arc::new(LlmClient::new(&file, None).unwrap());
    let agents = Agents {
        cont: Arc::new(LlmExplorer {
            model: RoleModel {
                client,
                name: "cont".into(),
            },
        }),
        ..Default::default()
    };
    let cfg = ExploreConfig {
        depth: 3,
        ..ExploreConfig::default()
    };
    let task = Task {
        question: "Which compounds treat breast cancer?",
        roots: vec![root],
        named: Vec::new(),
        example: String::new(),
    };
    let ex = explore(&env, &agents, &cfg, &task).await.unwrap();
    assert_eq!(ex.levels.len(), 2, "NO at level 2 stops the walk");
    assert!(ex.levels[0].go_on && !ex.levels[1].go_on);
    assert_eq!(
        ex.summaries.len(),
        1,
        "level 2 (NO) is not summarised; level 1 is"
    );
    // Hetionet has no edge confidences and the graph score is off by default: every frontier
    // node samples uniformly.
    assert!(
        ex.levels.iter().all(|l| l.uniform_sampled),
        "uniform sampling fires without scores"
    );

    // The offline agents: the walk that ends at the depth limit summarises every level.
    let offline = explore(
        &env,
        &Agents::default(),
        &ExploreConfig {
            depth: 2,
            ..ExploreConfig::default()
        },
        &task,
    )
    .await
    .unwrap();
    let reached = offline
        .levels
        .iter()
        .filter(|l| !l.selected.is_empty())
        .count();
    // The offline agent's "no" at level 2 is the depth limit, not a decision: summarised; its
    // "no" at level 1 would be a decision: not summarised.
    let stopped_early = offline
        .levels
        .iter()
        .any(|l| !l.go_on && l.level < 2 && !l.selected.is_empty());
    assert_eq!(
        offline.summaries.len(),
        reached - usize::from(stopped_early),
        "{:?}",
        offline
            .levels
            .iter()
            .map(|l| (l.level, l.go_on, l.selected.len()))
            .collect::<Vec<_>>()
    );
    // With the graph score, edges are ranked (no uniform sample) and the top k kept.
    let scored = explore(
        &env,
        &Agents::default(),
        &ExploreConfig {
            depth: 1,
            graph_score: true,
            ..ExploreConfig::default()
        },
        &task,
    )
    .await
    .unwrap();
    assert!(scored.levels.iter().all(|l| !l.uniform_sampled));
    // Uniform samples are seeded: the same exploration twice is identical.
    let again = explore(
        &env,
        &agents_offline(),
        &ExploreConfig {
            depth: 2,
            ..ExploreConfig::default()
        },
        &task,
    )
    .await
    .unwrap();
    assert_eq!(offline.order, again.order);
}

fn agents_offline() -> Agents {
    Agents::default()
}
