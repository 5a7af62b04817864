//! Queries of the nine SerenQA pattern types (paper, appendix A.2/A.3) instantiated on a
//! Hetionet-shaped graph, and their latency (`serenqa perf cypher`).
//!
//! [`pattern_cases`] picks anchor entities deterministically (first nodes in id order whose
//! name is unique within their type and whose neighbourhood gives a non-empty answer) and
//! writes the Cypher an LLM or the benchmark builder would: literal names, COLLECT(DISTINCT
//! {id, name}) results, the A.3 style of one MATCH per element for intersections.

use std::time::{Duration, Instant};

use serenqa_graph::{Graph, NodeId, RelId};

use serenqa_cypher::{execute, Options};

/// The pattern types, in the paper's order.
pub const PATTERNS: [&str; 9] = [
    "1.1", "1.2", "2.1", "3.1", "3.2", "3.3", "4.1", "4.2", "4.3",
];

/// One query of one pattern type.
#[derive(Clone, Debug)]
pub struct Case {
    pub pattern: &'static str,
    pub query: String,
    /// The named entities, in the order the pattern lists them.
    pub anchors: Vec<NodeId>,
}

/// Out-neighbours of `n` over relation `rel`.
pub fn out_n(g: &Graph, n: NodeId, rel: RelId) -> &[NodeId] {
    let (_, targets, _) = g.out_csr();
    &targets[g.out_range_rel(n, rel)]
}

