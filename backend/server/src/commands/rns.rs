//! `serenqa rns fit | heldout | spread`: the RNS weights against the SerenQA questionnaire's
//! LLM-ensemble ranks (fit on batches 1–10, held-out table on 11–14) and the spread of the
//! terms. The method is documented in `serenqa_benchmark::agreement` and docs/RNS.md.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand};
use serde_json::json;
use serenqa_benchmark::agreement::{
    self, candidate_terms, evaluate, fit_with_cv, is_heldout, linked_questions, named_entities,
    paired_difference, row, spread_of, AeRule, BatchLinks, LinkedQuestion, Method, MethodRow,
    QuestionScore, SpreadReport, FIT_BATCHES, GRID_STEP,
};
use serenqa_benchmark::questionnaire::Questionnaire;
use serenqa_graph::Graph;
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::weights::{iso_date, parse, shipped, WeightsFile, REPO_PATH};
use serenqa_model::Model;
use serenqa_shared::rns::{AgreementSummary, Weights, WeightsInForce, WeightsSource};

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct RnsArgs {
    #[command(subcommand)]
    command: RnsCommand,
}

#[derive(Subcommand)]
enum RnsCommand {
    /// Fit α, β, γ to the questionnaire's LLM-ensemble ranks on batches 1–10 and write the
    /// weights file (default: the one that ships with the project).
    Fit(FitArgs),
    /// The agreement table on the held-out batches 11–14: RNS against the baselines.
    Heldout(EvalArgs),
    /// Distribution of R, N, S and RNS on the questionnaire's candidate sets and on the
    /// Discover lists of every disease.
    Spread(EvalArgs),
}

#[derive(Args)]
struct Common {
    #[command(flatten)]
    graph: GraphArgs,
    /// The questionnaire directory (default: `serenqa-questionnaire` in the data directory).
    #[arg(long)]
    questionnaire: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// What a question's Ae holds besides the candidates left in it: also the entities the
    /// question names (the rule the shipped weights were fitted with, docs/RNS.md) or nothing
    /// (the paper's partition of the candidates; the rule before session 24).
    #[arg(long, value_enum, default_value_t = AeArg::WithNamed)]
    ae: AeArg,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum AeArg {
    /// Ae = the other candidates.
    Candidates,
    /// Ae = the other candidates + the entities the question names (its `resource`).
    WithNamed,
}

impl AeArg {
    fn describe(self) -> &'static str {
        match self {
            AeArg::Candidates => "the other candidates (--ae candidates)",
            AeArg::WithNamed => {
                "the other candidates + the entities the question names (--ae with-named)"
            }
        }
    }
}

impl From<AeArg> for AeRule {
    fn from(a: AeArg) -> AeRule {
        match a {
            AeArg::Candidates => AeRule::Candidates,
            AeArg::WithNamed => AeRule::WithNamed,
        }
    }
}

#[derive(Args)]
struct FitArgs {
    #[command(flatten)]
    common: Common,
    /// Where to write the weights file.
    #[arg(long, default_value = REPO_PATH)]
    out: PathBuf,
    /// Also write each fitting question's leave-one-batch-out scores (JSON lines: batch,
    /// qid, top_b, spearman, kendall), for comparing variants question by question.
    #[arg(long)]
    cv_out: Option<PathBuf>,
}

#[derive(Args)]
struct EvalArgs {
    #[command(flatten)]
    common: Common,
    /// Weights α,β,γ to evaluate (default: the shipped weights file).
    #[arg(long, value_name = "A,B,C", value_parser = |s: &str| Weights::parse(s).map_err(|e| e.to_string()))]
    weights: Option<Weights>,
    /// A weights file to evaluate instead of the shipped one.
    #[arg(long)]
    weights_file: Option<PathBuf>,
    /// `heldout` only: print the table on the fitting batches 1–10 instead (for developing
    /// a term or the fit without looking at batches 11–14).
    #[arg(long)]
    fit_batches: bool,
    /// With `--fit-batches`: write every candidate's terms and node statistics, and each
    /// question's slice (P3 block, marginals, embeddings, node keys), batches 1–10 only, as
    /// JSON lines to this file, for analysis (`scripts/rns_variants.py` and
    /// `scripts/rns_walk_variant.py` read it).
    #[arg(long, requires = "fit_batches")]
    dump: Option<PathBuf>,
}

