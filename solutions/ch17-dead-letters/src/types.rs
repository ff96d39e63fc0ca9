//! Given: the types the chapter's functions share.

use std::fmt;

/// An event's id: its row id in `outbox`, kept when the row moves to `dead_letters` and back.
pub type OutboxId = i64;

/// A point in time in milliseconds, on the caller's clock. The functions of this chapter take
/// `now` as a parameter and never read a clock themselves, so a test can choose the time.
pub type Millis = i64;

/// Why an event became a dead letter, stored as the text of [`Reason::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The broker refused the event with a permanent error: a poison message. Retrying the same
    /// payload cannot succeed; somebody has to fix the cause first.
    Rejected,
    /// Every attempt the policy allows failed with a transient error.
    Exhausted,
}

impl Reason {
    /// The text stored in `dead_letters.reason`: `"rejected"` or `"exhausted"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Rejected => "rejected",
            Reason::Exhausted => "exhausted",
        }
    }

    /// The reason stored as `text`, if it is one of the two.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "rejected" => Some(Reason::Rejected),
            "exhausted" => Some(Reason::Exhausted),
            _ => None,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The relay's policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    /// At most this many due rows per pass.
    pub batch_size: u32,
    /// A row whose `attempts` reach this number after a transient failure is failed for good.
    pub max_attempts: u32,
    /// The backoff before the first retry may be at most this long (full jitter, chapter 8).
    pub base_ms: Millis,
    /// No backoff is ever longer than this.
    pub cap_ms: Millis,
}

impl Default for RelayConfig {
    /// 100 rows a pass, 5 attempts, backoff from 1 s up to 1 min.
    fn default() -> Self {
        Self {
            batch_size: 100,
            max_attempts: 5,
            base_ms: 1_000,
            cap_ms: 60_000,
        }
    }
}

/// What one relay pass did, row by row, in the order it handled them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayReport {
    /// Rows the broker acknowledged, now `sent`.
    pub sent: Vec<OutboxId>,
    /// Rows that failed transiently and wait for their `next_retry_at`.
    pub retrying: Vec<OutboxId>,
    /// Rows now `failed`, each with the reason to give [`crate::dead_letter`].
    pub failed: Vec<(OutboxId, Reason)>,
}

/// Everything that can go wrong in this chapter's functions.
#[derive(Debug)]
pub enum OutboxError {
    /// The database refused (a constraint, an injected fault, a full disk, …).
    Db(rusqlite::Error),
    /// No row with this id in `table`.
    NotFound { table: &'static str, id: OutboxId },
    /// The row exists but is not `failed`: only failed rows become dead letters.
    NotFailed { id: OutboxId, status: String },
}

impl fmt::Display for OutboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutboxError::Db(error) => write!(f, "database error: {error}"),
            OutboxError::NotFound { table, id } => write!(f, "no row {id} in {table}"),
            OutboxError::NotFailed { id, status } => {
                write!(f, "outbox row {id} is {status}, not failed")
            }
        }
    }
}

impl std::error::Error for OutboxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OutboxError::Db(error) => Some(error),
            _ => None,
        }
    }
}

impl From<rusqlite::Error> for OutboxError {
    fn from(error: rusqlite::Error) -> Self {
        OutboxError::Db(error)
    }
}

/// The result of this chapter's functions.
pub type Result<T, E = OutboxError> = std::result::Result<T, E>;
