//! Helpers shared by the benchmark integration tests.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serenqa_graph::filter::{self, FilterSpec};
use serenqa_graph::load::{hetionet, LoadOptions};
use serenqa_graph::{datadir, Graph};

/// `../shared/data` beside the workspace root (read in place, never copied), or `$SERENQA_DATA`.
pub fn shared_data() -> Option<PathBuf> {
    serenqa_graph::datadir::data_dir_above(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// The Hetionet graph as the CLI loads it (default filter), through the same cached
/// snapshot the CLI writes, so a test run after `serenqa stats` loads in a second.
pub fn hetionet() -> &'static Graph {
    static G: OnceLock<Graph> = OnceLock::new();
    G.get_or_init(|| {
        let data = shared_data().expect("Hetionet data (../shared/data/hetionet or $SERENQA_DATA)");
        let files =
            hetionet::HetionetFiles::in_dir(&data.join("hetionet")).expect("Hetionet files");
        let snap = files.snapshot_path();
        if let Ok(g) = Graph::load(&snap) {
            return g;
        }
        let g = hetionet::load(&files, &LoadOptions { progress: false }).expect("load Hetionet");
        let (g, _) = filter::apply(g, &FilterSpec::default());
        let _ = std::fs::create_dir_all(datadir::cache_dir());
        let _ = g.save(&snap);
        g
    })
}
