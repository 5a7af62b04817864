//! `serenqa discover`: the clinician's Discover page measured off-line.
//!
//! - `cv`: chooses and checks the first screen's order (`serenqa_shared::screen`) by
//!   cross-validation. The plausibility model is refitted per fold with that fold's treatment
//!   edges removed before features (exactly `serenqa predict eval`'s folds: edges held out, and
//!   whole diseases held out); each page is then rebuilt as the fold would show it — the drugs
//!   still known (treats or palliates, not held out) are the known answers and never
//!   candidates, the 200 most plausible others are the candidates, labelled obvious / new
//!   mechanism against the known ones and flagged when the graph says they cause the disease —
//!   and ordered by plausibility and by the screen rule at several bands. Reported per fold:
//!   held-out treatments in each page's top 10 (disease pages; drug pages too), obvious drugs
//!   in the top 10, flagged drugs in the top 20.
//! - `flags`: how often the safety flags fire on the graph's own treatments and palliations
//!   and on every other pair, by how they were matched and by the pair's mechanism (docs/
//!   DISCOVER.md: side-effect records also name indications, so a flag is no safety signal on
//!   its own).
//! - `bench`: the API's reply (`api::discover::reply`) for every disease, cold (an empty block
//!   cache per request) and warm; median, p95, p99, max.

use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serenqa_graph::{Graph, NodeId};
use serenqa_predict::eval::{fold_scores, FoldKind, FoldScores};
use serenqa_predict::PredictParams;
use serenqa_shared::screen::{Flagged, Mechanism, ScreenRule};

use crate::graph_source::GraphArgs;
use crate::screen::Clinical;

#[derive(Args)]
pub struct DiscoverArgs {
    #[command(subcommand)]
    command: DiscoverCommand,
}

