//! `serenqa serve`: load the graph, then serve the web app and the API from one process.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_model::{Model, ModelConfig};

use crate::api::admission::{AdmissionConfig, Cidr};
use crate::api::{self, AppState};
use crate::graph_source::GraphArgs;

/// Graphs with more nodes than this build Ask's understanding at start-up, in the background.
const PREBUILD_ASK_NODES: usize = 1_000_000;

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
    /// Do not compute an offline baseline run when the runs directory has none (by default a
    /// server on the Hetionet graph starts `serenqa eval --limit 45` in the background, so a
    /// fresh install has a leaderboard; a `--graph` snapshot never does).
    #[arg(long)]
    no_baseline: bool,
    #[command(flatten)]
    admission: AdmissionArgs,
}

/// Starts the offline baseline run (`serenqa eval --limit 45 --runs DIR`) on a thread of its
/// own; it loads its own copy of the graph and writes a normal, resumable run.
fn start_baseline(runs: &std::path::Path) {
    #[derive(clap::Parser)]
    struct Eval {
        #[command(flatten)]
        args: super::eval::EvalArgs,
    }
    use clap::Parser;
    let dir = runs.display().to_string();
    let parsed = match Eval::try_parse_from(["eval", "--limit", "45", "--runs", &dir]) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("warning: no baseline run: {e}");
            return;
        }
    };
    eprintln!("no evaluation run in {dir}: computing an offline baseline run in the background (serenqa eval --limit 45 --runs {dir}; --no-baseline skips it)");
    std::thread::spawn(move || match super::eval::run(parsed.args, false) {
        Ok(()) => eprintln!("offline baseline run written to {dir}"),
        Err(e) => eprintln!("warning: the offline baseline run failed: {e:#}"),
    });
}

/// Admission control of the anonymous, expensive endpoints (`/api/cypher`, `/api/ask`,
/// `/api/ask/stream`, `/api/discover/…`, `/api/paths`, `/api/partition`, `/api/rns`,
/// `/api/slice`); see `api::admission`.
#[derive(Args)]
#[command(next_help_heading = "Admission control")]
pub struct AdmissionArgs {
    /// Cap of one endpoint class, `CLASS=N[:QUEUE[:PER_CLIENT]]` (repeatable): requests
    /// running, waiting, and running (or waiting) for one client. Classes and defaults:
    /// cypher=4:8:2, ask=2:4:1, discover=8:16:4, paths=8:16:4, score=8:16:4 (partition, rns,
    /// slice, runs/compare); QUEUE defaults to 2×N and PER_CLIENT to N/2 (at least 1), so no
    /// client holds every slot. Beyond its cap a request waits up to --queue-wait, then 429;
    /// a freed slot goes to the waiting client holding the fewest.
    #[arg(long, value_name = "CLASS=N[:QUEUE[:PER_CLIENT]]")]
    max_concurrent: Vec<String>,
    /// Longest wait for a free slot before `429 busy`, in seconds.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    queue_wait: f64,
    /// Tokens per second refilled into each client's bucket. A gated request needs 1 token to
    /// enter and is charged, when it ends, for the time it held its slot: 5 tokens per second
    /// for an Ask, 2 for the other classes (the debt goes down to minus --burst).
    #[arg(long, default_value_t = 10.0, value_name = "PER_SEC")]
    rate: f64,
    /// Bucket size per client (the largest burst).
    #[arg(long, default_value_t = 60.0, value_name = "TOKENS")]
    burst: f64,
    /// Client buckets kept at most (memory bound; IPv6 clients are keyed by their /64).
    #[arg(long, default_value_t = 65_536, value_name = "N")]
    max_clients: usize,
    /// A reverse proxy whose `X-Forwarded-For` names the client: `IP` or `IP/PREFIX`
    /// (repeatable). Default: none, the header is ignored and the peer address is the client.
    #[arg(long, value_name = "CIDR")]
    trusted_proxy: Vec<String>,
    /// Overall deadline of one Ask (all stages and model calls), in seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    ask_deadline: f64,
    /// With --models, let clients that are not signed in run model-backed Asks (default: a
    /// signed-in annotation account is required; offline Asks are always open).
    #[arg(long)]
    anonymous_llm: bool,
    /// Time a client has to send a request's headers, in seconds, then it is disconnected;
    /// the wait for the next request on a kept-alive connection counts, so this is also the
    /// idle keep-alive timeout.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    header_timeout: f64,
    /// Open connections one client address may hold (an IPv6 client by its /64; trusted
    /// proxies are exempt). More are closed at once.
    #[arg(long, default_value_t = 64, value_name = "N")]
    max_connections_per_client: usize,
    /// Largest serialised reply of the endpoints that can answer large bodies (Cypher, paths,
    /// Discover, predictions, RNS, runs, traces, review exports), in bytes; larger ones are
    /// refused (`400 reply_too_large`, Cypher's `cypher_budget`) before they are built whole.
    /// Replies built and not yet read count against a 256 MiB cap (then `503 busy`), and one
    /// not read within 60 s is dropped.
    #[arg(long, default_value_t = crate::api::reply::MAX_REPLY_BYTES, value_name = "BYTES")]
    max_reply_bytes: usize,
}

