//! The served predictions checked against an indication list from outside the graph — the way
//! Project Rephetio was validated (DrugCentral indications, ClinicalTrials.gov pairs, repoDB's
//! approved and failed pairs) and the way a reviewer checks this model.
//!
//! Input is a tab- or comma-separated file with a header (commas when the header has no tab;
//! double-quoted fields may hold commas); the compound and disease columns are found by name
//! ([`COMPOUND_COLUMNS`], [`DISEASE_COLUMNS`]) and hold either a bare identifier (`DB00843`,
//! `DOID:10652`) or a graph key (`Compound::DB00843`). A disease given as a UMLS CUI
//! (`C0002395`, as repoDB gives indications) is mapped through the Disease Ontology's
//! cross-references to every graph disease that lists it (the join the safety flags use);
//! without the ontology files such rows count as unmatched. A `status` column lets the caller
//! keep some rows only (repoDB: `Approved` against `Terminated`, `Withdrawn`, `Suspended`).
//! Rows are deduplicated by pair.
//!
//! What is measured, on the pairs the graph's predictions cover:
//! - the **candidates** are every pair that is *not* a known treatment in the graph (the
//!   treats label): a known treatment is not a prediction. With `exclude_second` also not a
//!   known palliation (Rephetio's validation sets left out every pair PharmacotherapyDB
//!   classifies, symptomatic ones included);
//! - the **positives** are the listed pairs among the candidates; listed pairs that are
//!   already known treatments are counted and set aside;
//! - the figures: AUROC, AUPRC, the number of positives among the best 100, 1,000 and
//!   [`TOP_BUDGET`] candidates overall (Rephetio's published list size), and precision and
//!   recall at 10 per disease (mean over diseases with a listed pair) — the same for a
//!   **baseline** that ranks by treatment degrees alone (`(1 + known treatments of the
//!   compound) · (1 + known treatments of the disease)`), so a reader sees what the metapaths
//!   add over "popular drugs for well-treated diseases";
//! - with a second list (`against`, e.g. repoDB's failed pairs next to its approved ones):
//!   the AUROC of the model's score separating the first list's candidates from the second's.
//!
//! Nothing here fits anything: the lists are read after the model is built and never reach
//! it.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::{Graph, NodeId};

use crate::dwpc::LocalIndex;
use crate::metrics::{auprc, auroc, per_group_at, ranked, TOP_BUDGET};
use crate::resample::{Difference, PerPositive, Spread};
use crate::task::Task;
use crate::{PredictError, Predictions};

/// Header names accepted for the compound column, first match wins (case-insensitive).
pub const COMPOUND_COLUMNS: [&str; 5] = [
    "compound_id",
    "drugbank_id",
    "compound",
    "drug_id",
    "source",
];
/// Header names accepted for the disease column, first match wins (case-insensitive).
pub const DISEASE_COLUMNS: [&str; 7] = [
    "disease_id",
    "doid_id",
    "slim_id",
    "doid_code",
    "ind_id",
    "disease",
    "target",
];

/// The header name of the column [`read_pairs`]'s status filter reads.
pub const STATUS_COLUMN: &str = "status";

/// Most rows read from one list: far above any published indication set, and a bound on what
/// a wrong file can cost.
pub const MAX_ROWS: usize = 5_000_000;