#[derive(Subcommand)]
enum DiscoverCommand {
    /// Cross-validate the first screen's order: held-out treatments in the top 10, obvious
    /// drugs in the top 10, flagged drugs in the top 20, per fold and order.
    Cv {
        #[command(flatten)]
        graph: GraphArgs,
        #[arg(long, default_value_t = 5)]
        folds: usize,
        /// `edges`, `diseases` or `both`.
        #[arg(long, default_value = "both")]
        kind: String,
        /// Seed of the folds and of the negative sample.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Bands of the screen rule to compare (comma-separated, each in 0–1).
        #[arg(long, default_value = "0.9,0.8,0.7,0.6,0.5")]
        bands: String,
        /// Also write every fold's pages (candidates in plausibility order with probability,
        /// flag, mechanism, held-out) as JSON lines, to compare other rules without refitting.
        #[arg(long)]
        dump: Option<std::path::PathBuf>,
    },
    /// How often the safety flags fire, by how they were matched: on the graph's own
    /// treatments (CtD) and palliations (CpD), and on all other compound–disease pairs.
    Flags {
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// The first screen of every disease page as served (the stored predictions, the graph's
    /// own known drugs): same-class and obvious drugs in the top 10 and flagged drugs in the
    /// top 20, all pages together, for plausibility order and the screen rule's variants.
    FirstScreen {
        #[command(flatten)]
        graph: GraphArgs,
        /// Bands of the screen rule to compare (comma-separated, each in 0–1).
        #[arg(long, default_value = "0.9,0.8,0.7")]
        bands: String,
        /// Also write every page (candidates in plausibility order) as JSON lines.
        #[arg(long)]
        dump: Option<std::path::PathBuf>,
    },
    /// Time the Discover reply for every disease (or `--pages` of them), cold and warm. On a
    /// graph without stored plausibility predictions (a CKG-sized one) candidates come by
    /// walk proximity, and each page's proposal is also timed the old way — three passes over
    /// the whole graph — as the baseline, with the two candidate lists compared.
    Bench {
        #[command(flatten)]
        graph: GraphArgs,
        /// Candidates per reply (the page asks for 200).
        #[arg(long, default_value_t = 200)]
        limit: usize,
        /// Disease pages, spread evenly over the diseases (0: every disease).
        #[arg(long, default_value_t = 0)]
        pages: usize,
    },
}

pub fn run(args: DiscoverArgs, progress: bool) -> Result<()> {
    match args.command {
        DiscoverCommand::Cv {
            graph,
            folds,
            kind,
            seed,
            bands,
            dump,
        } => run_cv(
            &graph,
            folds,
            &kind,
            seed,
            &bands,
            dump.as_deref(),
            progress,
        ),
        DiscoverCommand::Bench {
            graph,
            limit,
            pages,
        } => run_bench(&graph, limit, pages, progress),
        DiscoverCommand::FirstScreen { graph, bands, dump } => {
            run_first_screen(&graph, &parse_bands(&bands)?, dump.as_deref(), progress)
        }
        DiscoverCommand::Flags { graph } => run_flags(&graph, progress),
    }
}

/// Candidates per page, as the API proposes them.
const CANDIDATES: usize = serenqa_model::discover::MAX_CANDIDATES;

/// One order being compared.
struct Variant {
    name: String,
    rule: ScreenRule,
}

fn variants(bands: &[f64]) -> Vec<Variant> {
    let rule = |band: f64, flagged: Flagged, favour_new: bool| ScreenRule {
        band,
        flagged,
        favour_new,
    };
    let mut v = vec![
        Variant {
            name: "plausibility".into(),
            rule: rule(1.0, Flagged::InPlace, false),
        },
        Variant {
            name: "plausibility, flagged last".into(),
            rule: rule(1.0, Flagged::Last, false),
        },
    ];
    let default = ScreenRule::default();
    for &b in bands {
        for f in Flagged::ALL {
            let r = rule(b, f, true);
            v.push(Variant {
                name: format!(
                    "band {b:.2}, flagged {}{}",
                    f.name(),
                    if r == default { " (default)" } else { "" }
                ),
                rule: r,
            });
        }
    }
    v
}

/// Sums over the pages of one fold for one order.
#[derive(Clone, Copy, Default)]
struct Tally {
    pages: usize,
    held: usize,
    hits10: usize,
    obvious10: usize,
    slots10: usize,
    flagged20: usize,
    /// Flagged by identifier (a UMLS cross-reference) and with no class or target shared
    /// with a known treatment, in the top 20.
    unexplained20: usize,
    ident20: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.pages += o.pages;
        self.held += o.held;
        self.hits10 += o.hits10;
        self.obvious10 += o.obvious10;
        self.slots10 += o.slots10;
        self.flagged20 += o.flagged20;
        self.unexplained20 += o.unexplained20;
        self.ident20 += o.ident20;
    }
}

/// One page as the fold shows it: candidates (node, probability, flagged, obvious) in
/// plausibility order, and which of them are held-out treatments.
struct Page {
    cands: Vec<(NodeId, f64, bool, Mechanism)>,
    held: Vec<bool>,
    /// Flagged by identifier (a UMLS cross-reference of the disease).
    ident: Vec<bool>,
}

/// Is one of the flags an identifier match (the strictest join)?
fn by_identifier(flags: &[serenqa_graph::safety::Flag]) -> bool {
    flags
        .iter()
        .any(|f| matches!(f.by, serenqa_graph::safety::MatchedBy::Identifier(_)))
}

fn tally(page: &Page, rule: &ScreenRule) -> Tally {
    let order = crate::screen::order(&page.cands, rule);
    let top = |k: usize| order.iter().take(k);
    Tally {
        pages: 1,
        held: page.held.iter().filter(|&&h| h).count(),
        hits10: top(10).filter(|&&i| page.held[i]).count(),
        obvious10: top(10).filter(|&&i| page.cands[i].3.is_obvious()).count(),
        slots10: top(10).count(),
        flagged20: top(20).filter(|&&i| page.cands[i].2).count(),
        unexplained20: top(20)
            .filter(|&&i| page.cands[i].2 && page.cands[i].3 == Mechanism::New)
            .count(),
        ident20: top(20).filter(|&&i| page.ident[i]).count(),
    }
}

