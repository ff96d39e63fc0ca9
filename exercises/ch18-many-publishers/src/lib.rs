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
//! 1. [`SqliteStore::claim_sql`]: one statement that leases up to `?4` rows to worker `?1`
//!    until `?2` and returns them whole (every column). It takes the rows that are pending, due
//!    (`next_retry_at` NULL or `<= ?3`, `?3` being now) and free (no lease, or `locked_until <=
//!    ?3`), the oldest first by `COALESCE(next_retry_at, created_at), created_at, id`. On the
//!    given index `outbox_due` its plan finds the due rows as a range (`SEARCH`, §18.3).
//! 2. `claim_due` for [`SqliteStore`]: the claim, atomic against every other claim, committed,
//!    and waiting for a busy writer (the busy timeout) rather than failing with SQLITE_BUSY
//!    (§18.4); the rows come back in due order (`OutboxRow::due_order`). The checks grade that
//!    behaviour, which a lone `UPDATE` also has; §18.4 says why to begin it `IMMEDIATE` anyway.
//! 3. `mark_sent` and `reschedule` for [`SqliteStore`]: each changes a pending row only while
//!    `worker` holds a lease on it that is valid at `now` (`now < locked_until`), clears the
//!    lease, and returns whether it changed the row. `reschedule` counts one more attempt and
//!    writes `last_attempt_at`, `next_retry_at` and `last_error`; `mark_sent` writes `sent_at`.
//! 4. [`PostgresStore::claim_sql`]: the same claim for PostgreSQL (`$1` … `$4`), which never
//!    waits for rows another claim is locking: it skips them (§18.5).
//! 5. `claim_due`, `mark_sent` and `reschedule` for [`PostgresStore`], with the same rules.
//!
//! Steps 4 and 5 are the PostgreSQL track. Its checks run against a real server when the
//! environment variable `WORKBOOK_POSTGRES_URL` is set (book §18.9); without it they are
//! reported as skipped and earn nothing.
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
        // TODO: the claim of task 1.
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
        // TODO: task 2; the lease ends at `now + lease_ms`.
        let _ = &self.conn;
        todo!(
            "SqliteStore::claim_due(worker = {worker:?}, now = {now}, lease_ms = {lease_ms}, limit = {limit})"
        )
    }

    /// Marks row `id` sent, if `worker` still holds a valid lease on it at `now`.
    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool> {
        // TODO: task 3.
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
        // TODO: task 3.
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
        // TODO: the claim of task 4.
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
        // TODO: task 5, as task 2 for SQLite; the lease ends at `now + lease_ms`.
        let _ = &self.client;
        todo!(
            "PostgresStore::claim_due(worker = {worker:?}, now = {now}, lease_ms = {lease_ms}, limit = {limit})"
        )
    }

    /// Marks row `id` sent, if `worker` still holds a valid lease on it at `now`.
    fn mark_sent(&mut self, id: i64, worker: &str, now: Millis) -> Result<bool> {
        // TODO: task 5, as `mark_sent` for SQLite.
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
        // TODO: task 5, as `reschedule` for SQLite.
        let _ = error;
        todo!(
            "PostgresStore::reschedule(id = {id}, worker = {worker:?}, now = {now}, next_retry_at = {next_retry_at})"
        )
    }
}
