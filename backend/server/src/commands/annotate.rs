//! Annotation commands: `serenqa admin …` (first admin, invites, users), `serenqa annotate …`
//! (import question sets, agreement, expert-rankings file, export), `serenqa results import`
//! (pipeline runs → leaderboard table) and `serenqa calibrate`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serenqa_shared::annotate::{CalibrateRequest, Role, Source};
use serenqa_shared::links::source_link;
use serenqa_store::{aggregate, auth, questionnaire, Repo, SqliteRepo};

use crate::graph_source::GraphArgs;

#[derive(Args, Clone)]
pub struct DbArg {
    /// The annotation database (SQLite).
    /// Accepted before or after the subcommand (`annotate --db F import-serenqa` or
    /// `annotate import-serenqa --db F`).
    #[arg(
        long,
        default_value = "serenqa.sqlite",
        env = "SERENQA_DB",
        global = true
    )]
    pub db: PathBuf,
}

impl DbArg {
    pub fn open(&self) -> Result<SqliteRepo> {
        SqliteRepo::open(&self.db).with_context(|| format!("opening {}", self.db.display()))
    }
}

#[derive(Args)]
pub struct AdminArgs {
    #[command(subcommand)]
    cmd: AdminCmd,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum RoleArg {
    Admin,
    Annotator,
    Reviewer,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::Admin => Role::Admin,
            RoleArg::Annotator => Role::Annotator,
            RoleArg::Reviewer => Role::Reviewer,
        }
    }
}

#[derive(Subcommand)]
enum AdminCmd {
    /// Bootstrap an administrator: prints a one-time link where they choose a password.
    Create {
        #[arg(long)]
        email: String,
        /// The server's public address, used in the link.
        #[arg(
            long,
            default_value = "http://127.0.0.1:8080",
            env = "SERENQA_BASE_URL"
        )]
        base_url: String,
    },
    /// Invite a user with a role (one-time link).
    Invite {
        #[arg(long)]
        email: String,
        #[arg(long, value_enum)]
        role: RoleArg,
        #[arg(
            long,
            default_value = "http://127.0.0.1:8080",
            env = "SERENQA_BASE_URL"
        )]
        base_url: String,
    },
    /// List users and roles.
    Users,
}

fn invite(repo: &dyn Repo, email: &str, role: Role, base_url: &str) -> Result<String> {
    auth::check_email(email).map_err(anyhow::Error::msg)?;
    if repo.user_by_email(email)?.is_some() {
        bail!("{email} already has an account");
    }
    let token = auth::new_token().map_err(anyhow::Error::msg)?;
    let replaced = repo.create_invite(
        &auth::token_hash(&token),
        email,
        role,
        None,
        serenqa_store::now() + crate::api::annotate::INVITE_SECS,
    )?;
    if let Some(p) = replaced {
        eprintln!("the earlier link for {} no longer works", p.email);
    }
    Ok(format!("{}/invite/{token}", base_url.trim_end_matches('/')))
}