/// The pages of fold `f`: every disease (and every drug) with a held-out treatment.
fn pages(g: &Graph, fs: &FoldScores, f: usize, clinical: &Clinical) -> (Vec<Page>, Vec<Page>) {
    let (nc, nd) = (fs.compounds.len(), fs.diseases.len());
    let prob = |z: f64| match fs.calibration {
        Some(c) => c.apply(z),
        None => 1.0 / (1.0 + (-z).exp()),
    };
    let known = |p: usize| fs.positives.iter().any(|l| l[p]) && !fs.held_out(p, f);
    let hit = |p: usize| fs.positives[0][p] && fs.held_out(p, f);
    // The drugs each disease is known for in this fold (sorted node ids).
    let known_of_d: Vec<Vec<NodeId>> = (0..nd)
        .map(|d| {
            let mut v: Vec<NodeId> = (0..nc)
                .filter(|&c| known(c * nd + d))
                .map(|c| fs.compounds[c])
                .collect();
            v.sort_unstable();
            v
        })
        .collect();
    let z = &fs.logits[f];
    let mut disease_pages = Vec::new();
    for d in 0..nd {
        if !(0..nc).any(|c| hit(c * nd + d)) {
            continue;
        }
        let mut cs: Vec<usize> = (0..nc).filter(|&c| !known(c * nd + d)).collect();
        cs.sort_by(|&a, &b| {
            z[b * nd + d]
                .total_cmp(&z[a * nd + d])
                .then(fs.compounds[a].cmp(&fs.compounds[b]))
        });
        cs.truncate(CANDIDATES);
        let dn = fs.diseases[d];
        let cands = cs
            .iter()
            .map(|&c| {
                let cn = fs.compounds[c];
                let (m, flags) = clinical.pair(g, cn, dn, &known_of_d[d]);
                (
                    (cn, prob(z[c * nd + d]), !flags.is_empty(), m.kind),
                    by_identifier(&flags),
                )
            })
            .unzip::<_, _, Vec<_>, Vec<_>>();
        let (cands, ident) = cands;
        let held = cs.iter().map(|&c| hit(c * nd + d)).collect();
        disease_pages.push(Page { cands, held, ident });
    }
    let mut drug_pages = Vec::new();
    for c in 0..nc {
        if !(0..nd).any(|d| hit(c * nd + d)) {
            continue;
        }
        let mut ds: Vec<usize> = (0..nd).filter(|&d| !known(c * nd + d)).collect();
        ds.sort_by(|&a, &b| {
            z[c * nd + b]
                .total_cmp(&z[c * nd + a])
                .then(fs.diseases[a].cmp(&fs.diseases[b]))
        });
        ds.truncate(CANDIDATES);
        let cn = fs.compounds[c];
        let cands = ds
            .iter()
            .map(|&d| {
                let dn = fs.diseases[d];
                let (m, flags) = clinical.pair(g, cn, dn, &known_of_d[d]);
                (
                    (dn, prob(z[c * nd + d]), !flags.is_empty(), m.kind),
                    by_identifier(&flags),
                )
            })
            .unzip::<_, _, Vec<_>, Vec<_>>();
        let (cands, ident) = cands;
        let held = ds.iter().map(|&d| hit(c * nd + d)).collect();
        drug_pages.push(Page { cands, held, ident });
    }
    (disease_pages, drug_pages)
}

