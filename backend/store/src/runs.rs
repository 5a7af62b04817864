//! Importer of evaluation runs for the leaderboard: every `<dir>/<id>/manifest.json` with its
//! `aggregate.json` (written by the pipeline) becomes one row of the results table, keyed by
//! the directory name. Re-importing replaces the row. The JSON is stored as written; the
//! leaderboard interprets it.

use std::path::Path;

use crate::repo::Repo;
use crate::types::RunRecord;

/// Imports every run directory under `dir`; returns the ids imported. Directories without
/// both files are skipped and reported in the error list.
pub fn import_runs(repo: &dyn Repo, dir: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    let mut ids = Vec::new();
    let mut skipped = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(std::result::Result::ok)
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        let id = e.file_name().to_string_lossy().to_string();
        let read = |name: &str| -> Result<serde_json::Value, String> {
            let f = p.join(name);
            let t = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            serde_json::from_str(&t).map_err(|e| format!("{}: {e}", f.display()))
        };
        match (read("manifest.json"), read("aggregate.json")) {
            (Ok(manifest), Ok(aggregate)) => {
                repo.put_run(&RunRecord {
                    id: id.clone(),
                    imported_at: crate::now(),
                    manifest,
                    aggregate,
                })
                .map_err(|e| e.to_string())?;
                ids.push(id);
            }
            (Err(m), _) | (_, Err(m)) => skipped.push(m),
        }
    }
    Ok((ids, skipped))
}
