//! Predictions on disk: a snapshot file of their own (the graph crate's checksummed section
//! format) under the cache directory, named after the graph's content hash, so the server
//! finds the predictions of exactly the graph it serves:
//! - `predict.info` (JSON [`PredictionInfo`]: graph hash, parameters, metapaths and their
//!   coefficients, timings),
//! - `predict.compounds`, `predict.diseases` (u32 node ids),
//! - `predict.scores`, `predict.disease_pct`, `predict.compound_pct` (f32 per pair),
//! - `predict.top_idx` (u16), `predict.top_val` (f32): the top metapaths of each pair;
//! - `predict.palliates`, `predict.palliates_disease_pct`, `predict.palliates_compound_pct`
//!   (f32 per pair): the second head, present when `info.palliates` is.
//!
//! Reading checks every size and id against the graph, so a stale or crafted file is refused.

use std::path::{Path, PathBuf};

use serenqa_graph::snapshot::{SnapshotReader, SnapshotWriter};
use serenqa_graph::Graph;

use crate::model::{PredictionInfo, Predictions, TOP_METAPATHS};
use crate::task::Task;
use crate::PredictError;

/// Version of what the predictions file holds (model, labels, calibration, layout). It is part
/// of the file name, so a program never serves a file written by a different model version —
/// two builds sharing one cache directory each keep their own file. Bump it whenever the
/// learner, the features, the labels or the sections change.
pub const FORMAT: u32 = 4;

/// Where the predictions of `g` are cached: `predictions-v<FORMAT>-<graph hash>.snap`.
pub fn default_path(g: &Graph) -> PathBuf {
    serenqa_graph::datadir::cache_dir()
        .join(format!("predictions-v{FORMAT}-{}.snap", g.content_hash()))
}

impl Predictions {
    pub fn save(&self, path: &Path) -> Result<(), PredictError> {
        let mut w = SnapshotWriter::new();
        w.add_json("predict.info", &self.info)?;
        w.add_pod("predict.compounds", &self.compounds);
        w.add_pod("predict.diseases", &self.diseases);
        w.add_pod("predict.scores", &self.scores);
        w.add_pod("predict.disease_pct", &self.disease_pct);
        w.add_pod("predict.compound_pct", &self.compound_pct);
        w.add_pod("predict.top_idx", &self.top_idx);
        w.add_pod("predict.top_val", &self.top_val);
        if self.info.palliates.is_some() {
            w.add_pod("predict.palliates", &self.palliates);
            w.add_pod("predict.palliates_disease_pct", &self.palliates_disease_pct);
            w.add_pod(
                "predict.palliates_compound_pct",
                &self.palliates_compound_pct,
            );
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| PredictError::Invalid(format!("{}: {e}", dir.display())))?;
        }
        w.write_to(path)?;
        Ok(())
    }

    /// Loads predictions and checks them against `g`.
    pub fn load(path: &Path, g: &Graph) -> Result<Predictions, PredictError> {
        let mut r = SnapshotReader::open(path)?;
        let info: PredictionInfo = r.read_json("predict.info")?;
        let bad = |m: String| PredictError::Invalid(format!("{}: {m}", path.display()));
        let hash = g.content_hash();
        if info.graph_hash != hash {
            return Err(bad(format!(
                "predictions were computed for graph {}, this graph is {hash}",
                info.graph_hash
            )));
        }
        let compounds: Vec<u32> = r.read_pod("predict.compounds")?;
        let diseases: Vec<u32> = r.read_pod("predict.diseases")?;
        let task = Task::detect(g)?;
        if compounds != task.compounds || diseases != task.diseases {
            return Err(bad(
                "compound or disease list does not match the graph".into()
            ));
        }
        let n = compounds.len() * diseases.len();
        let scores: Vec<f32> = r.read_pod("predict.scores")?;
        let disease_pct: Vec<f32> = r.read_pod("predict.disease_pct")?;
        let compound_pct: Vec<f32> = r.read_pod("predict.compound_pct")?;
        let top_idx: Vec<u16> = r.read_pod("predict.top_idx")?;
        let top_val: Vec<f32> = r.read_pod("predict.top_val")?;
        if scores.len() != n
            || disease_pct.len() != n
            || compound_pct.len() != n
            || top_idx.len() != n * TOP_METAPATHS
            || top_val.len() != n * TOP_METAPATHS
        {
            return Err(bad("section sizes do not match the number of pairs".into()));
        }
        if scores.iter().any(|s| !(0.0..=1.0).contains(s))
            || disease_pct
                .iter()
                .chain(&compound_pct)
                .any(|p| !(0.0..=100.0).contains(p))
        {
            return Err(bad("a score or percentile is out of range".into()));
        }
        if top_idx
            .iter()
            .any(|&i| i != u16::MAX && i as usize >= info.metapaths.len())
            || info.coefficients.len() != info.metapaths.len()
        {
            return Err(bad("a top metapath index is out of range".into()));
        }
        let (palliates, palliates_disease_pct, palliates_compound_pct): (
            Vec<f32>,
            Vec<f32>,
            Vec<f32>,
        ) = if info.palliates.is_some() {
            (
                r.read_pod("predict.palliates")?,
                r.read_pod("predict.palliates_disease_pct")?,
                r.read_pod("predict.palliates_compound_pct")?,
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        if info.palliates.is_some() {
            if palliates.len() != n
                || palliates_disease_pct.len() != n
                || palliates_compound_pct.len() != n
            {
                return Err(bad(
                    "palliation section sizes do not match the number of pairs".into(),
                ));
            }
            if palliates.iter().any(|s| !(0.0..=1.0).contains(s))
                || palliates_disease_pct
                    .iter()
                    .chain(&palliates_compound_pct)
                    .any(|p| !(0.0..=100.0).contains(p))
            {
                return Err(bad(
                    "a palliation score or percentile is out of range".into()
                ));
            }
            if info
                .palliates
                .as_ref()
                .is_some_and(|h| h.coefficients.len() != info.metapaths.len())
            {
                return Err(bad(
                    "the palliation head's coefficients do not match the metapaths".into(),
                ));
            }
        }
        Ok(Predictions {
            info,
            compounds,
            diseases,
            scores,
            disease_pct,
            compound_pct,
            top_idx,
            top_val,
            palliates,
            palliates_disease_pct,
            palliates_compound_pct,
        })
    }
}
