//! `serenqa bench …`: build the serendipity-aware benchmark, print its statistics (the
//! paper's Tables 1 and 4), show one question, and report how the real SerenQA
//! questionnaire links to the loaded graph.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use serenqa_benchmark::build::{build, BuildConfig};
use serenqa_benchmark::partition::{offline_scorers, ExpertRankings, LoadExpertRankings, Scorer};
use serenqa_benchmark::questionnaire::{overlap, Questionnaire};
use serenqa_benchmark::stats;
use serenqa_model::{Model, ModelConfig};
use serenqa_pipeline::llm::ModelsFile;
use serenqa_shared::rns::Weights;

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Generate questions, partition their answers three ways, remove edges, write records.
    Build(BuildArgs),
    /// Tables 1 and 4 of the paper for a built benchmark.
    Stats(DirArgs),
    /// Both records of one question.
    Show(ShowArgs),
    /// Load the SerenQA expert questionnaire and report how its entities link to the graph.
    Questionnaire(QuestionnaireArgs),
    /// Score the offline question understanding on the hand-written everyday-question set
    /// (answer F1, exact-interpretation rate, latency p50/p99 per pattern type).
    Understand(UnderstandArgs),
}

#[derive(Args)]
struct UnderstandArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Evaluation set (JSONL: id, pattern, question, cypher); default: the compiled-in one
    /// (backend/pipeline/eval/understand.jsonl).
    #[arg(long, value_name = "FILE")]
    set: Option<PathBuf>,
    /// Lexicon file (default: the compiled-in backend/pipeline/lexicon/hetionet.tsv).
    #[arg(long, value_name = "FILE")]
    lexicon: Option<PathBuf>,
    /// Also print every question with F1 < 1 (interpretation and query).
    #[arg(long)]
    misses: bool,
}

#[derive(Args)]
struct BuildArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Number of questions (split over the nine pattern types as in the paper's Table 4).
    #[arg(long, default_value_t = 1529)]
    questions: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output directory.
    #[arg(long, default_value = "serenqa-benchmark")]
    out: PathBuf,
    /// Expert rankings (JSON, format in the `partition` module docs) for the expert strategy.
    #[arg(long, value_name = "FILE")]
    expert: Option<PathBuf>,
    /// RNS weights α,β,γ for the RNS-guided strategy (default: the newest expert calibration
    /// in `--db` when given, else the shipped fitted weights `backend/model/rns-weights.json`;
    /// the manifest records which).
    #[arg(long)]
    weights: Option<String>,
    /// An annotation database whose newest calibration on expert rankings gives the default
    /// weights (the same precedence as the server's).
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Share of questions in the test split.
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Models file: its ensemble models (`ensemble`, else every declared model) score every
    /// question's answers 0–20 for the LLM-ensemble partition. Without it the ensemble is the
    /// offline proxy scorers (graph statistics, not LLMs), labelled so everywhere.
    #[arg(long, value_name = "FILE")]
    models: Option<PathBuf>,
    /// Do not use the on-disk LLM response cache.
    #[arg(long)]
    no_cache: bool,
}

#[derive(Args)]
struct DirArgs {
    /// A directory written by `serenqa bench build`.
    #[arg(long, default_value = "serenqa-benchmark")]
    dir: PathBuf,
}

#[derive(Args)]
struct ShowArgs {
    qid: u32,
    #[command(flatten)]
    dir: DirArgs,
}

#[derive(Args)]
struct QuestionnaireArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// The questionnaire directory (default: `serenqa-questionnaire` in the data directory).
    #[arg(long)]
    dir: Option<PathBuf>,
}

pub fn run(args: BenchArgs, progress: bool) -> Result<()> {
    match args.command {
        BenchCommand::Build(a) => run_build(a, progress),
        BenchCommand::Stats(a) => {
            let l = stats::load_dir(&a.dir).map_err(|e| anyhow!(e))?;
            println!("{}\n{}", stats::table1(&l), stats::table4(&l));
            Ok(())
        }
        BenchCommand::Show(a) => {
            let l = stats::load_dir(&a.dir.dir).map_err(|e| anyhow!(e))?;
            print!("{}", stats::show(&l, a.qid).map_err(|e| anyhow!(e))?);
            Ok(())
        }
        BenchCommand::Questionnaire(a) => run_questionnaire(a, progress),
        BenchCommand::Understand(a) => run_understand(a, progress),
    }
}