pub fn run_admin(args: AdminArgs) -> Result<()> {
    let repo = args.db.open()?;
    match args.cmd {
        AdminCmd::Create { email, base_url } => {
            let link = invite(&repo, &email, Role::Admin, &base_url)?;
            println!("{link}");
            eprintln!("one-time link for administrator {email} (valid 7 days): open it to choose a password");
        }
        AdminCmd::Invite {
            email,
            role,
            base_url,
        } => println!("{}", invite(&repo, &email, role.into(), &base_url)?),
        AdminCmd::Users => {
            let t: String = repo
                .users()?
                .iter()
                .map(|u| format!("{}\t{}\t{}\t{}\n", u.id, u.role.as_str(), u.email, u.name))
                .collect();
            stdout(&t);
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct AnnotateArgs {
    #[command(subcommand)]
    cmd: AnnotateCmd,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum SourceArg {
    Serenqa,
    Benchmark,
}

impl From<SourceArg> for Source {
    fn from(s: SourceArg) -> Source {
        match s {
            SourceArg::Serenqa => Source::Serenqa,
            SourceArg::Benchmark => Source::Benchmark,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Csv,
}

#[derive(Subcommand)]
enum AnnotateCmd {
    /// Import the real SerenQA questionnaire (14 batches) as annotation batches.
    ImportSerenqa {
        /// The questionnaire directory. Default: `serenqa-questionnaire` in the data directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Import generated benchmark questions (`kgqa.jsonl`), batched by category.
    ImportBenchmark { file: PathBuf },
    /// Agreement per batch (Kendall's W, Krippendorff's α).
    Agreement,
    /// Write the expert-rankings file the benchmark builder reads.
    Experts {
        #[arg(long, value_enum, default_value = "serenqa")]
        source: SourceArg,
        #[arg(long, default_value_t = 1)]
        min_annotators: usize,
        #[arg(long)]
        out: PathBuf,
    },
    /// The RNS weights in force and their history; with `--use ID` put a stored calibration
    /// in force (it must meet the minimum questions and annotators), with `--shipped` go back
    /// to the shipped weights.
    Weights {
        #[arg(long = "use", value_name = "CALIBRATION", conflicts_with = "shipped")]
        use_id: Option<i64>,
        #[arg(long)]
        shipped: bool,
    },
    /// Export every response (pseudonymous unless --identities).
    Export {
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
        #[arg(long)]
        identities: bool,
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn write_out(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display())),
        None => {
            stdout(text);
            Ok(())
        }
    }
}

/// Prints to stdout; a closed pipe (`… | head`) ends the output quietly instead of panicking.
fn stdout(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "–".into())
}

pub fn run_annotate(args: AnnotateArgs) -> Result<()> {
    let repo = args.db.open()?;
    match args.cmd {
        AnnotateCmd::ImportSerenqa { dir } => {
            let dir = match dir {
                Some(d) => d,
                None => serenqa_graph::datadir::find_dataset("serenqa-questionnaire")
                    .ok_or_else(|| anyhow::anyhow!("no serenqa-questionnaire directory in the data directories; pass --dir"))?,
            };
            let q = serenqa_benchmark::questionnaire::Questionnaire::load(&dir)
                .map_err(anyhow::Error::msg)?;
            for w in &q.warnings {
                eprintln!("warning: {w}");
            }
            let batches: Vec<_> = q
                .batches
                .iter()
                .map(|b| {
                    let questions = b
                        .items
                        .iter()
                        .map(|it| serenqa_store::repo::NewQuestion {
                            qid: it.qid as i64,
                            text: it.text.clone(),
                            category: it.category.clone(),
                            pattern: None,
                            resources: it
                                .resource
                                .iter()
                                .map(|r| serenqa_shared::annotate::Resource {
                                    name: r.entity_name.clone(),
                                    link: r.entity_link.clone(),
                                })
                                .collect(),
                            candidates: it
                                .llm_ranking
                                .iter()
                                .map(|c| {
                                    questionnaire::candidate(
                                        &c.entity_name,
                                        Some(c.llm_rank as i64),
                                        c.entity_link.as_deref(),
                                    )
                                })
                                .collect(),
                        })
                        .collect();
                    questionnaire::serenqa_batch(b.info.batch_id, &b.info.batch_name, questions)
                })
                .collect();
            let rep = repo.import_batches(&batches)?;
            println!(
                "{} batches: {} questions added ({} already present), {} candidates",
                rep.batches, rep.questions_added, rep.questions_skipped, rep.candidates_added
            );
        }
        AnnotateCmd::ImportBenchmark { file } => {
            let batches =
                questionnaire::read_benchmark(&file, |k, id| source_link(k, id).map(|(_, u)| u))
                    .map_err(anyhow::Error::msg)?;
            let rep = repo.import_batches(&batches)?;
            println!(
                "{} batches: {} questions added ({} already present), {} candidates",
                rep.batches, rep.questions_added, rep.questions_skipped, rep.candidates_added
            );
        }
        AnnotateCmd::Agreement => {
            let mut t = format!(
                "{:<60} {:>8} {:>9} {:>10} {:>8} {:>8}\n",
                "batch", "answered", "responses", "annotators", "mean W", "alpha"
            );
            for b in aggregate::batch_aggregates(&repo)? {
                t += &format!(
                    "{:<60} {:>8} {:>9} {:>10} {:>8} {:>8}\n",
                    b.batch.name,
                    b.answered,
                    b.responses,
                    b.annotators,
                    fmt_opt(b.mean_kendall_w),
                    fmt_opt(b.alpha)
                );
            }
            stdout(&t);
        }
        AnnotateCmd::Experts {
            source,
            min_annotators,
            out,
        } => {
            let er = aggregate::expert_rankings(&repo, source.into(), min_annotators)?;
            std::fs::write(&out, serde_json::to_string_pretty(&er)?)
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!(
                "{} ranked questions written to {}",
                er.questions.len(),
                out.display()
            );
        }
        AnnotateCmd::Weights { use_id, shipped } => {
            if use_id.is_some() || shipped {
                let who = std::env::var("USER").unwrap_or_else(|_| "cli".into());
                let note = match use_id {
                    Some(id) => format!("calibration #{id} put in force"),
                    None => "back to the shipped weights".into(),
                };
                repo.use_weights(use_id, &format!("cli:{who}"), &note, serenqa_store::now())
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            let w = crate::weights::in_force(Some(&repo));
            println!(
                "in force: α = {:.2}, β = {:.2}, γ = {:.2} — {}",
                w.weights.alpha, w.weights.beta, w.weights.gamma, w.source.label
            );
            for c in repo.weights_history()? {
                let what = c.calibration.map_or("shipped weights".to_string(), |id| {
                    format!("calibration #{id}")
                });
                println!(
                    "{}  {what:<18} by {} — {}",
                    serenqa_model::weights::iso_date(c.at),
                    c.by,
                    c.note
                );
            }
        }
        AnnotateCmd::Export {
            format,
            identities,
            out,
        } => {
            let rows = aggregate::export_rows(&repo, identities)?;
            let text = match format {
                Format::Json => serde_json::to_string_pretty(&rows)? + "\n",
                Format::Csv => aggregate::export_csv(&rows).map_err(anyhow::Error::msg)?,
            };
            write_out(out.as_deref(), &text)?;
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct ResultsArgs {
    #[command(subcommand)]
    cmd: ResultsCmd,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Subcommand)]
enum ResultsCmd {
    /// Import every `<dir>/<id>/{manifest,aggregate}.json` run into the results table.
    Import {
        #[arg(default_value = "runs")]
        dir: PathBuf,
    },
}

pub fn run_results(args: ResultsArgs) -> Result<()> {
    let repo = args.db.open()?;
    match args.cmd {
        ResultsCmd::Import { dir } => {
            let (ids, skipped) =
                serenqa_store::runs::import_runs(&repo, &dir).map_err(anyhow::Error::msg)?;
            println!("{} runs imported: {}", ids.len(), ids.join(", "));
            for s in skipped {
                eprintln!("skipped: {s}");
            }
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    db: DbArg,
    /// Which question set's expert rankings to fit.
    #[arg(long, value_enum, default_value = "serenqa")]
    source: SourceArg,
    /// Grid step on the signed weight surface |α| + |β| + |γ| = 1.
    #[arg(long, default_value_t = 0.05)]
    step: f64,
    /// Questions need at least this many complete responses.
    #[arg(long, default_value_t = 1)]
    min_annotators: usize,
    /// Also write the weights and report as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run_calibrate(args: CalibrateArgs, progress: bool) -> Result<()> {
    if !(0.01..=0.5).contains(&args.step) {
        bail!("--step must lie in [0.01, 0.5]");
    }
    let repo = args.db.open()?;
    let (g, model, path) = crate::model_source::load(&args.graph, progress)?;
    // Like `serve`: a graph of Hetionet's size gets its model computed in memory when the
    // snapshot holds none; larger graphs need `serenqa precompute`.
    let model = match model {
        Some(m) => m,
        None if g.edge_count() <= 5_000_000 => {
            serenqa_model::Model::compute(&g, &serenqa_model::ModelConfig::default(), progress)
        }
        None => bail!(
            "{} has no precomputed model; run `serenqa precompute` first",
            path.display()
        ),
    };
    let cache = serenqa_model::slice::BlockCache::default();
    let req = CalibrateRequest {
        source: args.source.into(),
        step: args.step,
        min_annotators: args.min_annotators,
    };
    let who = std::env::var("USER").unwrap_or_else(|_| "cli".into());
    let (id, rep) =
        crate::calibration::run(&repo, &g, &model, &cache, &req, &format!("cli:{who}"))?;
    println!(
        "weights α = {:.2}, β = {:.2}, γ = {:.2} (calibration #{id}, {} questions by {} annotators, mean Kendall's W {}, grid step {})",
        rep.alpha, rep.beta, rep.gamma, rep.questions, rep.annotators, fmt_opt(rep.mean_kendall_w), rep.grid_step
    );
    if let Some(h) = &rep.heldout {
        println!(
            "held out ({} questions): agreement {:.3} with these weights, {:.3} with the weights in force ({})",
            h.questions, h.after, h.before, h.before_label
        );
    }
    match serenqa_shared::annotate::calibration_gate(rep.questions, rep.annotators) {
        Ok(()) => {
            println!(
                "stored, not in force: `serenqa annotate weights --use {id}` puts it in force"
            );
        }
        Err(why) => println!("stored, cannot be put in force: {why}"),
    }
    println!("agreement with experts: {:.3} (default 1/3 weights: {:.3}; {} of {} grid points tie at the best)", rep.agreement, rep.default_agreement, rep.best_points, rep.grid_points);
    for p in &rep.pairs {
        println!(
            "{:>12} vs {:<12} agreement {:.3}  Pearson {}",
            p.a,
            p.b,
            p.agreement,
            fmt_opt(p.pearson)
        );
    }
    if let Some(out) = args.out {
        std::fs::write(&out, serde_json::to_string_pretty(&rep)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}
