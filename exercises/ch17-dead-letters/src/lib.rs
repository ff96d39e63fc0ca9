//! # Chapter 17 — Dead letters
//!
//! Book: `book/src/ch17-dead-letters.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch17`. Stuck? `cargo xtask hint ch17`.
//!
//! ## Your task
//!
//! The database is a real SQLite database; its schema is `src/schema.sql` (read it first).
//! Every function takes `now` in milliseconds and never reads a clock.
//!
//! 1. [`relay_once`]: publish the due rows (at most `cfg.batch_size`, oldest first, as
//!    `queue::fetch_due` gives them) to the broker, and record on each row what became of it:
//!    - acknowledged: `sent` (`queue::mark_sent`);
//!    - a **permanent** failure (a poison message), whatever the attempt number: the row is
//!      `failed` at once (attempts + 1, `last_attempt_at = now`, `last_error` = what the broker
//!      said, [`PublishError::message`], no `next_retry_at`), reported as
//!      `(id, Reason::Rejected)`, and **the pass goes on with the next row**;
//!    - a **transient** failure: attempts + 1, `last_attempt_at`, `last_error` as above; if the
//!      attempts now reach `cfg.max_attempts` (or pass it) the row is `failed` with
//!      `Reason::Exhausted` (and, like a poison message, no `next_retry_at`), otherwise it stays `pending` with the `next_retry_at` that
//!      `queue::retry_at` draws for the new attempts count from `rng`.
//! 2. [`dead_letter`]: move one `failed` outbox row to `dead_letters` (same id, payload,
//!    attempts, last error; the `reason`; `failed_at = now`) in **one transaction**: the insert
//!    and the delete both happen, or neither does. Refuse rows that are missing or not `failed`.
//! 3. [`requeue`]: the operator's way back: put dead letter `id` into the outbox again as
//!    `pending` with `attempts = 0`, `next_retry_at` = `now` (or NULL), `last_error` cleared,
//!    under the same id and with the event's original `created_at`, payload and aggregate, and
//!    delete it from `dead_letters`, in **one transaction**.
//!
//! Given, in their own modules (do not change them): the schema and [`db`] (open, write an
//! event), [`queue`] (the due-row query, `mark_sent`, the full-jitter `retry_at`), [`broker`]
//! (the `Broker` trait and a `StubBroker` with poison and flaky payloads), [`faults`] (make one
//! kind of write fail, to test atomicity), [`types`], and [`demo`] (the run of book §17.7:
//! `cargo run -p ch17_dead_letters --example poison` once your code passes).
//! `tests/visible.rs` shows a few cases; the grader adds hidden checks of its own.

use rand::Rng;
use rusqlite::Connection;

pub mod broker;
pub mod db;
pub mod demo;
pub mod faults;
pub mod queue;
pub mod types;

pub use broker::{Broker, Event, PublishError};
pub use types::{Millis, OutboxError, OutboxId, Reason, RelayConfig, RelayReport, Result};

/// One pass of the relay at `now`: publishes every due row (at most `cfg.batch_size`), oldest
/// first, and reports what became of each. A poison message must not stop the pass.
pub fn relay_once(
    conn: &Connection,
    broker: &mut impl Broker,
    now: Millis,
    cfg: &RelayConfig,
    rng: &mut impl Rng,
) -> Result<RelayReport> {
    // TODO: task 1. Only a database error ends the pass early (`Err`).
    let _ = (conn, broker, rng);
    todo!(
        "relay_once(now = {now}, max_attempts = {})",
        cfg.max_attempts
    )
}

/// Moves the `failed` outbox row `id` to `dead_letters` with its `reason`, `failed_at = now`,
/// and its id, payload, attempts and last error, in one transaction.
pub fn dead_letter(conn: &mut Connection, id: OutboxId, reason: Reason, now: Millis) -> Result<()> {
    // TODO: task 2: both tables change, or neither does; a missing or not-failed row is an
    // `Err` that changes nothing.
    let _ = conn;
    todo!("dead_letter(id = {id}, reason = {reason}, now = {now})")
}

/// The operator's action: puts dead letter `id` back into the outbox as `pending` with
/// `attempts = 0`, due at `now`, its last error cleared, under the same id, and removes it from
/// `dead_letters`, in one transaction. Returns the id.
pub fn requeue(conn: &mut Connection, id: OutboxId, now: Millis) -> Result<OutboxId> {
    // TODO: task 3: both tables change, or neither does; an unknown id is an `Err` that
    // changes nothing.
    let _ = conn;
    todo!("requeue(id = {id}, now = {now})")
}