fn run_build(a: BuildArgs, progress: bool) -> Result<()> {
    if a.questions == 0 {
        anyhow::bail!("--questions must be at least 1");
    }
    if !(0.0..=1.0).contains(&a.test_fraction) {
        anyhow::bail!("--test-fraction must be in [0, 1]");
    }
    let weights = match &a.weights {
        Some(w) => Some(Weights::parse(w).map_err(|e| anyhow!("--weights: {e}"))?),
        None => None,
    };
    let defaults = match &a.db {
        Some(p) => {
            let repo = serenqa_store::SqliteRepo::open(p)
                .map_err(|e| anyhow!("opening the annotation database {}: {e}", p.display()))?;
            crate::weights::in_force(Some(&repo))
        }
        None => crate::weights::in_force(None),
    };
    let weights = crate::weights::for_request(weights, &defaults);
    let expert = match &a.expert {
        Some(p) => Some(ExpertRankings::load(p)?),
        None => None,
    };
    let t0 = Instant::now();
    let (g, model, path) = crate::model_source::load(&a.graph, progress)?;
    let model = match model {
        Some(m) => m,
        None => {
            let t = Instant::now();
            let m = Model::compute(&g, &ModelConfig::default(), progress);
            eprintln!(
                "computed the serendipity model in {:.1?} (not cached: run `serenqa precompute` to store it in {})",
                t.elapsed(),
                path.display()
            );
            m
        }
    };
    // The LLM client's calls run on this runtime; the builder's rayon threads block on it.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let scorers: Vec<Box<dyn Scorer + '_>> = match &a.models {
        Some(p) => {
            let file = ModelsFile::load(p).map_err(|e| anyhow!(e))?;
            let cache = (!a.no_cache).then(|| {
                file.cache_dir
                    .clone()
                    .unwrap_or_else(|| serenqa_graph::datadir::cache_dir().join("llm"))
            });
            let client = serenqa_pipeline::llm::connect(&file, cache)
                .map_err(|e| anyhow!(e))?
                .ok_or_else(|| anyhow!("{}: no model for the ensemble", p.display()))?;
            let s: Vec<Box<dyn Scorer>> =
                serenqa_pipeline::ensemble::llm_scorers(&file, client, rt.handle().clone())
                    .into_iter()
                    .map(|s| Box::new(s) as Box<dyn Scorer>)
                    .collect();
            if s.is_empty() {
                anyhow::bail!("{}: no model for the ensemble", p.display());
            }
            eprintln!(
                "ensemble scorers: {} — language models",
                s.iter().map(|s| s.label()).collect::<Vec<_>>().join(", ")
            );
            s
        }
        None => {
            let s = offline_scorers(&g, Some(&model.marginals));
            eprintln!("ensemble scorers: {} — offline proxies, not LLMs (pass --models FILE for an LLM ensemble)", s.iter().map(|s| s.label()).collect::<Vec<_>>().join(", "));
            s
        }
    };
    eprintln!(
        "RNS weights α = {:.3}, β = {:.3}, γ = {:.3} ({})",
        weights.weights.alpha, weights.weights.beta, weights.weights.gamma, weights.source.label
    );
    let mut cfg = BuildConfig {
        weights: weights.weights,
        weights_source: weights.source,
        test_fraction: a.test_fraction,
        ..BuildConfig::default()
    };
    cfg.gen.questions = a.questions;
    cfg.gen.seed = a.seed;
    let t = Instant::now();
    let bench = build(&g, Some(&model), &scorers, expert.as_ref(), &cfg)?;
    let built = t.elapsed();
    bench
        .write(&g, &a.out)
        .with_context(|| format!("writing {}", a.out.display()))?;
    for (stage, secs) in &bench.timings {
        eprintln!("  {stage:<16} {secs:>7.2} s");
    }
    println!(
        "built {} questions in {:.1?} ({:.1?} with loading); wrote {}",
        bench.questions.len(),
        built,
        t0.elapsed(),
        a.out.display()
    );
    let l = stats::load_dir(&a.out).map_err(|e| anyhow!(e))?;
    println!("{}\n{}", stats::table1(&l), stats::table4(&l));
    drop(rt);
    Ok(())
}

