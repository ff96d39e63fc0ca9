//! Chapter 16 — Backoff & scheduling in the outbox: the reference solution.
//!
//! A row that fails to publish is not retried by a timer in memory. Its next attempt is written
//! into the row itself (`next_retry_at`), and the relay asks the table which rows are due:
//!
//! - [`next_retry_at`] schedules the next attempt with capped full jitter;
//! - [`DUE_QUERY`] and [`fetch_due`] take the rows that are due, oldest first, a few at a time;
//! - [`record_failure`] writes a failed attempt into its row: one more attempt, when, why, and
//!   either the next attempt or the end (`failed`), as [`decide`] rules;
//! - `src/migrations/003_due_index.sql` creates the index the due-row query runs on.

use std::time::Duration;

use rand::{Rng, RngExt};
use rusqlite::{Connection, params};

pub mod db;
pub mod model;
pub mod queue;

#[cfg(test)]
mod book;

pub use model::{
    BackoffConfig, Failure, GiveUp, LAST_ERROR_MAX_BYTES, Millis, ORDER_PLACED, OutboxRow, Outcome,
    Status,
};

// ANCHOR: ceiling
/// The longest backoff after `attempts` failures, in milliseconds:
/// `min(cap, base · 2^(attempts − 1))`.
///
/// `attempts` counts failures, so after the first failure (`attempts = 1`) the ceiling is `base`;
/// 0 is treated as 1. Saturating arithmetic keeps it exact and panic-free up to `u32::MAX`.
pub fn backoff_ceiling(attempts: u32, cfg: &BackoffConfig) -> Millis {
    let doublings = attempts.saturating_sub(1);
    let exponential = cfg
        .base
        .as_millis()
        .saturating_mul(2u128.saturating_pow(doublings));
    let ceiling = exponential.min(cfg.cap.as_millis());
    Millis::try_from(ceiling).unwrap_or(Millis::MAX)
}
// ANCHOR_END: ceiling

// ANCHOR: next_retry_at
/// When a row that has now failed `attempts` times may be tried again: `now` plus a delay drawn
/// uniformly from `[0, min(cap, base · 2^(attempts − 1))]` (full jitter, capped).
pub fn next_retry_at(
    now: Millis,
    attempts: u32,
    cfg: &BackoffConfig,
    rng: &mut impl Rng,
) -> Millis {
    let delay = rng.random_range(0..=backoff_ceiling(attempts, cfg));
    now.saturating_add(delay)
}
// ANCHOR_END: next_retry_at

// ANCHOR: due_query
/// The due-row query: pending rows whose time has come (never tried, or `next_retry_at` reached),
/// the longest-waiting first, at most `?2` of them. `?1` is `now`.
///
/// The `COALESCE(…) <= ?1` term says again what the line above it says, in the index's own
/// terms: it lets SQLite stop walking the index at `now` instead of reading every pending row.
pub const DUE_QUERY: &str = "\
SELECT * FROM outbox
WHERE status = 'pending'
  AND (next_retry_at IS NULL OR next_retry_at <= ?1)
  AND COALESCE(next_retry_at, created_at) <= ?1
ORDER BY COALESCE(next_retry_at, created_at), created_at
LIMIT ?2";

/// The rows the relay should try at `now`: at most `limit` of them, by [`DUE_QUERY`].
pub fn fetch_due(conn: &Connection, now: Millis, limit: usize) -> rusqlite::Result<Vec<OutboxRow>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut statement = conn.prepare_cached(DUE_QUERY)?;
    let rows = statement.query_map(params![now, limit], OutboxRow::from_row)?;
    rows.collect()
}
// ANCHOR_END: due_query

// ANCHOR: truncate_error
/// The longest prefix of `message` that fits in `max_bytes` bytes without splitting a character.
pub fn truncate_error(message: &str, max_bytes: usize) -> &str {
    if message.len() <= max_bytes {
        return message;
    }
    let mut end = max_bytes;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}
// ANCHOR_END: truncate_error

// ANCHOR: decide
/// What to do after failure number `attempts` of a row (counting this one).
///
/// A permanent failure gives up at once, and so does the failure that uses the last attempt.
/// Otherwise the row is retried: at the server's Retry-After if it sent one (never beyond
/// `max_hint`), or else after a full-jitter backoff.
pub fn decide(
    now: Millis,
    attempts: u32,
    failure: &Failure,
    cfg: &BackoffConfig,
    rng: &mut impl Rng,
) -> Outcome {
    if let Failure::Permanent(_) = failure {
        return Outcome::Failed(GiveUp::Permanent);
    }
    if attempts >= cfg.max_attempts {
        return Outcome::Failed(GiveUp::AttemptsExhausted);
    }
    let hint = match failure {
        Failure::RateLimited { retry_after } | Failure::Overloaded { retry_after } => *retry_after,
        Failure::Transient(_) | Failure::Permanent(_) => None,
    };
    match hint {
        Some(hint) => Outcome::RetryAt(now.saturating_add(millis(hint.min(cfg.max_hint)))),
        None => Outcome::RetryAt(next_retry_at(now, attempts, cfg, rng)),
    }
}

/// A duration in whole milliseconds, saturating.
fn millis(duration: Duration) -> Millis {
    Millis::try_from(duration.as_millis()).unwrap_or(Millis::MAX)
}
// ANCHOR_END: decide

// ANCHOR: record_failure
/// Records that publishing row `id` failed at `now`, and schedules what happens next.
///
/// Afterwards the row holds `attempts` one more than before (this failure counts, whatever
/// its kind), `last_attempt_at = now`, `last_error` = the failure's `to_string()` cut to
/// [`LAST_ERROR_MAX_BYTES`], and either `next_retry_at` (status still `pending`) or
/// `status = 'failed'` with `next_retry_at` NULL, as [`decide`] rules for the new count. Returns
/// that ruling; `Err(QueryReturnedNoRows)`, with nothing written, if there is no such row.
pub fn record_failure(
    conn: &Connection,
    id: i64,
    now: Millis,
    failure: &Failure,
    cfg: &BackoffConfig,
    rng: &mut impl Rng,
) -> rusqlite::Result<Outcome> {
    let attempts: u32 =
        conn.query_row("SELECT attempts FROM outbox WHERE id = ?1", [id], |row| {
            row.get(0)
        })?;
    let attempts = attempts.saturating_add(1);
    let outcome = decide(now, attempts, failure, cfg, rng);
    let (status, next_retry_at) = match outcome {
        Outcome::RetryAt(at) => (Status::Pending, Some(at)),
        Outcome::Failed(_) => (Status::Failed, None),
    };
    let message = failure.to_string();
    conn.execute(
        "UPDATE outbox
         SET attempts = ?2, last_attempt_at = ?3, next_retry_at = ?4, last_error = ?5, status = ?6
         WHERE id = ?1",
        (
            id,
            attempts,
            now,
            next_retry_at,
            truncate_error(&message, LAST_ERROR_MAX_BYTES),
            status,
        ),
    )?;
    Ok(outcome)
}
// ANCHOR_END: record_failure
