//! The graph together with its precomputed serendipity model (marginals + embeddings), read
//! from one snapshot: the file given with `--graph`, or the cached Hetionet snapshot.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use serenqa_graph::Graph;
use serenqa_model::Model;

use crate::graph_source::{default_snapshot, GraphArgs};

/// Where the snapshot of `args` lives (the default Hetionet snapshot is imported first if it
/// does not exist yet), with the graph when loading it was needed to create the file.
pub fn snapshot_path(args: &GraphArgs, progress: bool) -> Result<(PathBuf, Option<Graph>)> {
    if let Some(p) = &args.graph {
        return Ok((p.clone(), None));
    }
    let (_, snap) = default_snapshot()?;
    if snap.is_file() {
        return Ok((snap, None));
    }
    let g = args.load(progress)?;
    Ok((snap, Some(g)))
}

/// Loads the graph and, when the snapshot holds one, its model.
pub fn load(args: &GraphArgs, progress: bool) -> Result<(Graph, Option<Model>, PathBuf)> {
    let (path, fresh) = snapshot_path(args, progress)?;
    if let Some(g) = fresh {
        return Ok((g, None, path));
    }
    let t = Instant::now();
    match Model::load_with_graph(&path) {
        Ok((g, m)) => {
            if progress {
                eprintln!(
                    "loaded {} in {:.2?}{}",
                    path.display(),
                    t.elapsed(),
                    if m.is_some() { " (with model)" } else { "" }
                );
            }
            Ok((g, m, path))
        }
        // A stale default snapshot: let the graph loader re-import it (model is gone then).
        Err(e) if args.graph.is_none() => {
            eprintln!("warning: {e}");
            Ok((args.load(progress)?, None, path))
        }
        Err(e) => Err(e.into()),
    }
}

/// Loads graph and model, failing with a clear hint when there is no model yet.
pub fn load_required(args: &GraphArgs, progress: bool) -> Result<(Graph, Model)> {
    let (g, m, path) = load(args, progress)?;
    let m = m.ok_or_else(|| {
        anyhow::anyhow!(
            "{} has no precomputed model; run `serenqa precompute` first",
            path.display()
        )
    })?;
    Ok((g, m))
}
