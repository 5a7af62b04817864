//! A small Hetionet-shaped graph built in code, with a planted signal: a compound tends to
//! treat a disease when it binds a gene the disease is associated with.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![allow(dead_code)]

use serenqa_graph::{Graph, GraphBuilder, GraphMeta, RelationType};

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next() * n as f64) as usize).min(n - 1)
    }
}

fn rel(b: &mut GraphBuilder, name: &str, verb: &str, abbrev: &str, s: u16, t: u16) -> u16 {
    b.relation(RelationType {
        name: name.into(),
        verb: verb.into(),
        abbrev: abbrev.into(),
        source_type: Some(s),
        target_type: Some(t),
        directed: false,
    })
    .unwrap()
}

/// `nc` compounds, `nd` diseases, `ng` genes; CpD edges are rare noise.
pub fn graph(nc: usize, nd: usize, ng: usize, seed: u64) -> Graph {
    build(nc, nd, ng, seed, false)
}

/// As [`graph`], plus a second planted signal of its own: diseases downregulate genes
/// (`DdG`), and a compound tends to palliate (`CpD`) a disease when it binds a gene the disease
/// downregulates — a different metapath (`CbGdD`) from the treatment signal (`CbGaD`).
pub fn graph_with_palliation(nc: usize, nd: usize, ng: usize, seed: u64) -> Graph {
    build(nc, nd, ng, seed, true)
}

/// As [`graph`], plus side effects (`Compound –causes→ Side Effect`, identifiers `C0000<j>`)
/// and symptoms (`Disease –presents→ Symptom`): side effect `disease j` bears disease j's name
/// (as drug labels list an indication among the side effects, most of its causes treat
/// disease j), and side effect `sym<j>` the name of a symptom only disease j presents.
pub fn graph_with_side_effects(nc: usize, nd: usize, ng: usize, seed: u64) -> Graph {
    let (mut b, c, d, treated) = builder(nc, nd, ng, seed, false);
    let mut r = Rng(seed ^ 0x5eed);
    let tc = b.type_id("Compound").unwrap();
    let td = b.type_id("Disease").unwrap();
    let tse = b.node_type("SideEffect", "Side Effect");
    let ts = b.node_type("Symptom", "Symptom");
    let ccse = rel(&mut b, "CAUSES_CcSE", "causes", "CcSE", tc, tse);
    let dps = rel(&mut b, "PRESENTS_DpS", "presents", "DpS", td, ts);
    let word = |j: usize| {
        format!(
            "sym{}{}",
            (b'a' + (j / 26) as u8) as char,
            (b'a' + (j % 26) as u8) as char
        )
    };
    let mut named = Vec::new();
    let mut symptom_se = Vec::new();
    for (j, &dj) in d.iter().enumerate() {
        named.push(b.add_node(tse, &format!("C{j:07}"), &format!("disease {j}")));
        symptom_se.push(b.add_node(tse, &format!("S{j:07}"), &word(j)));
        let sy = b.add_node(ts, &format!("D{j:06}"), &word(j));
        b.add_edge(dj, dps, sy, None);
    }
    let generic: Vec<u32> = (0..10)
        .map(|k| {
            b.add_node(
                tse,
                &format!("G{k:07}"),
                &format!("nausea {}", (b'a' + k as u8) as char),
            )
        })
        .collect();
    for (i, &ci) in c.iter().enumerate() {
        for j in 0..d.len() {
            let treats = treated.contains(&(i, j));
            if r.next() < if treats { 0.5 } else { 0.03 } {
                b.add_edge(ci, ccse, named[j], None);
            }
            if r.next() < 0.03 {
                b.add_edge(ci, ccse, symptom_se[j], None);
            }
        }
        for _ in 0..3 {
            b.add_edge(ci, ccse, generic[r.below(generic.len())], None);
        }
    }
    b.build()
}

