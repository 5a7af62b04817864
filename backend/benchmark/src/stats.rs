//! Reading a built benchmark back, and the paper's Table 1 (dataset statistics) and Table 4
//! (entries per pattern type) for it, plus one question's records for `bench show`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::patterns::PatternType;
use crate::records::{from_jsonl, KgqaRecord, Manifest, SerendipityRecord, MANIFEST_FORMAT};

pub struct Loaded {
    pub manifest: Manifest,
    pub kgqa: Vec<KgqaRecord>,
    pub serendipity: Vec<SerendipityRecord>,
}

pub fn load_dir(dir: &Path) -> Result<Loaded, String> {
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(|e| {
            format!(
                "{}: {e} (build it with `serenqa bench build --out {}`)",
                p.display(),
                dir.display()
            )
        })
    };
    let manifest: Manifest = serde_json::from_str(&read("manifest.json")?)
        .map_err(|e| format!("{}: {e}", dir.join("manifest.json").display()))?;
    if manifest.format != MANIFEST_FORMAT {
        return Err(format!(
            "{}: not a serenqa benchmark manifest",
            dir.join("manifest.json").display()
        ));
    }
    let kgqa = from_jsonl(&read("kgqa.jsonl")?, "kgqa.jsonl")?;
    let serendipity = from_jsonl(&read("serendipity.jsonl")?, "serendipity.jsonl")?;
    Ok(Loaded {
        manifest,
        kgqa,
        serendipity,
    })
}

fn row(out: &mut String, k: &str, v: impl std::fmt::Display) {
    out.push_str(&format!("  {k:<52} {v:>14}\n"));
}

/// The paper's Table 1 for our benchmark, with the serendipity side per strategy.
pub fn table1(l: &Loaded) -> String {
    let m = &l.manifest;
    let mut s = String::from("Table 1: dataset statistics\n");
    let distinct: std::collections::BTreeSet<&str> =
        l.kgqa.iter().map(|r| r.question.as_str()).collect();
    let patterns: std::collections::BTreeSet<&str> =
        l.kgqa.iter().map(|r| r.pattern_type.as_str()).collect();
    let mean = if l.kgqa.is_empty() {
        0.0
    } else {
        l.kgqa.iter().map(|r| r.answer.len()).sum::<usize>() as f64 / l.kgqa.len() as f64
    };
    row(&mut s, "Number of Distinct Queries", distinct.len());
    row(&mut s, "Number of Relations in Gc (E)", m.graph.edges);
    row(&mut s, "Number of Entities in Gc (V)", m.graph.nodes);
    row(&mut s, "Number of Graph Pattern Types", patterns.len());
    row(
        &mut s,
        "Avg. Answer Set Size (|A| per query)",
        format!("{mean:.2}"),
    );
    row(&mut s, "Questions in the test split", m.test_questions);
    let llm = m.scorers.iter().filter(|x| x.llm).count();
    row(&mut s, "LLM scorers in the ensemble", llm);
    row(
        &mut s,
        "Offline (non-LLM) scorers in the ensemble",
        m.scorers.len() - llm,
    );
    let kind = if m.ensemble.is_empty() {
        if llm == 0 {
            "offline proxy"
        } else if llm == m.scorers.len() {
            "llm"
        } else {
            "mixed"
        }
    } else {
        m.ensemble.as_str()
    };
    row(
        &mut s,
        "The `llm` partition is scored by",
        if kind == "offline proxy" {
            "offline proxy (not LLMs)"
        } else {
            kind
        },
    );
    row(
        &mut s,
        "Ensemble scorings dropped (invalid replies)",
        m.ensemble_dropped.len(),
    );
    s.push_str(&format!(
        "  graph {} ({}), hash {}, seed {}\n",
        m.graph.name,
        if m.graph.source.is_empty() {
            "-"
        } else {
            &m.graph.source
        },
        m.graph.hash,
        m.seed
    ));
    s.push_str("\nSerendipity partitions (G = Gc − R per strategy)\n");
    s.push_str(&format!(
        "  {:<8} {:>9} {:>6} {:>8} {:>10} {:>12} {:>7} {:>7} {:>8} {:>8}\n",
        "strategy",
        "questions",
        "kept",
        "dropped",
        "removed R",
        "edges in G",
        "|Ae|",
        "|As|",
        "RNS",
        "paths"
    ));
    for (k, st) in &m.strategies {
        s.push_str(&format!(
            "  {:<8} {:>9} {:>6} {:>8} {:>10} {:>12} {:>7.2} {:>7.2} {:>8} {:>8}\n",
            k,
            st.questions,
            st.kept,
            st.dropped,
            st.removed_edges,
            m.graph.edges - st.removed_edges,
            st.mean_existing,
            st.mean_serendipity,
            st.mean_rns
                .map(|x| format!("{x:.4}"))
                .unwrap_or_else(|| "-".into()),
            st.paths
        ));
    }
    for sc in &m.scorers {
        s.push_str(&format!("  scorer: {}\n", sc.label));
    }
    for d in m.ensemble_dropped.iter().take(20) {
        s.push_str(&format!(
            "  dropped: question {} · {} · {}\n",
            d.qid, d.scorer, d.reason
        ));
    }
    if m.ensemble_dropped.len() > 20 {
        s.push_str(&format!(
            "  dropped: … {} more in manifest.json (ensemble_dropped)\n",
            m.ensemble_dropped.len() - 20
        ));
    }
    for n in &m.notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    s
}

/// The paper's Table 4 for our benchmark: entries per pattern type next to the paper's.
pub fn table4(l: &Loaded) -> String {
    let mut by: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in &l.kgqa {
        let e = by.entry(r.pattern_type.clone()).or_default();
        e.0 += 1;
        e.1 += r.answer.len();
    }
    let mut s = String::from("Table 4: entries per query pattern type\n");
    s.push_str(&format!(
        "  {:<24} {:>8} {:>8} {:>10}\n",
        "pattern type", "ours", "paper", "mean |A|"
    ));
    let (mut tot, mut paper) = (0, 0);
    for p in PatternType::ALL {
        let (n, a) = by.get(p.code()).copied().unwrap_or((0, 0));
        tot += n;
        paper += p.paper_count();
        let mean = if n == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", a as f64 / n as f64)
        };
        s.push_str(&format!(
            "  {:<24} {:>8} {:>8} {:>10}\n",
            format!("{} Type {}", p.family(), p.code()),
            n,
            p.paper_count(),
            mean
        ));
    }
    s.push_str(&format!("  {:<24} {:>8} {:>8}\n", "total", tot, paper));
    s
}

/// Both records of one question, pretty-printed.
pub fn show(l: &Loaded, qid: u32) -> Result<String, String> {
    let k = l
        .kgqa
        .iter()
        .find(|r| r.qid == qid)
        .ok_or_else(|| format!("no question with qid {qid} (qids run 1..={})", l.kgqa.len()))?;
    let mut s = format!(
        "KGQA record\n{}\n",
        serde_json::to_string_pretty(k).map_err(|e| e.to_string())?
    );
    match l.serendipity.iter().find(|r| r.qid == qid) {
        Some(r) => s.push_str(&format!(
            "\nSerendipity record\n{}\n",
            serde_json::to_string_pretty(r).map_err(|e| e.to_string())?
        )),
        None => s.push_str("\nSerendipity record: none (every strategy dropped this question)\n"),
    }
    Ok(s)
}