pub fn run(a: RnsArgs, progress: bool) -> Result<()> {
    match a.command {
        RnsCommand::Fit(f) => run_fit(f, progress),
        RnsCommand::Heldout(e) => run_heldout(e, progress),
        RnsCommand::Spread(e) => run_spread(e, progress),
    }
}

struct Loaded {
    g: Graph,
    model: Model,
    q: Questionnaire,
    questions: Vec<LinkedQuestion>,
    links: Vec<BatchLinks>,
}

fn load(c: &Common, progress: bool) -> Result<Loaded> {
    let dir = match &c.questionnaire {
        Some(d) => d.clone(),
        None => serenqa_graph::datadir::find_dataset("serenqa-questionnaire").ok_or_else(|| {
            anyhow!(serenqa_graph::datadir::where_to_put(
                "serenqa-questionnaire"
            ))
        })?,
    };
    let q = Questionnaire::load(&dir).map_err(|e| anyhow!(e))?;
    let (g, model) = crate::model_source::load_required(&c.graph, progress)?;
    let cache = BlockCache::new(1);
    let (questions, links) = linked_questions(&g, &model, &cache, &q, c.ae.into());
    if questions.is_empty() {
        bail!(
            "no questionnaire question has {} candidates linked to the loaded graph",
            agreement::MIN_LINKED
        );
    }
    Ok(Loaded {
        g,
        model,
        q,
        questions,
        links,
    })
}

fn weights_of(e: &EvalArgs) -> Result<WeightsInForce> {
    if let Some(w) = e.weights {
        return Ok(WeightsInForce {
            weights: w,
            source: WeightsSource {
                label: "weights given on the command line".into(),
                ..WeightsSource::request()
            },
        });
    }
    if let Some(p) = &e.weights_file {
        let text = std::fs::read_to_string(p).map_err(|err| anyhow!("{}: {err}", p.display()))?;
        let f = parse(&text).map_err(|err| anyhow!("{}: {err}", p.display()))?;
        return Ok(WeightsInForce {
            weights: f.weights,
            source: f.source,
        });
    }
    Ok(shipped())
}

fn summary(s: &[QuestionScore]) -> AgreementSummary {
    let n = s.len().max(1) as f64;
    AgreementSummary {
        questions: s.len(),
        top_b: s.iter().map(|q| q.top_b).sum::<f64>() / n,
        spearman: s.iter().map(|q| q.spearman).sum::<f64>() / n,
        kendall: s.iter().map(|q| q.kendall).sum::<f64>() / n,
    }
}

fn link_table(links: &[BatchLinks]) -> String {
    let mut t = String::from("| batch | questions | candidate mentions | linked by id | linked by name (UniProt → gene symbol) | link rate | questions used (≥ 3 linked) |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for b in links {
        t += &format!(
            "| {} | {} | {} | {} | {} | {:.1}% | {} |\n",
            b.batch,
            b.questions,
            b.candidate_mentions,
            b.linked_by_id,
            b.linked_by_name,
            100.0 * b.link_rate(),
            b.questions_used
        );
    }
    t
}

/// Every method's scores on a split, and the table.
struct Table {
    rows: Vec<MethodRow>,
    per_method: Vec<(Method, Vec<QuestionScore>)>,
}

fn table(l: &Loaded, qs: &[&LinkedQuestion], w: &Weights) -> Table {
    let mut per_method = vec![(Method::Rns, evaluate(&l.g, &l.model, qs, Method::Rns, w))];
    for m in Method::BASELINES {
        per_method.push((m, evaluate(&l.g, &l.model, qs, m, w)));
    }
    let rows = per_method.iter().map(|(m, s)| row(m.name(), s)).collect();
    Table { rows, per_method }
}

