//! The trace home of an evaluation run: the trace files' records ([`T1Record`] per question
//! in [`T1_FILE`], [`T3Record`] per exploration in [`T3_FILE`]), how they are appended
//! ([`Writer`]: whole lines, flushed) and read back ([`read_trace`] cuts a killed writer's
//! torn last line), and one question of a run as a reviewer reads it
//! (`GET /api/runs/{id}/trace/{qid}`): the records turned into [`QuestionTrace`] by
//! [`question_view`] — ids resolved to names in the served graph, predicted and gold answers
//! side by side with the hits marked, every metric of the question with its scale and
//! meaning, and the beam's paths folded into a tree.
//!
//! Reading a run's files for the view is [`crate::runs_dir`]'s (`question_view` takes the
//! records, not a path). The raw lines stay available (`GET /api/runs/{id}/questions/{qid}`);
//! nothing here recomputes a score: every value is the one the run recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serenqa_graph::Graph;
use serenqa_shared::api::{
    redact_urls, ExplorationTrace, QuestionTrace, RetrievalTrace, TraceCall, TraceEntity,
    TraceFailure, TraceLevel, TraceMessage, TraceMetric, TraceTreeNode,
};
use serenqa_shared::results::{metric_info, metric_title, partition_title, RunSettings};

use crate::explore::{CallTrace, LevelTrace};
use crate::reasoning::Judged;
use crate::retrieval::Retrieved;

pub const T1_FILE: &str = "t1.jsonl";
pub const T3_FILE: &str = "t3.jsonl";

/// One T1 trace line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T1Record {
    pub key: String,
    pub qid: u32,
    pub pattern: String,
    pub group: String,
    pub question: String,
    pub agent: String,
    pub gold: Vec<String>,
    #[serde(flatten)]
    pub retrieved: Retrieved,
    pub hit: f64,
    pub f1: f64,
    pub call: Option<CallTrace>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T2Scores {
    pub faithfulness: Judged,
    pub comprehensiveness: Judged,
    pub seren_cov: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T3Scores {
    pub relevance: Judged,
    pub type_match: f64,
    pub seren_hit: f64,
}

/// One T2/T3 trace line: one exploration of one question under one partition and mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct T3Record {
    pub key: String,
    pub qid: u32,
    pub pattern: String,
    pub partition: String,
    /// `with` or `without` summaries.
    pub mode: String,
    pub question: String,
    pub roots: Vec<String>,
    pub gold: Vec<String>,
    pub gold_paths: Vec<String>,
    pub levels: Vec<LevelTrace>,
    pub paths: Vec<String>,
    pub leaves: Vec<String>,
    pub leaf_types: Vec<String>,
    pub summaries: Vec<String>,
    pub t2: Option<T2Scores>,
    pub t3: Option<T3Scores>,
    pub calls: Vec<CallTrace>,
    pub error: Option<String>,
}

/// Reads a JSONL trace, cutting a torn last line (a killed writer) off the file.
pub fn read_trace<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut good_len = 0usize;
    let mut start = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            let line = &bytes[start..i];
            if !line.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<T>(line) {
                    Ok(v) => out.push(v),
                    Err(e) => {
                        return Err(format!("{} line {}: {e}", path.display(), out.len() + 1))
                    }
                }
            }
            good_len = i + 1;
            start = i + 1;
        }
    }
    if good_len < bytes.len() {
        // A line without its newline was never completed: drop it so it is redone.
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        f.set_len(good_len as u64)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(out)
}

/// Appends whole JSON lines to a trace file (one `write` per line, then flush).
pub(crate) struct Writer {
    file: Mutex<std::fs::File>,
    /// Set by a simulated crash: a dead process writes nothing more, to any file.
    dead: Arc<AtomicBool>,
}

impl Writer {
    /// A writer that never simulates a crash.
    pub(crate) fn append(path: &Path) -> Result<Writer, String> {
        Writer::open(path, Arc::new(AtomicBool::new(false)))
    }
    pub(crate) fn open(path: &Path, dead: Arc<AtomicBool>) -> Result<Writer, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Writer {
            file: Mutex::new(file),
            dead,
        })
    }
    pub(crate) fn write_line(&self, line: &str, torn: bool) -> Result<(), String> {
        let mut f = self
            .file
            .lock()
            .map_err(|_| "trace writer poisoned".to_string())?;
        if self.dead.load(Ordering::SeqCst) {
            return Err("simulated crash".into());
        }
        if torn {
            self.dead.store(true, Ordering::SeqCst);
            let half = &line.as_bytes()[..line.len() / 2];
            f.write_all(half).map_err(|e| e.to_string())?;
            return Err("simulated crash".into());
        }
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        f.write_all(buf.as_bytes()).map_err(|e| e.to_string())?;
        f.flush().map_err(|e| e.to_string())
    }
}