fn run_cv(
    graph: &GraphArgs,
    folds: usize,
    kind: &str,
    seed: u64,
    bands: &str,
    dump: Option<&std::path::Path>,
    progress: bool,
) -> Result<()> {
    let mut dump = match dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("--dump {}", p.display()))?,
        )),
        None => None,
    };
    let kinds = match kind {
        "edges" => vec![FoldKind::Edges],
        "diseases" => vec![FoldKind::Diseases],
        "both" => vec![FoldKind::Edges, FoldKind::Diseases],
        _ => anyhow::bail!("--kind must be edges, diseases or both"),
    };
    let bands = parse_bands(bands)?;
    let g = graph.load(progress)?;
    let (ontology, note) = crate::screen::find_ontology();
    let clinical = Clinical::with(&g, ontology.as_ref(), note);
    eprintln!(
        "safety flags for {} diseases ({})",
        clinical.safety.diseases_covered(),
        clinical.ontology_note
    );
    let params = PredictParams {
        seed,
        ..PredictParams::default()
    };
    let vs = variants(&bands);
    println!("| folds | fold | page | pages | held-out | order | held-out in top 10 | obvious in top 10 | flagged in top 20 | of which unexplained | flagged by identifier in top 20 |");
    println!("|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|");
    for kind in kinds {
        let t = Instant::now();
        let fs = fold_scores(&g, &params, ontology.as_ref(), folds, kind, &mut |f, s| {
            eprintln!("{kind:?} fold {f}: features + fit in {s:.1} s");
        })?;
        let mut totals = vec![[Tally::default(); 2]; vs.len()];
        for f in 0..folds {
            let (dp, cp) = pages(&g, &fs, f, &clinical);
            if let Some(w) = dump.as_mut() {
                dump_pages(w, &g, kind, f, &dp, &cp)?;
            }
            for (which, ps) in [&dp, &cp].into_iter().enumerate() {
                for (vi, v) in vs.iter().enumerate() {
                    let mut sum = Tally::default();
                    for p in ps {
                        sum.add(&tally(p, &v.rule));
                    }
                    totals[vi][which].add(&sum);
                    row(kind, &f.to_string(), which, &v.name, &sum);
                }
            }
        }
        for which in [0, 1] {
            for (v, t) in vs.iter().zip(&totals) {
                row(kind, "all", which, &v.name, &t[which]);
            }
        }
        eprintln!("{kind:?}: {:.1} s", t.elapsed().as_secs_f64());
    }
    Ok(())
}

/// One JSON line per page: `{kind, fold, page, cands: [[node, p, flagged, mechanism, held,
/// by_identifier], …]}`, candidates in plausibility order.
fn dump_pages(
    w: &mut impl std::io::Write,
    g: &Graph,
    kind: FoldKind,
    f: usize,
    dp: &[Page],
    cp: &[Page],
) -> Result<()> {
    for (which, ps) in [dp, cp].into_iter().enumerate() {
        for p in ps {
            let cands: Vec<_> = p
                .cands
                .iter()
                .zip(&p.held)
                .zip(&p.ident)
                .map(|((c, h), i)| {
                    serde_json::json!([c.0, c.1, c.2, c.3.name(), h, i, classes_of(g, c.0)])
                })
                .collect();
            let line = serde_json::json!({
                "kind": format!("{kind:?}").to_lowercase(),
                "fold": f,
                "page": if which == 0 { "disease" } else { "drug" },
                "cands": cands,
            });
            writeln!(w, "{line}")?;
        }
    }
    Ok(())
}

fn row(kind: FoldKind, fold: &str, which: usize, name: &str, t: &Tally) {
    let pct = |a: usize, b: usize| {
        if b == 0 {
            "—".to_string()
        } else {
            format!("{a} ({:.1}%)", 100.0 * a as f64 / b as f64)
        }
    };
    println!(
        "| {} | {fold} | {} | {} | {} | {name} | {} | {} | {} | {} | {} |",
        match kind {
            FoldKind::Edges => "edges",
            FoldKind::Diseases => "diseases",
        },
        if which == 0 { "disease" } else { "drug" },
        t.pages,
        t.held,
        pct(t.hits10, t.held),
        pct(t.obvious10, t.slots10),
        t.flagged20,
        t.unexplained20,
        t.ident20,
    );
}

fn parse_bands(bands: &str) -> Result<Vec<f64>> {
    bands
        .split(',')
        .map(|b| {
            b.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .with_context(|| format!("--bands: {b:?} is not a number in 0–1"))
        })
        .collect()
}

/// The pharmacologic classes that include a compound (node ids).
fn classes_of(g: &Graph, c: NodeId) -> Vec<NodeId> {
    match g.relation_id("INCLUDES_PCiC") {
        Some(r) => g.in_range_rel(c, r).map(|i| g.in_csr().1[i]).collect(),
        None => Vec::new(),
    }
}

