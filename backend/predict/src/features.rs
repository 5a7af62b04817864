//! The feature table of all pairs of the prediction task ([`crate::task`]).
//!
//! Features of a pair (c, d), all computed on the graph *as masked*:
//! - one per metapath with enough support: `asinh(DWPC / mean DWPC)` (the mean over all pairs;
//!   Rephetio's transform, which makes metapaths of very different scales comparable and
//!   tames hubs' long tail);
//! - degree features, the degree prior: `asinh(degree)` of c and of d in every step leaving
//!   their type (`CbG`, `CcSE`, …, `DaG`, …), the treatment steps counted *without the pair's
//!   own edge* (a known treatment does not raise its own prior). Rephetio corrects degree bias
//!   with a prior from edge permutations; these explicit degree terms are the cheap version:
//!   the learner weighs how much a drug's or disease's treatment count alone predicts;
//! - contradiction features (when [`FeatureParams::contradiction`]): does the graph record the
//!   compound as causing the disease or a symptom specific to it ([`crate::contra`]).
//!
//! Pairs are indexed compound-major: `pair = c · |D| + d` with c, d local indices.

use serenqa_graph::Graph;

use serenqa_graph::load::disease_ontology::DiseaseOntology;

use crate::contra::{Contradiction, NAMES as CONTRADICTION_NAMES};
use crate::dwpc::{dwpc_all, step_matrices, EdgeMask, LocalIndex};
use crate::metagraph::Metagraph;
pub use crate::task::{Task, MAX_PAIRS};
use crate::PredictError;

/// Settings of the feature computation.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FeatureParams {
    /// DWPC damping exponent w.
    pub damping: f64,
    pub min_len: usize,
    pub max_len: usize,
    /// A metapath is kept when at least this share of all pairs has a walk of it.
    pub min_support: f64,
    /// Add the contradiction features ([`crate::contra`]) to the table. Off, they are still
    /// computed for the explanation, but no model reads them.
    #[serde(default = "yes")]
    pub contradiction: bool,
}

fn yes() -> bool {
    true
}

impl Default for FeatureParams {
    fn default() -> Self {
        FeatureParams {
            damping: 0.4,
            min_len: 2,
            max_len: 4,
            min_support: 0.001,
            contradiction: true,
        }
    }
}

/// The feature table of all pairs on one (masked) graph.
#[derive(Clone, Debug)]
pub struct Features {
    pub names: Vec<String>,
    /// Whether feature j is a metapath (else a degree or a contradiction feature).
    pub is_metapath: Vec<bool>,
    /// The columns of the contradiction features ([`crate::contra::NAMES`] order; empty when
    /// [`FeatureParams::contradiction`] is off).
    pub contradiction: Vec<usize>,
    /// Column j: one value per pair, compound-major.
    pub cols: Vec<Vec<f32>>,
    /// Metapaths enumerated before the support filter.
    pub metapaths_considered: usize,
    /// For each label ([`Task::labels`] order): the columns of the compound's and the
    /// disease's degree in that relation, own edges left out (the degree prior).
    pub label_degree: Vec<(Option<usize>, Option<usize>)>,
}

/// Everything that does not change between folds: metagraph, metapaths, local indices.
pub struct Space<'g> {
    pub g: &'g Graph,
    pub task: Task,
    pub mg: Metagraph,
    pub li: LocalIndex,
    /// Metapaths from Disease to Compound (the direction products run in).
    pub paths: Vec<Vec<usize>>,
    /// Their names read from compound to disease (`CbGaD`).
    pub names: Vec<String>,
    /// The join of side effects to diseases behind the contradiction features.
    pub contra: Contradiction,
}

impl<'g> Space<'g> {
    /// The space of `g` without the Disease Ontology files (contradictions by name and symptom
    /// only).
    pub fn new(g: &'g Graph, params: &FeatureParams) -> Result<Self, PredictError> {
        Self::with_ontology(g, params, None)
    }