fn build(nc: usize, nd: usize, ng: usize, seed: u64, palliation: bool) -> Graph {
    builder(nc, nd, ng, seed, palliation).0.build()
}

/// The builder, the compounds, the diseases and the (compound, disease) treatment pairs.
type Built = (GraphBuilder, Vec<u32>, Vec<u32>, Vec<(usize, usize)>);

fn builder(nc: usize, nd: usize, ng: usize, seed: u64, palliation: bool) -> Built {
    let mut r = Rng(seed);
    let mut b = GraphBuilder::new(GraphMeta {
        name: "predict-test".into(),
        ..Default::default()
    });
    let tc = b.node_type("Compound", "Compound");
    let td = b.node_type("Disease", "Disease");
    let tg = b.node_type("Gene", "Gene");
    let ctd = rel(&mut b, "TREATS_CtD", "treats", "CtD", tc, td);
    let cpd = rel(&mut b, "PALLIATES_CpD", "palliates", "CpD", tc, td);
    let cbg = rel(&mut b, "BINDS_CbG", "binds", "CbG", tc, tg);
    let dag = rel(&mut b, "ASSOCIATES_DaG", "associates", "DaG", td, tg);
    let crc = rel(&mut b, "RESEMBLES_CrC", "resembles", "CrC", tc, tc);
    let ddg = if palliation {
        Some(rel(
            &mut b,
            "DOWNREGULATES_DdG",
            "downregulates",
            "DdG",
            td,
            tg,
        ))
    } else {
        None
    };
    let drd = rel(&mut b, "RESEMBLES_DrD", "resembles", "DrD", td, td);
    let c: Vec<u32> = (0..nc)
        .map(|i| b.add_node(tc, &format!("DB{i:05}"), &format!("drug {i}")))
        .collect();
    let d: Vec<u32> = (0..nd)
        .map(|i| b.add_node(td, &format!("DOID:{i}"), &format!("disease {i}")))
        .collect();
    let g: Vec<u32> = (0..ng)
        .map(|i| b.add_node(tg, &format!("{i}"), &format!("GENE{i}")))
        .collect();
    let mut binds = vec![Vec::new(); nc];
    let mut assoc = vec![Vec::new(); nd];
    for (i, &ci) in c.iter().enumerate() {
        for _ in 0..3 {
            let x = r.below(ng);
            binds[i].push(x);
            b.add_edge(ci, cbg, g[x], None);
        }
    }
    for (i, &di) in d.iter().enumerate() {
        for _ in 0..4 {
            let x = r.below(ng);
            assoc[i].push(x);
            b.add_edge(di, dag, g[x], None);
        }
    }
    let mut down = vec![Vec::new(); nd];
    let mut treated = Vec::new();
    if let Some(ddg) = ddg {
        for (i, &di) in d.iter().enumerate() {
            for _ in 0..3 {
                let x = r.below(ng);
                down[i].push(x);
                b.add_edge(di, ddg, g[x], None);
            }
        }
    }
    for i in 0..nc {
        for j in 0..nd {
            let shared = binds[i].iter().any(|x| assoc[j].contains(x));
            let p = if shared { 0.6 } else { 0.01 };
            let q = if !palliation {
                0.01
            } else if binds[i].iter().any(|x| down[j].contains(x)) {
                0.5
            } else {
                0.005
            };
            if r.next() < p {
                b.add_edge(c[i], ctd, d[j], None);
                treated.push((i, j));
            } else if r.next() < q {
                b.add_edge(c[i], cpd, d[j], None);
            }
        }
    }
    for _ in 0..nc {
        let (x, y) = (r.below(nc), r.below(nc));
        if x != y {
            b.add_edge(c[x], crc, c[y], None);
        }
    }
    for _ in 0..nd / 2 {
        let (x, y) = (r.below(nd), r.below(nd));
        if x != y {
            b.add_edge(d[x], drd, d[y], None);
        }
    }
    (b, c, d, treated)
}
