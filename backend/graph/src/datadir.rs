//! Where data and caches live.
//!
//! Data (read-only inputs): `$SERENQA_DATA`, then `./data/`, then `../shared/data/` — the first
//! that exists. The project never commits these files. Caches (snapshots): `$SERENQA_CACHE`,
//! else `$XDG_CACHE_HOME/serenqa`, else `~/.cache/serenqa`.

use std::path::{Path, PathBuf};

/// Whether this process runs under CI (`$CI` set to anything but empty, `0` or `false`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// For tests whose resource (data, Redis, the TCK) is missing. Under CI this panics with
/// `what`, so the test fails instead of passing without having run; elsewhere it prints a
/// loud `SKIPPED: what` line on the real stderr and the caller returns.
pub fn missing_resource(what: &str) {
    if in_ci() {
        panic!("{what}, and CI is set: this test must run in CI (scripts/test.sh starts or finds what it needs)");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}

/// The candidate data directories, in the order they are tried.
pub fn candidates() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(d) = std::env::var_os("SERENQA_DATA").filter(|d| !d.is_empty()) {
        v.push(PathBuf::from(d));
    }
    v.push(PathBuf::from("data"));
    v.push(PathBuf::from("../shared/data"));
    v
}

/// The first candidate data directory that exists.
pub fn find_data_dir() -> Option<PathBuf> {
    candidates().into_iter().find(|d| d.is_dir())
}

/// The first `<data>/<sub>` directory that exists, e.g. `hetionet`.
pub fn find_dataset(sub: &str) -> Option<PathBuf> {
    candidates()
        .into_iter()
        .map(|d| d.join(sub))
        .find(|d| d.is_dir())
}

/// The data directory as tests see it: `$SERENQA_DATA`, else the nearest `../shared/data`
/// (holding `hetionet/`) above `start` — a crate's `CARGO_MANIFEST_DIR`, so a test finds the
/// shared data whatever its working directory.
pub fn data_dir_above(start: &Path) -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SERENQA_DATA").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let mut dir = start.to_path_buf();
    loop {
        let cand = dir.join("../shared/data");
        if cand.join("hetionet").is_dir() {
            return Some(cand);
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// A one-paragraph explanation of where data is looked for, for "not found" errors.
pub fn where_to_put(sub: &str) -> String {
    let tried: Vec<String> = candidates()
        .iter()
        .map(|d| d.join(sub).display().to_string())
        .collect();
    format!(
        "no {sub} data found (looked in {}). Put the files there or set SERENQA_DATA to a directory containing {sub}/; `serenqa data fetch` downloads them when this machine is online",
        tried.join(", ")
    )
}

pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SERENQA_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("serenqa");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("serenqa"),
        None => PathBuf::from(".serenqa-cache"),
    }
}

/// A fingerprint of input files (path, size, modification time) to key cached snapshots.
pub fn fingerprint(files: &[&Path]) -> u64 {
    let mut s = String::new();
    for f in files {
        let abs = std::fs::canonicalize(f).unwrap_or_else(|_| f.to_path_buf());
        let (len, mtime) = std::fs::metadata(f)
            .map(|m| {
                (
                    m.len(),
                    m.modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_secs())
                        .unwrap_or(0),
                )
            })
            .unwrap_or((0, 0));
        s.push_str(&format!("{}|{len}|{mtime};", abs.display()));
    }
    s.push_str(&format!("format{}", crate::snapshot::FORMAT_VERSION));
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}