fn render(t: &Table) -> String {
    let mut out = String::from("| method | top-b agreement [95% CI] | Spearman ρ [95% CI] | Kendall τ-b [95% CI] |\n|---|---:|---:|---:|\n");
    for r in &t.rows {
        let e = |x: &agreement::Estimate| format!("{:.3} [{:.3}, {:.3}]", x.mean, x.lo, x.hi);
        out += &format!(
            "| {} | {} | {} | {} |\n",
            r.method,
            e(&r.top_b),
            e(&r.spearman),
            e(&r.kendall)
        );
    }
    out
}

/// RNS minus the best baseline (by mean) on one measure, paired bootstrap.
fn versus_best(
    t: &Table,
    pick: fn(&QuestionScore) -> f64,
    seed: u64,
) -> (String, agreement::Estimate) {
    let col = |s: &[QuestionScore]| s.iter().map(pick).collect::<Vec<f64>>();
    let rns = col(&t.per_method[0].1);
    let (best_m, best) = t.per_method[1..]
        .iter()
        .map(|(m, s)| (*m, col(s)))
        .max_by(|a, b| (a.1.iter().sum::<f64>()).total_cmp(&b.1.iter().sum::<f64>()))
        .expect("baselines");
    (
        best_m.name().to_string(),
        paired_difference(&rns, &best, seed),
    )
}

/// The questions whose answers are of one type (or "mixed"), with every method's means there.
struct TypeRow {
    answers: String,
    questions: usize,
    /// (method, mean top-b, mean Spearman), in the order of the main table.
    methods: Vec<(String, f64, f64)>,
}

/// RNS and every baseline by the type of a question's answers (all Compound, all Gene, …,
/// or mixed). Means only — the subsets are small; the point is where agreement comes from,
/// not a second test.
fn by_answer_type(l: &Loaded, qs: &[&LinkedQuestion], t: &Table) -> Vec<TypeRow> {
    let kind = |q: &LinkedQuestion| {
        let mut names: Vec<&str> = q
            .nodes
            .iter()
            .map(|&n| l.g.type_display(l.g.node_type(n)))
            .collect();
        names.sort_unstable();
        names.dedup();
        if names.len() == 1 {
            names[0].to_string()
        } else {
            "mixed".to_string()
        }
    };
    let kinds: Vec<String> = qs.iter().map(|q| kind(q)).collect();
    let mut distinct = kinds.clone();
    distinct.sort();
    distinct.dedup();
    distinct
        .into_iter()
        .map(|k| {
            let idx: Vec<usize> = (0..qs.len()).filter(|&i| kinds[i] == k).collect();
            let n = idx.len().max(1) as f64;
            let rows = t
                .per_method
                .iter()
                .map(|(m, s)| {
                    let top = idx.iter().map(|&i| s[i].top_b).sum::<f64>() / n;
                    let sp = idx.iter().map(|&i| s[i].spearman).sum::<f64>() / n;
                    (m.name().to_string(), top, sp)
                })
                .collect();
            TypeRow {
                answers: k,
                questions: idx.len(),
                methods: rows,
            }
        })
        .collect()
}

fn render_by_type(rows: &[TypeRow]) -> String {
    let Some(first) = rows.first().map(|r| &r.methods) else {
        return String::new();
    };
    let mut out = String::from("| answers | questions |");
    for (m, _, _) in first {
        out += &format!(" {m} top-b / ρ |");
    }
    out += "\n|---|---:|";
    out += &"---:|".repeat(first.len());
    out += "\n";
    for r in rows {
        out += &format!("| {} | {} |", r.answers, r.questions);
        for (_, top, sp) in &r.methods {
            out += &format!(" {top:.3} / {sp:.3} |");
        }
        out += "\n";
    }
    out
}

fn split(l: &Loaded, heldout: bool) -> Vec<&LinkedQuestion> {
    l.questions
        .iter()
        .filter(|q| is_heldout(q.batch) == heldout)
        .collect()
}