impl AdmissionArgs {
    pub fn config(&self) -> Result<AdmissionConfig> {
        let secs = |name: &str, v: f64| -> Result<std::time::Duration> {
            if !v.is_finite() || v <= 0.0 || v > 86_400.0 {
                anyhow::bail!(
                    "--{name} must be a positive number of seconds (at most a day), not {v}"
                );
            }
            Ok(std::time::Duration::from_secs_f64(v))
        };
        let mut c = AdmissionConfig::default();
        for spec in &self.max_concurrent {
            c.set_cap(spec).map_err(|e| anyhow::anyhow!(e))?;
        }
        c.queue_wait = secs("queue-wait", self.queue_wait)?;
        c.ask_deadline = secs("ask-deadline", self.ask_deadline)?;
        if !self.rate.is_finite() || self.rate < 0.0 {
            anyhow::bail!("--rate must be a non-negative number, not {}", self.rate);
        }
        if !self.burst.is_finite() || self.burst < 1.0 {
            anyhow::bail!("--burst must be at least 1, not {}", self.burst);
        }
        if self.max_clients == 0 {
            anyhow::bail!("--max-clients must be at least 1");
        }
        c.rate = self.rate;
        c.burst = self.burst;
        c.max_clients = self.max_clients;
        c.trusted_proxies = self
            .trusted_proxy
            .iter()
            .map(|p| {
                p.parse::<Cidr>()
                    .map_err(|e| anyhow::anyhow!("--trusted-proxy {e}"))
            })
            .collect::<Result<_>>()?;
        c.anonymous_llm = self.anonymous_llm;
        Ok(c)
    }
}