/// The served disease pages, all together: what a reviewer with external sets would count.
fn run_first_screen(
    graph: &GraphArgs,
    bands: &[f64],
    dump: Option<&std::path::Path>,
    progress: bool,
) -> Result<()> {
    let state = served_state(graph, progress)?;
    let g = state.graph.clone();
    let model = state.model.clone().context("no model")?;
    let mut dump = match dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("--dump {}", p.display()))?,
        )),
        None => None,
    };
    let plaus = ScreenRule {
        band: 1.0,
        flagged: Flagged::InPlace,
        favour_new: false,
    };
    let vs = variants(bands);
    // Per variant: [pages, same class in top 10, obvious in top 10, slots, flagged in top 20,
    // unexplained in top 20, by identifier in top 20].
    let mut totals = vec![[0usize; 7]; vs.len()];
    let diseases: Vec<NodeId> = g
        .type_id("Disease")
        .map(|t| g.nodes_of_type(t).to_vec())
        .unwrap_or_default();
    for &d in &diseases {
        let r = crate::api::discover::reply(&state, &model, d, CANDIDATES, None, plaus)?;
        if r.screen.is_none() {
            continue;
        }
        let cands: Vec<(NodeId, f64, bool, Mechanism)> = r
            .candidates
            .iter()
            .map(|c| {
                (
                    g.find_by_key(&c.node.id).unwrap_or(NodeId::MAX),
                    c.plausibility.as_ref().map_or(0.0, |p| p.score),
                    !c.safety.is_empty(),
                    c.mechanism.kind,
                )
            })
            .collect();
        let same_class: Vec<bool> = r
            .candidates
            .iter()
            .map(|c| !c.mechanism.classes.is_empty())
            .collect();
        let ident: Vec<bool> = r
            .candidates
            .iter()
            .map(|c| c.safety.iter().any(|f| f.by == "identifier"))
            .collect();
        if let Some(w) = dump.as_mut() {
            use std::io::Write;
            let line = serde_json::json!({
                "disease": r.query.name,
                "cands": cands.iter().enumerate().map(|(i, c)| serde_json::json!(
                    [c.0, c.1, c.2, c.3.name(), false, ident[i], classes_of(&g, c.0), same_class[i]]
                )).collect::<Vec<_>>(),
            });
            writeln!(w, "{line}")?;
        }
        for (v, t) in vs.iter().zip(totals.iter_mut()) {
            let o = crate::screen::order(&cands, &v.rule);
            t[0] += 1;
            for (k, &i) in o.iter().take(20).enumerate() {
                if k < 10 {
                    t[1] += usize::from(same_class[i]);
                    t[2] += usize::from(cands[i].3.is_obvious());
                    t[3] += 1;
                }
                t[4] += usize::from(cands[i].2);
                t[5] += usize::from(cands[i].2 && cands[i].3 == Mechanism::New);
                t[6] += usize::from(ident[i]);
            }
        }
    }
    println!("| order | pages | same class in top 10 | obvious in top 10 | flagged in top 20 | of which unexplained | by identifier in top 20 |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (v, t) in vs.iter().zip(&totals) {
        println!(
            "| {} | {} | {} | {} of {} | {} | {} | {} |",
            v.name, t[0], t[1], t[2], t[3], t[4], t[5], t[6]
        );
    }
    Ok(())
}

/// The server's state with the graph, the transition model and the stored predictions.
fn served_state(graph: &GraphArgs, progress: bool) -> Result<crate::api::AppState> {
    let (g, model) = crate::model_source::load_required(graph, progress)?;
    let path = serenqa_predict::store::default_path(&g);
    let preds = serenqa_predict::Predictions::load(&path, &g)
        .with_context(|| format!("{}: run `serenqa predict` first", path.display()))?;
    let g = std::sync::Arc::new(g);
    Ok(crate::api::AppState::new(g)
        .with_model(Some(model))
        .with_predictions(Some(preds)))
}

