//! A synthetic graph shaped like the Clinical Knowledge Graph: 36 node types, 47 relation
//! types, heavy-tailed degrees, deterministic by seed, from 10k to 15.4M nodes / 200M edges.
//!
//! It exists for scale tests and benchmarks only and is always marked `synthetic`: the product
//! never shows it as data without saying so.
//!
//! Shape: each node type gets a share of the nodes, each relation a share of the edges between
//! its source and target types. Endpoints are drawn with `floor(n · u^k)` (u uniform, k > 1),
//! which gives a power-law-like degree tail, then scattered over the type by a bijective
//! affine map so hubs are not all at low ids.

use rayon::prelude::*;

use crate::{Graph, GraphBuilder, GraphMeta, RelationType};

/// CKG node types and their relative sizes (loosely after the CKG's own counts).
pub const NODE_TYPES: &[(&str, f64)] = &[
    ("Known_variant", 30.0),
    ("Clinically_relevant_variant", 4.0),
    ("Publication", 12.0),
    ("Protein", 3.0),
    ("Gene", 3.0),
    ("Transcript", 6.0),
    ("Peptide", 6.0),
    ("Modified_protein", 2.0),
    ("Metabolite", 4.0),
    ("Disease", 1.0),
    ("Drug", 1.0),
    ("Pathway", 0.5),
    ("Biological_process", 0.8),
    ("Molecular_function", 0.5),
    ("Cellular_component", 0.3),
    ("Tissue", 0.2),
    ("Phenotype", 0.5),
    ("Clinical_variable", 1.0),
    ("Experimental_factor", 0.2),
    ("Food", 0.2),
    ("Complex", 0.2),
    ("Chromosome", 0.01),
    ("Functional_region", 0.4),
    ("Protein_structure", 1.5),
    ("Amino_acid_sequence", 3.0),
    ("GWAS_study", 0.2),
    ("Modification", 0.05),
    ("Units", 0.01),
    ("User", 0.01),
    ("Project", 0.01),
    ("Subject", 0.1),
    ("Biological_sample", 0.1),
    ("Analytical_sample", 0.1),
    ("Timepoint", 0.01),
    ("Experiment", 0.01),
    ("Side_effect", 0.5),
];