/// Which trace file an item's record goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    T1,
    T3,
}

impl TraceKind {
    /// By key prefix (`t1:` / `t3:`).
    pub fn of_key(key: &str) -> Option<TraceKind> {
        if key.starts_with("t1:") {
            Some(TraceKind::T1)
        } else if key.starts_with("t3:") {
            Some(TraceKind::T3)
        } else {
            None
        }
    }

    pub fn file(self) -> &'static str {
        match self {
            TraceKind::T1 => T1_FILE,
            TraceKind::T3 => T3_FILE,
        }
    }
}

/// Why a trace cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceError {
    /// No run of that id in the runs directory.
    NoRun(String),
    /// The run has no line for that question.
    NoQuestion(String),
    /// A trace file cannot be read.
    Unreadable(String),
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::NoRun(m) | TraceError::NoQuestion(m) | TraceError::Unreadable(m) => {
                f.write_str(m)
            }
        }
    }
}

/// One question of run `run_id` (with `settings`, its manifest's) from the run's records and
/// its failed items (`failed`: (qid, item), items of every question), readable, with names
/// from `g` (the served graph).
pub fn question_view(
    g: &Graph,
    run_id: &str,
    settings: RunSettings,
    t1: &[T1Record],
    t3: &[T3Record],
    failed: &[(u32, TraceFailure)],
    qid: u32,
) -> Result<QuestionTrace, TraceError> {
    let qids: BTreeSet<u32> = t1
        .iter()
        .map(|r| r.qid)
        .chain(t3.iter().map(|r| r.qid))
        .chain(failed.iter().map(|f| f.0))
        .collect();
    if !qids.contains(&qid) {
        return Err(TraceError::NoQuestion(format!(
            "run {run_id} has no trace for question {qid}"
        )));
    }
    let mut names = Names {
        g,
        unresolved: false,
    };
    let one = t1.iter().find(|r| r.qid == qid);
    let mut ex: Vec<&T3Record> = t3.iter().filter(|r| r.qid == qid).collect();
    // Partitions in the leaderboard's order, "with summaries" first.
    let order = |p: &str| {
        ["llm", "expert", "sscore"]
            .iter()
            .position(|k| *k == p)
            .unwrap_or(3)
    };
    ex.sort_by(|a, b| {
        order(&a.partition)
            .cmp(&order(&b.partition))
            .then(b.mode.cmp(&a.mode))
            .then(a.key.cmp(&b.key))
    });
    let (pattern, question) = match (one, ex.first()) {
        (Some(r), _) => (r.pattern.clone(), r.question.clone()),
        (None, Some(r)) => (r.pattern.clone(), r.question.clone()),
        (None, None) => (String::new(), String::new()),
    };
    let retrieval = one.map(|r| retrieval(&mut names, r));
    let explorations = ex.into_iter().map(|r| exploration(&mut names, r)).collect();
    let mut settings = settings;
    settings.id = run_id.to_string();
    Ok(QuestionTrace {
        run_id: run_id.to_string(),
        settings,
        qid,
        pattern,
        question,
        retrieval,
        explorations,
        failed: failed
            .iter()
            .filter(|f| f.0 == qid)
            .map(|f| TraceFailure {
                error: redact_urls(&f.1.error),
                ..f.1.clone()
            })
            .collect(),
        prev_qid: qids.range(..qid).next_back().copied(),
        next_qid: qids.range(qid + 1..).next().copied(),
        other_graph: names.unresolved,
    })
}

/// Ids to names in the served graph; remembers whether any id was not found.
struct Names<'g> {
    g: &'g Graph,
    unresolved: bool,
}

impl Names<'_> {
    /// `type_label`: the type the run recorded for the id, when it did (ids of different
    /// types can be equal).
    fn entity(&mut self, id: &str, type_label: Option<&str>, hit: bool) -> TraceEntity {
        let g = self.g;
        let found = g.find_by_ident(id);
        let pick = found
            .iter()
            .copied()
            .find(|&n| type_label.is_none_or(|t| g.type_label(g.node_type(n)) == t))
            .or(found.first().copied());
        match pick {
            Some(n) => TraceEntity {
                id: id.to_string(),
                name: g.name(n).to_string(),
                kind: g.type_display(g.node_type(n)).to_string(),
                hit,
            },
            None => {
                self.unresolved = true;
                TraceEntity {
                    id: id.to_string(),
                    name: String::new(),
                    kind: type_label.unwrap_or_default().to_string(),
                    hit,
                }
            }
        }
    }
}

