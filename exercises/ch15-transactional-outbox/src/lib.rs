//! # Chapter 15 — The transactional outbox
//!
//! Book: `book/src/ch15-transactional-outbox.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch15`. Stuck? `cargo xtask hint ch15`.
//!
//! The database is a real SQLite database (rusqlite, bundled: nothing to install). Its schema is
//! in `src/schema.sql`; `schema::open_in_memory()` gives you a fresh one. Time is never read from
//! a clock: every function takes `now`, in milliseconds since the Unix epoch.
//!
//! ## Your task
//!
//! 1. [`place_order`]: insert the order into `orders` and its `OrderPlaced` event into `outbox`
//!    (`aggregate_id` = the new order's id, `event_type` = [`ORDER_PLACED`], `payload` =
//!    [`order_placed_payload`], `status` = `'pending'`, `created_at` = `now`) in **one**
//!    transaction. Call `faults.between_inserts(..)` after the first insert and before the
//!    second, and return its error (as `Error::Fault`) if it fails: then neither row may remain.
//! 2. [`relay_once`]: read at most `limit` pending outbox rows, oldest first (`created_at`, then
//!    `id`), and publish each to `broker`. Mark a row `'sent'` with `sent_at = now` only after the
//!    broker acknowledged it (`Ok(())`), and mark that row only: other rows may share its order
//!    or its `created_at`. A refused publish leaves the row `'pending'` and the
//!    relay goes on with the next row. Keep sent rows; never delete them. Hold no statement or
//!    transaction open while the broker works. Return what the pass did as [`RelayStats`].
//!
//! Given: the schema ([`schema`]), the types ([`model`]), the error type ([`error`]), the fault
//! hook ([`faults`]) and the broker with two stand-ins ([`broker`]). `tests/visible.rs` shows
//! them in use; the grader adds hidden checks of its own, including crashes at awkward moments.

use rusqlite::Connection;

pub mod broker;
pub mod error;
pub mod faults;
pub mod model;
pub mod schema;

pub use broker::{Broker, BrokerError, FlakyBroker, RecordingBroker};
pub use error::{Error, Fault};
pub use faults::{FailBetweenInserts, FaultPoint, NoFaults};
pub use model::{
    Millis, NewOrder, ORDER_PLACED, OrderId, OutboxEvent, RelayStats, order_placed_payload,
};

/// Stores `order` and its `OrderPlaced` event atomically, and returns the new order's id.
///
/// Both rows are written inside one transaction: if anything fails between the two inserts,
/// neither row exists afterwards.
pub fn place_order(
    conn: &mut Connection,
    order: &NewOrder,
    now: Millis,
    faults: &mut impl FaultPoint,
) -> Result<OrderId, Error> {
    // TODO: both rows in one transaction, with the fault hook between the two inserts; return
    // the new order's id once both are committed.
    let _ = (conn, faults);
    todo!("place_order(customer = {:?}, now = {now})", order.customer)
}

/// One pass of the relay: publishes up to `limit` pending events, oldest first, and marks each
/// one `sent` (with `sent_at = now`) as soon as the broker has acknowledged it.
///
/// A refused publish leaves its row `pending` for the next pass and does not stop the batch.
pub fn relay_once(
    conn: &Connection,
    broker: &mut impl Broker,
    now: Millis,
    limit: usize,
) -> Result<RelayStats, Error> {
    // TODO: one pass as described above and in the task list: the batch, the publishes, a
    // mark for each acknowledged row (and that row only), and the counts in `RelayStats`.
    let _ = (conn, broker);
    todo!("relay_once(now = {now}, limit = {limit})")
}
