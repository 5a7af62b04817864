//! `serenqa`: the command-line tool and the HTTP server.
//!
//! Each subcommand lives in its own module under `commands/`; the HTTP API lives under `api/`.
//! Errors reach `main` as `anyhow::Error` and are printed as one line, never as a panic.

mod api;
mod attribution;
mod calibration;
mod commands;
mod graph_source;
mod listen;
mod model_source;
mod rss;
mod screen;
mod scripted_llm;
mod static_assets;
mod weights;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "serenqa",
    version,
    about = "Serendipity discovery in biomedical knowledge graphs"
)]
struct Cli {
    /// Hide progress bars.
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load a graph from files (or Neo4j), filter it and write a snapshot.
    Import(commands::import::ImportArgs),
    /// Print node and edge counts by type.
    Stats(commands::stats::StatsArgs),
    /// Generate a synthetic CKG-shaped graph (for scale tests, never as real data).
    Synth(commands::synth::SynthArgs),
    /// Serve the web app and the HTTP API.
    Serve(commands::serve::ServeArgs),
    /// Where the data lives; download the official Hetionet files.
    Data(commands::data::DataArgs),
    /// Performance measurements (medians, peak memory); not tests.
    Perf(commands::perf::PerfArgs),
    /// Compute marginals and embeddings (the serendipity model) into the snapshot.
    Precompute(commands::precompute::PrecomputeArgs),
    /// Plausibility of every compound–disease pair: store, TSV, `eval` (CV), `bench`.
    Predict(commands::predict::PredictArgs),
    /// Discover's first screen off-line: `cv` (the order against held-out treatments), `bench`.
    Discover(commands::discover::DiscoverArgs),
    /// Score a partition: R, N, S and RNS of (existing, serendipity).
    Score(commands::score::ScoreArgs),
    /// RNS-guided partition of candidate answers (greedy swap).
    Partition(commands::score::PartitionArgs),
    /// Accounts: bootstrap the first admin, invite users, list them.
    Admin(commands::annotate::AdminArgs),
    /// Annotation data: import question sets, agreement, expert rankings, export.
    Annotate(commands::annotate::AnnotateArgs),
    /// Evaluation results for the leaderboard: import pipeline runs.
    Results(commands::annotate::ResultsArgs),
    /// Fit the RNS weights to the expert partitions and store them with provenance.
    Calibrate(commands::annotate::CalibrateArgs),
    /// The RNS weights against the questionnaire's LLM-ensemble ranks: fit, held-out table, spread.
    Rns(commands::rns::RnsArgs),
    /// The serendipity-aware benchmark: build, stats, show, questionnaire.
    Bench(commands::bench::BenchArgs),
    /// Run a read-only Cypher query on the graph; prints a table (or JSON).
    Cypher(commands::cypher::CypherArgs),
    /// Check a models file: each endpoint's listing and one tiny call per role.
    Models(commands::models::ModelsArgs),
    /// Evaluate LLMs or the offline agents on the benchmark (T1, T2, T3); resumable.
    Eval(commands::eval::EvalArgs),
    /// Compare two evaluation runs question by question (Δ with paired-bootstrap 95% CIs).
    Compare(commands::eval::CompareArgs),
    /// Ask one free-text question: Cypher, existing answers, serendipitous candidates.
    Ask(commands::eval::AskArgs),
    /// The Redis edge store: export the graph's edges, check an export, measure lookups.
    Edges(commands::edges::EdgesArgs),
    /// Run work items of distributed evaluations (`serenqa eval --queue`) from Redis.
    Worker(commands::worker::WorkerArgs),
    /// Distributed evaluations: active runs, progress, live workers; forget a run.
    Queue(commands::queue::QueueArgs),
}

fn main() {
    let cli = Cli::parse();
    let progress = !cli.quiet;
    let result = match cli.command {
        Command::Import(a) => commands::import::run(a, progress),
        Command::Stats(a) => commands::stats::run(a, progress),
        Command::Synth(a) => commands::synth::run(a, progress),
        Command::Serve(a) => commands::serve::run(a, progress),
        Command::Data(a) => commands::data::run(a, progress),
        Command::Perf(a) => commands::perf::run(a, progress),
        Command::Precompute(a) => commands::precompute::run(a, progress),
        Command::Predict(a) => commands::predict::run(a, progress),
        Command::Discover(a) => commands::discover::run(a, progress),
        Command::Score(a) => commands::score::run_score(a, progress),
        Command::Partition(a) => commands::score::run_partition(a, progress),
        Command::Admin(a) => commands::annotate::run_admin(a),
        Command::Annotate(a) => commands::annotate::run_annotate(a),
        Command::Results(a) => commands::annotate::run_results(a),
        Command::Calibrate(a) => commands::annotate::run_calibrate(a, progress),
        Command::Rns(a) => commands::rns::run(a, progress),
        Command::Bench(a) => commands::bench::run(a, progress),
        Command::Cypher(a) => commands::cypher::run(a, progress),
        Command::Models(a) => commands::models::run(a),
        Command::Eval(a) => commands::eval::run(a, progress),
        Command::Compare(a) => commands::eval::run_compare(a),
        Command::Ask(a) => commands::eval::run_ask(a, progress),
        Command::Edges(a) => commands::edges::run(a, progress),
        Command::Worker(a) => commands::worker::run(a, progress),
        Command::Queue(a) => commands::queue::run(a),
    };
    if let Err(e) = result {
        // One line: the chain of causes joined, as `anyhow` renders with `{:#}`.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