/// In-neighbours of `n` over relation `rel`.
pub fn in_n(g: &Graph, n: NodeId, rel: RelId) -> &[NodeId] {
    let (_, sources, _, _) = g.in_csr();
    &sources[g.in_range_rel(n, rel)]
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

struct Rels {
    ctd: RelId,
    cbg: RelId,
    dag: RelId,
    gppw: RelId,
    gpbp: RelId,
    gig: RelId,
    ccse: RelId,
}

/// Whether `n`'s name identifies it within its type (so a `{name: …}` query means `n`).
fn unique_name(g: &Graph, n: NodeId) -> bool {
    let t = g.node_type(n);
    let name = g.name(n);
    !name.is_empty()
        && g.find_by_name(name)
            .iter()
            .filter(|&&m| g.node_type(m) == t && g.name(m) == name)
            .count()
            == 1
}

fn name(g: &Graph, n: NodeId) -> String {
    quote(g.name(n))
}

/// Up to `per_pattern` cases of each pattern type; empty when the graph lacks Hetionet's
/// relation types.
pub fn pattern_cases(g: &Graph, per_pattern: usize) -> Vec<Case> {
    let r = |n: &str| g.relation_id(n);
    let (Some(ctd), Some(cbg), Some(dag), Some(gppw), Some(gpbp), Some(gig), Some(ccse)) = (
        r("TREATS_CtD"),
        r("BINDS_CbG"),
        r("ASSOCIATES_DaG"),
        r("PARTICIPATES_GpPW"),
        r("PARTICIPATES_GpBP"),
        r("INTERACTS_GiG"),
        r("CAUSES_CcSE"),
    ) else {
        return Vec::new();
    };
    let rels = Rels {
        ctd,
        cbg,
        dag,
        gppw,
        gpbp,
        gig,
        ccse,
    };
    let ty = |l: &str| g.type_id(l);
    let (Some(compound), Some(disease), Some(gene)) = (ty("Compound"), ty("Disease"), ty("Gene"))
    else {
        return Vec::new();
    };
    let compounds = g.nodes_of_type(compound);
    let diseases = g.nodes_of_type(disease);
    let genes = g.nodes_of_type(gene);
    let mut cases = Vec::new();
    let push =
        |cases: &mut Vec<Case>, pattern: &'static str, query: String, anchors: Vec<NodeId>| {
            if cases
                .iter()
                .filter(|c: &&Case| c.pattern == pattern)
                .count()
                < per_pattern
            {
                cases.push(Case {
                    pattern,
                    query,
                    anchors,
                });
            }
        };
    let first_unique = |ns: &[NodeId]| ns.iter().copied().find(|&n| unique_name(g, n));
    let rels = &rels;

    for &c in compounds.iter().filter(|&&c| unique_name(g, c)) {
        // 1.1: targets of a named source.
        if !out_n(g, c, rels.ctd).is_empty() {
            let q = format!(
                "MATCH (s:Compound {{name: {}}})-[:TREATS_CtD]->(t:Disease)\nRETURN COLLECT(DISTINCT {{id: t.id, name: t.name}}) AS targets",
                name(g, c)
            );
            push(&mut cases, "1.1", q, vec![c]);
        }
        // 2.1: source → named mid → final type.
        if let Some(m) = out_n(g, c, rels.cbg)
            .iter()
            .copied()
            .find(|&m| unique_name(g, m) && !out_n(g, m, rels.gppw).is_empty())
        {
            let q = format!(
                "MATCH (s:Compound {{name: {}}})-[:BINDS_CbG]->(m:Gene {{name: {}}})-[:PARTICIPATES_GpPW]->(f:Pathway)\nRETURN COLLECT(DISTINCT {{id: f.id, name: f.name}}) AS finals",
                name(g, c),
                name(g, m)
            );
            push(&mut cases, "2.1", q, vec![c, m]);
            // 3.1: sequential chain source → gene → interacting gene → biological process.
            if let Some(x) = out_n(g, m, rels.gig)
                .iter()
                .chain(in_n(g, m, rels.gig))
                .copied()
                .find(|&x| x != m && unique_name(g, x) && !out_n(g, x, rels.gpbp).is_empty())
            {
                let q = format!(
                    "MATCH (a:Compound {{name: {}}})-[:BINDS_CbG]->(b:Gene {{name: {}}})-[:INTERACTS_GiG]-(c:Gene {{name: {}}})-[:PARTICIPATES_GpBP]->(d:BiologicalProcess)\nRETURN COLLECT(DISTINCT {{id: d.id, name: d.name}}) AS answers",
                    name(g, c),
                    name(g, m),
                    name(g, x)
                );
                push(&mut cases, "3.1", q, vec![c, m, x]);
            }
        }
        // 4.1 / 4.2: entities sharing two / three named neighbours (A.3 style).
        let d = first_unique(out_n(g, c, rels.ctd));
        let gn = first_unique(out_n(g, c, rels.cbg));
        if let (Some(d), Some(gn)) = (d, gn) {
            let q = format!(
                "MATCH (n0:Compound)\nMATCH (n1:Disease {{name: {}}})\nMATCH (n2:Gene {{name: {}}})\nMATCH (n0)-[:TREATS_CtD]->(n1)\nMATCH (n0)-[:BINDS_CbG]->(n2)\nRETURN COLLECT(DISTINCT {{id: n0.id, name: n0.name}}) AS n0_targets",
                name(g, d),
                name(g, gn)
            );
            push(&mut cases, "4.1", q, vec![d, gn]);
            if let Some(se) = first_unique(out_n(g, c, rels.ccse)) {
                let q = format!(
                    "MATCH (n0:Compound)\nMATCH (n1:Disease {{name: {}}})\nMATCH (n2:Gene {{name: {}}})\nMATCH (n3:SideEffect {{name: {}}})\nMATCH (n0)-[:TREATS_CtD]->(n1)\nMATCH (n0)-[:BINDS_CbG]->(n2)\nMATCH (n0)-[:CAUSES_CcSE]->(n3)\nRETURN COLLECT(DISTINCT {{id: n0.id, name: n0.name}}) AS n0_targets",
                    name(g, d),
                    name(g, gn),
                    name(g, se)
                );
                push(&mut cases, "4.2", q, vec![d, gn, se]);
            }
        }
    }
    for &d in diseases.iter().filter(|&&d| unique_name(g, d)) {
        // 1.2: sources of a named target.
        if !in_n(g, d, rels.ctd).is_empty() {
            let q = format!(
                "MATCH (s:Compound)-[:TREATS_CtD]->(t:Disease {{name: {}}})\nRETURN COLLECT(DISTINCT {{id: s.id, name: s.name}}) AS sources",
                name(g, d)
            );
            push(&mut cases, "1.2", q, vec![d]);
        }
        // 3.2: hierarchical: which compound treats D, which associates G, which is in P.
        if in_n(g, d, rels.ctd).is_empty() {
            continue;
        }
        if let Some((gn, p)) = out_n(g, d, rels.dag)
            .iter()
            .filter(|&&x| unique_name(g, x))
            .find_map(|&x| first_unique(out_n(g, x, rels.gppw)).map(|p| (x, p)))
        {
            let q = format!(
                "MATCH (x:Compound)-[:TREATS_CtD]->(d:Disease {{name: {}}})-[:ASSOCIATES_DaG]->(g:Gene {{name: {}}})-[:PARTICIPATES_GpPW]->(p:Pathway {{name: {}}})\nRETURN COLLECT(DISTINCT {{id: x.id, name: x.name}}) AS answers",
                name(g, d),
                name(g, gn),
                name(g, p)
            );
            push(&mut cases, "3.2", q, vec![d, gn, p]);
        }
    }
    for &gn in genes
        .iter()
        .filter(|&&x| unique_name(g, x) && !in_n(g, x, rels.cbg).is_empty())
    {
        // 3.3: branching: which compound binds G, which is in pathway P and process B.
        if let (Some(p), Some(b)) = (
            first_unique(out_n(g, gn, rels.gppw)),
            first_unique(out_n(g, gn, rels.gpbp)),
        ) {
            let q = format!(
                "MATCH (n0:Compound)\nMATCH (n1:Gene {{name: {}}})\nMATCH (n2:Pathway {{name: {}}})\nMATCH (n3:BiologicalProcess {{name: {}}})\nMATCH (n0)-[:BINDS_CbG]->(n1)\nMATCH (n1)-[:PARTICIPATES_GpPW]->(n2)\nMATCH (n1)-[:PARTICIPATES_GpBP]->(n3)\nRETURN COLLECT(DISTINCT {{id: n0.id, name: n0.name}}) AS n0_targets",
                name(g, gn),
                name(g, p),
                name(g, b)
            );
            push(&mut cases, "3.3", q, vec![gn, p, b]);
        }
        if cases.iter().filter(|c| c.pattern == "3.3").count() >= per_pattern {
            break;
        }
    }
    // 4.3: compounds binding both of two genes and diseases associated with both.
    'outer: for &c in compounds {
        let bound: Vec<NodeId> = out_n(g, c, rels.cbg)
            .iter()
            .copied()
            .filter(|&x| unique_name(g, x))
            .collect();
        if bound.len() < 2 {
            continue;
        }
        for &d in diseases {
            let assoc = out_n(g, d, rels.dag);
            let shared: Vec<NodeId> = bound
                .iter()
                .copied()
                .filter(|x| assoc.contains(x))
                .take(2)
                .collect();
            if let [g2, g3] = shared[..] {
                let q = format!(
                    "MATCH (e2:Gene {{name: {}}}), (e3:Gene {{name: {}}})\nMATCH (e1:Compound)-[:BINDS_CbG]->(e2), (e1)-[:BINDS_CbG]->(e3)\nMATCH (e4:Disease)-[:ASSOCIATES_DaG]->(e2), (e4)-[:ASSOCIATES_DaG]->(e3)\nRETURN COLLECT(DISTINCT e1.id) AS e1_ids, COLLECT(DISTINCT e4.id) AS e4_ids",
                    name(g, g2),
                    name(g, g3)
                );
                push(&mut cases, "4.3", q, vec![g2, g3]);
                if cases.iter().filter(|c| c.pattern == "4.3").count() >= per_pattern {
                    break 'outer;
                }
                continue 'outer;
            }
        }
    }
    cases
}

