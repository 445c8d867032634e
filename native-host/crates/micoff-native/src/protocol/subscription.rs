//! `subscribe` (its topics) and `unsubscribe`, and the result both answer with.

use serde::{Deserialize, Serialize};

/// What a `subscribe` asks for, tagged by `topic` on the wire (decoded like
/// [`super::RequestBody`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "topic", rename_all = "snake_case")]
pub enum Topic {
    Cpu {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pids: Option<Vec<u32>>,
    },
    Audio,
    /// The audio path's CPU history ([`crate::history`]): while one is open the host samples every
    /// `interval_ms` and sends each sample.
    History {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval_ms: Option<u64>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionResult {
    pub subscription: u64,
}