fn run_fit(a: FitArgs, progress: bool) -> Result<()> {
    let l = load(&a.common, progress)?;
    let train = split(&l, false);
    if train.is_empty() {
        bail!(
            "no linked question in batches {}–{}",
            FIT_BATCHES.start(),
            FIT_BATCHES.end()
        );
    }
    let t0 = std::time::Instant::now();
    let fitted = fit_with_cv(&l.g, &l.model, &train, GRID_STEP);
    let (w, objective) = (fitted.weights, fitted.objective);
    let cv = summary(&fitted.cv);
    let fit_scores = summary(&evaluate(&l.g, &l.model, &train, Method::Rns, &w));
    // Held-out scores are computed after the fit, with the fitted weights, and only reported.
    let held = split(&l, true);
    let held_scores = summary(&evaluate(&l.g, &l.model, &held, Method::Rns, &w));
    let date = iso_date(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    );
    let source = WeightsSource {
        kind: "fitted".into(),
        label: format!(
            "fitted to the SerenQA questionnaire's LLM-ensemble ranks (batches 1–10, {} questions; held-out batches 11–14: top-b {:.3}, Spearman {:.3})",
            fit_scores.questions, held_scores.top_b, held_scores.spearman
        ),
        date,
        fit: Some(fit_scores),
        heldout: Some(held_scores),
    };
    let file = WeightsFile {
        weights: w,
        source,
        provenance: json!({
            "command": "serenqa rns fit",
            "program": concat!("serenqa ", env!("CARGO_PKG_VERSION")),
            "graph": { "name": l.g.meta().name, "nodes": l.g.node_count(), "edges": l.g.edge_count() },
            "model": { "directed": l.model.params.directed, "embedding_dim": l.model.embeddings.dim() },
            "reference": "llm_rank of the SerenQA questionnaire (the authors' four-LLM ensemble), rank 1 = most serendipitous",
            "fit_batches": "1-10",
            "ae": a.common.ae.describe(),
            "ae_rule": match a.common.ae { AeArg::Candidates => "candidates", AeArg::WithNamed => "with-named" },
            "heldout_batches": "11-14 (never used for fitting or tuning)",
            "grid": format!("|α|+|β|+|γ| = 1, signs free, step {GRID_STEP}"),
            "objective": "mean top-b agreement + mean Spearman on batches 1-10",
            "objective_value": objective,
            "leave_one_batch_out": {
                "questions": cv.questions, "top_b": cv.top_b, "spearman": cv.spearman, "kendall": cv.kendall,
                "fold_weights": fitted.folds.iter().map(|(b, fw)| json!({ "left_out": b, "alpha": fw.alpha, "beta": fw.beta, "gamma": fw.gamma })).collect::<Vec<_>>(),
            },
            "min_linked_candidates": agreement::MIN_LINKED,
            "link_rates": l.links,
            "seconds": t0.elapsed().as_secs_f64(),
        }),
    };
    if let Some(p) = &a.cv_out {
        let mut out = String::new();
        for (q, s) in train.iter().zip(&fitted.cv) {
            out += &json!({ "batch": q.batch, "qid": q.qid, "top_b": s.top_b, "spearman": s.spearman, "kendall": s.kendall }).to_string();
            out.push('\n');
        }
        std::fs::write(p, out).map_err(|e| anyhow!("{}: {e}", p.display()))?;
    }
    let text = serde_json::to_string_pretty(&file)? + "\n";
    parse(&text).map_err(|e| anyhow!(e))?;
    std::fs::write(&a.out, &text).map_err(|e| anyhow!("{}: {e}", a.out.display()))?;
    if a.common.json {
        println!("{text}");
        return Ok(());
    }
    println!("{}", link_table(&l.links));
    println!(
        "fitted on {} questions (batches 1–10): α = {:.2}, β = {:.2}, γ = {:.2} (objective {:.4}; top-b {:.3}, Spearman {:.3}, Kendall {:.3})",
        fit_scores.questions, w.alpha, w.beta, w.gamma, objective, fit_scores.top_b, fit_scores.spearman, fit_scores.kendall
    );
    println!(
        "leave-one-batch-out on batches 1–10 (each batch scored with weights fitted on the others): top-b {:.3}, Spearman {:.3}, Kendall {:.3}",
        cv.top_b, cv.spearman, cv.kendall
    );
    // The folds' own picks: when they disagree, LOBO differences between variants of a term
    // of a few hundredths are selection noise (docs/RNS.md, "Choosing between variants").
    let picks: Vec<String> = fitted
        .folds
        .iter()
        .map(|(b, fw)| format!("{b}: ({:+.2}, {:+.2}, {:+.2})", fw.alpha, fw.beta, fw.gamma))
        .collect();
    println!(
        "weights picked per left-out batch (α, β, γ): {}",
        picks.join("; ")
    );
    println!(
        "held-out (batches 11–14, {} questions): top-b {:.3}, Spearman {:.3}, Kendall {:.3}",
        held_scores.questions, held_scores.top_b, held_scores.spearman, held_scores.kendall
    );
    println!("wrote {}", a.out.display());
    Ok(())
}

