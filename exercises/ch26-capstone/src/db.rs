//! Given: the database. One in-memory SQLite connection holds the order service's tables
//! (`orders`, `outbox`) and the orchestrator's (`inbox`); `src/schema.sql` creates them.
//!
//! The simulation runs on one thread, so the connection sits in a `RefCell`. Borrow it with
//! [`Db::conn`] for one statement or one transaction and let it go before the next `.await`:
//! a borrow held across an `.await` makes the next task that needs the database panic with
//! "already borrowed", which is this simulation's way of saying "do not hold a transaction open
//! across a network call".

use std::cell::{RefCell, RefMut};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::model::{Millis, OrderId, OrderPlaced};

/// The schema: every table of the checkout.
pub const SCHEMA: &str = include_str!("schema.sql");

/// The longest `last_error` the outbox keeps, in bytes.
pub const LAST_ERROR_MAX_BYTES: usize = 200;

/// One pending row of the outbox, as the relay reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    /// The row's id, which is also the event's id.
    pub id: i64,
    /// The event to publish.
    pub event: OrderPlaced,
    /// How many publish attempts have failed so far: 0 for a row never tried.
    pub attempts: u32,
    pub created_at: Millis,
    /// The earliest moment of the next attempt; `None` for a row never tried.
    pub next_retry_at: Option<Millis>,
}

/// Where an order's outbox row stands, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxState {
    pub id: i64,
    /// `pending`, `sent`, or `failed` (given up on).
    pub status: String,
    /// Failed publish attempts.
    pub attempts: u32,
    pub sent_at: Option<Millis>,
}

/// The database of the checkout.
#[derive(Debug)]
pub struct Db {
    conn: RefCell<Connection>,
}

