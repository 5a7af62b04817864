//! The shared data directory of tests (Hetionet and the other downloads).

use std::path::{Path, PathBuf};

/// `$SERENQA_DATA`, else the first `../shared/data` with a `hetionet` folder above this crate
/// (from `/work/wt-*` too, whose `../shared/data` is the shared one).
pub fn shared_data() -> Option<PathBuf> {
    serenqa_graph::datadir::data_dir_above(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// [`shared_data`], or None after saying `SKIPPED: <what>` (a failure under `CI`).
pub fn require_data(what: &str) -> Option<PathBuf> {
    let d = shared_data();
    if d.is_none() {
        serenqa_graph::datadir::missing_resource(what);
    }
    d
}
