//! Which graph a command works on: an explicit snapshot, or the default Hetionet graph found
//! through the data directories and cached as a snapshot after the first import.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use serenqa_graph::datadir;
use serenqa_graph::filter::{self, FilterSpec};
use serenqa_graph::load::{hetionet, LoadOptions};
use serenqa_graph::Graph;

#[derive(Args, Clone, Debug, Default)]
pub struct GraphArgs {
    /// A snapshot written by `serenqa import` or `serenqa synth`. Default: the Hetionet graph
    /// from the data directory, cached as a snapshot after its first import.
    #[arg(long, value_name = "FILE")]
    pub graph: Option<PathBuf>,
}

/// The default Hetionet snapshot path for the Hetionet files found in the data directories.
pub fn default_snapshot() -> Result<(hetionet::HetionetFiles, PathBuf)> {
    let dir = datadir::find_dataset("hetionet")
        .ok_or_else(|| anyhow::anyhow!(datadir::where_to_put("hetionet")))?;
    let files = hetionet::HetionetFiles::in_dir(&dir)?;
    let snap = files.snapshot_path();
    Ok((files, snap))
}

/// Imports Hetionet from its files, applies the default filter and writes the snapshot.
pub fn import_hetionet(
    files: &hetionet::HetionetFiles,
    out: &Path,
    progress: bool,
) -> Result<Graph> {
    let g = hetionet::load(files, &LoadOptions { progress })?;
    let (g, _report) = filter::apply(g, &FilterSpec::default());
    g.save(out)
        .with_context(|| format!("writing snapshot {}", out.display()))?;
    Ok(g)
}

impl GraphArgs {
    /// Loads the chosen graph; says on stderr where it came from and how long it took.
    pub fn load(&self, progress: bool) -> Result<Graph> {
        let t = Instant::now();
        if let Some(path) = &self.graph {
            let g = Graph::load(path)?;
            if progress {
                eprintln!("loaded {} in {:.2?}", path.display(), t.elapsed());
            }
            return Ok(g);
        }
        let (files, snap) = default_snapshot()?;
        if snap.is_file() {
            match Graph::load(&snap) {
                Ok(g) => {
                    if progress {
                        eprintln!(
                            "loaded cached snapshot {} in {:.2?}",
                            snap.display(),
                            t.elapsed()
                        );
                    }
                    return Ok(g);
                }
                Err(e) => eprintln!("warning: ignoring cached snapshot ({e}); re-importing"),
            }
        }
        if progress {
            eprintln!(
                "importing Hetionet from {} (first run; cached afterwards)",
                files.nodes.parent().unwrap_or(Path::new(".")).display()
            );
        }
        let g = import_hetionet(&files, &snap, progress)?;
        if progress {
            eprintln!(
                "imported in {:.2?}; snapshot {}",
                t.elapsed(),
                snap.display()
            );
        }
        Ok(g)
    }
}