/// One line's fields: split at tabs, or at commas outside double quotes (`""` inside quotes is
/// one quote).
fn fields(line: &str, tab: bool) -> Vec<String> {
    if tab {
        return line.split('\t').map(|f| f.trim().to_string()).collect();
    }
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(ch),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// The distinct (compound, disease) identifier pairs of a list, in first-seen order; with
/// `status`, only the rows whose [`STATUS_COLUMN`] is one of them (ignoring case).
pub fn read_pairs(
    text: &str,
    status: Option<&[String]>,
) -> Result<Vec<(String, String)>, PredictError> {
    // A spreadsheet's export may start with a byte-order mark: not part of the first name.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .ok_or_else(|| PredictError::Invalid("the list is empty (no header line)".into()))?;
    let tab = header.contains('\t');
    let cols: Vec<String> = fields(header, tab)
        .into_iter()
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let find = |names: &[&str]| names.iter().find_map(|n| cols.iter().position(|c| c == n));
    let (ci, di) = match (find(&COMPOUND_COLUMNS), find(&DISEASE_COLUMNS)) {
        (Some(c), Some(d)) if c != d => (c, d),
        _ => {
            return Err(PredictError::Invalid(format!(
                "the header needs a compound column ({}) and a disease column ({}), tab- or comma-separated; it has: {}",
                COMPOUND_COLUMNS.join(", "),
                DISEASE_COLUMNS.join(", "),
                cols.join(", ")
            )))
        }
    };
    let si = match status {
        None => None,
        Some(_) => Some(find(&[STATUS_COLUMN]).ok_or_else(|| {
            PredictError::Invalid(format!(
                "a status filter needs a `{STATUS_COLUMN}` column; the header has: {}",
                cols.join(", ")
            ))
        })?),
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        if i >= MAX_ROWS {
            return Err(PredictError::Invalid(format!(
                "the list has more than {MAX_ROWS} rows"
            )));
        }
        let f = fields(line, tab);
        let (Some(c), Some(d)) = (f.get(ci), f.get(di)) else {
            return Err(PredictError::Invalid(format!(
                "line {}: {} fields, the header has {}",
                i + 2,
                f.len(),
                cols.len()
            )));
        };
        if let (Some(si), Some(keep)) = (si, status) {
            let st = f.get(si).map(String::as_str).unwrap_or("");
            if !keep.iter().any(|k| k.eq_ignore_ascii_case(st)) {
                continue;
            }
        }
        if c.is_empty() || d.is_empty() {
            continue;
        }
        let pair = (c.clone(), d.clone());
        if seen.insert(pair.clone()) {
            out.push(pair);
        }
    }
    Ok(out)
}

/// Is `id` a UMLS concept identifier (`C` and seven digits)?
pub fn is_cui(id: &str) -> bool {
    id.len() == 8 && id.starts_with('C') && id[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Settings of a check.
#[derive(Clone, Debug)]
pub struct CheckParams {
    /// Also leave known palliations (the second label) out of the candidates.
    pub exclude_second: bool,
}

/// The figures of one ranking of the candidates.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    pub auroc: f64,
    pub auprc: f64,
    /// (k, listed pairs among the best k candidates) for k = 100, 1,000, [`TOP_BUDGET`].
    pub hits: Vec<(usize, usize)>,
    /// Mean over diseases with a listed candidate of precision and recall among its best 10.
    pub p_at_10_disease: f64,
    pub r_at_10_disease: f64,
}

/// How a list met the graph, and the model's and the baseline's figures on it.
#[derive(Clone, Debug, Serialize)]
pub struct ListReport {
    /// Distinct pairs in the file.
    pub read: usize,
    /// Rows whose compound or disease is not among the predictions' (unknown identifier).
    pub unmatched: usize,
    /// Rows whose disease, a UMLS CUI, was mapped through the Disease Ontology.
    pub via_umls: usize,
    /// Distinct graph pairs the matched rows name.
    pub pairs: usize,
    /// Listed graph pairs that are known treatments (not predictions; set aside).
    pub known: usize,
    /// Listed pairs that are known palliations, set aside with `exclude_second`.
    pub second_excluded: usize,
    /// Listed candidates: the positives.
    pub positives: usize,
    pub candidates: usize,
    pub model: Figures,
    pub baseline: Figures,
    /// The model's AUROC and best-[`TOP_BUDGET`] count with the list resampled by disease.
    pub model_spread: Spread,
    /// Model minus baseline, paired by disease.
    pub model_minus_baseline: Option<Difference>,
}

/// Another model's scores of the same pairs (a `serenqa predict --out` file), measured on the
/// same candidates and compared with the served model, paired by disease.
#[derive(Clone, Debug, Serialize)]
pub struct CompareReport {
    pub name: String,
    pub figures: Figures,
    /// Served model minus this one.
    pub model_minus_this: Option<Difference>,
}

/// The first list's candidates against the second's (e.g. approved against failed).
#[derive(Clone, Debug, Serialize)]
pub struct AgainstReport {
    pub list: ListReport,
    /// Pairs on both lists, left out of the comparison.
    pub on_both: usize,
    /// AUROC of the score separating the first list's candidates (positive) from the second's.
    pub model_auroc: f64,
    pub baseline_auroc: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExternalReport {
    pub graph_hash: String,
    pub exclude_second: bool,
    pub list: ListReport,
    pub against: Option<AgainstReport>,
    pub compare: Option<CompareReport>,
}

/// Scores of every pair by another model, for [`check`]'s comparison.
pub struct OtherScores<'a> {
    /// How the report names it (e.g. the file's name).
    pub name: &'a str,
    /// (compound, disease, score) as [`read_scores`] reads them.
    pub scores: &'a [(String, String, f64)],
}

/// Local (compound, disease) indices of the predictions, by graph node.
struct Space<'a> {
    g: &'a Graph,
    task: Task,
    li: LocalIndex,
    nd: usize,
    /// Per pair: 0 candidate, 1 known treatment, 2 known second label (excluded).
    status: Vec<u8>,
    baseline: Vec<f64>,
    /// UMLS CUI → the graph diseases whose Disease Ontology cross-references list it.
    umls: HashMap<String, Vec<String>>,
}

impl<'a> Space<'a> {
    fn new(
        g: &'a Graph,
        preds: &Predictions,
        p: &CheckParams,
        ontology: Option<&DiseaseOntology>,
    ) -> Result<Self, PredictError> {
        let task = Task::detect(g)?;
        if task.compounds != preds.compounds || task.diseases != preds.diseases {
            return Err(PredictError::Invalid(
                "the predictions' compound or disease list does not match the graph".into(),
            ));
        }
        let li = LocalIndex::of(g);
        let (nc, nd) = (task.compounds.len(), task.diseases.len());
        let labels = task.positives(g, &li);
        let mut status = vec![0u8; nc * nd];
        let (mut deg_c, mut deg_d) = (vec![0usize; nc], vec![0usize; nd]);
        for (pair, &t) in labels[0].iter().enumerate() {
            if t {
                status[pair] = 1;
                deg_c[pair / nd] += 1;
                deg_d[pair % nd] += 1;
            }
        }
        if p.exclude_second {
            if let Some(second) = labels.get(1) {
                for (pair, &s) in second.iter().enumerate() {
                    if s && status[pair] == 0 {
                        status[pair] = 2;
                    }
                }
            }
        }
        let baseline = (0..nc * nd)
            .map(|pair| ((1 + deg_c[pair / nd]) * (1 + deg_d[pair % nd])) as f64)
            .collect();
        let mut umls: HashMap<String, Vec<String>> = HashMap::new();
        for (doid, cuis) in ontology.map(|o| &o.umls).into_iter().flatten() {
            for cui in cuis {
                umls.entry(cui.clone()).or_default().push(doid.clone());
            }
        }
        Ok(Space {
            g,
            task,
            li,
            nd,
            status,
            baseline,
            umls,
        })
    }

    fn node(&self, id: &str, want: serenqa_graph::TypeId) -> Option<NodeId> {
        let of_type = |n: &NodeId| self.g.node_type(*n) == want;
        if id.contains("::") {
            return self.g.find_by_key(id).filter(of_type);
        }
        self.g.find_by_ident(id).iter().copied().find(of_type)
    }

    /// Pair indices a listed row names (several when a UMLS CUI maps to several diseases; none
    /// when either end is not in the predictions), and whether the disease went through UMLS.
    fn pairs(&self, c: &str, d: &str) -> (Vec<usize>, bool) {
        let Some(c) = self.node(c, self.task.compound_type) else {
            return (Vec::new(), false);
        };
        let local = |d: NodeId| {
            self.li.local[c as usize] as usize * self.nd + self.li.local[d as usize] as usize
        };
        if let Some(d) = self.node(d, self.task.disease_type) {
            return (vec![local(d)], false);
        }
        if !is_cui(d) {
            return (Vec::new(), false);
        }
        let ds: Vec<usize> = self
            .umls
            .get(d)
            .into_iter()
            .flatten()
            .filter_map(|doid| self.node(doid, self.task.disease_type))
            .map(local)
            .collect();
        let via = !ds.is_empty();
        (ds, via)
    }

    /// The rows sorted into unmatched / through UMLS, and the distinct pairs they name into
    /// known / excluded / candidate.
    fn sort(&self, list: &[(String, String)]) -> Sorted {
        let mut s = Sorted::default();
        let mut named = Vec::new();
        for (c, d) in list {
            let (ps, via) = self.pairs(c, d);
            if ps.is_empty() {
                s.unmatched += 1;
            }
            s.via_umls += usize::from(via);
            named.extend(ps);
        }
        named.sort_unstable();
        named.dedup();
        s.pairs = named.len();
        for p in named {
            match self.status[p] {
                1 => s.known += 1,
                2 => s.excluded += 1,
                _ => s.candidates.push(p),
            }
        }
        s
    }
}

#[derive(Default)]
struct Sorted {
    unmatched: usize,
    via_umls: usize,
    pairs: usize,
    known: usize,
    excluded: usize,
    candidates: Vec<usize>,
}

fn figures(pairs: &[usize], scores: &[f64], labels: &[bool], nd: usize) -> Figures {
    let order = ranked(scores);
    let hits = [100, 1000, TOP_BUDGET]
        .iter()
        .map(|&k| {
            let k = k.min(order.len());
            (k, order[..k].iter().filter(|&&i| labels[i]).count())
        })
        .collect();
    let (p10, r10) = per_group_at(pairs, scores, labels, &|p| p % nd.max(1), nd, 10);
    Figures {
        auroc: auroc(scores, labels),
        auprc: auprc(scores, labels),
        hits,
        p_at_10_disease: p10,
        r_at_10_disease: r10,
    }
}

/// The candidates of a list: every pair not set aside, its label, and its disease.
struct Universe {
    pairs: Vec<usize>,
    labels: Vec<bool>,
    positives: Vec<usize>,
}

fn list_report(
    s: &Space,
    preds: &Predictions,
    list: &[(String, String)],
) -> (ListReport, Universe) {
    let sorted = s.sort(list);
    let positives = sorted.candidates;
    let listed: HashSet<usize> = positives.iter().copied().collect();
    let pairs: Vec<usize> = (0..s.status.len()).filter(|&p| s.status[p] == 0).collect();
    let labels: Vec<bool> = pairs.iter().map(|p| listed.contains(p)).collect();
    let model: Vec<f64> = pairs.iter().map(|&p| preds.scores[p] as f64).collect();
    let base: Vec<f64> = pairs.iter().map(|&p| s.baseline[p]).collect();
    let disease = |i: usize| pairs[i] % s.nd.max(1);
    let model_pp = PerPositive::new(&model, &labels, &disease, TOP_BUDGET);
    let base_pp = PerPositive::new(&base, &labels, &disease, TOP_BUDGET);
    let report = ListReport {
        read: list.len(),
        unmatched: sorted.unmatched,
        via_umls: sorted.via_umls,
        pairs: sorted.pairs,
        known: sorted.known,
        second_excluded: sorted.excluded,
        positives: positives.len(),
        candidates: pairs.len(),
        model: figures(&pairs, &model, &labels, s.nd),
        baseline: figures(&pairs, &base, &labels, s.nd),
        model_spread: model_pp.spread(),
        model_minus_baseline: model_pp.minus(&base_pp),
    };
    (
        report,
        Universe {
            pairs,
            labels,
            positives,
        },
    )
}

/// Another model's scores laid out as the predictions' pairs; an error names how many
/// candidate pairs it lacks.
fn other_report(
    s: &Space,
    preds: &Predictions,
    u: &Universe,
    other: &OtherScores,
) -> Result<CompareReport, PredictError> {
    let mut by_pair = vec![f64::NAN; s.status.len()];
    let mut unknown = 0usize;
    for (c, d, score) in other.scores {
        let (ps, _) = s.pairs(c, d);
        match ps.as_slice() {
            [p] if score.is_finite() => by_pair[*p] = *score,
            _ => unknown += 1,
        }
    }
    let missing = u.pairs.iter().filter(|&&p| by_pair[p].is_nan()).count();
    if missing > 0 {
        return Err(PredictError::Invalid(format!(
            "{}: no score for {missing} of the {} candidate pairs ({unknown} rows name a pair not on this graph or an unreadable score): is it a `serenqa predict --out` file of this graph?",
            other.name,
            u.pairs.len()
        )));
    }
    let theirs: Vec<f64> = u.pairs.iter().map(|&p| by_pair[p]).collect();
    let ours: Vec<f64> = u.pairs.iter().map(|&p| preds.scores[p] as f64).collect();
    let disease = |i: usize| u.pairs[i] % s.nd.max(1);
    let a = PerPositive::new(&ours, &u.labels, &disease, TOP_BUDGET);
    let b = PerPositive::new(&theirs, &u.labels, &disease, TOP_BUDGET);
    Ok(CompareReport {
        name: other.name.to_string(),
        figures: figures(&u.pairs, &theirs, &u.labels, s.nd),
        model_minus_this: a.minus(&b),
    })
}

/// Another model's scores from a TSV with `compound_id`, `disease_id` and `score` columns (what
/// `serenqa predict --out` writes).
pub fn read_scores(text: &str) -> Result<Vec<(String, String, f64)>, PredictError> {
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r'));
    let header = lines
        .next()
        .ok_or_else(|| PredictError::Invalid("the scores file is empty (no header line)".into()))?;
    let cols: Vec<&str> = header.split('\t').collect();
    let find = |n: &str| cols.iter().position(|c| c.eq_ignore_ascii_case(n));
    let (Some(ci), Some(di), Some(si)) = (find("compound_id"), find("disease_id"), find("score"))
    else {
        return Err(PredictError::Invalid(format!(
            "the scores file needs compound_id, disease_id and score columns (as `serenqa predict --out` writes); it has: {}",
            cols.join(", ")
        )));
    };
    let mut out = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        if i >= MAX_ROWS {
            return Err(PredictError::Invalid(format!(
                "the scores file has more than {MAX_ROWS} rows"
            )));
        }
        let f: Vec<&str> = line.split('\t').collect();
        let (Some(c), Some(d), Some(v)) = (f.get(ci), f.get(di), f.get(si)) else {
            return Err(PredictError::Invalid(format!(
                "scores line {}: {} fields, the header has {}",
                i + 2,
                f.len(),
                cols.len()
            )));
        };
        let v: f64 = v.trim().parse().map_err(|_| {
            PredictError::Invalid(format!(
                "scores line {}: score {v:?} is not a number",
                i + 2
            ))
        })?;
        out.push((c.trim().to_string(), d.trim().to_string(), v));
    }
    Ok(out)
}

