//! `serenqa serve`: load the graph, then serve the web app and the API from one process.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_model::{Model, ModelConfig};

use crate::api::{self, AppState};
use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "SERENQA_ADDR")]
    addr: SocketAddr,
    /// The built frontend (Trunk's output directory).
    #[arg(long, default_value = "dist", env = "SERENQA_DIST")]
    dist: PathBuf,
    /// With no data found, serve a small synthetic demo graph (labelled synthetic in the UI)
    /// instead of failing.
    #[arg(long)]
    demo_if_missing: bool,
    /// Evaluation runs listed by `GET /api/runs` (default `$SERENQA_RUNS`, else `./runs`).
    #[arg(long, value_name = "DIR")]
    runs: Option<PathBuf>,
    /// Models file for `POST /api/ask` (default: offline agents).
    #[arg(long, value_name = "FILE", env = "SERENQA_MODELS")]
    models: Option<PathBuf>,
    /// The annotation database (SQLite; created and migrated if needed).
    #[arg(long, default_value = "serenqa.sqlite", env = "SERENQA_DB")]
    db: PathBuf,
    /// Mark session cookies `Secure` (set this when clients reach the server over HTTPS; a
    /// proxy's `X-Forwarded-Proto: https` does the same per request).
    #[arg(long, env = "SERENQA_SECURE_COOKIES")]
    secure_cookies: bool,
    /// Ask explores on this Redis edge store (`serenqa edges export` first):
    /// `redis://host:port[/db]` or `redis+cluster://h:p,h:p,…`. Default: the in-memory graph.
    #[arg(long, value_name = "URL")]
    edges: Option<String>,
}

pub fn run(args: ServeArgs, progress: bool) -> Result<()> {
    let (graph, model) = match crate::model_source::load(&args.graph, progress) {
        Ok((g, m, _)) => (g, m),
        Err(e) if args.demo_if_missing && args.graph.graph.is_none() => {
            eprintln!("warning: {e:#}\nwarning: serving a SYNTHETIC demo graph (not real data)");
            (generate(&SynthSpec { nodes: 10_000, edges: 60_000, seed: 7, progress: false }), None)
        }
        Err(e) => return Err(e),
    };
    let graph = Arc::new(graph);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    // The edge store first: a wrong URL or a foreign store fails before any model work.
    let edges = match &args.edges {
        Some(url) => {
            let e = super::edges::open_store(&rt, url, graph.clone())?;
            eprintln!("Ask explores on the edge store {}", e.describe());
            Some(e)
        }
        None => None,
    };
    // Without a stored model, compute one in memory when the graph is small enough to do it
    // in seconds (Hetionet: ~2M edges); larger graphs need `serenqa precompute`.
    let model = match model {
        Some(m) => Some(m),
        None if graph.edge_count() <= 5_000_000 => {
            eprintln!("no precomputed model in the snapshot: computing it now (run `serenqa precompute` to store it)");
            Some(Model::compute(&graph, &ModelConfig::default(), progress))
        }
        None => {
            eprintln!("warning: no precomputed model; the RNS endpoints answer 503 until `serenqa precompute` is run");
            None
        }
    };
    if !args.dist.join("index.html").is_file() {
        eprintln!("warning: {} has no index.html: build the frontend with `trunk build --release` (the API still works)", args.dist.display());
    }
    let models = match &args.models {
        Some(p) => serenqa_pipeline::llm::ModelsFile::load(p).map_err(|e| anyhow::anyhow!(e))?,
        None => serenqa_pipeline::llm::ModelsFile::offline(),
    };
    let cache = Some(models.cache_dir.clone().unwrap_or_else(|| serenqa_graph::datadir::cache_dir().join("llm")));
    let runs = args.runs.clone().unwrap_or_else(serenqa_pipeline::run::default_runs_dir);
    let repo = serenqa_store::SqliteRepo::open(&args.db).with_context(|| format!("opening the annotation database {}", args.db.display()))?;
    let annotation = api::session::Annotation::new(Arc::new(repo), args.secure_cookies);
    let state = AppState::new(graph).with_model(model).with_pipeline(runs, models, cache).with_annotation(Some(annotation)).with_edges(edges);
    let app = api::router(state, &args.dist);
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("cannot listen on {}", args.addr))?;
        println!("serenqa serving on http://{}", listener.local_addr()?);
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}