/// CKG relation types: (name, source type, target type, relative size).
pub const RELATIONS: &[(&str, &str, &str, f64)] = &[
    ("VARIANT_FOUND_IN_GENE", "Known_variant", "Gene", 12.0),
    ("VARIANT_FOUND_IN_PROTEIN", "Known_variant", "Protein", 10.0),
    (
        "VARIANT_FOUND_IN_CHROMOSOME",
        "Known_variant",
        "Chromosome",
        10.0,
    ),
    (
        "VARIANT_IS_CLINICALLY_RELEVANT",
        "Clinically_relevant_variant",
        "Known_variant",
        1.0,
    ),
    (
        "ASSOCIATED_WITH",
        "Clinically_relevant_variant",
        "Disease",
        2.0,
    ),
    ("MENTIONED_IN_PUBLICATION", "Protein", "Publication", 12.0),
    ("TRANSCRIBED_INTO", "Gene", "Transcript", 2.0),
    ("TRANSLATED_INTO", "Transcript", "Protein", 2.0),
    ("LOCATED_IN", "Transcript", "Chromosome", 1.0),
    ("HAS_SEQUENCE", "Protein", "Amino_acid_sequence", 1.0),
    ("BELONGS_TO_PROTEIN", "Peptide", "Protein", 3.0),
    ("HAS_MODIFIED_SITE", "Protein", "Modified_protein", 1.0),
    ("HAS_MODIFICATION", "Modified_protein", "Modification", 1.0),
    ("IS_SUBSTRATE_OF", "Modified_protein", "Protein", 0.5),
    ("COMPILED_INTERACTS_WITH", "Protein", "Protein", 8.0),
    ("CURATED_INTERACTS_WITH", "Protein", "Protein", 2.0),
    ("ACTS_ON", "Protein", "Protein", 2.0),
    ("IS_SUBUNIT_OF", "Protein", "Complex", 0.3),
    ("ANNOTATED_IN_PATHWAY", "Protein", "Pathway", 2.0),
    ("ASSOCIATED_WITH_BP", "Protein", "Biological_process", 4.0),
    ("ASSOCIATED_WITH_MF", "Protein", "Molecular_function", 2.0),
    ("ASSOCIATED_WITH_CC", "Protein", "Cellular_component", 2.0),
    ("ASSOCIATED_WITH_TISSUE", "Protein", "Tissue", 3.0),
    ("ASSOCIATED_WITH_DISEASE", "Protein", "Disease", 4.0),
    ("DETECTED_IN_PATHOLOGY_SAMPLE", "Protein", "Disease", 1.0),
    ("IS_BIOMARKER_OF_DISEASE", "Protein", "Disease", 0.2),
    ("IS_QCMARKER_IN_TISSUE", "Protein", "Tissue", 0.1),
    ("CURATED_TARGETS", "Drug", "Protein", 0.5),
    ("COMPILED_TARGETS", "Drug", "Protein", 2.0),
    ("IS_INDICATED_FOR", "Drug", "Disease", 0.2),
    ("HAS_SIDE_EFFECT", "Drug", "Phenotype", 1.5),
    ("HAS_SIDE_EFFECT_SE", "Drug", "Side_effect", 1.0),
    ("INTERACTS_WITH", "Drug", "Drug", 1.0),
    ("IS_A_DRUG_PARENT", "Drug", "Drug", 0.05),
    ("HAS_PARENT", "Disease", "Disease", 0.1),
    ("ASSOCIATED_WITH_METABOLITE", "Metabolite", "Disease", 1.0),
    ("ANNOTATED_IN_PATHWAY_MET", "Metabolite", "Pathway", 0.5),
    ("ASSOCIATED_WITH_FOOD", "Metabolite", "Food", 0.5),
    ("HAS_PHENOTYPE", "Disease", "Phenotype", 0.3),
    ("STUDIES_TRAIT", "GWAS_study", "Clinical_variable", 0.2),
    ("PUBLISHED_IN", "GWAS_study", "Publication", 0.2),
    ("FOUND_IN_PROTEIN", "Functional_region", "Protein", 0.6),
    ("HAS_STRUCTURE", "Protein", "Protein_structure", 1.0),
    ("MAPS_TO", "Clinical_variable", "Disease", 0.2),
    (
        "HAS_QUANTIFIED_PROTEIN",
        "Analytical_sample",
        "Protein",
        1.0,
    ),
    ("BELONGS_TO_SUBJECT", "Biological_sample", "Subject", 0.05),
    ("HAS_UNITS", "Clinical_variable", "Units", 0.05),
];

#[derive(Clone, Debug)]
pub struct SynthSpec {
    pub nodes: u64,
    pub edges: u64,
    pub seed: u64,
    pub progress: bool,
}

/// Endpoints are drawn with the workspace's SplitMix64: determinism is what matters.
use serenqa_shared::rng::SplitMix64 as Rng;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Heavy-tailed position in `0..n`, scattered by an affine bijection.
#[inline]
fn draw(rng: &mut Rng, n: u64, k: f64, mult: u64, add: u64) -> u64 {
    let pos = ((n as f64) * rng.unit().powf(k)) as u64;
    (pos.min(n - 1).wrapping_mul(mult).wrapping_add(add)) % n
}

fn coprime_multiplier(n: u64, salt: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut m = (0x9E37_79B9u64 ^ salt.wrapping_mul(0x1000_0000_01B3)) % n;
    while m < 2 || gcd(m, n) != 1 {
        m = (m + 1) % n;
    }
    m
}

/// Nodes of each type (in [`NODE_TYPES`] order) in a graph of `nodes` nodes; the node of
/// type `t` numbered `i` has the identifier `<initials of t><i:08>` (`Disease` 12 →
/// `D00000012`), so a caller can name nodes of a generated graph without loading it.
pub fn type_counts(nodes: u64) -> Vec<u64> {
    let total_w: f64 = NODE_TYPES.iter().map(|t| t.1).sum();
    let nodes = nodes.max(NODE_TYPES.len() as u64 * 2);
    let mut counts: Vec<u64> = NODE_TYPES
        .iter()
        .map(|t| ((t.1 / total_w) * nodes as f64).floor().max(2.0) as u64)
        .collect();
    let assigned: u64 = counts.iter().sum();
    counts[0] += nodes.saturating_sub(assigned);
    counts
}

