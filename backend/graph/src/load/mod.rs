//! Loaders: turn files (or a live Neo4j) into a [`Graph`](crate::Graph).
//!
//! Every loader streams its input (gzip detected by magic bytes, not by file name), shows a
//! progress bar over the bytes read, reports errors as `file:line: message`, and builds the
//! graph only after the whole input was read: an error never leaves a half-loaded graph.

#[cfg(feature = "neo4j")]
pub mod bolt;
pub mod disease_ontology;
pub mod hetionet;
pub mod neo4j_csv;
pub mod table;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::error::{GraphError, Result};
use crate::progress::{bytes_bar, CountingReader};

/// Options shared by all loaders.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Show progress bars on stderr.
    pub progress: bool,
}

/// Opens a file for streaming, decompressing gzip when the file starts with its magic bytes.
/// Returns the reader and a progress bar over the file's bytes on disk.
pub fn open_input(
    path: &Path,
    what: &str,
    opts: &LoadOptions,
) -> Result<(Box<dyn BufRead + Send>, indicatif::ProgressBar)> {
    let mut file =
        File::open(path).map_err(|e| GraphError::file(path, format!("cannot open: {e}")))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut magic = [0u8; 2];
    let n = file
        .read(&mut magic)
        .map_err(|e| GraphError::file(path, e.to_string()))?;
    let gz = n == 2 && magic == [0x1f, 0x8b];
    let file = File::open(path).map_err(|e| GraphError::file(path, format!("cannot open: {e}")))?;
    let bar = bytes_bar(len, what, opts.progress);
    let counted = CountingReader::new(file, bar.clone());
    let reader: Box<dyn BufRead + Send> = if gz {
        Box::new(BufReader::with_capacity(
            1 << 20,
            MultiGzDecoder::new(BufReader::with_capacity(1 << 20, counted)),
        ))
    } else {
        Box::new(BufReader::with_capacity(1 << 20, counted))
    };
    Ok((reader, bar))
}

/// Iterates the lines of a text input with 1-based line numbers, turning I/O errors (such as
/// a truncated gzip stream) into line-numbered errors. Strips `\r\n` / `\n`.
pub struct Lines {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    buf: String,
    line: u64,
}

impl Lines {
    pub fn new(path: &Path, reader: Box<dyn BufRead + Send>) -> Self {
        Lines {
            path: path.to_path_buf(),
            reader,
            buf: String::new(),
            line: 0,
        }
    }

    /// The next line, or `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>> {
        self.buf.clear();
        self.line += 1;
        match self.reader.read_line(&mut self.buf) {
            Ok(0) => Ok(None),
            Ok(_) => {
                let s = self.buf.trim_end_matches(['\n', '\r']);
                Ok(Some((self.line, s)))
            }
            Err(e) => Err(GraphError::line(
                &self.path,
                self.line,
                read_error_message(&e),
            )),
        }
    }
}

pub(crate) fn read_error_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            "unexpected end of file (truncated gzip stream?)".to_string()
        }
        std::io::ErrorKind::InvalidData => {
            format!("invalid data: {e} (not UTF-8 text, or a corrupt gzip stream)")
        }
        _ => format!("read error: {e}"),
    }
}

/// `Biological Process` → `BiologicalProcess`: a node type label usable unquoted in Cypher.
pub fn label_of(display: &str) -> String {
    display.split_whitespace().collect()
}
