//! The one error type of the crate: a kind (what went wrong, for callers and the TCK's error
//! classes), an optional openCypher detail code, and a one-line message.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The parser rejected the text; 1-based line and column of the first problem.
    Syntax { line: usize, col: usize },
    /// Parsed, but meaningless: unknown variable, type conflict, misplaced aggregate…
    Semantic,
    /// A writing clause (CREATE, MERGE, SET, DELETE…).
    ReadOnly,
    /// The time or row budget ran out.
    Budget,
    /// Failed while running: wrong argument type, bad value…
    Runtime,
    /// Valid Cypher that this executor does not implement.
    Unsupported,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CypherError {
    pub kind: ErrorKind,
    /// openCypher TCK detail code (`UndefinedVariable`, `InvalidArgumentType`…) when known.
    pub code: Option<&'static str>,
    pub message: String,
}

impl CypherError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CypherError {
            kind,
            code: None,
            message: one_line(message.into()),
        }
    }
    pub fn semantic(code: &'static str, message: impl Into<String>) -> Self {
        CypherError {
            kind: ErrorKind::Semantic,
            code: Some(code),
            message: one_line(message.into()),
        }
    }
    pub fn runtime(code: &'static str, message: impl Into<String>) -> Self {
        CypherError {
            kind: ErrorKind::Runtime,
            code: Some(code),
            message: one_line(message.into()),
        }
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }
    pub fn read_only(clause: &str) -> Self {
        Self::new(
            ErrorKind::ReadOnly,
            format!("read-only: {clause} is not supported"),
        )
    }
}

fn one_line(s: String) -> String {
    if s.contains('\n') {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        s
    }
}

impl fmt::Display for CypherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Syntax { line, col } => {
                write!(f, "syntax error at {line}:{col}: {}", self.message)
            }
            ErrorKind::Semantic => write!(f, "semantic error: {}", self.message),
            ErrorKind::ReadOnly => f.write_str(&self.message),
            ErrorKind::Budget => write!(f, "budget exceeded: {}", self.message),
            ErrorKind::Runtime => write!(f, "runtime error: {}", self.message),
            ErrorKind::Unsupported => write!(f, "unsupported: {}", self.message),
        }
    }
}

impl std::error::Error for CypherError {}

pub type Result<T, E = CypherError> = std::result::Result<T, E>;
