//! The whole build: questions → three partitions → edge removal per strategy → ground-truth
//! paths → records and manifest.

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;
use serenqa_graph::{Graph, NodeId};
use serenqa_model::slice::BlockCache;
use serenqa_model::Model;
use serenqa_shared::rns::{Weights, WeightsSource};

use crate::generate::{generate, GenConfig, GenReport, Question};
use crate::partition::{
    ensemble, rns_guided, DroppedScorer, EnsembleOutcome, ExpertPartition, ExpertRankings,
    Partition, RnsContext, Scorer, ScoringRequest,
};
use crate::paths::{ground_truth, GtPath};
use crate::query::View;
use crate::records::*;
use crate::removal::{resolve, Removal, Task};
use crate::rng::Rng;

/// The three strategies, in record order, with their record keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strategy {
    Ensemble,
    RnsGuided,
    Expert,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::Ensemble, Strategy::RnsGuided, Strategy::Expert];
    /// The key in serendipity records (the paper's names).
    pub fn key(self) -> &'static str {
        match self {
            Strategy::Ensemble => "llm",
            Strategy::RnsGuided => "sscore",
            Strategy::Expert => "expert",
        }
    }
}

#[derive(Clone, Debug)]
pub struct BuildConfig {
    pub gen: GenConfig,
    /// RNS weights of the RNS-guided strategy (default: the shipped fitted weights).
    pub weights: Weights,
    /// Where `weights` came from (recorded in the manifest).
    pub weights_source: WeightsSource,
    /// Share of questions in the test split.
    pub test_fraction: f64,
}

impl Default for BuildConfig {
    fn default() -> Self {
        let w = serenqa_model::weights::shipped();
        BuildConfig {
            gen: GenConfig::default(),
            weights: w.weights,
            weights_source: w.source,
            test_fraction: 0.2,
        }
    }
}

/// One strategy's result.
pub struct StrategyResult {
    pub strategy: Strategy,
    /// Per question: its partition under this strategy, if any.
    pub partitions: Vec<Option<Partition>>,
    pub removal: Removal,
    /// Index into `partitions`/questions → whether the removal kept it.
    pub kept: Vec<bool>,
    /// Per question: ground-truth paths on G (empty when not kept).
    pub paths: Vec<Vec<(GtPath, String)>>,
}

