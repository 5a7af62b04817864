//! Records of the annotation store: the shared API types plus the store-only ones.

use serde::{Deserialize, Serialize};

pub use serenqa_shared::annotate::*;
pub use serenqa_shared::api::{ShortlistEntity, ShortlistItem, ShortlistScores};

#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub user: User,
    /// The CSRF token every state-changing request of this session must echo.
    pub csrf: String,
    pub expires_at: i64,
}

/// An evaluation run as the leaderboard reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub imported_at: i64,
    pub manifest: serde_json::Value,
    pub aggregate: serde_json::Value,
}

/// Fitted RNS weights with where they came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRecord {
    pub id: i64,
    pub created_at: i64,
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub agreement: f64,
    pub questions: i64,
    /// Distinct annotators behind the questions (0 for calibrations stored before this was
    /// recorded: they cannot be put in force again).
    #[serde(default)]
    pub annotators: i64,
    pub provenance: serde_json::Value,
}
