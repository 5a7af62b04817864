//! `serenqa predict`: the plausibility of every compound–disease pair (crate
//! `serenqa-predict`). Without a subcommand: compute, store for the server (cache file named
//! after the graph hash) and optionally write the TSV of all pairs; `eval`: the
//! cross-validation table; `bench`: features + fit + predict time and peak RSS; `check`: the
//! stored predictions against an indication list from outside the graph.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serenqa_predict::eval::{cross_validate_learners, FoldKind};
use serenqa_predict::{predict, PredictParams, Predictions};

use crate::graph_source::GraphArgs;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PredictArgs {
    #[command(subcommand)]
    command: Option<PredictCommand>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub(crate) graph: GraphArgs,
    /// Write the TSV of all pairs here (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Seed of the negative sample (and of the folds for `eval`).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Longest metapath.
    #[arg(long, default_value_t = 4)]
    pub(crate) max_len: usize,
    /// L2 strength on the mean log-loss.
    #[arg(long, default_value_t = 1e-3)]
    pub(crate) lambda: f64,
    /// L-BFGS iteration cap of each fit.
    #[arg(long, default_value_t = serenqa_predict::learn::FitParams::default().max_iter)]
    pub(crate) max_iter: usize,
    /// Folds of the refits that calibrate the served scores (on their out-of-fold logits);
    /// 0 serves the uncalibrated model probability.
    #[arg(long, default_value_t = PredictParams::default().calibration_folds)]
    calibration_folds: usize,
    /// Do not store the predictions in the cache for the server.
    #[arg(long)]
    pub(crate) no_store: bool,
    /// Serve the treats head's logistic regression alone, without the gradient-boosted trees
    /// (the model before issue 35; for comparison).
    #[arg(long)]
    logistic_only: bool,
    /// Leave the contradiction features (the graph records the drug as causing the disease or
    /// a symptom specific to it) out of the fit; the explanation still shows the records
    /// (the model before issue 35 item 3; for comparison).
    #[arg(long)]
    no_contradiction: bool,
    /// Build the best K compounds of every disease and the best K diseases of every compound
    /// instead of scoring every pair (`serenqa_predict::topk`). The default on a graph past
    /// the all-pairs model's limit (20M pairs); K defaults to 100 there.
    #[arg(long, value_name = "K")]
    pub(crate) top_k: Option<usize>,
    /// Top-k model: most edge visits its scoring pass may take (estimated up front; metapaths
    /// are kept cheapest first within it).
    #[arg(long, default_value_t = serenqa_predict::topk::TopkParams::default().budget)]
    pub(crate) budget: f64,
    /// Top-k model: diseases sampled for the fit.
    #[arg(long, default_value_t = serenqa_predict::topk::TopkParams::default().train_diseases)]
    pub(crate) train_diseases: usize,
}