fn run_bench(graph: &GraphArgs, limit: usize, pages: usize, progress: bool) -> Result<()> {
    if limit == 0 || limit > CANDIDATES {
        anyhow::bail!("--limit must be between 1 and {CANDIDATES}");
    }
    let (g, model) = crate::model_source::load_required(graph, progress)?;
    let path = serenqa_predict::store::default_path(&g);
    let preds = serenqa_predict::Predictions::load(&path, &g).ok();
    let top = match preds {
        Some(_) => None,
        None => {
            serenqa_predict::topk::TopK::load(&serenqa_predict::topk::default_path(&g), &g).ok()
        }
    };
    if preds.is_none() && top.is_none() {
        eprintln!(
            "no stored plausibility predictions or top lists for this graph ({}): candidates by walk proximity",
            path.display()
        );
    } else if top.is_some() {
        eprintln!("candidates from the stored top lists (`serenqa predict --top-k`)");
    }
    let walk = preds.is_none() && top.is_none();
    let mut state = crate::api::AppState::new(std::sync::Arc::new(g))
        .with_model(Some(model))
        .with_predictions(preds)
        .with_top_k(top);
    let g = state.graph.clone();
    let t = Instant::now();
    let _ = state.clinical();
    eprintln!(
        "labels built in {:.0} ms (once, at start-up)",
        t.elapsed().as_secs_f64() * 1e3
    );
    let model = state.model.clone().context("no model")?;
    let all: Vec<NodeId> = g
        .type_id("Disease")
        .map(|t| g.nodes_of_type(t).to_vec())
        .unwrap_or_default();
    if all.is_empty() {
        anyhow::bail!("the graph has no Disease nodes");
    }
    let diseases: Vec<NodeId> = if pages == 0 || pages >= all.len() {
        all
    } else {
        (0..pages).map(|k| all[k * all.len() / pages]).collect()
    };
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let (mut dense, mut sparse, mut same, mut max_rel) = (Vec::new(), Vec::new(), 0usize, 0f64);
    for &d in &diseases {
        state.blocks = std::sync::Arc::new(serenqa_model::slice::BlockCache::default());
        let t = Instant::now();
        let r = crate::api::discover::reply(&state, &model, d, limit, None, ScreenRule::default())?;
        cold.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        crate::api::discover::reply(&state, &model, d, limit, None, ScreenRule::default())?;
        warm.push(t.elapsed().as_secs_f64() * 1e3);
        if walk {
            // The proposal alone, the old way (whole-graph passes) and the new way.
            let existing: Vec<NodeId> = r.existing.iter().map(|v| v.index as NodeId).collect();
            let known = serenqa_model::discover::known_of(&g, d);
            let Some(at) = g.type_id(&r.answer_kind).or_else(|| {
                r.candidates
                    .first()
                    .map(|c| g.node_type(c.node.index as NodeId))
            }) else {
                continue;
            };
            let run = |dense_pass: bool| {
                let t = Instant::now();
                let c = serenqa_model::discover::walk_candidates(
                    &g, &model, d, at, &existing, &known, limit, dense_pass,
                );
                (t.elapsed().as_secs_f64() * 1e3, c)
            };
            let (ms_d, a) = run(true);
            let (ms_s, b) = run(false);
            dense.push(ms_d);
            sparse.push(ms_s);
            same += usize::from(a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0));
            for (x, y) in a.iter().zip(&b) {
                max_rel = max_rel.max((x.1 - y.1).abs() / x.1.abs().max(f64::MIN_POSITIVE));
            }
        }
    }
    let q = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[i]
    };
    for (name, v) in [("cold", &mut cold), ("warm", &mut warm)] {
        println!(
            "discover {name} ({} diseases, limit {limit}): median {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            v.len(),
            q(v, 0.5),
            q(v, 0.95),
            q(v, 0.99),
            q(v, 1.0)
        );
    }
    if walk && !dense.is_empty() {
        let (md, ms) = (q(&mut dense, 0.5), q(&mut sparse, 0.5));
        println!(
            "walk proposal alone: whole-graph passes (before) median {md:.1} ms, p99 {:.1} ms; neighbourhood push (now) median {ms:.1} ms, p99 {:.1} ms; {:.1}× faster at the median; same candidates in the same order on {same} of {} pages (largest relative difference of a score {max_rel:.1e})",
            q(&mut dense, 0.99),
            q(&mut sparse, 0.99),
            md / ms.max(1e-9),
            dense.len()
        );
    }
    Ok(())
}