impl Db {
    /// A fresh in-memory database with the schema.
    pub fn open_in_memory() -> rusqlite::Result<Self> {
        let conn = Connection::open_in_memory()?;
        // Plans that do not change with the parameters' values: without this, SQLite prepares
        // the due-row query again whenever `now` changes, to reconsider its partial index.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: RefCell::new(conn),
        })
    }

    /// The connection, for one statement or one transaction. Never hold it across `.await`.
    pub fn conn(&self) -> RefMut<'_, Connection> {
        self.conn.borrow_mut()
    }

    /// Chapter 15's `place_order`: the order and its `OrderPlaced` event in one transaction.
    ///
    /// With `crash_between_inserts`, the order service dies after the first insert: the
    /// transaction is rolled back, neither row exists, and `Ok(None)` says so.
    pub fn place_order(
        &self,
        customer: &str,
        amount_cents: i64,
        now: Millis,
        crash_between_inserts: bool,
    ) -> rusqlite::Result<Option<OrderId>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.prepare_cached(
            "INSERT INTO orders (customer, amount_cents, created_at) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![customer, amount_cents, now])?;
        let order = OrderId(tx.last_insert_rowid());
        if crash_between_inserts {
            // Dropping the transaction rolls the order back.
            return Ok(None);
        }
        let payload = format!(
            r#"{{"order_id":{},"amount_cents":{amount_cents}}}"#,
            order.0
        );
        tx.prepare_cached(
            "INSERT INTO outbox (aggregate_id, event_type, payload, created_at)
             VALUES (?1, 'OrderPlaced', ?2, ?3)",
        )?
        .execute(params![order.0, payload, now])?;
        tx.commit()?;
        Ok(Some(order))
    }

    /// Chapter 16's `fetch_due`: at most `limit` pending rows whose time has come (never tried,
    /// or `next_retry_at` reached), the longest-waiting first.
    pub fn fetch_due(&self, now: Millis, limit: usize) -> rusqlite::Result<Vec<OutboxRow>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT outbox.id, outbox.aggregate_id, orders.amount_cents, outbox.attempts,
                    outbox.created_at, outbox.next_retry_at
             FROM outbox JOIN orders ON orders.id = outbox.aggregate_id
             WHERE outbox.status = 'pending'
               AND (outbox.next_retry_at IS NULL OR outbox.next_retry_at <= ?1)
             ORDER BY COALESCE(outbox.next_retry_at, outbox.created_at), outbox.created_at
             LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = statement.query_map(params![now, limit], outbox_row)?;
        rows.collect()
    }

    /// Marks row `id` sent at `now`: the broker acknowledged its event. Only a pending row
    /// changes.
    pub fn mark_sent(&self, id: i64, now: Millis) -> rusqlite::Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE outbox SET status = 'sent', sent_at = ?2
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![id, now])?;
        Ok(())
    }

    /// Records a failed publish of row `id` at `now`: one more attempt, when, why (cut to
    /// [`LAST_ERROR_MAX_BYTES`]), and when the relay may try again. Only a pending row changes.
    pub fn record_failure(
        &self,
        id: i64,
        now: Millis,
        next_retry_at: Millis,
        last_error: &str,
    ) -> rusqlite::Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE outbox
                 SET attempts = attempts + 1, last_attempt_at = ?2, next_retry_at = ?3,
                     last_error = ?4
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![id, now, next_retry_at, short(last_error)])?;
        Ok(())
    }

    /// Gives up on row `id` at `now`: one more attempt, why it failed, and `status = 'failed'`,
    /// for the dead letters and an operator (chapter 17). Only a pending row changes.
    pub fn mark_failed(&self, id: i64, now: Millis, last_error: &str) -> rusqlite::Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE outbox
                 SET attempts = attempts + 1, last_attempt_at = ?2, next_retry_at = NULL,
                     last_error = ?3, status = 'failed'
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![id, now, short(last_error)])?;
        Ok(())
    }

    /// When the earliest pending row falls due, or `None` when nothing is pending.
    pub fn next_due_at(&self) -> rusqlite::Result<Option<Millis>> {
        self.conn()
            .prepare_cached(
                "SELECT MIN(COALESCE(next_retry_at, created_at)) FROM outbox
                 WHERE status = 'pending'",
            )?
            .query_row([], |row| row.get(0))
    }

    /// How many rows are still pending.
    pub fn pending_count(&self) -> rusqlite::Result<u64> {
        self.conn()
            .prepare_cached("SELECT COUNT(*) FROM outbox WHERE status = 'pending'")?
            .query_row([], |row| row.get::<_, i64>(0))
            .map(|count| count.unsigned_abs())
    }

    /// Every committed order, with its placement time, oldest first.
    pub fn orders(&self) -> rusqlite::Result<Vec<(OrderId, Millis)>> {
        let conn = self.conn();
        let mut statement = conn.prepare("SELECT id, created_at FROM orders ORDER BY id")?;
        let rows = statement.query_map([], |row| Ok((OrderId(row.get(0)?), row.get(1)?)))?;
        rows.collect()
    }

    /// The outbox row of `order`: its id, status, failed attempts and `sent_at`.
    pub fn outbox_state(&self, order: OrderId) -> rusqlite::Result<Option<OutboxState>> {
        self.conn()
            .prepare_cached(
                "SELECT id, status, attempts, sent_at FROM outbox WHERE aggregate_id = ?1",
            )?
            .query_row([order.0], |row| {
                Ok(OutboxState {
                    id: row.get(0)?,
                    status: row.get(1)?,
                    attempts: row.get(2)?,
                    sent_at: row.get(3)?,
                })
            })
            .optional()
    }
}

/// `message` cut to [`LAST_ERROR_MAX_BYTES`] on a character boundary.
fn short(message: &str) -> &str {
    let mut end = message.len().min(LAST_ERROR_MAX_BYTES);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

fn outbox_row(row: &Row<'_>) -> rusqlite::Result<OutboxRow> {
    let id = row.get(0)?;
    Ok(OutboxRow {
        id,
        event: OrderPlaced {
            event_id: id,
            order: OrderId(row.get(1)?),
            amount_cents: row.get(2)?,
        },
        attempts: row.get(3)?,
        created_at: row.get(4)?,
        next_retry_at: row.get(5)?,
    })
}