/// Checks `preds` (made on `g`) against `list`, and optionally the list against `against` and
/// the served model against `other`; `ontology` maps diseases given as UMLS CUIs.
pub fn check(
    g: &Graph,
    preds: &Predictions,
    list: &[(String, String)],
    against: Option<&[(String, String)]>,
    other: Option<&OtherScores>,
    params: &CheckParams,
    ontology: Option<&DiseaseOntology>,
) -> Result<ExternalReport, PredictError> {
    let s = Space::new(g, preds, params, ontology)?;
    let (report, universe) = list_report(&s, preds, list);
    let compare = other
        .map(|o| other_report(&s, preds, &universe, o))
        .transpose()?;
    let positives = universe.positives;
    let against = against.map(|other| {
        let (other_report, other_universe) = list_report(&s, preds, other);
        let negatives = other_universe.positives;
        let pos: HashSet<usize> = positives.iter().copied().collect();
        let neg: HashSet<usize> = negatives.iter().copied().collect();
        let on_both = pos.intersection(&neg).count();
        let (mut model, mut base, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        for (set, label, skip) in [(&positives, true, &neg), (&negatives, false, &pos)] {
            for &p in set.iter().filter(|p| !skip.contains(p)) {
                model.push(preds.scores[p] as f64);
                base.push(s.baseline[p]);
                labels.push(label);
            }
        }
        AgainstReport {
            list: other_report,
            on_both,
            model_auroc: auroc(&model, &labels),
            baseline_auroc: auroc(&base, &labels),
        }
    });
    Ok(ExternalReport {
        graph_hash: preds.info.graph_hash.clone(),
        exclude_second: params.exclude_second,
        list: report,
        against,
        compare,
    })
}

impl ExternalReport {
    /// The report as a reader reads it: how the list met the graph, then one table.
    pub fn table(&self) -> String {
        let l = &self.list;
        let mut s = format!(
            "list: {} distinct rows; {} with an identifier not among the predictions{}; {} graph pairs, {} of them already known treatments{} (set aside); {} positives among {} candidate pairs{}\n",
            l.read,
            l.unmatched,
            if l.via_umls > 0 {
                format!(", {} diseases mapped from UMLS CUIs by the Disease Ontology", l.via_umls)
            } else {
                String::new()
            },
            l.pairs,
            l.known,
            if self.exclude_second {
                format!(", {} known palliations", l.second_excluded)
            } else {
                String::new()
            },
            l.positives,
            l.candidates,
            if self.exclude_second {
                " (known treatments and palliations left out)"
            } else {
                " (known treatments left out)"
            }
        );
        let hits_head: Vec<String> = l
            .model
            .hits
            .iter()
            .map(|(k, _)| format!("in best {k}"))
            .collect();
        s += &format!(
            "| ranking | AUROC | AUPRC | {} | P@10/disease | R@10/disease |\n|---|---:|---:|{}---:|---:|\n",
            hits_head.join(" | "),
            "---:|".repeat(hits_head.len())
        );
        let compared = self
            .compare
            .as_ref()
            .map(|c| (format!("compared: {}", c.name), &c.figures));
        let rows = [
            ("model (served score)".to_string(), &l.model),
            ("baseline: treatment degrees".to_string(), &l.baseline),
        ];
        for (name, f) in rows.into_iter().chain(compared) {
            let hits: Vec<String> = f.hits.iter().map(|(_, h)| h.to_string()).collect();
            s += &format!(
                "| {name} | {:.4} | {:.4} | {} | {:.3} | {:.3} |\n",
                f.auroc,
                f.auprc,
                hits.join(" | "),
                f.p_at_10_disease,
                f.r_at_10_disease
            );
        }
        let sp = &l.model_spread;
        s += &format!(
            "95% intervals, the list resampled by disease ({} draws over its {} diseases with a positive; the ranking fixed): model AUROC [{:.4}, {:.4}], in best {TOP_BUDGET} [{}, {}]\n",
            sp.draws, sp.diseases, sp.auroc.lo, sp.auroc.hi, sp.hits.lo, sp.hits.hi
        );
        let diff = |what: &str, d: &Difference| {
            format!(
                "{what}, paired by disease: AUROC {:+.4} [{:+.4}, {:+.4}], in best {TOP_BUDGET} {:+} [{:+}, {:+}]\n",
                d.auroc,
                d.auroc_interval.lo,
                d.auroc_interval.hi,
                d.hits,
                d.hits_interval.lo,
                d.hits_interval.hi
            )
        };
        if let Some(d) = &l.model_minus_baseline {
            s += &diff("model − baseline", d);
        }
        if let Some(d) = self
            .compare
            .as_ref()
            .and_then(|c| c.model_minus_this.as_ref())
        {
            let name = self.compare.as_ref().map(|c| c.name.as_str()).unwrap_or("");
            s += &diff(&format!("model − {name}"), d);
        }
        if let Some(a) = &self.against {
            s += &format!(
                "against the second list ({} distinct pairs, {} unmatched, {} known treatments, {} candidates; {} on both lists, left out): AUROC of the first list over the second — model {:.4}, baseline {:.4}\n",
                a.list.read,
                a.list.unmatched,
                a.list.known,
                a.list.positives,
                a.on_both,
                a.model_auroc,
                a.baseline_auroc
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_found_by_name_and_pairs_deduplicated() {
        let t = "slim_id\tslim_name\tDRUG_NAME\tdrugbank_id\nDOID:1\tx\ty\tDB1\nDOID:1\tx\tz\tDB1\n\nDOID:2\tx\ty\tDB1\n";
        let p = read_pairs(t, None).unwrap();
        assert_eq!(
            p,
            vec![
                ("DB1".to_string(), "DOID:1".to_string()),
                ("DB1".to_string(), "DOID:2".to_string())
            ]
        );
    }

    #[test]
    fn a_list_without_the_columns_or_with_short_rows_is_refused_in_one_line() {
        let e = read_pairs("a\tb\nx\ty\n", None).unwrap_err().to_string();
        assert!(e.contains("compound column") && !e.contains('\n'), "{e}");
        assert!(read_pairs("", None).is_err());
        let e = read_pairs("compound_id\tdisease_id\nDB1\n", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 2:"), "{e}");
        let keep = ["Approved".to_string()];
        let e = read_pairs("compound_id\tdisease_id\nDB1\tD\n", Some(&keep))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`status` column"), "{e}");
    }

    #[test]
    fn comma_separated_lists_with_quotes_and_a_status_filter() {
        // repoDB's shape: names may hold commas inside quotes; indications are UMLS CUIs.
        let t = "drug_name,drug_id,ind_name,ind_id,NCT,status,phase\r\n\
                 Aspirin,DB00945,\"Pain, \"\"acute\"\"\",C0002395,NA,Approved,NA\r\n\
                 Aspirin,DB00945,Other,C0000001,NCT1,Terminated,Phase 2\r\n\
                 Foo,DB1,Bar,C0000002,NCT2,approved,NA\r\n";
        let keep = ["Approved".to_string()];
        let p = read_pairs(t, Some(&keep)).unwrap();
        assert_eq!(
            p,
            vec![
                ("DB00945".to_string(), "C0002395".to_string()),
                ("DB1".to_string(), "C0000002".to_string())
            ]
        );
        let failed = ["terminated".to_string(), "Withdrawn".to_string()];
        assert_eq!(read_pairs(t, Some(&failed)).unwrap().len(), 1);
        assert_eq!(read_pairs(t, None).unwrap().len(), 3);
        let bom = format!("\u{feff}{t}");
        assert_eq!(read_pairs(&bom, None).unwrap().len(), 3);
        assert_eq!(
            fields("a,\"b, c\",\"d\"\"e\"", false),
            vec!["a", "b, c", "d\"e"]
        );
        assert!(is_cui("C0002395") && !is_cui("DOID:1") && !is_cui("C12"));
    }
}