/// The pair's mechanism against the other drugs known for the disease (the pair's own edge
/// left out), in words.
fn mechanism_word(g: &Graph, clinical: &Clinical, c: NodeId, d: NodeId) -> &'static str {
    use serenqa_shared::screen::Mechanism;
    let mut known = serenqa_model::discover::known_of(g, d);
    known.retain(|&k| k != c);
    match clinical.mechanism.of(g, c, &known).kind {
        Mechanism::New => "new mechanism",
        Mechanism::NoneKnown => "nothing known to compare",
        Mechanism::SameClass | Mechanism::SharedTarget => "obvious",
    }
}

/// Names of side effects that say harm outright.
const HARM_WORDS: [&str; 5] = ["aggravated", "exacerbat", "worsen", "induced", "secondary"];

fn run_flags(graph: &GraphArgs, progress: bool) -> Result<()> {
    let g = graph.load(progress)?;
    let clinical = Clinical::load(&g);
    let ty = |n: &str| {
        g.type_id(n)
            .map(|t| g.nodes_of_type(t).to_vec())
            .unwrap_or_default()
    };
    let (compounds, diseases) = (ty("Compound"), ty("Disease"));
    let rel = |a: &str| (0..g.relation_count() as u16).find(|&r| g.relation(r).abbrev == a);
    let (_, out_t, _) = g.out_csr();
    let linked = |r: Option<u16>, c: NodeId, d: NodeId| {
        r.is_some_and(|r| g.out_range_rel(c, r).any(|i| out_t[i] == d))
    };
    let (ctd, cpd) = (rel("CtD"), rel("CpD"));
    // Per group (treats, palliates, other): [pairs, flagged, by identifier, name, symptom].
    let mut t = [[0usize; 5]; 3];
    // Per subset: pairs in it, per group.
    let mut subsets: std::collections::BTreeMap<String, [usize; 3]> = Default::default();
    for &c in &compounds {
        for &d in &diseases {
            let group = if linked(ctd, c, d) {
                0
            } else if linked(cpd, c, d) {
                1
            } else {
                2
            };
            let f = clinical.safety.flags(&g, c, d);
            let row = &mut t[group];
            row[0] += 1;
            row[1] += usize::from(!f.is_empty());
            for (k, name) in ["identifier", "name", "symptom"].iter().enumerate() {
                row[2 + k] += usize::from(f.iter().any(|x| x.by.kind() == *name));
            }
            let mech = mechanism_word(&g, &clinical, c, d);
            let mut names = vec![format!("all pairs: {mech}")];
            if !f.is_empty() {
                names.push(format!("flagged: {mech}"));
            }
            if f.iter().any(|x| {
                let n = g.name(x.condition).to_lowercase();
                HARM_WORDS.iter().any(|q| n.contains(q))
            }) {
                names.push("flagged: side effect named as harm".to_string());
            }
            for name in names {
                subsets.entry(name).or_insert([0usize; 3])[group] += 1;
            }
        }
    }
    println!("| pairs | n | flagged | by identifier | by name | by defining symptom |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, r) in ["treats (CtD)", "palliates (CpD)", "all other pairs"]
        .iter()
        .zip(t)
    {
        let pct = |x: usize| format!("{x} ({:.1}%)", 100.0 * x as f64 / r[0].max(1) as f64);
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            r[0],
            pct(r[1]),
            pct(r[2]),
            pct(r[3]),
            pct(r[4])
        );
    }
    println!();
    println!("| subset | share of treats | share of palliates | share of other pairs |");
    println!("|---|---:|---:|---:|");
    for (name, r) in &subsets {
        let share = |k: usize| format!("{:.2}%", 100.0 * r[k] as f64 / t[k][0].max(1) as f64);
        println!("| {name} | {} | {} | {} |", share(0), share(1), share(2));
    }
    Ok(())
}
