//! Given: the types of this chapter. A moment in time, an outbox row and its status.

use std::fmt;

/// A moment in time: milliseconds since the Unix epoch, as stored in the table.
///
/// No function of this chapter reads a clock: every worker passes `now` in, so a test (or a
/// simulation of four workers) decides exactly what time it is.
pub type Millis = i64;

/// The event type of the events in this chapter's examples.
pub const ORDER_PLACED: &str = "OrderPlaced";

/// Where a row is in its life. Stored as the text `'pending'`, `'sent'` or `'failed'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not published yet: a worker will claim it when it is due.
    Pending,
    /// Published and acknowledged by the broker.
    Sent,
    /// Given up on (chapter 17's dead letters).
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

    /// The status stored as `text`, or `None` for a text no status has.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Status::Pending),
            "sent" => Some(Status::Sent),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the `outbox` table, the same in SQLite and in PostgreSQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    /// The order the event is about.
    pub aggregate_id: i64,
    pub event_type: String,
    pub payload: String,
    pub status: Status,
    pub created_at: Millis,
    /// When the broker acknowledged the event; `None` until then.
    pub sent_at: Option<Millis>,
    /// How many publish attempts have failed so far (chapter 16).
    pub attempts: u32,
    /// The earliest moment of the next attempt; `None` for a row never tried (due at once).
    pub next_retry_at: Option<Millis>,
    /// When the last failed attempt happened.
    pub last_attempt_at: Option<Millis>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// The worker that holds the row's lease, if any.
    pub locked_by: Option<String>,
    /// When that lease ends. From this moment on (`locked_until <= now`) the lease is expired and
    /// any worker may claim the row again.
    pub locked_until: Option<Millis>,
}

impl OutboxRow {
    /// The order in which due rows are claimed and published: by when they became due
    /// (`next_retry_at`, or `created_at` for a row never tried), then by age, then by id.
    ///
    /// It is the key of the claim's `ORDER BY COALESCE(next_retry_at, created_at), created_at,
    /// id`. `RETURNING` hands rows back in no particular order, so sort the claimed rows with
    /// `rows.sort_by_key(OutboxRow::due_order)`.
    pub fn due_order(&self) -> (Millis, Millis, i64) {
        (
            self.next_retry_at.unwrap_or(self.created_at),
            self.created_at,
            self.id,
        )
    }

    /// True when `worker` holds a lease on this row that is still valid at `now`.
    pub fn leased_to(&self, worker: &str, now: Millis) -> bool {
        self.locked_by.as_deref() == Some(worker) && self.locked_until.is_some_and(|end| end > now)
    }

    /// Reads a SQLite row selected with all of the table's columns (`SELECT *` or `RETURNING *`):
    /// the columns are found by name.
    pub fn from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        let status: String = row.get("status")?;
        let status = Status::parse(&status).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Text,
                format!("unknown outbox status {status:?}").into(),
            )
        })?;
        Ok(Self {
            id: row.get("id")?,
            aggregate_id: row.get("aggregate_id")?,
            event_type: row.get("event_type")?,
            payload: row.get("payload")?,
            status,
            created_at: row.get("created_at")?,
            sent_at: row.get("sent_at")?,
            attempts: row.get("attempts")?,
            next_retry_at: row.get("next_retry_at")?,
            last_attempt_at: row.get("last_attempt_at")?,
            last_error: row.get("last_error")?,
            locked_by: row.get("locked_by")?,
            locked_until: row.get("locked_until")?,
        })
    }

    /// Reads a PostgreSQL row selected with all of the table's columns (`SELECT *` or
    /// `RETURNING outbox.*`): the columns are found by name.
    pub fn from_postgres(row: &postgres::Row) -> Result<Self, crate::StoreError> {
        let status: String = row.try_get("status")?;
        let status = Status::parse(&status).ok_or_else(|| {
            crate::StoreError::Corrupt(format!("unknown outbox status {status:?}"))
        })?;
        let attempts: i32 = row.try_get("attempts")?;
        Ok(Self {
            id: row.try_get("id")?,
            aggregate_id: row.try_get("aggregate_id")?,
            event_type: row.try_get("event_type")?,
            payload: row.try_get("payload")?,
            status,
            created_at: row.try_get("created_at")?,
            sent_at: row.try_get("sent_at")?,
            attempts: u32::try_from(attempts)
                .map_err(|_| crate::StoreError::Corrupt(format!("negative attempts {attempts}")))?,
            next_retry_at: row.try_get("next_retry_at")?,
            last_attempt_at: row.try_get("last_attempt_at")?,
            last_error: row.try_get("last_error")?,
            locked_by: row.try_get("locked_by")?,
            locked_until: row.try_get("locked_until")?,
        })
    }
}
