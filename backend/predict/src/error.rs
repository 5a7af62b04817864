//! The crate's error.

#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    #[error("{0}")]
    Task(String),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Graph(#[from] serenqa_graph::GraphError),
}
