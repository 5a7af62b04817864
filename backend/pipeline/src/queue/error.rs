//! [`QueueError`]: what failed in a queue operation. Each variant's message is the one-line
//! text the CLI prints (`serenqa eval --queue`, `serenqa worker`, `serenqa queue`); none
//! carries a `source`, so `anyhow` shows exactly that line.

/// A failed queue operation. Display is the user-visible one-line message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// The queue URL does not parse (`redis://…` / `redis+cluster://…`).
    #[error("{0}")]
    Url(String),
    /// The server is unreachable, refused the connection, timed out or dropped it (the next
    /// command reconnects).
    #[error("{0}")]
    Connect(String),
    /// A command was rejected by the server; `code` is Redis's error code (`BUSYGROUP`, …).
    #[error("{message}")]
    Command {
        message: String,
        code: Option<String>,
    },
    /// A Lua script (`ENQUEUE`, `COMPLETE`, `KEEPALIVE`) failed on the server.
    #[error("{message}")]
    Script {
        message: String,
        code: Option<String>,
    },
    /// A reply of an unexpected shape (the server is not Redis, or another version).
    #[error("{0}")]
    Protocol(String),
    /// The run's spec in Redis does not parse (another serenqa version, or not a coordinator).
    #[error("run {run_id}: unreadable spec in Redis ({detail}): written by another serenqa version, or not by a coordinator")]
    UnreadableSpec { run_id: String, detail: String },
    /// A run of the same id with another configuration is already in Redis.
    #[error("run {run_id} is already in Redis with another configuration (graph, benchmark, models or settings differ); choose another --run, or delete its keys ({pattern})")]
    SpecConflict { run_id: String, pattern: String },
    /// A result announced on `done` is not in `results`.
    #[error("run {run_id}: result of {key} announced but missing in Redis (were the run's keys deleted?)")]
    MissingResult { run_id: String, key: String },
    /// A work item key that names no trace kind.
    #[error("bad work item key {0:?} in Redis")]
    BadKey(String),
    /// The result stored under a key is the record of another item.
    #[error("run {run_id}: the result stored for {key} is the record of another item")]
    ForeignRecord { run_id: String, key: String },
    /// The result stored under a key is not a trace record.
    #[error("run {run_id}: the result stored for {key} is not a trace record ({detail}); do the workers run the same serenqa version?")]
    NotARecord {
        run_id: String,
        key: String,
        detail: String,
    },
    /// Entries this worker was running were taken over by other workers (their lease, the
    /// entry's idle time, ran out); the first stored result wins.
    #[error("run {run_id}: {count} entries were taken over by other workers while running here (their first result wins)")]
    LostLease { run_id: String, count: usize },
    /// A local file (benchmark file, trace) could not be read or written.
    #[error("reading {path}: {detail}")]
    Io { path: String, detail: String },
    /// The run machinery shared with local runs failed (plan, traces, aggregates).
    #[error("{0}")]
    Run(String),
    /// A blocking task (benchmark loading, context building) panicked or was cancelled.
    #[error("{what}: {detail}")]
    Task { what: &'static str, detail: String },
    /// A local `redis-server` for tests and benchmarks did not start.
    #[error("{0}")]
    LocalServer(String),
}

impl QueueError {
    /// Redis's error code, for a command or script the server rejected.
    pub fn code(&self) -> Option<&str> {
        match self {
            QueueError::Command { code, .. } | QueueError::Script { code, .. } => code.as_deref(),
            _ => None,
        }
    }
}

/// `Result` of the queue.
pub type QueueResult<T> = Result<T, QueueError>;