    /// The space of `g`; `ontology` adds identifier matches to the contradiction features.
    pub fn with_ontology(
        g: &'g Graph,
        params: &FeatureParams,
        ontology: Option<&DiseaseOntology>,
    ) -> Result<Self, PredictError> {
        let task = Task::detect(g)?;
        let mg = Metagraph::of(g, &task.treatment);
        let li = LocalIndex::of(g);
        let paths = mg.metapaths(
            task.disease_type,
            task.compound_type,
            params.min_len.max(2),
            params.max_len.clamp(2, 5),
        );
        let names = paths.iter().map(|p| mg.abbrev(&mg.reversed(p))).collect();
        let contra = Contradiction::build(g, ontology);
        Ok(Space {
            g,
            task,
            mg,
            li,
            paths,
            names,
            contra,
        })
    }

    /// The feature table on the graph without the `mask`ed edges.
    pub fn features(&self, mask: &EdgeMask, params: &FeatureParams) -> Features {
        let (nc, nd) = (self.task.compounds.len(), self.task.diseases.len());
        let npairs = nc * nd;
        let mats = step_matrices(self.g, &self.mg, &self.li, mask, params.damping);
        let dw = dwpc_all(&mats, &self.mg, &self.paths, nd);
        let min_pairs = ((params.min_support * npairs as f64).ceil() as usize).max(3);
        let mut names = Vec::new();
        let mut is_metapath = Vec::new();
        let mut cols = Vec::new();
        for (k, m) in dw.iter().enumerate() {
            // m is disease-major (d · nc + c).
            let support = m.iter().filter(|&&v| v > 0.0).count();
            if support < min_pairs {
                continue;
            }
            let mean = m.iter().map(|&v| v as f64).sum::<f64>() / npairs as f64;
            if mean.is_nan() || mean <= 0.0 {
                continue;
            }
            let mut col = vec![0f32; npairs];
            for d in 0..nd {
                for c in 0..nc {
                    col[c * nd + d] = ((m[d * nc + c] as f64 / mean).asinh()) as f32;
                }
            }
            names.push(self.names[k].clone());
            is_metapath.push(true);
            cols.push(col);
        }
        // Degree features; treatment steps leave the pair's own edges out.
        let labels = self.task.labels();
        let mut label_degree = vec![(None, None); labels.len()];
        let own: Vec<(usize, u32)> = self.task.edges_of(self.g, &self.li, &self.task.treatment);
        for (s, st) in self.mg.steps.iter().enumerate() {
            let side_c = st.from == self.task.compound_type;
            let side_d = st.from == self.task.disease_type;
            if !side_c && !side_d {
                continue;
            }
            let m = &mats[s];
            let mut col = vec![0f32; npairs];
            for c in 0..nc {
                for d in 0..nd {
                    let deg = if side_c { m.degree[c] } else { m.degree[d] };
                    col[c * nd + d] = deg as f32;
                }
            }
            if st.treatment {
                let reaches_other = (side_c && st.to == self.task.disease_type)
                    || (side_d && st.to == self.task.compound_type);
                if reaches_other {
                    for &(p, e) in &own {
                        if !mask.contains(e) && self.g.edge(e).rel == st.rel {
                            col[p] = (col[p] - 1.0).max(0.0);
                        }
                    }
                }
            }
            for v in &mut col {
                *v = v.asinh();
            }
            if let Some(h) = labels.iter().position(|&r| r == st.rel) {
                if side_c && st.to == self.task.disease_type {
                    label_degree[h].0 = Some(cols.len());
                } else if side_d && st.to == self.task.compound_type {
                    label_degree[h].1 = Some(cols.len());
                }
            }
            let who = if side_c {
                "degree of compound"
            } else {
                "degree of disease"
            };
            names.push(format!(
                "{who} {}{}{}",
                self.mg.type_abbrev[st.from as usize],
                st.letters,
                self.mg.type_abbrev[st.to as usize]
            ));
            is_metapath.push(false);
            cols.push(col);
        }
        let mut contradiction = Vec::new();
        if params.contradiction {
            let cc = self.contra.columns(self.g, &self.task, &self.li, mask);
            for (name, col) in CONTRADICTION_NAMES.iter().zip(cc) {
                contradiction.push(cols.len());
                names.push((*name).to_string());
                is_metapath.push(false);
                cols.push(col);
            }
        }
        Features {
            names,
            is_metapath,
            contradiction,
            cols,
            metapaths_considered: self.paths.len(),
            label_degree,
        }
    }
}