fn run_questionnaire(a: QuestionnaireArgs, progress: bool) -> Result<()> {
    let dir = match a.dir {
        Some(d) => d,
        None => serenqa_graph::datadir::find_dataset("serenqa-questionnaire").ok_or_else(|| {
            anyhow!(serenqa_graph::datadir::where_to_put(
                "serenqa-questionnaire"
            ))
        })?,
    };
    let q = Questionnaire::load(&dir).map_err(|e| anyhow!(e))?;
    let g = a.graph.load(progress)?;
    let o = overlap(&g, &q);
    println!(
        "SerenQA questionnaire: {} questions in {} batches ({})",
        o.questions,
        o.batches,
        dir.display()
    );
    for b in &q.batches {
        println!(
            "  batch {:>2}: {:>4} questions  {}",
            b.info.batch_id,
            b.items.len(),
            b.info.batch_name
        );
    }
    for w in &q.warnings {
        println!("  warning: {w}");
    }
    println!(
        "entity mentions: {} candidate answers, {} named in questions",
        o.candidate_mentions, o.resource_mentions
    );
    println!(
        "  {:<20} {:>9} {:>10} {:>12} {:>9}",
        "source", "mentions", "linked id", "linked name", "distinct"
    );
    for (src, s) in &o.by_source {
        println!(
            "  {:<20} {:>9} {:>10} {:>12} {:>9}",
            src, s.mentions, s.linked_by_id, s.linked_by_name, s.distinct_linked
        );
    }
    println!(
        "questions with ≥1 linked candidate: {}; all candidates linked: {}; all named entities linked: {}; distinct graph nodes linked: {}",
        o.questions_any_candidate_linked, o.questions_all_candidates_linked, o.questions_all_resources_linked, o.distinct_linked_nodes
    );
    Ok(())
}

fn run_understand(a: UnderstandArgs, progress: bool) -> Result<()> {
    use serenqa_pipeline::offline::understand::{LexiconFile, Understander};
    use serenqa_pipeline::offline::understand_eval as ev;
    use serenqa_pipeline::retrieval::OfflineRetriever;
    let (text, origin) = match &a.set {
        Some(p) => (
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            ev::UNDERSTAND_SET.to_string(),
            "eval/understand.jsonl".to_string(),
        ),
    };
    let items = ev::load(&text, &origin).map_err(|e| anyhow!(e))?;
    let g = a.graph.load(progress)?;
    let mut r = OfflineRetriever::from_data(&g);
    if let Some(p) = &a.lexicon {
        let lex = LexiconFile::load(p, &g).map_err(|e| anyhow!(e))?;
        r.understander = Understander::with_lexicon(&g, lex);
    }
    if let Err(e) = &r.understander {
        anyhow::bail!("lexicon: {e}");
    }
    let stage = |q: &str| {
        if let Ok(u) = &r.understander {
            std::hint::black_box(u.understand(&g, q));
        }
    };
    let (rows, results) =
        ev::evaluate_timed(&g, &r, &items, Some(&stage)).map_err(|e| anyhow!(e))?;
    if a.misses {
        for x in results.iter().filter(|x| x.f1 < 1.0) {
            println!(
                "#{} [{} {}] F1 {:.2} gold {} got {}: {}\n    understood: {}\n    {}",
                x.id,
                x.pattern,
                x.set,
                x.f1,
                x.gold,
                x.answered,
                x.question,
                x.interpretation.as_deref().unwrap_or("(nothing)"),
                x.cypher.as_deref().unwrap_or("(no query)")
            );
        }
    }
    println!(
        "{} questions from {origin} on {}",
        items.len(),
        g.meta().name
    );
    print!("{}", ev::table(&rows));
    Ok(())
}