/// Id-anchored one- and two-hop queries for any graph (`id-1hop`, `id-2hop`): `n` start
/// nodes spread evenly over the node ids, each with its type label as Cypher would write it.
pub fn anchored_cases(g: &Graph, n: usize) -> Vec<Case> {
    let count = g.node_count();
    if count == 0 || n == 0 {
        return Vec::new();
    }
    let step = (count / n).max(1);
    let mut cases = Vec::new();
    for i in (0..count).step_by(step).take(n) {
        let node = i as NodeId;
        let label = g.type_label(g.node_type(node));
        let id = quote(g.ident(node));
        cases.push(Case {
            pattern: "id-1hop",
            query: format!("MATCH (n:{label} {{id: {id}}})-->(m) RETURN count(m) AS c"),
            anchors: vec![node],
        });
        cases.push(Case {
            pattern: "id-2hop",
            query: format!(
                "MATCH (n:{label} {{id: {id}}})-->()-->(m) RETURN count(DISTINCT m) AS c"
            ),
            anchors: vec![node],
        });
    }
    cases
}

/// Latency summary of one pattern type.
#[derive(Clone, Debug)]
pub struct PatternLatency {
    pub pattern: &'static str,
    pub queries: usize,
    pub runs: usize,
    pub errors: usize,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize)
        .saturating_sub(1)
        .min(sorted.len() - 1);
    sorted[i]
}

/// Runs every case `reps` times (parse + plan + execute + result detaching) and reports the
/// latency distribution per pattern type.
pub fn measure(g: &Graph, cases: &[Case], reps: usize, opts: &Options) -> Vec<PatternLatency> {
    let mut out = Vec::new();
    let mut patterns: Vec<&'static str> = Vec::new();
    for c in cases {
        if !patterns.contains(&c.pattern) {
            patterns.push(c.pattern);
        }
    }
    for p in patterns {
        let mut times = Vec::new();
        let mut errors = 0;
        let mine: Vec<&Case> = cases.iter().filter(|c| c.pattern == p).collect();
        for c in &mine {
            for _ in 0..reps.max(1) {
                let t = Instant::now();
                let r = execute(g, &c.query, opts);
                times.push(t.elapsed());
                if r.is_err() {
                    errors += 1;
                }
            }
        }
        times.sort();
        out.push(PatternLatency {
            pattern: p,
            queries: mine.len(),
            runs: times.len(),
            errors,
            p50: percentile(&times, 0.5),
            p99: percentile(&times, 0.99),
            max: times.last().copied().unwrap_or_default(),
        });
    }
    out
}

/// A text table of [`measure`]'s output.
pub fn report(rows: &[PatternLatency]) -> String {
    let mut s = format!(
        "{:<8} {:>8} {:>6} {:>7} {:>10} {:>10} {:>10}\n",
        "pattern", "queries", "runs", "errors", "p50 ms", "p99 ms", "max ms"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<8} {:>8} {:>6} {:>7} {:>10.3} {:>10.3} {:>10.3}\n",
            r.pattern,
            r.queries,
            r.runs,
            r.errors,
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3,
            r.max.as_secs_f64() * 1e3
        ));
    }
    s
}
