//! Chapter 18 — Many publishers: the reference solution.
//!
//! Several workers share one outbox. Each claims a few due rows with a **lease** (`locked_by`,
//! `locked_until`) in one atomic step, publishes them, and marks each one sent only while its
//! lease is still valid. A worker that dies leaves its lease behind; when the lease runs out, the
//! rows are due again and another worker picks them up.
//!
//! The same [`OutboxStore`] is written twice:
//!
//! - [`SqliteStore`]: one writer at a time. `BEGIN IMMEDIATE` takes the write lock first, then a
//!   single `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING *` claims the rows;
//! - [`PostgresStore`]: row locks. `SELECT … FOR UPDATE SKIP LOCKED` in a CTE picks rows no
//!   other transaction is claiming, and `UPDATE … FROM due RETURNING` leases them.

use postgres::types::ToSql;
use rusqlite::{TransactionBehavior, params};

pub mod model;
pub mod postgres_store;
pub mod sqlite_store;
pub mod store;

pub use model::{Millis, ORDER_PLACED, OutboxRow, Status};
pub use postgres_store::PostgresStore;
pub use sqlite_store::SqliteStore;
pub use store::{OutboxStore, Result, StoreError};

/// `limit` as the integer a `LIMIT` takes (no outbox holds more than `i64::MAX` rows).
fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Claimed rows in the order they became due: `RETURNING` gives them back in no set order.
fn in_due_order(mut rows: Vec<OutboxRow>) -> Vec<OutboxRow> {
    rows.sort_by_key(OutboxRow::due_order);
    rows
}

// ANCHOR: sqlite_claim_sql
impl SqliteStore {
    /// The claim, for SQLite. Parameters: `?1` worker, `?2` end of the lease, `?3` now,
    /// `?4` the most rows to claim.
    pub fn claim_sql() -> &'static str {
        "UPDATE outbox
            SET locked_by = ?1, locked_until = ?2
          WHERE id IN (
                SELECT id FROM outbox
                 WHERE status = 'pending'
                   AND (next_retry_at IS NULL OR next_retry_at <= ?3)
                   AND COALESCE(next_retry_at, created_at) <= ?3
                   AND (locked_until IS NULL OR locked_until <= ?3)
                 ORDER BY COALESCE(next_retry_at, created_at), created_at, id
                 LIMIT ?4)
         RETURNING *"
    }
}
// ANCHOR_END: sqlite_claim_sql

impl OutboxStore for SqliteStore {
    // ANCHOR: sqlite_claim_due
    fn claim_due(
        &mut self,
        worker: &str,
        now: Millis,
        lease_ms: Millis,
        limit: usize,
    ) -> Result<Vec<OutboxRow>> {
        let locked_until = now.saturating_add(lease_ms);
        // IMMEDIATE: take the database's one write lock before reading anything, so the rows
        // chosen are still free when they are leased. A busy writer is waited for right here.
        let transaction = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let claimed = {
            let mut claim = transaction.prepare_cached(Self::claim_sql())?;
            let rows = claim.query_map(
                params![worker, locked_until, now, sql_limit(limit)],
                OutboxRow::from_sqlite,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        };
        transaction.commit()?;
        Ok(in_due_order(claimed))
    }
    // ANCHOR_END: sqlite_claim_due

    // ANCHOR: sqlite_mark_sent
    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool> {
        // Only while this worker's lease is valid: `locked_until > now`, strictly.
        let mut mark = self.conn.prepare_cached(
            "UPDATE outbox
                SET status = 'sent', sent_at = ?3, locked_by = NULL, locked_until = NULL
              WHERE id = ?1 AND status = 'pending'
                AND locked_by = ?2 AND locked_until > ?3",
        )?;
        let changed = mark.execute(params![id, worker, now])?;
        Ok(changed == 1)
    }
    // ANCHOR_END: sqlite_mark_sent

    fn reschedule(
        &mut self,
        id: i64,
        worker: &str,
        now: Millis,
        next_retry_at: Millis,
        error: &str,
    ) -> Result<bool> {
        let mut give_back = self.conn.prepare_cached(
            "UPDATE outbox
                SET attempts = attempts + 1, last_attempt_at = ?3, next_retry_at = ?4,
                    last_error = ?5, locked_by = NULL, locked_until = NULL
              WHERE id = ?1 AND status = 'pending'
                AND locked_by = ?2 AND locked_until > ?3",
        )?;
        let changed = give_back.execute(params![id, worker, now, next_retry_at, error])?;
        Ok(changed == 1)
    }
}

// ANCHOR: postgres_claim_sql
impl PostgresStore {
    /// The claim, for PostgreSQL. Parameters: `$1` worker, `$2` end of the lease, `$3` now,
    /// `$4` the most rows to claim.
    pub fn claim_sql() -> &'static str {
        "WITH due AS (
                SELECT id FROM outbox
                 WHERE status = 'pending'
                   AND (next_retry_at IS NULL OR next_retry_at <= $3)
                   AND COALESCE(next_retry_at, created_at) <= $3
                   AND (locked_until IS NULL OR locked_until <= $3)
                 ORDER BY COALESCE(next_retry_at, created_at), created_at, id
                 LIMIT $4
                   FOR UPDATE SKIP LOCKED)
         UPDATE outbox
            SET locked_by = $1, locked_until = $2
           FROM due
          WHERE outbox.id = due.id
      RETURNING outbox.*"
    }
}
// ANCHOR_END: postgres_claim_sql

impl OutboxStore for PostgresStore {
    // ANCHOR: postgres_claim_due
    fn claim_due(
        &mut self,
        worker: &str,
        now: Millis,
        lease_ms: Millis,
        limit: usize,
    ) -> Result<Vec<OutboxRow>> {
        let locked_until = now.saturating_add(lease_ms);
        // One statement is one transaction: the row locks taken by FOR UPDATE are held until
        // the lease is written and committed, and rows locked by other claims are skipped.
        let params: [&(dyn ToSql + Sync); 4] = [&worker, &locked_until, &now, &sql_limit(limit)];
        let rows = self.client.query(Self::claim_sql(), &params)?;
        let claimed = rows
            .iter()
            .map(OutboxRow::from_postgres)
            .collect::<Result<Vec<_>>>()?;
        Ok(in_due_order(claimed))
    }
    // ANCHOR_END: postgres_claim_due

    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool> {
        let changed = self.client.execute(
            "UPDATE outbox
                SET status = 'sent', sent_at = $3, locked_by = NULL, locked_until = NULL
              WHERE id = $1 AND status = 'pending'
                AND locked_by = $2 AND locked_until > $3",
            &[&id, &worker, &now],
        )?;
        Ok(changed == 1)
    }

    fn reschedule(
        &mut self,
        id: i64,
        worker: &str,
        now: Millis,
        next_retry_at: Millis,
        error: &str,
    ) -> Result<bool> {
        let changed = self.client.execute(
            "UPDATE outbox
                SET attempts = attempts + 1, last_attempt_at = $3, next_retry_at = $4,
                    last_error = $5, locked_by = NULL, locked_until = NULL
              WHERE id = $1 AND status = 'pending'
                AND locked_by = $2 AND locked_until > $3",
            &[&id, &worker, &now, &next_retry_at, &error],
        )?;
        Ok(changed == 1)
    }
}