fn run_heldout(a: EvalArgs, progress: bool) -> Result<()> {
    let wf = weights_of(&a)?;
    let l = load(&a.common, progress)?;
    let held = split(&l, !a.fit_batches);
    if held.is_empty() {
        bail!("no linked question in the chosen batches");
    }
    if let Some(p) = &a.dump {
        if !matches!(a.common.ae, AeArg::Candidates) {
            bail!("--dump writes the candidates' slice and the slice with the named entities itself: add --ae candidates");
        }
        let mut out = String::new();
        let cache = BlockCache::new(1);
        for q in &held {
            let n = q.nodes.len();
            let rows: Vec<serde_json::Value> = (0..n)
                .map(|k| {
                    let x = q.nodes[k];
                    let others: Vec<usize> = (0..n).filter(|&o| o != k).collect();
                    let b = |r: usize, c: usize| q.slice.block[r * n + c];
                    json!({
                        "rank": k, "r": q.terms[k].r, "n": q.terms[k].n, "s": q.terms[k].s,
                        "degree": l.g.degree(x), "marginal": l.model.marginals[x as usize],
                        "self": b(k, k), "in": others.iter().map(|&o| b(o, k)).sum::<f64>() / others.len() as f64,
                        "out": others.iter().map(|&o| b(k, o)).sum::<f64>(),
                        "type": l.g.type_display(l.g.node_type(x)),
                    })
                })
                .collect();
            // The entities the question names and the slice over candidates + those entities
            // (candidates first).
            let anchors: Vec<u32> =
                l.q.batches
                    .iter()
                    .filter(|b| b.info.batch_id == q.batch)
                    .flat_map(|b| &b.items)
                    .find(|it| it.qid == q.qid)
                    .map(|it| named_entities(&l.g, it, &q.nodes))
                    .unwrap_or_default();
            let mut all = q.nodes.clone();
            all.extend(&anchors);
            let wide = build_slice(&l.g, &l.model, &cache, &all).ok();
            out += &serde_json::to_string(
                &json!({"batch": q.batch, "qid": q.qid, "c": rows, "block": q.slice.block, "marginals": q.slice.marginals, "dim": q.slice.dim, "embeddings": q.slice.embeddings,
                        "anchors": anchors.len(), "keys": all.iter().map(|&x| l.g.key(x)).collect::<Vec<_>>(), "wide": wide.map(|w| json!({"block": w.block, "marginals": w.marginals, "embeddings": w.embeddings}))}),
            )?;
            out.push('\n');
        }
        std::fs::write(p, out)?;
    }
    let t = table(&l, &held, &wf.weights);
    let which = if a.fit_batches {
        "fitting batches 1–10 (not held out)"
    } else {
        "held-out batches 11–14"
    };
    let (best_top, d_top) = versus_best(&t, |q| q.top_b, 21);
    let (best_sp, d_sp) = versus_best(&t, |q| q.spearman, 22);
    let types = by_answer_type(&l, &held, &t);
    if a.common.json {
        let types_json: Vec<serde_json::Value> = types
            .iter()
            .map(|r| json!({ "answers": r.answers, "questions": r.questions, "methods": r.methods.iter().map(|(m, top, sp)| json!({ "method": m, "top_b": top, "spearman": sp })).collect::<Vec<_>>() }))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "weights": wf, "questions": held.len(), "rows": t.rows, "link_rates": l.links, "by_answer_type": types_json,
                "rns_minus_best_baseline": { "top_b": { "baseline": best_top, "difference": d_top }, "spearman": { "baseline": best_sp, "difference": d_sp } },
            }))?
        );
        return Ok(());
    }
    let w = wf.weights;
    println!(
        "weights α = {:.3}, β = {:.3}, γ = {:.3} — {} ({})",
        w.alpha, w.beta, w.gamma, wf.source.label, wf.source.kind
    );
    println!("Ae of a question: {}", a.common.ae.describe());
    println!("\nlink rates per batch:\n{}", link_table(&l.links));
    println!(
        "{which}: {} questions with ≥ {} linked candidates\n",
        held.len(),
        agreement::MIN_LINKED
    );
    println!("{}", render(&t));
    println!(
        "RNS − best baseline, top-b ({best_top}): {:+.3} [{:+.3}, {:+.3}]",
        d_top.mean, d_top.lo, d_top.hi
    );
    println!(
        "RNS − best baseline, Spearman ({best_sp}): {:+.3} [{:+.3}, {:+.3}]",
        d_sp.mean, d_sp.lo, d_sp.hi
    );
    println!(
        "\nby the type of the answers (means, no CI):\n{}",
        render_by_type(&types)
    );
    Ok(())
}