#[derive(Subcommand)]
enum PredictCommand {
    /// Cross-validation with held-out edges removed before features: per fold and pooled.
    Eval {
        #[command(flatten)]
        run: RunArgs,
        #[arg(long, default_value_t = 5)]
        folds: usize,
        /// `edges`, `diseases` or `both`.
        #[arg(long, default_value = "both")]
        kind: String,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also compare gradient-boosted trees (the fixed grid of
        /// `serenqa_predict::gbdt::GRID`), alone and combined with the logistic head, on the
        /// treats label's folds.
        #[arg(long)]
        learners: bool,
    },
    /// Time features + fit + predict for all pairs and report peak RSS.
    Bench {
        #[command(flatten)]
        run: RunArgs,
    },
    /// Check the stored predictions (run `serenqa predict` first) against an indication list
    /// from outside the graph: AUROC, AUPRC, listed pairs among the best 100 / 1,000 / 3,980
    /// candidates, precision and recall at 10 per disease, next to a treatment-degree
    /// baseline (`serenqa_predict::external`).
    Check {
        #[command(flatten)]
        graph: GraphArgs,
        /// Tab- or comma-separated list with a header naming a compound column (compound_id,
        /// drugbank_id, drug_id, …) and a disease column (disease_id, doid_id, slim_id, ind_id,
        /// …); diseases given as UMLS CUIs are mapped by the Disease Ontology files.
        #[arg(long, value_name = "FILE")]
        pairs: PathBuf,
        /// Keep only the rows of `--pairs` whose `status` column is one of these
        /// (comma-separated, any case), e.g. `Approved`.
        #[arg(long, value_name = "S,…", value_delimiter = ',')]
        status: Option<Vec<String>>,
        /// A second list of the same form (e.g. failed pairs next to approved ones): also
        /// report how well the score separates the first list from it.
        #[arg(long, value_name = "FILE")]
        against: Option<PathBuf>,
        /// Keep only the rows of `--against` whose `status` column is one of these, e.g.
        /// `Terminated,Withdrawn,Suspended` (the same file can then serve both lists).
        #[arg(long, value_name = "S,…", value_delimiter = ',')]
        against_status: Option<Vec<String>>,
        /// Also leave known palliations out of the candidates (as Rephetio's validation did).
        #[arg(long)]
        exclude_palliates: bool,
        /// Another model's scores of the same graph (a `serenqa predict --out` TSV, e.g. from
        /// `--logistic-only --no-store`): measured on the same candidates, and the served
        /// model minus it with 95% intervals paired by disease.
        #[arg(long, value_name = "TSV")]
        compare: Option<PathBuf>,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
}

impl RunArgs {
    fn params(&self) -> Result<PredictParams> {
        if !(2..=5).contains(&self.max_len) {
            anyhow::bail!("--max-len must be between 2 and 5");
        }
        if !(self.lambda >= 0.0 && self.lambda.is_finite()) {
            anyhow::bail!("--lambda must be a non-negative number");
        }
        if !(self.max_iter >= 1 && self.max_iter <= 100_000) {
            anyhow::bail!("--max-iter must be between 1 and 100000");
        }
        if self.calibration_folds == 1 || self.calibration_folds > 20 {
            anyhow::bail!("--calibration-folds must be 0 (off) or between 2 and 20");
        }
        let mut p = PredictParams {
            seed: self.seed,
            calibration_folds: self.calibration_folds,
            ..PredictParams::default()
        };
        p.features.max_len = self.max_len;
        p.fit.lambda = self.lambda;
        p.fit.max_iter = self.max_iter;
        if self.logistic_only {
            p.trees = None;
        }
        p.features.contradiction = !self.no_contradiction;
        Ok(p)
    }
}

pub fn run(args: PredictArgs, progress: bool) -> Result<()> {
    match args.command {
        None => run_predict(args.run, progress),
        Some(PredictCommand::Eval {
            run,
            folds,
            kind,
            json,
            learners,
        }) => run_eval(run, folds, &kind, json, learners, progress),
        Some(PredictCommand::Bench { run }) => run_bench(run, progress),
        Some(PredictCommand::Check {
            graph,
            pairs,
            status,
            against,
            against_status,
            exclude_palliates,
            compare,
            json,
        }) => run_check(
            &graph,
            (&pairs, status.as_deref()),
            against.as_deref().map(|a| (a, against_status.as_deref())),
            compare.as_deref(),
            exclude_palliates,
            json,
            progress,
        ),
    }
}

/// The Disease Ontology files for the contradiction features, said on stderr.
fn ontology() -> Option<serenqa_graph::load::disease_ontology::DiseaseOntology> {
    let (o, note) = crate::screen::find_ontology();
    eprintln!("contradiction features: {note}");
    o
}

fn run_predict(args: RunArgs, progress: bool) -> Result<()> {
    let params = args.params()?;
    let g = args.graph.load(progress)?;
    if let Some(k) = super::predict_topk::wanted(&g, args.top_k)? {
        let run = super::predict_topk::TopkRun {
            k,
            seed: args.seed,
            budget: args.budget,
            train_diseases: args.train_diseases,
            max_len: args.max_len,
            lambda: args.lambda,
            max_iter: args.max_iter,
            no_store: args.no_store,
            out: args.out.clone(),
        };
        return super::predict_topk::run(&g, &run, progress);
    }
    let ontology = ontology();
    let t = Instant::now();
    let preds = predict(&g, &params, ontology.as_ref())?;
    eprint!("{}", summary(&preds));
    if !args.no_store {
        let path = serenqa_predict::store::default_path(&g);
        preds
            .save(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("stored for the server: {}", path.display());
    }
    if let Some(out) = &args.out {
        write_tsv(&g, &preds, out)?;
    }
    eprintln!("done in {:.1} s", t.elapsed().as_secs_f64());
    Ok(())
}

/// What a run did: sizes, each head's fit (iterations, final gradient, calibration), timings.
fn summary(preds: &Predictions) -> String {
    let i = &preds.info;
    let cal = |c: &Option<serenqa_predict::calibrate::Calibration>| match c {
        Some(c) => format!(
            "calibrated: σ({:.3} − {:.3}·softplus(−z) + {:.3}·softplus(z))",
            c.c, c.low, c.high
        ),
        None => "uncalibrated".to_string(),
    };
    let mut s = format!(
        "predictions: {} compounds × {} diseases, {} metapath features (of {} enumerated) + {} degree features\n",
        preds.compounds.len(),
        preds.diseases.len(),
        i.metapaths.len(),
        i.metapaths_considered,
        i.degree_features.len()
    );
    s += &format!(
        "  treats (CtD): {} positives, {} sampled negatives; L-BFGS {} iterations, max |grad| {:.1e}{}; {}\n",
        i.positives,
        i.train_negatives,
        i.iterations,
        i.grad_max,
        if i.converged { "" } else { " (NOT converged: iteration cap)" },
        cal(&i.calibration)
    );
    if let Some(t) = &i.trees {
        s += &format!(
            "  treats served as {} of the logistic regression (weight {}) and gradient-boosted trees (depth {}, learning rate {}, {} rounds, min leaf {}; training log-loss {:.4}); top metapaths are the logistic part's; trees' top features by gain: {}\n",
            match t.combine {
                serenqa_predict::ensemble::Combine::MeanLogit => "the mean logit",
                serenqa_predict::ensemble::Combine::MeanZ => "the mean standardised logit",
                serenqa_predict::ensemble::Combine::MeanRank => "the mean rank",
            },
            t.logistic_weight,
            t.params.depth,
            t.params.learning_rate,
            t.params.rounds,
            t.params.min_leaf,
            t.train_loss,
            t.top_features
                .iter()
                .take(5)
                .map(|(n, g)| format!("{n} {g:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(h) = &i.palliates {
        s += &format!(
            "  palliates ({}): {} positives, {} sampled negatives; L-BFGS {} iterations, max |grad| {:.1e}{}; {}\n",
            h.relation,
            h.positives,
            h.train_negatives,
            h.iterations,
            h.grad_max,
            if h.converged { "" } else { " (NOT converged: iteration cap)" },
            cal(&h.calibration)
        );
    }
    if let Some(c) = &i.contradiction {
        s += &format!(
            "  contradiction features ({}; {}): {} pairs with a record, {} of {} known treatments; treats coefficients: {}\n",
            if c.fitted { "fitted" } else { "not fitted: evidence for the explanation only" },
            if c.ontology {
                "matched by Disease Ontology identifier, name and symptom"
            } else {
                "matched by name and symptom only: no Disease Ontology files"
            },
            c.pairs_flagged,
            c.treatments_flagged,
            c.treatments,
            c.features
                .iter()
                .map(|f| format!("{} {:+.3}", f.name, f.beta))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    s += &format!(
        "  features {:.1} s, fits {:.1} s, calibration refits {:.1} s, predict {:.1} s\n",
        i.seconds_features, i.seconds_fit, i.seconds_calibration, i.seconds_predict
    );
    s
}

fn write_tsv(g: &serenqa_graph::Graph, preds: &Predictions, out: &PathBuf) -> Result<()> {
    if out.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        preds.write_tsv(g, &mut w)?;
        w.flush()?;
    } else {
        let tmp = out.with_extension("tsv.tmp");
        let f =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut w = std::io::BufWriter::new(f);
        preds
            .write_tsv(g, &mut w)
            .with_context(|| format!("writing {}", tmp.display()))?;
        w.flush()?;
        drop(w);
        std::fs::rename(&tmp, out).with_context(|| format!("renaming to {}", out.display()))?;
        eprintln!("wrote {} pairs to {}", preds.scores.len(), out.display());
    }
    Ok(())
}

fn run_eval(
    args: RunArgs,
    folds: usize,
    kind: &str,
    json: Option<PathBuf>,
    learners: bool,
    progress: bool,
) -> Result<()> {
    let kinds = match kind {
        "edges" => vec![FoldKind::Edges],
        "diseases" => vec![FoldKind::Diseases],
        "both" => vec![FoldKind::Edges, FoldKind::Diseases],
        other => anyhow::bail!("--kind must be edges, diseases or both, not {other:?}"),
    };
    let params = args.params()?;
    let g = args.graph.load(progress)?;
    let ontology = ontology();
    let mut reports = Vec::new();
    for k in kinds {
        let grid: &[_] = if learners {
            &serenqa_predict::gbdt::GRID
        } else {
            &[]
        };
        let report = cross_validate_learners(
            &g,
            &params,
            ontology.as_ref(),
            folds,
            k,
            grid,
            &mut |label, f| {
                if progress {
                    eprintln!(
                    "fold {} ({:?}) {label}: AUROC {:.4}, AUPRC {:.4}, {} iterations, in {:.1} s",
                    f.fold, k, f.metrics.auroc, f.metrics.auprc, f.iterations, f.seconds
                );
                }
            },
        )?;
        println!("{}", report.table());
        reports.push(report);
    }
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&reports)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn run_bench(args: RunArgs, progress: bool) -> Result<()> {
    let params = args.params()?;
    let g = args.graph.load(progress)?;
    let ontology = ontology();
    let t = Instant::now();
    let preds = predict(&g, &params, ontology.as_ref())?;
    let total = t.elapsed().as_secs_f64();
    let i = &preds.info;
    println!(
        "graph: {} ({} nodes, {} edges), {} threads",
        g.meta().name,
        g.node_count(),
        g.edge_count(),
        rayon::current_num_threads()
    );
    println!(
        "pairs: {} ({} compounds × {} diseases)",
        preds.scores.len(),
        preds.compounds.len(),
        preds.diseases.len()
    );
    println!(
        "metapaths: {} enumerated, {} kept as features; {} degree features",
        i.metapaths_considered,
        i.metapaths.len(),
        i.degree_features.len()
    );
    print!("{}", summary(&preds));
    println!(
        "features {:.2} s, fits {:.2} s, calibration {:.2} s, predict {:.2} s; total {:.2} s",
        i.seconds_features, i.seconds_fit, i.seconds_calibration, i.seconds_predict, total
    );
    if let Some(b) = crate::rss::peak_rss_bytes() {
        println!("peak RSS: {}", crate::rss::human_bytes(b));
    }
    Ok(())
}

/// Largest indication list or scores file read (bytes): published sets are well under a
/// megabyte, and Hetionet's scores file is 28 MB.
const MAX_LIST_BYTES: u64 = 256 << 20;

/// A file's text, refused in one line past [`MAX_LIST_BYTES`].
fn read_bounded(path: &std::path::Path) -> Result<String> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if len > MAX_LIST_BYTES {
        anyhow::bail!(
            "{}: {len} bytes, more than the {MAX_LIST_BYTES} this command reads",
            path.display()
        );
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

fn read_list(
    (path, status): (&std::path::Path, Option<&[String]>),
) -> Result<Vec<(String, String)>> {
    let text = read_bounded(path)?;
    serenqa_predict::external::read_pairs(&text, status).with_context(|| path.display().to_string())
}

type ListArg<'a> = (&'a std::path::Path, Option<&'a [String]>);

fn run_check(
    graph: &GraphArgs,
    pairs: ListArg,
    against: Option<ListArg>,
    compare: Option<&std::path::Path>,
    exclude_palliates: bool,
    json: Option<PathBuf>,
    progress: bool,
) -> Result<()> {
    let list = read_list(pairs)?;
    let other = against.map(read_list).transpose()?;
    let compared = compare
        .map(|path| -> Result<_> {
            let text = read_bounded(path)?;
            let scores = serenqa_predict::external::read_scores(&text)
                .with_context(|| path.display().to_string())?;
            Ok((path.display().to_string(), scores))
        })
        .transpose()?;
    let g = graph.load(progress)?;
    let path = serenqa_predict::store::default_path(&g);
    if !path.exists() {
        anyhow::bail!(
            "no stored predictions for this graph ({}): run `serenqa predict` first",
            path.display()
        );
    }
    let preds = Predictions::load(&path, &g).with_context(|| path.display().to_string())?;
    let params = serenqa_predict::external::CheckParams {
        exclude_second: exclude_palliates,
    };
    // Only a list that names diseases by UMLS CUI needs the ontology.
    let cui = |l: &[(String, String)]| l.iter().any(|(_, d)| serenqa_predict::external::is_cui(d));
    let ontology = if cui(&list) || other.as_deref().is_some_and(cui) {
        let (o, note) = crate::screen::find_ontology();
        eprintln!("UMLS CUIs: {note}");
        o
    } else {
        None
    };
    let other_scores = compared
        .as_ref()
        .map(|(name, scores)| serenqa_predict::external::OtherScores { name, scores });
    let report = serenqa_predict::external::check(
        &g,
        &preds,
        &list,
        other.as_deref(),
        other_scores.as_ref(),
        &params,
        ontology.as_ref(),
    )?;
    print!("{}", report.table());
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
