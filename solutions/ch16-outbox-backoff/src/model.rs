//! Given: the types of this chapter. An outbox row, its status, the retry configuration, the
//! ways a publish can fail, and what `record_failure` decided.

use std::fmt;
use std::time::Duration;

use rusqlite::Row;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

/// A moment in time: milliseconds since the Unix epoch, as stored in the table.
///
/// The logic never reads a clock: the relay passes `now` in, so a test can say exactly when
/// "now" is.
pub type Millis = i64;

/// The event type of the events in this chapter's examples.
pub const ORDER_PLACED: &str = "OrderPlaced";

/// The longest `last_error` the table keeps, in bytes of UTF-8.
pub const LAST_ERROR_MAX_BYTES: usize = 200;

/// Where a row is in its life. Stored as the text `'pending'`, `'sent'` or `'failed'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not published yet: the relay will try it when it is due.
    Pending,
    /// Published and acknowledged by the broker.
    Sent,
    /// Given up on: a permanent failure, or every attempt used. Dead letters (chapter 17).
    Failed,
}

impl Status {
    /// The text stored in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Sent => "sent",
            Status::Failed => "failed",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for Status {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for Status {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "pending" => Ok(Status::Pending),
            "sent" => Ok(Status::Sent),
            "failed" => Ok(Status::Failed),
            other => Err(FromSqlError::Other(
                format!("unknown outbox status {other:?}").into(),
            )),
        }
    }
}

/// One row of the `outbox` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    /// The order the event is about.
    pub aggregate_id: i64,
    pub event_type: String,
    pub payload: String,
    pub status: Status,
    pub created_at: Millis,
    pub sent_at: Option<Millis>,
    /// How many publish attempts have failed so far: 0 for a new row, 1 after the first failure.
    pub attempts: u32,
    /// The earliest moment of the next attempt; `None` for a row never tried (due at once).
    pub next_retry_at: Option<Millis>,
    /// When the last failed attempt happened.
    pub last_attempt_at: Option<Millis>,
    /// Why the last attempt failed, cut to [`LAST_ERROR_MAX_BYTES`].
    pub last_error: Option<String>,
}

impl OutboxRow {
    /// Reads a row selected with all of the table's columns (`SELECT *` or every column by
    /// name, in any order): the columns are found by name.
    pub fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get("id")?,
            aggregate_id: row.get("aggregate_id")?,
            event_type: row.get("event_type")?,
            payload: row.get("payload")?,
            status: row.get("status")?,
            created_at: row.get("created_at")?,
            sent_at: row.get("sent_at")?,
            attempts: row.get("attempts")?,
            next_retry_at: row.get("next_retry_at")?,
            last_attempt_at: row.get("last_attempt_at")?,
            last_error: row.get("last_error")?,
        })
    }
}

/// How the relay retries a row that failed to publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffConfig {
    /// The backoff ceiling after the first failure.
    pub base: Duration,
    /// No backoff delay is ever longer than this.
    pub cap: Duration,
    /// A server's Retry-After is followed, but never beyond this.
    pub max_hint: Duration,
    /// The failure that brings `attempts` to this number marks the row failed: at most
    /// `max_attempts` publish attempts in all.
    pub max_attempts: u32,
}

impl Default for BackoffConfig {
    /// One second, doubling up to a minute; Retry-After followed up to ten minutes; ten attempts.
    fn default() -> Self {
        Self {
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
            max_hint: Duration::from_secs(600),
            max_attempts: 10,
        }
    }
}

/// Why a publish attempt failed, as the relay classifies the broker's answer (chapter 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// 429 Too Many Requests, with the server's Retry-After if it sent one.
    RateLimited { retry_after: Option<Duration> },
    /// 503 Service Unavailable, with the server's Retry-After if it sent one.
    Overloaded { retry_after: Option<Duration> },
    /// A failure that waiting may fix: a reset connection, a timeout, an unreachable broker.
    Transient(String),
    /// A failure that waiting cannot fix: an invalid payload, an unknown topic.
    Permanent(String),
}

impl fmt::Display for Failure {
    /// The text `record_failure` stores (cut short) in `last_error`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (status, retry_after) = match self {
            Failure::RateLimited { retry_after } => ("429 Too Many Requests", retry_after),
            Failure::Overloaded { retry_after } => ("503 Service Unavailable", retry_after),
            Failure::Transient(message) => return write!(f, "transient: {message}"),
            Failure::Permanent(message) => return write!(f, "permanent: {message}"),
        };
        match retry_after {
            Some(hint) => write!(f, "{status} (Retry-After: {hint:?})"),
            None => f.write_str(status),
        }
    }
}

/// Why `record_failure` gave up on a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// The failure was permanent: no attempt would ever succeed.
    Permanent,
    /// The row failed `max_attempts` times.
    AttemptsExhausted,
}

/// What `record_failure` decided, and wrote to the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Still pending; the relay may try again from this moment on (`next_retry_at`).
    RetryAt(Millis),
    /// Marked failed, with no next attempt (`next_retry_at` is NULL).
    Failed(GiveUp),
}