pub fn run(args: ServeArgs, progress: bool) -> Result<()> {
    let admission = args.admission.config()?;
    if !args.admission.header_timeout.is_finite()
        || args.admission.header_timeout <= 0.0
        || args.admission.header_timeout > 3600.0
    {
        anyhow::bail!(
            "--header-timeout must be a positive number of seconds (at most an hour), not {}",
            args.admission.header_timeout
        );
    }
    if args.admission.max_connections_per_client == 0 {
        anyhow::bail!("--max-connections-per-client must be at least 1");
    }
    if args.admission.max_reply_bytes < 1024
        || args.admission.max_reply_bytes > crate::api::reply::MAX_HELD_BYTES
    {
        anyhow::bail!(
            "--max-reply-bytes must be between 1024 and {} (the cap on unsent replies), not {}",
            crate::api::reply::MAX_HELD_BYTES,
            args.admission.max_reply_bytes
        );
    }
    crate::api::reply::set_max_reply_bytes(args.admission.max_reply_bytes);
    let limits = crate::listen::Limits {
        header_timeout: std::time::Duration::from_secs_f64(args.admission.header_timeout),
        per_client: args.admission.max_connections_per_client,
        trusted_proxies: admission.trusted_proxies.clone(),
    };
    let (graph, model) = match crate::model_source::load(&args.graph, progress) {
        Ok((g, m, _)) => (g, m),
        Err(e) if args.demo_if_missing && args.graph.graph.is_none() => {
            eprintln!("warning: {e:#}\nwarning: serving a SYNTHETIC demo graph (not real data)");
            (
                generate(&SynthSpec {
                    nodes: 10_000,
                    edges: 60_000,
                    seed: 7,
                    progress: false,
                }),
                None,
            )
        }
        Err(e) => return Err(e),
    };
    let graph = Arc::new(graph);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
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
    let predictions = {
        let path = serenqa_predict::store::default_path(&graph);
        if path.is_file() {
            match serenqa_predict::Predictions::load(&path, &graph) {
                Ok(p) => Some(p),
                Err(e) => {
                    eprintln!("warning: ignoring stored predictions: {e}");
                    None
                }
            }
        } else {
            None
        }
    };
    // Past the all-pairs model's size, `serenqa predict` stores top lists instead.
    let top_k = if predictions.is_none() {
        let path = serenqa_predict::topk::default_path(&graph);
        if path.is_file() {
            match serenqa_predict::topk::TopK::load(&path, &graph) {
                Ok(t) => {
                    eprintln!(
                        "plausibility: the top {} of every disease and compound ({})",
                        t.info.params.k,
                        path.display()
                    );
                    Some(t)
                }
                Err(e) => {
                    eprintln!("warning: ignoring stored top lists: {e}");
                    None
                }
            }
        } else {
            eprintln!("note: no plausibility predictions for this graph; run `serenqa predict` (Discover proposes by walk proximity until then)");
            None
        }
    } else {
        None
    };
    if !args.dist.join("index.html").is_file() {
        eprintln!("warning: {} has no index.html: build the frontend with `trunk build --release` (the API still works)", args.dist.display());
    } else {
        // Brotli and gzip copies of the bundle, written once per frontend build.
        match crate::static_assets::precompress(&args.dist) {
            Ok(s) if s.written > 0 => eprintln!("precompressed {} of {} assets in {} ({} KB → {} KB brotli)", s.written, s.files, args.dist.display(), s.bytes_in / 1024, s.bytes_br / 1024),
            Ok(_) => {}
            Err(e) => eprintln!("warning: cannot write compressed copies into {}: {e}; assets are sent uncompressed", args.dist.display()),
        }
    }
    let models = match &args.models {
        Some(p) => serenqa_pipeline::llm::ModelsFile::load(p).map_err(|e| anyhow::anyhow!(e))?,
        None => serenqa_pipeline::llm::ModelsFile::offline(),
    };
    let cache = Some(
        models
            .cache_dir
            .clone()
            .unwrap_or_else(|| serenqa_graph::datadir::cache_dir().join("llm")),
    );
    let runs = args
        .runs
        .clone()
        .unwrap_or_else(serenqa_pipeline::runs_dir::default_runs_dir);
    let repo = serenqa_store::SqliteRepo::open(&args.db)
        .with_context(|| format!("opening the annotation database {}", args.db.display()))?;
    let annotation = api::session::Annotation::new(Arc::new(repo), args.secure_cookies);
    if !args.no_baseline
        && args.graph.graph.is_none()
        && serenqa_pipeline::runs_dir::list_runs(&runs).is_empty()
    {
        start_baseline(&runs);
    }
    let state = AppState::new(graph)
        .with_model(model)
        .with_predictions(predictions)
        .with_top_k(top_k)
        .with_pipeline(runs, models, cache)
        .with_annotation(Some(annotation))
        .with_edges(edges)
        .with_admission(admission);
    // Discover's labels are built before the first request (a few hundred ms), not during it.
    let clinical = state.clinical();
    eprintln!(
        "discover: safety flags for {} diseases ({})",
        clinical.safety.diseases_covered(),
        clinical.ontology_note
    );
    // On a large graph Ask's name index takes a while (~40 s at CKG size): build it beside the
    // listener from the start, so the first question does not wait for all of it.
    if state.graph.node_count() > PREBUILD_ASK_NODES {
        let s = state.clone();
        std::thread::spawn(move || {
            let t = std::time::Instant::now();
            if api::pipeline::context(&s).is_ok() {
                eprintln!(
                    "ask: understanding index built in {:.1} s",
                    t.elapsed().as_secs_f64()
                );
            }
        });
    }
    let app = api::router(state, &args.dist);
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        println!("serenqa serving on http://{}", listener.local_addr()?);
        crate::listen::serve(listener, app, limits).await?;
        Ok(())
    })
}
