//! The shared data directory of tests (Hetionet and the other downloads).

use std::path::{Path, PathBuf};

use serenqa_graph::filter::{self, FilterSpec};
use serenqa_graph::load::{hetionet, LoadOptions};
use serenqa_graph::{datadir, Graph};

/// `$SERENQA_DATA`, else the first `../shared/data` with a `hetionet` folder above this crate
/// (from `/work/wt-*` too, whose `../shared/data` is the shared one).
pub fn shared_data() -> Option<PathBuf> {
    datadir::data_dir_above(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// [`shared_data`], or None after saying `SKIPPED: <what>` (a failure under `CI`).
pub fn require_data(what: &str) -> Option<PathBuf> {
    let d = shared_data();
    if d.is_none() {
        datadir::missing_resource(what);
    }
    d
}

/// What a test says when it skips (or, under `CI`, fails) for want of Hetionet.
pub const NO_HETIONET: &str = "no Hetionet data (../shared/data or $SERENQA_DATA)";

/// [`shared_data`], or None after saying [`NO_HETIONET`] (a failure under `CI`).
pub fn hetionet_data() -> Option<PathBuf> {
    require_data(NO_HETIONET)
}

/// Hetionet under `data` as the CLI loads it (default filter), through the CLI's cached
/// snapshot when present.
pub fn hetionet_graph(data: &Path) -> Graph {
    let files = hetionet::HetionetFiles::in_dir(&data.join("hetionet")).expect("Hetionet files");
    let snap = files.snapshot_path();
    if let Ok(g) = Graph::load(&snap) {
        return g;
    }
    let g = hetionet::load(&files, &LoadOptions { progress: false }).expect("load Hetionet");
    filter::apply(g, &FilterSpec::default()).0
}