pub struct Benchmark {
    pub questions: Vec<Question>,
    pub reports: Vec<GenReport>,
    pub ensemble_scores: Vec<Vec<f64>>,
    pub strategies: Vec<StrategyResult>,
    pub splits: Vec<&'static str>,
    pub manifest: Manifest,
    /// Wall time per stage in seconds (kept out of the manifest, which must be reproducible).
    pub timings: Vec<(String, f64)>,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Partition(#[from] crate::partition::PartitionError),
    #[error("writing {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("serialising records: {0}")]
    Json(#[from] serde_json::Error),
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// What the "LLM Ensemble" partition of a build is: `llm` when every scorer is a language
/// model, `offline proxy` when none is, `mixed` otherwise.
pub fn ensemble_kind(scorers: &[Box<dyn Scorer + '_>]) -> String {
    let llm = scorers.iter().filter(|s| s.is_llm()).count();
    match llm {
        0 => "offline proxy".into(),
        n if n == scorers.len() => "llm".into(),
        _ => "mixed".into(),
    }
}

/// Builds the benchmark on `g`. `model` enables the RNS-guided strategy; `expert` the expert
/// one. Deterministic in all inputs.
pub fn build(
    g: &Graph,
    model: Option<&Model>,
    scorers: &[Box<dyn Scorer + '_>],
    expert: Option<&ExpertRankings>,
    cfg: &BuildConfig,
) -> Result<Benchmark, BuildError> {
    let mut notes = Vec::new();
    let mut timings = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut lap = |what: &str, timings: &mut Vec<(String, f64)>| {
        timings.push((what.to_string(), clock.elapsed().as_secs_f64()));
        clock = std::time::Instant::now();
    };
    let (questions, reports) = generate(g, &cfg.gen);
    lap("questions", &mut timings);

    // Partitions.
    let ens: Vec<EnsembleOutcome> = questions
        .par_iter()
        .map(|q| ensemble(scorers, &ScoringRequest::new(g, q.qid, &q.text, &q.answers)))
        .collect::<Result<_, _>>()?;
    let mut ensemble_dropped: Vec<DroppedScorer> =
        ens.iter().flat_map(|o| o.dropped.iter().cloned()).collect();
    ensemble_dropped.sort_by(|a, b| (a.qid, &a.scorer).cmp(&(b.qid, &b.scorer)));
    let unscored = ens.iter().filter(|o| o.partition.is_none()).count();
    if unscored > 0 {
        notes.push(format!("{unscored} questions have no ensemble partition: every ensemble model was dropped for them"));
    }
    if !ensemble_dropped.is_empty() {
        notes.push(format!(
            "{} (question, model) scorings dropped after invalid replies (see ensemble_dropped)",
            ensemble_dropped.len()
        ));
    }
    let (ensemble_scores, mut ens_parts): (Vec<Vec<f64>>, Vec<Option<Partition>>) =
        ens.into_iter().map(|o| (o.mean, o.partition)).unzip();
    let cache = BlockCache::new(64);
    let rns_parts: Vec<Result<Partition, String>> = match model {
        Some(m) => questions
            .par_iter()
            .zip(ens_parts.par_iter_mut())
            .map(|(q, ep)| {
                let ep = ep
                    .as_mut()
                    .ok_or_else(|| "no ensemble partition to start from".to_string())?;
                let named: Vec<NodeId> = q.query.entities().collect();
                let ctx = RnsContext::new(g, m, &cache, &q.answers, &named, cfg.weights)?;
                rns_guided(&ctx, ep)
            })
            .collect(),
        None => {
            notes.push(
                "no model (marginals + embeddings): the RNS-guided strategy was skipped"
                    .to_string(),
            );
            questions
                .iter()
                .map(|_| Err("no model".to_string()))
                .collect()
        }
    };
    let rns_failures = rns_parts.iter().filter(|r| r.is_err()).count();
    if model.is_some() && rns_failures > 0 {
        let first = rns_parts
            .iter()
            .find_map(|r| r.as_ref().err())
            .cloned()
            .unwrap_or_default();
        notes.push(format!(
            "RNS-guided partition failed for {rns_failures} questions (first: {first})"
        ));
    }
    let mut expert_parts: Vec<Option<Partition>> = vec![None; questions.len()];
    if let Some(rk) = expert {
        let mut ignored = 0;
        let mut bad = 0;
        for (i, q) in questions.iter().enumerate() {
            if let Some(r) = rk.get(q.qid) {
                match r.partition(g, &q.text, &q.answers) {
                    Ok((p, ig)) => {
                        ignored += ig;
                        expert_parts[i] = Some(p);
                    }
                    Err(e) => {
                        bad += 1;
                        if bad == 1 {
                            notes.push(format!("expert ranking unusable: {e}"));
                        }
                    }
                }
            }
        }
        notes.push(format!(
            "expert rankings: {} of {} questions ranked, {bad} unusable, {ignored} ranked keys not among the candidates",
            expert_parts.iter().filter(|p| p.is_some()).count(),
            questions.len()
        ));
    }
    lap("partitions", &mut timings);
    let per_strategy: Vec<(Strategy, Vec<Option<Partition>>)> = vec![
        (Strategy::Ensemble, ens_parts),
        (
            Strategy::RnsGuided,
            rns_parts.into_iter().map(std::result::Result::ok).collect(),
        ),
        (Strategy::Expert, expert_parts),
    ];

    // Removal and paths per strategy.
    let mut strategies = Vec::new();
    for (strategy, partitions) in per_strategy {
        let idx: Vec<usize> = (0..questions.len())
            .filter(|&i| partitions[i].is_some())
            .collect();
        let tasks: Vec<Task<'_>> = idx
            .iter()
            .filter_map(|&i| {
                let p = partitions[i].as_ref()?;
                Some(Task {
                    query: &questions[i].query,
                    candidates: &questions[i].answers,
                    existing: &p.existing,
                    serendipity: &p.serendipity,
                })
            })
            .collect();
        let removal = resolve(g, &tasks);
        lap(&format!("removal {}", strategy.key()), &mut timings);
        let mut kept = vec![false; questions.len()];
        for (t, &i) in idx.iter().enumerate() {
            kept[i] = removal.dropped[t].is_none();
        }
        let view = View::without(g, &removal.removed);
        let paths: Vec<Vec<(GtPath, String)>> = (0..questions.len())
            .into_par_iter()
            .map(|i| match (&partitions[i], kept[i]) {
                (Some(p), true) => ground_truth(view, &p.existing, &p.serendipity),
                _ => Vec::new(),
            })
            .collect();
        lap(&format!("paths {}", strategy.key()), &mut timings);
        strategies.push(StrategyResult {
            strategy,
            partitions,
            removal,
            kept,
            paths,
        });
    }

    // Train/test split, the same for every strategy.
    let splits: Vec<&'static str> = questions
        .iter()
        .map(|q| {
            let mut r = Rng::derive(cfg.gen.seed ^ q.qid as u64, "split");
            if r.unit() < cfg.test_fraction {
                "test"
            } else {
                "train"
            }
        })
        .collect();

    let mut per_pattern = BTreeMap::new();
    for q in &questions {
        *per_pattern.entry(q.pattern.code().to_string()).or_insert(0) += 1;
    }
    let mut sm = BTreeMap::new();
    for s in &strategies {
        let st = s.removal.stats();
        let kept_parts: Vec<&Partition> = s
            .partitions
            .iter()
            .zip(&s.kept)
            .filter(|(_, &k)| k)
            .filter_map(|(p, _)| p.as_ref())
            .collect();
        let rns: Vec<f64> = kept_parts.iter().filter_map(|p| p.rns).collect();
        sm.insert(
            s.strategy.key().to_string(),
            StrategyManifest {
                questions: st.questions,
                kept: st.kept,
                dropped: st.dropped,
                removed_edges: st.removed_edges,
                removed_file: format!("removed-{}.tsv", s.strategy.key()),
                rounds: st.rounds,
                mean_existing: round4(mean(kept_parts.iter().map(|p| p.existing.len() as f64))),
                mean_serendipity: round4(mean(
                    kept_parts.iter().map(|p| p.serendipity.len() as f64),
                )),
                mean_rns: (!rns.is_empty()).then(|| round4(mean(rns.iter().copied()))),
                paths: s.paths.iter().map(std::vec::Vec::len).sum(),
                questions_without_path: s
                    .paths
                    .iter()
                    .zip(&s.kept)
                    .filter(|(p, &k)| k && p.is_empty())
                    .count(),
            },
        );
    }
    let meta = g.meta();
    let manifest = Manifest {
        format: MANIFEST_FORMAT.into(),
        version: 1,
        graph: GraphInfo {
            name: meta.name.clone(),
            source: meta.source.clone(),
            nodes: g.node_count(),
            edges: g.edge_count(),
            hash: graph_hash(g),
        },
        seed: cfg.gen.seed,
        requested: cfg.gen.questions,
        questions: questions.len(),
        per_pattern,
        mean_answers: round4(mean(questions.iter().map(|q| q.answers.len() as f64))),
        test_fraction: cfg.test_fraction,
        test_questions: splits.iter().filter(|s| **s == "test").count(),
        scorers: scorers
            .iter()
            .map(|s| ScorerInfo {
                label: s.label(),
                llm: s.is_llm(),
            })
            .collect(),
        ensemble: ensemble_kind(scorers),
        ensemble_dropped,
        rns_weights: [cfg.weights.alpha, cfg.weights.beta, cfg.weights.gamma],
        rns_weights_source: Some(cfg.weights_source.clone()),
        model: model.map(|m| {
            format!(
                "marginals ({} iterations, converged {}) + {}-d embeddings, directed {}",
                m.params.marginal_stats.iterations,
                m.params.marginal_stats.converged,
                m.embeddings.dim(),
                m.params.directed
            )
        }),
        strategies: sm,
        generation: reports.clone(),
        notes,
    };
    Ok(Benchmark {
        questions,
        reports,
        ensemble_scores,
        strategies,
        splits,
        manifest,
        timings,
    })
}

impl Benchmark {
    fn entry(&self, g: &Graph, s: &StrategyResult, i: usize) -> Option<StrategyEntry> {
        let p = s.partitions[i].as_ref()?;
        if !s.kept[i] {
            return None;
        }
        let ids = |xs: &[NodeId]| {
            xs.iter()
                .map(|&x| g.ident(x).to_string())
                .collect::<Vec<_>>()
        };
        Some(StrategyEntry {
            serendipity_set: DescribedList {
                list: ids(&p.serendipity),
                description: None,
            },
            explore_queries: ExploreQueries {
                paths: s.paths[i].iter().map(|(_, t)| t.clone()).collect(),
                questions: Vec::new(),
            },
            partition: self.splits[i].to_string(),
            exact_matches: PlainList {
                list: ids(&p.existing),
            },
            rns: p.rns.map(|x| (x * 1e9).round() / 1e9),
        })
    }

    pub fn kgqa_records(&self, g: &Graph) -> Vec<KgqaRecord> {
        self.questions
            .iter()
            .enumerate()
            .map(|(i, q)| kgqa_record(g, q, crate::cypher::render(g, &q.query), self.splits[i]))
            .collect()
    }

    /// Serendipity records of questions kept by at least one strategy.
    pub fn serendipity_records(&self, g: &Graph) -> Vec<SerendipityRecord> {
        let by = |s: Strategy| self.strategies.iter().find(|r| r.strategy == s);
        self.questions
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                let rec = SerendipityRecord {
                    qid: q.qid,
                    question: q.text.clone(),
                    llm: by(Strategy::Ensemble).and_then(|s| self.entry(g, s, i)),
                    sscore: by(Strategy::RnsGuided).and_then(|s| self.entry(g, s, i)),
                    expert: by(Strategy::Expert).and_then(|s| self.entry(g, s, i)),
                };
                (rec.llm.is_some() || rec.sscore.is_some() || rec.expert.is_some()).then_some(rec)
            })
            .collect()
    }

    /// R of one strategy as sorted `source key \t relation \t target key` lines.
    pub fn removed_tsv(&self, g: &Graph, s: &StrategyResult) -> String {
        let mut lines: Vec<String> = s
            .removal
            .removed
            .iter()
            .map(|e| {
                let r = g.edge(e);
                format!(
                    "{}\t{}\t{}",
                    g.key(r.source),
                    g.relation(r.rel).name,
                    g.key(r.target)
                )
            })
            .collect();
        lines.sort();
        let mut out = String::from("source\trelation\ttarget\n");
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }

    /// Writes all files into `dir` (created if needed).
    pub fn write(&self, g: &Graph, dir: &Path) -> Result<(), BuildError> {
        let io = |p: &Path| {
            let path = p.display().to_string();
            move |source| BuildError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut files: Vec<(String, String)> = vec![
            ("kgqa.jsonl".into(), to_jsonl(&self.kgqa_records(g))?),
            (
                "serendipity.jsonl".into(),
                to_jsonl(&self.serendipity_records(g))?,
            ),
        ];
        for s in &self.strategies {
            files.push((
                format!("removed-{}.tsv", s.strategy.key()),
                self.removed_tsv(g, s),
            ));
        }
        files.push((
            "manifest.json".into(),
            serde_json::to_string_pretty(&self.manifest)? + "\n",
        ));
        for (name, text) in files {
            let p = dir.join(&name);
            let tmp = dir.join(format!(".{name}.tmp"));
            std::fs::write(&tmp, text).map_err(io(&tmp))?;
            std::fs::rename(&tmp, &p).map_err(io(&p))?;
        }
        Ok(())
    }
}
