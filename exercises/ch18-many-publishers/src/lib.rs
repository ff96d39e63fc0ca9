//! # Chapter 18 — Many publishers
//!
//! Book: `book/src/ch18-many-publishers.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch18`. Stuck? `cargo xtask hint ch18`.
//!
//! ## Your task
//!
//! Several workers share one outbox. Each claims a few due rows with a **lease** (`locked_by`,
//! `locked_until`), publishes them, and marks each one sent while its lease is still valid.
//! Write the [`OutboxStore`] trait (given, in `src/store.rs`) twice:
//!
//! 1. [`SqliteStore::claim_sql`]: one `UPDATE outbox SET locked_by = ?1, locked_until = ?2
//!    WHERE id IN (SELECT id … LIMIT ?4) RETURNING *` that leases the oldest rows that are
//!    pending, due (`next_retry_at` NULL or `<= ?3`) and not under a valid lease
//!    (`locked_until` NULL or `<= ?3`).
//! 2. `claim_due` for [`SqliteStore`]: run it inside a transaction begun with `BEGIN IMMEDIATE`
//!    (`TransactionBehavior::Immediate`), commit, and return the rows in due order.
//! 3. `mark_sent` and `reschedule` for [`SqliteStore`]: one `UPDATE` each, which changes the row
//!    only while `worker` holds a lease on it that is valid at `now`; return whether it did.
//! 4. [`PostgresStore::claim_sql`]: the same claim for PostgreSQL: `WITH due AS (SELECT id …
//!    LIMIT $4 FOR UPDATE SKIP LOCKED) UPDATE outbox SET … FROM due WHERE outbox.id = due.id
//!    RETURNING outbox.*`.
//! 5. `claim_due`, `mark_sent` and `reschedule` for [`PostgresStore`].
//!
//! Steps 4 and 5 are the PostgreSQL track. Its checks run against a real server when the
//! environment variable `WORKBOOK_POSTGRES_URL` is set (book §18.9); without it they only read
//! your `PostgresStore::claim_sql()`.
//!
//! The given modules: `model` (the row), `store` (the trait and its error), `sqlite_store` and
//! `postgres_store` (connections and schemas, in `src/sql/`). `tests/visible.rs` shows the
//! store in use; the grader adds hidden checks of its own, among them four workers on one file.

pub mod model;
pub mod postgres_store;
pub mod sqlite_store;
pub mod store;

pub use model::{Millis, ORDER_PLACED, OutboxRow, Status};
pub use postgres_store::PostgresStore;
pub use sqlite_store::SqliteStore;
pub use store::{OutboxStore, Result, StoreError};

impl SqliteStore {
    /// The claim, for SQLite. Parameters: `?1` worker, `?2` end of the lease, `?3` now,
    /// `?4` the most rows to claim.
    pub fn claim_sql() -> &'static str {
        // TODO: return the UPDATE … WHERE id IN (SELECT id … ORDER BY … LIMIT ?4) RETURNING *
        // statement that leases the oldest claimable rows.
        todo!("SqliteStore::claim_sql()")
    }
}

impl OutboxStore for SqliteStore {
    /// Claims up to `limit` due rows for `worker` with a lease until `now + lease_ms`.
    fn claim_due(
        &mut self,
        worker: &str,
        now: Millis,
        lease_ms: Millis,
        limit: usize,
    ) -> Result<Vec<OutboxRow>> {
        // TODO: begin an IMMEDIATE transaction on `self.conn`, run `Self::claim_sql()` with
        // (worker, now + lease_ms, now, limit as i64), read the rows with
        // `OutboxRow::from_sqlite`, commit, and sort them with `OutboxRow::due_order`.
        let _ = &self.conn;
        todo!(
            "SqliteStore::claim_due(worker = {worker:?}, now = {now}, lease_ms = {lease_ms}, limit = {limit})"
        )
    }

    /// Marks row `id` sent, if `worker` still holds a valid lease on it at `now`.
    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool> {
        // TODO: one UPDATE (status 'sent', sent_at, lease cleared) that only touches the row while
        // it is pending and leased to `worker` until after `now`; true if it changed a row.
        todo!("SqliteStore::mark_sent(id = {id}, worker = {worker:?}, now = {now})")
    }

    /// Gives row `id` back after a failed publish, if `worker` still holds a valid lease on it.
    fn reschedule(
        &mut self,
        id: i64,
        worker: &str,
        now: Millis,
        next_retry_at: Millis,
        error: &str,
    ) -> Result<bool> {
        // TODO: one UPDATE (attempts + 1, last_attempt_at, next_retry_at, last_error, lease
        // cleared) under the same condition as mark_sent; true if it changed a row.
        let _ = error;
        todo!(
            "SqliteStore::reschedule(id = {id}, worker = {worker:?}, now = {now}, next_retry_at = {next_retry_at})"
        )
    }
}

impl PostgresStore {
    /// The claim, for PostgreSQL. Parameters: `$1` worker, `$2` end of the lease, `$3` now,
    /// `$4` the most rows to claim.
    pub fn claim_sql() -> &'static str {
        // TODO: return WITH due AS (SELECT id … ORDER BY … LIMIT $4 FOR UPDATE SKIP LOCKED)
        // UPDATE outbox SET … FROM due WHERE outbox.id = due.id RETURNING outbox.*
        todo!("PostgresStore::claim_sql()")
    }
}

impl OutboxStore for PostgresStore {
    /// Claims up to `limit` due rows for `worker` with a lease until `now + lease_ms`.
    fn claim_due(
        &mut self,
        worker: &str,
        now: Millis,
        lease_ms: Millis,
        limit: usize,
    ) -> Result<Vec<OutboxRow>> {
        // TODO: run `Self::claim_sql()` on `self.client` with (worker, now + lease_ms, now,
        // limit as i64), read the rows with `OutboxRow::from_postgres`, sort them by due order.
        let _ = &self.client;
        todo!(
            "PostgresStore::claim_due(worker = {worker:?}, now = {now}, lease_ms = {lease_ms}, limit = {limit})"
        )
    }

    /// Marks row `id` sent, if `worker` still holds a valid lease on it at `now`.
    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool> {
        // TODO: the same UPDATE as for SQLite, with $1, $2, $3 parameters.
        todo!("PostgresStore::mark_sent(id = {id}, worker = {worker:?}, now = {now})")
    }

    /// Gives row `id` back after a failed publish, if `worker` still holds a valid lease on it.
    fn reschedule(
        &mut self,
        id: i64,
        worker: &str,
        now: Millis,
        next_retry_at: Millis,
        error: &str,
    ) -> Result<bool> {
        // TODO: the same UPDATE as for SQLite, with $1 … $5 parameters.
        let _ = error;
        todo!(
            "PostgresStore::reschedule(id = {id}, worker = {worker:?}, now = {now}, next_retry_at = {next_retry_at})"
        )
    }
}
