//! Every prompt template is in our own words: none shares a run of six or more consecutive
//! words with the SerenQA paper (case and punctuation folded). The paper is read from
//! `../shared/reference/serenqa-paper.txt` (or `$SERENQA_PAPER`); under CI its absence fails.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::collections::HashSet;
use std::path::PathBuf;

use serenqa_pipeline::prompts::TEMPLATES;

/// Words shared in a row that count as copied prose.
const RUN: usize = 6;

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn paper() -> Option<String> {
    if let Some(p) = std::env::var_os("SERENQA_PAPER") {
        return std::fs::read_to_string(p).ok();
    }
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        let cand = dir.join("../shared/reference/serenqa-paper.txt");
        if cand.is_file() {
            return std::fs::read_to_string(cand).ok();
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// The runs of `RUN` words of `text` that also occur in `reference`.
fn shared_runs(reference: &HashSet<Vec<String>>, text: &str) -> Vec<String> {
    let w = words(text);
    w.windows(RUN)
        .filter(|g| reference.contains(*g))
        .map(|g| g.join(" "))
        .collect()
}

#[test]
fn no_prompt_shares_six_words_in_a_row_with_the_paper() {
    let Some(paper) = paper() else {
        serenqa_graph::datadir::missing_resource("the SerenQA paper (../shared/reference/serenqa-paper.txt or $SERENQA_PAPER) was not found");
        return;
    };
    let pw = words(&paper);
    assert!(
        pw.len() > 5_000,
        "the paper text looks truncated ({} words)",
        pw.len()
    );
    let grams: HashSet<Vec<String>> = pw.windows(RUN).map(<[String]>::to_vec).collect();
    // The check itself can fail: a sentence lifted from the paper is caught.
    let lifted = pw[1000..1000 + RUN + 2].join(" ");
    assert!(
        !shared_runs(&grams, &lifted).is_empty(),
        "the detector missed a copied sentence"
    );
    let mut copied = Vec::new();
    for (name, text) in TEMPLATES {
        for run in shared_runs(&grams, text) {
            copied.push(format!("{name}: \"{run}\""));
        }
    }
    assert!(
        copied.is_empty(),
        "prompt text shared with the paper:\n{}",
        copied.join("\n")
    );
}
