//! `serenqa models check FILE`: whether a models file's endpoints can serve its roles — the
//! endpoint's model listing, one tiny chat call per mapped role (latency, or the kind of
//! failure), as a table or `--json`; exits non-zero when a mapped role cannot be served. The
//! checking is `serenqa_pipeline::llm::check`; this module parses the arguments and prints.
//! Also the roles' help text shared with `eval --models`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand};
use serenqa_pipeline::llm::{
    check, CheckOptions, CheckReport, ModelsFile, Role, RoleStatus, DEFAULT_CHECK_TIMEOUT_SECS,
    MAX_TIMEOUT_SECS,
};

/// The roles of a models file and what each does (the `--help` of `models check` and of
/// `eval --models`).
pub fn roles_help() -> String {
    let mut s = String::from(
        "Roles (the models file's \"roles\" map, role → model name; \"default\" covers the roles \
         not named; a role mapped to \"offline\", or not at all, is played by the offline agent):",
    );
    for r in Role::MAPPED {
        let _ = write!(s, "\n  {:<10} {}", r.as_str(), r.summary());
    }
    s
}

/// The long help of `eval --models` (and `ask --models`).
pub fn models_flag_help() -> String {
    format!(
        "Models file (JSON: OpenAI-compatible endpoints and a role → model map; see \
         backend/pipeline/models.*.json). Check it first with `serenqa models check FILE`. \
         Default: offline agents only.\n\n{}",
        roles_help()
    )
}

#[derive(Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    command: ModelsCommand,
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Check that a models file's endpoints can serve its roles: each endpoint's model
    /// listing and one tiny chat call per role (latency, or why it failed). Exits non-zero
    /// when a role mapped to a model cannot be served.
    #[command(after_long_help = roles_help())]
    Check(CheckArgs),
}

#[derive(Args)]
struct CheckArgs {
    /// The models file (the format of `serenqa eval --models`).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Per-call timeout, seconds. Default: each model's `timeout_secs`, at most 20 (a model
    /// an endpoint has to load first may need more).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Retry failed calls as a run does (the file's `max_retries`, `backoff_ms`). Default:
    /// one attempt per call.
    #[arg(long)]
    retries: bool,
}

pub fn run(args: ModelsArgs) -> Result<()> {
    match args.command {
        ModelsCommand::Check(a) => run_check(a),
    }
}

fn run_check(args: CheckArgs) -> Result<()> {
    if let Some(t) = args.timeout {
        if !(t > 0.0 && t <= MAX_TIMEOUT_SECS) {
            bail!("--timeout must be a positive number of seconds, at most {MAX_TIMEOUT_SECS}");
        }
    }
    let file = ModelsFile::load(&args.file).map_err(|e| anyhow!(e))?;
    let opts = CheckOptions {
        timeout_secs: args.timeout,
        retries: args.retries,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = rt.block_on(check(&file, opts));
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report, &opts));
    }
    let failed = report.failed();
    if !failed.is_empty() {
        let which: Vec<String> = failed
            .iter()
            .map(|r| {
                let kind = r
                    .error
                    .as_ref()
                    .map(serenqa_pipeline::llm::CheckError::label)
                    .unwrap_or_default();
                format!("{} ({kind})", r.role)
            })
            .collect();
        bail!(
            "{} of {} roles cannot be served: {}",
            failed.len(),
            report.roles.len(),
            which.join(", ")
        );
    }
    Ok(())
}

/// The report as two tables (models, roles) and a verdict line.
fn render(report: &CheckReport, opts: &CheckOptions) -> String {
    let mut out = String::new();
    let timeout = match opts.timeout_secs {
        Some(t) => format!("{t} s"),
        None => format!("each model's timeout_secs, at most {DEFAULT_CHECK_TIMEOUT_SECS} s"),
    };
    let retries = if opts.retries {
        "the file's retries"
    } else {
        "no retries"
    };
    let _ = writeln!(out, "per-call timeout: {timeout}; {retries}");
    if report.models.is_empty() {
        let _ = writeln!(
            out,
            "no model declared: every role is played by the offline agent"
        );
    } else {
        let mut rows = vec![row(&["MODEL", "HOST", "LISTING", "MS", "DETAIL"])];
        for m in &report.models {
            let l = &m.listing;
            let (status, detail) = match &l.error {
                None => (
                    "ok".to_string(),
                    listed(&m.model, &l.models, l.configured_listed),
                ),
                Some(e) => (e.label(), e.message.clone()),
            };
            rows.push(vec![
                m.name.clone(),
                m.host.clone(),
                status,
                ms(l.latency_ms),
                detail,
            ]);
        }
        out.push('\n');
        out.push_str(&table(&rows));
    }
    let mut rows = vec![row(&["ROLE", "MODEL", "HOST", "RESULT", "MS", "DETAIL"])];
    for r in &report.roles {
        let (result, detail) = match (r.status, &r.error) {
            (RoleStatus::Ok, _) => (
                "ok".to_string(),
                format!("reply {:?}", r.reply.as_deref().unwrap_or("")),
            ),
            (RoleStatus::Offline, _) => (
                "offline".to_string(),
                "no model mapped: the offline agent plays it".to_string(),
            ),
            (RoleStatus::Failed, Some(e)) => (e.label(), e.message.clone()),
            (RoleStatus::Failed, None) => ("failed".to_string(), String::new()),
        };
        rows.push(vec![
            r.role.clone(),
            r.model.clone().unwrap_or_else(|| "-".into()),
            r.host.clone().unwrap_or_else(|| "-".into()),
            result,
            ms(r.latency_ms),
            detail,
        ]);
    }
    out.push('\n');
    out.push_str(&table(&rows));
    let count = |s: RoleStatus| report.roles.iter().filter(|r| r.status == s).count();
    let failed = count(RoleStatus::Failed);
    let _ = writeln!(
        out,
        "\n{} of {} roles served by a model, {} offline, {}",
        count(RoleStatus::Ok),
        report.roles.len(),
        count(RoleStatus::Offline),
        if failed == 0 {
            "none failed: OK".to_string()
        } else {
            format!("{failed} cannot be served: FAILED")
        }
    );
    out
}

/// What a listing says about the configured model, with the first few ids.
fn listed(model: &str, ids: &[String], configured: Option<bool>) -> String {
    const SHOWN: usize = 4;
    let mut shown = ids
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        let _ = write!(shown, ", … ({} more)", ids.len() - SHOWN);
    }
    let verdict = if configured == Some(true) {
        format!("{model:?} listed")
    } else {
        format!("{model:?} NOT listed")
    };
    format!("{verdict}; lists {}: {shown}", ids.len())
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| (*c).to_string()).collect()
}

/// Left-aligned columns two spaces apart; the last column is not padded.
fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[c]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
