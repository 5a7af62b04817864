//! One error type for everything that reads or builds a graph. Every variant renders as one
//! line that names the file (and line) at fault, so the CLI can print it as is.

use std::path::PathBuf;

pub type Result<T, E = GraphError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A problem at a known line of an input file (1-based line number).
    #[error("{}:{line}: {msg}", path.display())]
    Line {
        path: PathBuf,
        line: u64,
        msg: String,
    },
    /// A problem with a whole file (cannot open, truncated, bad header, checksum…).
    #[error("{}: {msg}", path.display())]
    File { path: PathBuf, msg: String },
    /// Anything else: invalid options, inconsistent input sets.
    #[error("{0}")]
    Invalid(String),
}

impl GraphError {
    pub fn line(path: impl Into<PathBuf>, line: u64, msg: impl Into<String>) -> Self {
        GraphError::Line {
            path: path.into(),
            line,
            msg: msg.into(),
        }
    }
    pub fn file(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        GraphError::File {
            path: path.into(),
            msg: msg.into(),
        }
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        GraphError::Invalid(msg.into())
    }
}