fn render_spread(title: &str, s: &SpreadReport) -> String {
    let mut out = format!("{title}: {} lists, {} candidates\n\n| term | min | Q1 | median | Q3 | max | std | IQR / widest IQR | worst list: share tied at one value | lists > 10% tied at one value |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", s.lists, s.candidates);
    let s_label = if s.s_lists < s.lists {
        format!("S (the {} lists that show it)", s.s_lists)
    } else {
        "S".to_string()
    };
    let rows = [
        ("R", &s.r, Some(0)),
        ("N", &s.n, Some(1)),
        (s_label.as_str(), &s.s, Some(2)),
        ("RNS", &s.rns, None),
    ];
    for (name, sp, k) in rows {
        let extra = match k {
            Some(k) => format!(
                "{:.2} | {:.1}% | {}",
                s.iqr_ratio[k],
                100.0 * s.worst_constant_share[k],
                s.lists_over_10pct_constant[k]
            ),
            None => "– | – | –".into(),
        };
        out += &format!(
            "| {name} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {extra} |\n",
            sp.min, sp.q1, sp.median, sp.q3, sp.max, sp.std
        );
    }
    out
}

fn run_spread(a: EvalArgs, progress: bool) -> Result<()> {
    let wf = weights_of(&a)?;
    let l = load(&a.common, progress)?;
    let w = wf.weights;
    // Each candidate c is scored against A∖{c} = the slice's other entities (the other
    // candidates and the anchors), so S is shown when the slice holds three or more.
    let q_lists: Vec<(&[serenqa_shared::rns::Terms], bool)> = l
        .questions
        .iter()
        .map(|q| {
            let m = q.slice.len();
            let shown = serenqa_shared::rns::surprise_informative(m.saturating_sub(1), 1);
            (q.terms.as_slice(), shown)
        })
        .collect();
    // Discover's lists: every disease, 200 candidates, scored against its known treatments.
    let cache = BlockCache::new(1);
    let mut d_lists = Vec::new();
    let mut d_known = Vec::new();
    let mut fallback = 0usize;
    let disease = (0..l.g.type_count() as u16).find(|&t| l.g.type_display(t) == "Disease");
    // As the server does: candidates proposed by the plausibility model when `serenqa predict`
    // has stored predictions for this graph, else by walk proximity.
    let preds = {
        let path = serenqa_predict::store::default_path(&l.g);
        if path.is_file() {
            serenqa_predict::Predictions::load(&path, &l.g)
                .ok()
                .map(|p| crate::api::served::Served::All(std::sync::Arc::new(p)))
        } else {
            None
        }
    };
    let proposed_by = if preds.is_some() {
        "the plausibility model (stored predictions)"
    } else {
        "walk proximity (no stored predictions; run `serenqa predict`)"
    };
    let limit = serenqa_model::discover::MAX_CANDIDATES;
    if let Some(t) = disease {
        for &d in l.g.nodes_of_type(t) {
            if let Ok(found) = crate::api::predictions::discover_proposed(
                &l.g,
                &l.model,
                &cache,
                preds.as_ref(),
                d,
                limit,
                &w,
                None,
            ) {
                if found.terms.is_empty() {
                    continue;
                }
                fallback += (!found.existing_known) as usize;
                d_known.push(found.existing_known);
                d_lists.push(found.terms);
            }
        }
    }
    // Sanity: the per-candidate terms of the questionnaire sets are what `candidate_terms` gives.
    debug_assert!(l
        .questions
        .first()
        .map(|q| candidate_terms(&q.slice, q.nodes.len()).as_ref() == Some(&q.terms))
        .unwrap_or(true));
    let qs = spread_of(&q_lists, &w);
    // A page shows S when Ae holds more than the page's entity (`rns::surprise_informative`;
    // the other pages show no S and leave it out of RNS).
    let d_shown: Vec<(&[serenqa_shared::rns::Terms], bool)> = d_lists
        .iter()
        .zip(&d_known)
        .map(|(l, &k)| (l.as_slice(), k))
        .collect();
    let ds = spread_of(&d_shown, &w);
    let shown: Vec<(&[serenqa_shared::rns::Terms], bool)> =
        d_shown.iter().filter(|(_, k)| *k).copied().collect();
    let ds_shown = spread_of(&shown, &w);
    // Discover lists where more than 10% of the candidates sit at S's maximum as the page
    // would show it (S ≥ 0.999, "1.000"), split by whether Ae holds known answers or only the
    // page's entity (there |A| = 2 and S is 1 whenever walks connect the two).
    let mut s_at_max = [0usize; 2];
    for (l, &known) in d_lists.iter().zip(&d_known) {
        let top = l.iter().filter(|t| t.s >= 0.999).count();
        if top * 10 > l.len() {
            s_at_max[known as usize] += 1;
        }
    }
    if a.common.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({ "weights": wf, "questionnaire": qs, "discover": ds, "discover_with_known_answers": ds_shown, "discover_proposed_by": proposed_by, "discover_lists_without_known_answers": fallback, "discover_lists_over_10pct_at_s_0999": { "without_known_answers": s_at_max[0], "with_known_answers": s_at_max[1] } })
            )?
        );
        return Ok(());
    }
    println!(
        "weights α = {:.3}, β = {:.3}, γ = {:.3} — {}\nAe of a questionnaire list: {}\n",
        w.alpha,
        w.beta,
        w.gamma,
        wf.source.label,
        a.common.ae.describe()
    );
    println!(
        "{}",
        render_spread(
            "Questionnaire candidate sets (RNS(Ac∖{c}, {c}), all batches)",
            &qs
        )
    );
    println!("{}", render_spread(&format!("Discover lists (every disease, ≤ 200 candidates proposed by {proposed_by}, RNS(Ae, {{c}}))"), &ds));
    println!(
        "{}",
        render_spread(
            &format!(
                "Discover lists whose page shows S (Ae holds known treatments: {} lists)",
                shown.len()
            ),
            &ds_shown
        )
    );
    if fallback > 0 {
        println!("{fallback} of the Discover lists have no known treatment: their candidates are scored against Ae = {{the disease}}, where S cannot tell candidates apart (|A| = 2), so the page shows no S and RNS leaves it out.");
    }
    println!(
        "Discover lists with more than 10% of the candidates at S ≥ 0.999 (1.000 as it would show): {} without known treatments (S not shown there: with |A| = 2 it is 1 whenever walks connect the disease and the candidate), {} with.",
        s_at_max[0], s_at_max[1]
    );
    Ok(())
}