fn metric(key: &str, value: f64, judge: &str) -> TraceMetric {
    let info = metric_info(key);
    TraceMetric {
        key: key.into(),
        label: metric_title(key).into(),
        value,
        max: info.map_or(1.0, |m| m.max),
        judge: judge.into(),
        meaning: info.map_or("", |m| m.meaning).into(),
    }
}

fn judged(key: &str, j: &Judged) -> TraceMetric {
    let mut m = metric(key, j.score, &j.judge);
    if j.unparsable {
        m.meaning
            .push_str(" The judge's reply had no score: scored 1.");
    }
    m
}

fn retrieval(names: &mut Names, t: &T1Record) -> RetrievalTrace {
    let r = &t.retrieved;
    let gold: BTreeSet<&str> = t.gold.iter().map(String::as_str).collect();
    let found: BTreeSet<&str> = r.answers.iter().map(String::as_str).collect();
    RetrievalTrace {
        agent: t.agent.clone(),
        cypher: r.cypher.clone(),
        executable: r.executable,
        error: r.error.as_deref().map(redact_urls),
        rows: r.rows,
        predicted: r
            .answers
            .iter()
            .map(|a| names.entity(a, None, gold.contains(a.as_str())))
            .collect(),
        gold: t
            .gold
            .iter()
            .map(|a| names.entity(a, None, r.executable && found.contains(a.as_str())))
            .collect(),
        metrics: vec![
            metric("hit", t.hit, ""),
            metric("f1", t.f1, ""),
            metric("exe", if r.executable { 1.0 } else { 0.0 }, ""),
        ],
        latency_ms: t.call.as_ref().map(|c| c.latency_ms).unwrap_or(0.0),
        model_calls: t.call.iter().map(call_view).collect(),
    }
}

/// A recorded model call as a reviewer may read it: prompt and reply as sent and received, an
/// error with endpoint URLs reduced to their host.
fn call_view(c: &CallTrace) -> TraceCall {
    TraceCall {
        role: c.role.clone(),
        model: c.model.clone(),
        prompt: c
            .prompt
            .iter()
            .map(|m| TraceMessage {
                role: m.role.clone(),
                content: m.content.clone(),
            })
            .collect(),
        reply: c.reply.clone(),
        error_kind: c.error_kind.clone(),
        error: c.error.as_deref().map(redact_urls),
        latency_ms: c.latency_ms,
        cached: c.cached,
        issues: c.issues.clone(),
    }
}

fn exploration(names: &mut Names, r: &T3Record) -> ExplorationTrace {
    let gold: BTreeSet<&str> = r.gold.iter().map(String::as_str).collect();
    let leaves: BTreeSet<&str> = r.leaves.iter().map(String::as_str).collect();
    let mut metrics = Vec::new();
    if let Some(t2) = &r.t2 {
        metrics.push(judged("faithfulness", &t2.faithfulness));
        metrics.push(judged("comprehensiveness", &t2.comprehensiveness));
        metrics.push(metric("seren_cov", t2.seren_cov, ""));
    }
    if let Some(t3) = &r.t3 {
        metrics.push(judged("relevance", &t3.relevance));
        metrics.push(metric("type_match", t3.type_match, ""));
        metrics.push(metric("seren_hit", t3.seren_hit, ""));
    }
    ExplorationTrace {
        key: r.key.clone(),
        partition: r.partition.clone(),
        partition_title: partition_title(&r.partition).to_string(),
        with_summaries: r.mode == "with",
        roots: r
            .roots
            .iter()
            .map(|a| names.entity(a, None, false))
            .collect(),
        leaves: r
            .leaves
            .iter()
            .enumerate()
            .map(|(i, a)| {
                names.entity(
                    a,
                    r.leaf_types.get(i).map(String::as_str),
                    gold.contains(a.as_str()),
                )
            })
            .collect(),
        gold: r
            .gold
            .iter()
            .map(|a| names.entity(a, None, leaves.contains(a.as_str())))
            .collect(),
        metrics,
        tree: tree(names, &r.roots, &r.paths, &gold),
        levels: r
            .levels
            .iter()
            .map(|l| TraceLevel {
                level: l.level,
                frontier: l.frontier,
                candidates: l.candidates,
                selected: l.selected.len(),
                uniform_sampled: l.uniform_sampled,
                go_on: l.go_on,
            })
            .collect(),
        summaries: r.summaries.clone(),
        calls: r.calls.len(),
        model_calls: r.calls.iter().map(call_view).collect(),
        error: r.error.as_deref().map(redact_urls),
    }
}

