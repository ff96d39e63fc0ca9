//! Chapter 17 — Dead letters: the reference solution.
//!
//! Three functions: [`relay_once`] publishes the due rows and steps past a poison message,
//! [`dead_letter`] moves a failed row to the dead-letter table in one transaction, and
//! [`requeue`] is the operator's way back, in one transaction too.

use rand::Rng;
use rusqlite::{Connection, OptionalExtension, params};

pub mod broker;
pub mod db;
pub mod demo;
pub mod faults;
pub mod queue;
pub mod types;

#[cfg(test)]
mod table;

pub use broker::{Broker, Event, PublishError};
pub use types::{Millis, OutboxError, OutboxId, Reason, RelayConfig, RelayReport, Result};

// ANCHOR: relay_once
/// One pass of the relay at `now`: publishes every due row (at most `cfg.batch_size`), oldest
/// first, and records what became of each.
///
/// A poison message does not stop the pass. A permanent failure marks its row `failed` at once
/// (it is never rescheduled), and the pass goes on to the next row. A transient failure
/// reschedules the row with full jitter, until `cfg.max_attempts` attempts have failed; then
/// the row is `failed` too. Failed rows are listed in the report with their [`Reason`], ready
/// for [`dead_letter`].
pub fn relay_once(
    conn: &Connection,
    broker: &mut impl Broker,
    now: Millis,
    cfg: &RelayConfig,
    rng: &mut impl Rng,
) -> Result<RelayReport> {
    let mut report = RelayReport::default();
    for event in queue::fetch_due(conn, now, cfg.batch_size)? {
        match broker.publish(&event) {
            Ok(()) => {
                queue::mark_sent(conn, event.id, now)?;
                report.sent.push(event.id);
            }
            Err(PublishError::Permanent(error)) => {
                // Waiting cannot fix this row: fail it now and carry on with the next one.
                record_failure(conn, event.id, now, &error, None)?;
                report.failed.push((event.id, Reason::Rejected));
            }
            Err(PublishError::Transient(error)) => {
                let attempts = event.attempts + 1;
                if attempts >= cfg.max_attempts {
                    record_failure(conn, event.id, now, &error, None)?;
                    report.failed.push((event.id, Reason::Exhausted));
                } else {
                    let next_retry_at = queue::retry_at(now, attempts, cfg, rng);
                    record_failure(conn, event.id, now, &error, Some(next_retry_at))?;
                    report.retrying.push(event.id);
                }
            }
        }
    }
    Ok(report)
}

/// Records one failed attempt at `now`. With a `next_retry_at` the row stays `pending` until
/// then; without one it becomes `failed` and waits for [`dead_letter`].
fn record_failure(
    conn: &Connection,
    id: OutboxId,
    now: Millis,
    error: &str,
    next_retry_at: Option<Millis>,
) -> Result<()> {
    let status = if next_retry_at.is_some() {
        "pending"
    } else {
        "failed"
    };
    conn.execute(
        "UPDATE outbox
            SET status = ?2, attempts = attempts + 1, last_attempt_at = ?3,
                last_error = ?4, next_retry_at = ?5
          WHERE id = ?1",
        params![id, status, now, error, next_retry_at],
    )?;
    Ok(())
}
// ANCHOR_END: relay_once

// ANCHOR: dead_letter
/// Moves the `failed` outbox row `id` to `dead_letters`, with its `reason` and `now` as
/// `failed_at`, keeping its id, payload, attempts and last error.
///
/// The copy and the delete share one transaction: if anything fails in between, the
/// transaction is rolled back and the row is still in the outbox, unchanged. A row that is
/// missing or not `failed` is refused, and nothing changes.
pub fn dead_letter(conn: &mut Connection, id: OutboxId, reason: Reason, now: Millis) -> Result<()> {
    let tx = conn.transaction()?;
    let copied = tx.execute(
        "INSERT INTO dead_letters
                (id, aggregate_id, event_type, payload, attempts, last_error,
                 reason, created_at, failed_at)
         SELECT id, aggregate_id, event_type, payload, attempts, last_error,
                ?2, created_at, ?3
           FROM outbox
          WHERE id = ?1 AND status = 'failed'",
        params![id, reason.as_str(), now],
    )?;
    if copied == 0 {
        return Err(not_movable(&tx, id)?);
    }
    tx.execute("DELETE FROM outbox WHERE id = ?1", [id])?;
    // Dropping `tx` without this commit (an early return, a `?`, a panic) rolls it all back.
    tx.commit()?;
    Ok(())
}

/// Why outbox row `id` cannot become a dead letter: it is missing, or it is not `failed`.
fn not_movable(conn: &Connection, id: OutboxId) -> rusqlite::Result<OutboxError> {
    let status: Option<String> = conn
        .query_row("SELECT status FROM outbox WHERE id = ?1", [id], |row| {
            row.get(0)
        })
        .optional()?;
    Ok(match status {
        Some(status) => OutboxError::NotFailed { id, status },
        None => OutboxError::NotFound {
            table: "outbox",
            id,
        },
    })
}
// ANCHOR_END: dead_letter

// ANCHOR: requeue
/// The operator's action: puts dead letter `id` back into the outbox as a fresh `pending` row,
/// due at `now`, with its attempts reset to 0 and its last error cleared, and removes it from
/// `dead_letters`. Returns the id, which is the event's id for life.
///
/// Like [`dead_letter`], the copy and the delete share one transaction. Fix what made the
/// event fail before calling this: a poison message requeued unchanged comes straight back.
pub fn requeue(conn: &mut Connection, id: OutboxId, now: Millis) -> Result<OutboxId> {
    let tx = conn.transaction()?;
    let restored = tx.execute(
        "INSERT INTO outbox
                (id, aggregate_id, event_type, payload, status, attempts,
                 next_retry_at, last_attempt_at, last_error, created_at)
         SELECT id, aggregate_id, event_type, payload, 'pending', 0,
                ?2, NULL, NULL, created_at
           FROM dead_letters
          WHERE id = ?1",
        params![id, now],
    )?;
    if restored == 0 {
        return Err(OutboxError::NotFound {
            table: "dead_letters",
            id,
        });
    }
    tx.execute("DELETE FROM dead_letters WHERE id = ?1", [id])?;
    tx.commit()?;
    Ok(id)
}
// ANCHOR_END: requeue
