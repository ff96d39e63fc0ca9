//! Given: what every outbox store can do, whichever database is behind it, and its error type.
//!
//! A worker (a relay process, or a thread of one) claims a few due rows, publishes them, and then
//! either marks each one sent or reschedules it. The claim gives the worker a **lease**: until
//! `locked_until` no other worker may claim those rows. A lease that runs out (the worker crashed,
//! or hung) frees the rows for anyone.

use std::fmt;

use crate::model::{Millis, OutboxRow};

/// The outbox operations of one worker, on its own database connection.
pub trait OutboxStore {
    /// Atomically claims up to `limit` due rows for `worker` and returns them, oldest due first
    /// (in [`OutboxRow::due_order`]).
    ///
    /// A row is claimable when it is `pending`, due (`next_retry_at` is NULL or `<= now`), and
    /// not under a valid lease (`locked_until` is NULL or `<= now`). Every claimed row gets
    /// `locked_by = worker` and `locked_until = now + lease_ms`, and is returned as it is after
    /// the claim. Two workers claiming at the same time never get the same row.
    fn claim_due(
        &mut self,
        worker: &str,
        now: Millis,
        lease_ms: Millis,
        limit: usize,
    ) -> Result<Vec<OutboxRow>>;

    /// Marks row `id` sent at `now` (status `sent`, `sent_at = now`, lease cleared), but only if
    /// `worker` still holds a lease on it that is valid at `now`. Returns whether it did.
    ///
    /// `false` means the lease was lost (expired, and perhaps claimed by another worker): the
    /// publish that just happened may be a duplicate, and the row is someone else's now.
    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool>;

    /// Gives row `id` back after a failed publish: one more attempt, `last_attempt_at = now`,
    /// `next_retry_at`, `last_error = error`, lease cleared, still `pending`. Only if `worker`
    /// still holds a lease on it that is valid at `now`. Returns whether it did.
    fn reschedule(
        &mut self,
        id: i64,
        worker: &str,
        now: Millis,
        next_retry_at: Millis,
        error: &str,
    ) -> Result<bool>;
}

/// A database error, from either database.
#[derive(Debug)]
pub enum StoreError {
    Sqlite(rusqlite::Error),
    Postgres(postgres::Error),
    /// A value in the table that no row should hold.
    Corrupt(String),
}

/// The result of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Sqlite(error) => write!(f, "SQLite: {error}"),
            StoreError::Postgres(error) => {
                write!(f, "PostgreSQL: {error}")?;
                // The server's own message ("canceling statement due to statement timeout")
                // is the error's source, not part of its Display.
                match std::error::Error::source(error) {
                    Some(source) => write!(f, ": {source}"),
                    None => Ok(()),
                }
            }
            StoreError::Corrupt(message) => write!(f, "corrupt outbox row: {message}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Sqlite(error) => Some(error),
            StoreError::Postgres(error) => Some(error),
            StoreError::Corrupt(_) => None,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Sqlite(error)
    }
}

impl From<postgres::Error> for StoreError {
    fn from(error: postgres::Error) -> Self {
        StoreError::Postgres(error)
    }
}