/// A node as [`crate::explore::path_line`] writes it: `id (name, Type)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineNode {
    pub id: String,
    pub type_label: String,
}

/// One step of a path line: the relation, its direction along the path, and the node reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineStep {
    pub relation: String,
    pub forward: bool,
    pub to: LineNode,
}

fn line_node(s: &str) -> Option<LineNode> {
    let s = s.trim();
    let open = s.find(" (")?;
    let inner = s[open + 2..].strip_suffix(')')?;
    let ty = inner.rsplit_once(", ").map(|(_, t)| t).unwrap_or(inner);
    Some(LineNode {
        id: s[..open].to_string(),
        type_label: ty.to_string(),
    })
}

/// Reads a path line of a T3 trace back: `end: root (name, Type) -[REL]-> id (name, Type)
/// <-[REL]- …` → the root and the steps. `None` for a line of another shape.
pub fn parse_path_line(line: &str) -> Option<(LineNode, Vec<LineStep>)> {
    let (_, rest) = line.split_once(": ")?;
    // Cut at each arrow: ` -[REL]-> ` (forward) or ` <-[REL]- ` (backward).
    let mut parts: Vec<(Option<(String, bool)>, &str)> = Vec::new();
    let mut pending: Option<(String, bool)> = None;
    let mut i = 0usize;
    let mut start = 0usize;
    while i < rest.len() {
        let tail = &rest[i..];
        let arrow = if let Some(after) = tail.strip_prefix(" -[") {
            after
                .find("]-> ")
                .map(|e| (after[..e].to_string(), true, 3 + e + 4))
        } else if let Some(after) = tail.strip_prefix(" <-[") {
            after
                .find("]- ")
                .map(|e| (after[..e].to_string(), false, 4 + e + 3))
        } else {
            None
        };
        match arrow {
            Some((rel, fwd, len)) => {
                parts.push((pending.take(), &rest[start..i]));
                pending = Some((rel, fwd));
                i += len;
                start = i;
            }
            None => i += tail.chars().next().map(char::len_utf8).unwrap_or(1),
        }
    }
    parts.push((pending, &rest[start..]));
    let mut it = parts.into_iter();
    let (_, first) = it.next()?;
    let root = line_node(first)?;
    let mut steps = Vec::new();
    for (arrow, node) in it {
        let (relation, forward) = arrow?;
        steps.push(LineStep {
            relation,
            forward,
            to: line_node(node)?,
        });
    }
    Some((root, steps))
}

