//! Given: the pieces of chapter 16 that the relay of this chapter builds on: the due-row query,
//! marking a row sent, and the full-jitter schedule of the next attempt.

use rand::{Rng, RngExt};
use rusqlite::{Connection, params};

use crate::broker::Event;
use crate::types::{Millis, OutboxId, RelayConfig};

/// At most `limit` pending rows that are due at `now` (`next_retry_at` unset or not after
/// `now`), oldest first.
pub fn fetch_due(conn: &Connection, now: Millis, limit: u32) -> rusqlite::Result<Vec<Event>> {
    let mut statement = conn.prepare_cached(
        "SELECT id, aggregate_id, event_type, payload, attempts
           FROM outbox
          WHERE status = 'pending'
            AND (next_retry_at IS NULL OR next_retry_at <= ?1)
            AND COALESCE(next_retry_at, created_at) <= ?1
          ORDER BY COALESCE(next_retry_at, created_at), created_at, id
          LIMIT ?2",
    )?;
    let rows = statement.query_map(params![now, limit], |row| {
        Ok(Event {
            id: row.get(0)?,
            aggregate_id: row.get(1)?,
            event_type: row.get(2)?,
            payload: row.get(3)?,
            attempts: row.get(4)?,
        })
    })?;
    rows.collect()
}

/// Marks a row `sent` once the broker has acknowledged it.
pub fn mark_sent(conn: &Connection, id: OutboxId, now: Millis) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE outbox SET status = 'sent', last_attempt_at = ?2, next_retry_at = NULL
          WHERE id = ?1",
        params![id, now],
    )?;
    Ok(())
}

/// When a row that has now failed `attempts` times (1 after the first failure) may be tried
/// again: `now` plus a full-jitter delay drawn from `[0, min(cap, base · 2^(attempts − 1))]`.
pub fn retry_at(now: Millis, attempts: u32, cfg: &RelayConfig, rng: &mut impl Rng) -> Millis {
    let doublings = attempts.saturating_sub(1).min(62);
    let ceiling = cfg
        .base_ms
        .max(0)
        .saturating_mul(1_i64 << doublings)
        .min(cfg.cap_ms.max(0));
    now.saturating_add(rng.random_range(0..=ceiling))
}
