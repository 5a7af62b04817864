//! The model's snapshot sections, stored next to the graph's `graph.*` sections so one file
//! holds the graph and its precomputed model:
//! - `model.params` (JSON [`ModelParams`]: how it was computed, convergence, sizes),
//! - `model.marginals` (|V| f64),
//! - `model.embeddings` (|V| × d f32, row-major).
//!
//! The two arrays are read with [`SnapshotReader::read_section`], so they point into the
//! snapshot's memory map (shared between processes) rather than being copied.
//!
//! Reading checks that the sizes match the graph in the same file and that the marginals are
//! positive and sum to 1, so a stale or crafted model cannot be used with the wrong graph.

use std::path::Path;

use serenqa_graph::snapshot::{SnapshotReader, SnapshotWriter};
use serenqa_graph::{Graph, Section};

use crate::embeddings::Embeddings;
use crate::{Model, ModelError, ModelParams};

impl Model {
    /// Adds the `model.*` sections to a snapshot being written.
    pub fn write_sections<'a>(&'a self, w: &mut SnapshotWriter<'a>) -> Result<(), ModelError> {
        w.add_json("model.params", &self.params)?;
        w.add_pod("model.marginals", &self.marginals);
        w.add_pod("model.embeddings", &self.embeddings.data);
        Ok(())
    }

    /// Whether a snapshot holds a model.
    pub fn present(r: &SnapshotReader) -> bool {
        r.has("model.params")
    }

    /// Reads the `model.*` sections and checks them against the graph read from the same file.
    pub fn read_sections(r: &mut SnapshotReader, g: &Graph) -> Result<Model, ModelError> {
        let params: ModelParams = r.read_json("model.params")?;
        let path = r.path().to_path_buf();
        let bad = |m: String| {
            ModelError::Invalid(format!(
                "{}: model does not fit the graph: {m}",
                path.display()
            ))
        };
        if params.nodes != g.node_count() as u64 || params.edges != g.edge_count() as u64 {
            return Err(bad(format!(
                "model was computed for {} nodes / {} edges, graph has {} / {}",
                params.nodes,
                params.edges,
                g.node_count(),
                g.edge_count()
            )));
        }
        let marginals: Section<f64> = r.read_section("model.marginals")?;
        if marginals.len() != g.node_count() {
            return Err(bad(format!(
                "{} marginals for {} nodes",
                marginals.len(),
                g.node_count()
            )));
        }
        let sum: f64 = marginals.iter().sum();
        if marginals.iter().any(|p| !(p.is_finite() && *p > 0.0)) || (sum - 1.0).abs() > 1e-6 {
            return Err(bad(format!(
                "marginals are not a positive distribution (sum {sum})"
            )));
        }
        let data: Section<f32> = r.read_section("model.embeddings")?;
        let d = params.embedding.dim;
        if d == 0 || data.len() != g.node_count() * d {
            return Err(bad(format!(
                "{} embedding values for {} nodes × {d}",
                data.len(),
                g.node_count()
            )));
        }
        let embeddings = Embeddings {
            info: params.embedding.clone(),
            data,
        };
        Ok(Model {
            params,
            marginals,
            embeddings,
        })
    }

    /// Writes graph and model into one snapshot (atomically, via the graph crate's writer).
    pub fn save_with_graph(&self, g: &Graph, path: &Path) -> Result<(), ModelError> {
        let mut w = SnapshotWriter::new();
        g.write_sections(&mut w)?;
        self.write_sections(&mut w)?;
        w.write_to(path)?;
        Ok(())
    }

    /// Loads a snapshot: the graph, and the model when the file has one.
    pub fn load_with_graph(path: &Path) -> Result<(Graph, Option<Model>), ModelError> {
        let mut r = SnapshotReader::open(path)?;
        let g = Graph::read_sections(&mut r)?;
        let m = if Model::present(&r) {
            Some(Model::read_sections(&mut r, &g)?)
        } else {
            None
        };
        Ok((g, m))
    }
}