/// The beam's paths folded into a tree (roots first, children in discovery order), as a
/// depth-first list.
fn tree(
    names: &mut Names,
    roots: &[String],
    paths: &[String],
    gold: &BTreeSet<&str>,
) -> Vec<TraceTreeNode> {
    struct Node {
        id: String,
        type_label: Option<String>,
        relation: String,
        forward: bool,
        children: Vec<usize>,
    }
    let mut nodes: Vec<Node> = Vec::new();
    let mut top: Vec<usize> = Vec::new();
    // (parent, relation, forward, id) → node; parent usize::MAX for roots.
    let mut index: BTreeMap<(usize, String, bool, String), usize> = BTreeMap::new();
    let mut add = |nodes: &mut Vec<Node>,
                   top: &mut Vec<usize>,
                   parent: usize,
                   relation: &str,
                   forward: bool,
                   id: &str,
                   ty: Option<&str>|
     -> usize {
        let key = (parent, relation.to_string(), forward, id.to_string());
        if let Some(&i) = index.get(&key) {
            return i;
        }
        let i = nodes.len();
        nodes.push(Node {
            id: id.to_string(),
            type_label: ty.map(str::to_string),
            relation: relation.to_string(),
            forward,
            children: Vec::new(),
        });
        if parent == usize::MAX {
            top.push(i);
        } else {
            nodes[parent].children.push(i);
        }
        index.insert(key, i);
        i
    };
    for r in roots {
        add(&mut nodes, &mut top, usize::MAX, "", true, r, None);
    }
    for line in paths {
        let Some((root, steps)) = parse_path_line(line) else {
            continue;
        };
        let mut at = add(
            &mut nodes,
            &mut top,
            usize::MAX,
            "",
            true,
            &root.id,
            Some(&root.type_label),
        );
        for s in &steps {
            at = add(
                &mut nodes,
                &mut top,
                at,
                &s.relation,
                s.forward,
                &s.to.id,
                Some(&s.to.type_label),
            );
        }
    }
    let mut out = Vec::with_capacity(nodes.len());
    let mut stack: Vec<(usize, Option<usize>, usize)> =
        top.iter().rev().map(|&i| (i, None, 0)).collect();
    while let Some((i, parent, depth)) = stack.pop() {
        let n = &nodes[i];
        let at = out.len();
        out.push(TraceTreeNode {
            entity: names.entity(&n.id, n.type_label.as_deref(), gold.contains(n.id.as_str())),
            parent,
            depth,
            relation: n.relation.clone(),
            forward: n.forward,
        });
        for &c in n.children.iter().rev() {
            stack.push((c, Some(at), depth + 1));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace view carries each model call's prompt and reply; errors say the endpoint's
    /// host only, never its URL path or a key.
    #[test]
    fn model_calls_are_shown_without_urls_or_keys() {
        let g = serenqa_graph::GraphBuilder::default().build();
        let call = CallTrace {
            role: "retrieval".into(),
            model: "m".into(),
            prompt: vec![crate::llm::Message::system("write Cypher"), crate::llm::Message::user("q?")],
            reply: None,
            error: Some("error sending request for url (http://10.0.0.7:8000/v1/chat/completions?k=sk-abc): refused; key sk-secret".into()),
            error_kind: Some("connect".into()),
            latency_ms: 12.0,
            cached: false,
            issues: vec![],
        };
        let t1 = T1Record {
            key: "t1:7".into(),
            qid: 7,
            question: "q?".into(),
            call: Some(call.clone()),
            retrieved: Retrieved {
                error: Some("model call failed: http://10.0.0.7:8000/v1".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let t3 = T3Record {
            key: "t3:7:llm:with".into(),
            qid: 7,
            partition: "llm".into(),
            mode: "with".into(),
            calls: vec![
                call.clone(),
                CallTrace {
                    reply: Some("PTGS2".into()),
                    error: None,
                    error_kind: None,
                    ..call
                },
            ],
            ..Default::default()
        };
        let v = question_view(&g, "r", RunSettings::default(), &[t1], &[t3], &[], 7).unwrap();
        let r = v.retrieval.unwrap();
        assert_eq!(r.model_calls.len(), 1);
        let c = &r.model_calls[0];
        assert_eq!(c.prompt.len(), 2);
        assert_eq!(c.prompt[0].role, "system");
        assert_eq!(c.error_kind.as_deref(), Some("connect"));
        let e = c.error.clone().unwrap();
        assert!(
            e.contains("10.0.0.7:8000") && !e.contains("/v1") && !e.contains("sk-"),
            "{e}"
        );
        assert_eq!(r.error.as_deref(), Some("model call failed: 10.0.0.7:8000"));
        let x = &v.explorations[0];
        assert_eq!((x.calls, x.model_calls.len()), (2, 2));
        assert_eq!(x.model_calls[1].reply.as_deref(), Some("PTGS2"));
    }

    #[test]
    fn path_lines_read_back() {
        let (root, steps) = parse_path_line("DB00316: DOID:10763 (hypertension, Disease) <-[TREATS_CtD]- DB00945 (Acetylsalicylic acid, Compound) -[BINDS_CbG]-> 5743 (PTGS2, Gene)").unwrap();
        assert_eq!(
            root,
            LineNode {
                id: "DOID:10763".into(),
                type_label: "Disease".into()
            }
        );
        assert_eq!(steps.len(), 2);
        assert_eq!(
            (
                steps[0].relation.as_str(),
                steps[0].forward,
                steps[0].to.id.as_str()
            ),
            ("TREATS_CtD", false, "DB00945")
        );
        assert_eq!(
            (
                steps[1].relation.as_str(),
                steps[1].forward,
                steps[1].to.id.as_str(),
                steps[1].to.type_label.as_str()
            ),
            ("BINDS_CbG", true, "5743", "Gene")
        );
        // Names with commas and parentheses keep the type right.
        let (_, s) = parse_path_line(
            "X: A (a, Disease) -[R]-> B (vitamin D (25-OH), calcifediol, Compound)",
        )
        .unwrap();
        assert_eq!(
            s[0].to,
            LineNode {
                id: "B".into(),
                type_label: "Compound".into()
            }
        );
        assert_eq!(parse_path_line("no colon here"), None);
        assert_eq!(
            parse_path_line("X: A (a, Disease) -[R]-> B"),
            None,
            "a node without its label"
        );
    }
}
