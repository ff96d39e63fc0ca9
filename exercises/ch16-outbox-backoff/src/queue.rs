//! Given: the state of the retry queue, read from the table with five small queries
//! (chapter 19 builds a dashboard on them).

use std::fmt;

use rusqlite::Connection;

use crate::model::Millis;

// ANCHOR: queries
/// Pending rows the relay may take right now.
pub const DUE_NOW: &str = "\
SELECT COUNT(*) FROM outbox
WHERE status = 'pending' AND (next_retry_at IS NULL OR next_retry_at <= ?1)";

/// Pending rows waiting for their `next_retry_at`.
pub const WAITING: &str = "\
SELECT COUNT(*) FROM outbox
WHERE status = 'pending' AND next_retry_at > ?1";

/// How long the oldest pending row has been waiting to be published (NULL if none is).
pub const OLDEST_PENDING_AGE: &str = "\
SELECT ?1 - MIN(created_at) FROM outbox
WHERE status = 'pending'";

/// How many pending rows have failed 0, 1, 2, … times.
pub const ATTEMPTS_HISTOGRAM: &str = "\
SELECT attempts, COUNT(*) FROM outbox
WHERE status = 'pending'
GROUP BY attempts ORDER BY attempts";

/// Rows given up on, waiting for a person or for the dead-letter table (chapter 17).
pub const FAILED: &str = "\
SELECT COUNT(*) FROM outbox
WHERE status = 'failed'";
// ANCHOR_END: queries

/// The retry queue at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueState {
    pub due_now: i64,
    pub waiting: i64,
    /// Milliseconds since the oldest pending row was created; `None` when nothing is pending.
    pub oldest_pending_age: Option<Millis>,
    /// `(attempts, rows)` for the pending rows, by attempts.
    pub attempts: Vec<(u32, i64)>,
    pub failed: i64,
}

impl QueueState {
    /// Reads the queue's state at `now`.
    pub fn read(conn: &Connection, now: Millis) -> rusqlite::Result<Self> {
        let count_at = |sql: &str| conn.query_row(sql, [now], |row| row.get::<_, i64>(0));
        let mut histogram = conn.prepare(ATTEMPTS_HISTOGRAM)?;
        let attempts = histogram
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(Self {
            due_now: count_at(DUE_NOW)?,
            waiting: count_at(WAITING)?,
            oldest_pending_age: conn.query_row(OLDEST_PENDING_AGE, [now], |row| row.get(0))?,
            attempts,
            failed: conn.query_row(FAILED, [], |row| row.get(0))?,
        })
    }
}

impl fmt::Display for QueueState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let age = match self.oldest_pending_age {
            Some(ms) => format!("{:.1} s", ms as f64 / 1_000.0),
            None => "-".to_owned(),
        };
        let histogram: Vec<String> = self
            .attempts
            .iter()
            .map(|(attempts, rows)| format!("{attempts}: {rows}"))
            .collect();
        write!(
            f,
            "due now {} | waiting {} | oldest pending {age} | attempts {{{}}} | failed {}",
            self.due_now,
            self.waiting,
            histogram.join(", "),
            self.failed
        )
    }
}