/// The identifier of the `i`-th node of type `label` ([`type_counts`]).
pub fn identifier(label: &str, i: u64) -> String {
    let prefix: String = label
        .split('_')
        .map(|w| w.chars().next().unwrap_or('X'))
        .collect::<String>()
        .to_uppercase();
    format!("{prefix}{i:08}")
}

pub fn generate(spec: &SynthSpec) -> Graph {
    let nodes = spec.nodes.max(NODE_TYPES.len() as u64 * 2);
    let counts = type_counts(nodes);

    let meta = GraphMeta {
        name: "synthetic-ckg".into(),
        source: format!(
            "serenqa synth: {} nodes, {} edges, seed {} (CKG-shaped, not real data)",
            nodes, spec.edges, spec.seed
        ),
        synthetic: true,
        dropped: Vec::new(),
    };
    let mut b = GraphBuilder::new(meta);
    b.reserve(nodes as usize, spec.edges as usize);
    let mut starts = Vec::with_capacity(NODE_TYPES.len());
    let bar = crate::progress::count_bar(nodes, "synth nodes", spec.progress);
    for (ti, (label, _)) in NODE_TYPES.iter().enumerate() {
        let t = b.node_type(label, &label.replace('_', " "));
        starts.push(b.node_count() as u64);
        for i in 0..counts[ti] {
            b.add_node(
                t,
                &identifier(label, i),
                &format!("{} {i}", label.replace('_', " ").to_lowercase()),
            );
        }
        bar.inc(counts[ti]);
    }
    bar.finish_and_clear();
    let type_index = |name: &str| NODE_TYPES.iter().position(|t| t.0 == name).unwrap_or(0);

    let rel_w: f64 = RELATIONS.iter().map(|r| r.3).sum();
    let bar = crate::progress::count_bar(spec.edges, "synth edges", spec.progress);
    let mut assigned = 0u64;
    for (ri, (name, s, t, w)) in RELATIONS.iter().enumerate() {
        let m = if ri + 1 == RELATIONS.len() {
            spec.edges - assigned
        } else {
            ((w / rel_w) * spec.edges as f64) as u64
        };
        assigned += m;
        let (si, ti) = (type_index(s), type_index(t));
        let st = b.type_id(s).unwrap_or(0);
        let tt = b.type_id(t).unwrap_or(0);
        let rel = b
            .relation(RelationType {
                name: name.to_string(),
                verb: name.to_lowercase().replace('_', " "),
                abbrev: name.to_string(),
                source_type: Some(st),
                target_type: Some(tt),
                directed: true,
            })
            .unwrap_or(0);
        let (ns, nt) = (counts[si], counts[ti]);
        let (s0, t0) = (starts[si], starts[ti]);
        let (sm, tm) = (
            coprime_multiplier(ns, ri as u64 * 2 + 1),
            coprime_multiplier(nt, ri as u64 * 2 + 2),
        );
        // Chunks with their own seeds: the result does not depend on the thread count.
        const CHUNK: u64 = 1 << 20;
        let chunks = m.div_ceil(CHUNK);
        let pairs: Vec<Vec<(u32, u32)>> = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut rng = Rng::new(
                    spec.seed ^ ((ri as u64) << 40) ^ c.wrapping_mul(0xA24B_AED4_963E_E407),
                );
                let len = CHUNK.min(m - c * CHUNK);
                (0..len)
                    .map(|_| {
                        let src = s0 + draw(&mut rng, ns, 2.2, sm, ri as u64);
                        let dst = t0 + draw(&mut rng, nt, 3.0, tm, ri as u64 * 7);
                        (src as u32, dst as u32)
                    })
                    .collect()
            })
            .collect();
        for chunk in pairs {
            for (src, dst) in chunk {
                b.add_edge(src, rel, dst, None);
            }
            bar.inc(CHUNK);
        }
    }
    bar.finish_and_clear();
    let sp = crate::progress::spinner("building CSR", spec.progress);
    let g = b.build();
    sp.finish_and_clear();
    g
}
