//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// `../shared/data` beside the workspace root (read-only input, never copied into the repo),
/// or `$SERENQA_DATA`.
pub fn shared_data() -> Option<PathBuf> {
    serenqa_graph::datadir::data_dir_above(Path::new(env!("CARGO_MANIFEST_DIR")))
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write fixture");
    p
}

pub fn write_gz(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    let f = std::fs::File::create(&p).expect("create fixture");
    let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::default());
    enc.write_all(text.as_bytes()).expect("gzip fixture");
    enc.finish().expect("finish gzip");
    p
}

pub const NODES: &str = "id\tname\tkind
Compound::DB00001\tLepirudin\tCompound
Compound::DB00002\tCetuximab\tCompound
Disease::DOID:1612\tbreast cancer\tDisease
Disease::DOID:9352\ttype 2 diabetes mellitus\tDisease
Gene::1017\tCDK2\tGene
Gene::5743\tPTGS2\tGene
";

pub const EDGES: &str = "source\tmetaedge\ttarget
Compound::DB00002\tCtD\tDisease::DOID:1612
Compound::DB00001\tCbG\tGene::1017
Compound::DB00002\tCbG\tGene::1017
Compound::DB00002\tCbG\tGene::5743
Disease::DOID:1612\tDaG\tGene::1017
Gene::1017\tGr>G\tGene::5743
Gene::1017\tGiG\tGene::5743
Compound::DB00001\tCrC\tCompound::DB00002
";
