//! `serenqa predict --top-k K` (and `serenqa predict` on a graph past the all-pairs model's
//! limit): the best K compounds of every disease and diseases of every compound
//! (`serenqa_predict::topk`), stored for the server next to where the all-pairs file would be.

use anyhow::{Context, Result};
use serenqa_graph::Graph;
use serenqa_predict::task::{Task, MAX_PAIRS};
use serenqa_predict::topk::{top_k, TopK, TopkParams};

use crate::rss;

/// The list length to build, or `None` for the all-pairs model: `--top-k` when given, else
/// 100 when the graph is past the all-pairs limit (said on stderr).
pub fn wanted(g: &Graph, asked: Option<usize>) -> Result<Option<usize>> {
    if let Some(k) = asked {
        return Ok(Some(k));
    }
    let task = Task::detect_any(g)?;
    let pairs = task.pairs() as u64;
    if pairs > MAX_PAIRS {
        eprintln!(
            "{} compounds × {} diseases = {pairs} pairs, past the all-pairs model's {MAX_PAIRS}: building the top 100 of each list instead (--top-k K to choose)",
            task.compounds.len(),
            task.diseases.len()
        );
        return Ok(Some(100));
    }
    Ok(None)
}

/// What `serenqa predict` was asked, as the top-k run reads it.
pub struct TopkRun {
    pub k: usize,
    pub seed: u64,
    pub budget: f64,
    pub train_diseases: usize,
    pub max_len: usize,
    pub lambda: f64,
    pub max_iter: usize,
    pub no_store: bool,
    pub out: Option<std::path::PathBuf>,
}

pub fn run(g: &Graph, args: &TopkRun, progress: bool) -> Result<()> {
    let k = args.k;
    if !(args.budget.is_finite() && args.budget > 0.0) {
        anyhow::bail!("--budget must be a positive number of edge visits");
    }
    if args.train_diseases == 0 {
        anyhow::bail!("--train-diseases must be at least 1");
    }
    // Metapaths of length 4 cost a push over four hops per disease: the top-k model stops at
    // 3 (the budget then picks among them).
    let mut params = TopkParams {
        k,
        seed: args.seed,
        budget: args.budget,
        train_diseases: args.train_diseases,
        max_len: args.max_len.min(TopkParams::default().max_len),
        ..TopkParams::default()
    };
    params.fit.lambda = args.lambda;
    params.progress = progress;
    params.fit.max_iter = args.max_iter;
    let t = std::time::Instant::now();
    let top = top_k(g, &params)?;
    eprint!("{}", summary(&top));
    if !args.no_store {
        let path = serenqa_predict::topk::default_path(g);
        top.save(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("stored for the server: {}", path.display());
    }
    if let Some(out) = &args.out {
        write_tsv(g, &top, out)?;
    }
    eprintln!(
        "done in {:.1} s; peak RSS {}",
        t.elapsed().as_secs_f64(),
        rss::peak_rss_bytes()
            .map(rss::human_bytes)
            .unwrap_or_else(|| "n/a".into())
    );
    Ok(())
}

/// What a run did, for stderr.
pub fn summary(top: &TopK) -> String {
    let i = &top.info;
    let kept = i.estimates.iter().filter(|e| e.kept).count();
    let mut s = format!(
        "top-{} lists: {} {} × {} {} (label {}); {} of {} metapaths kept within the budget of {:.2e} edge visits (estimated {:.2e}, took {:.2e}); {} degree features\n",
        i.params.k,
        top.compounds.len(),
        i.compound_type,
        top.diseases.len(),
        i.disease_type,
        i.label,
        kept,
        i.estimates.len(),
        i.params.budget,
        i.estimated_visits,
        i.visits as f64,
        i.degree_features.len()
    );
    s += &format!(
        "  fit on {} sampled diseases: {} positives, {} negatives; L-BFGS {} iterations, max |grad| {:.1e}{}\n",
        i.fit_diseases,
        i.positives,
        i.negatives,
        i.iterations,
        i.grad_max,
        if i.converged { "" } else { " (NOT converged: iteration cap)" }
    );
    s += &format!(
        "  {} pairs reached by a metapath and scored; compound lists proved exact: {} of {}\n",
        i.reached_pairs,
        i.exact_compound_lists,
        top.compounds.len()
    );
    if let Some(h) = &i.holdout {
        s += &format!(
            "  held-out diseases ({} fit, {} held; their treatment edges masked): AUROC {:.3}, recall@10 {:.3}, recall@{} {:.3}, median rank {} of {} ({} treatments, {} negatives)\n",
            h.train_diseases,
            h.test_diseases,
            h.auroc,
            h.recall_at_10,
            i.params.k,
            h.recall_at_k,
            h.median_rank,
            h.compounds,
            h.positives,
            h.negatives
        );
    }
    let mut best: Vec<&(String, f64)> = i.metapaths.iter().collect();
    best.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    s += &format!(
        "  strongest metapaths: {}\n",
        best.iter()
            .take(5)
            .map(|(n, b)| format!("{n} {b:+.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s += &format!(
        "  seconds: {}\n",
        i.timings
            .iter()
            .map(|(n, t)| format!("{n} {t:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

fn write_tsv(g: &Graph, top: &TopK, out: &std::path::PathBuf) -> Result<()> {
    use std::io::Write;
    let mut w: Box<dyn Write> = if out.as_os_str() == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        Box::new(std::io::BufWriter::new(
            std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?,
        ))
    };
    writeln!(
        w,
        "disease\tdisease_name\trank\tcompound\tcompound_name\tscore"
    )?;
    for (d, &dn) in top.diseases.iter().enumerate() {
        for (r, (c, s)) in top.by_disease.of(d).enumerate() {
            let cn = top.compounds[c as usize];
            writeln!(
                w,
                "{}\t{}\t{}\t{}\t{}\t{:.6}",
                g.ident(dn),
                g.name(dn),
                r + 1,
                g.ident(cn),
                g.name(cn),
                s
            )?;
        }
    }
    w.flush()?;
    Ok(())
}
