//! # Chapter 16 — Backoff & scheduling in the outbox
//!
//! Book: `book/src/ch16-outbox-backoff.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch16`. Stuck? `cargo xtask hint ch16`.
//!
//! A row that fails to publish is not retried by a timer held in memory: its next attempt is
//! written into the row (`next_retry_at`), and the relay asks the table which rows are due.
//! Times are [`Millis`] (milliseconds since the Unix epoch) and always passed in as `now`.
//!
//! ## Your task
//!
//! 1. [`backoff_ceiling`]: `min(cap, base · 2^(attempts − 1))` in milliseconds. `attempts` counts
//!    failures: after the first failure `attempts = 1` and the ceiling is `base`; treat 0 as 1.
//!    No panic and no wrap-around for any `attempts` up to `u32::MAX`.
//! 2. [`next_retry_at`]: `now` plus a delay drawn uniformly from `[0, backoff_ceiling]`
//!    (full jitter, capped).
//! 3. [`DUE_QUERY`] and [`fetch_due`]: the pending rows whose `next_retry_at` is NULL or
//!    `<= now` (`?1`), ordered by `COALESCE(next_retry_at, created_at), created_at`, at most
//!    `limit` (`?2`) of them. `fetch_due` runs `DUE_QUERY`. (Rows are always written at or
//!    before the `now` the relay passes in.)
//! 4. [`truncate_error`]: the longest prefix of a message that fits in `max_bytes` bytes without
//!    splitting a UTF-8 character.
//! 5. [`decide`]: what happens after failure number `attempts` (counting this one): a permanent
//!    failure gives up at once (`GiveUp::Permanent`, whatever the count); a failure that brings
//!    `attempts` to `cfg.max_attempts` or past it gives up (`GiveUp::AttemptsExhausted`), hint
//!    or no hint; otherwise a 429 or 503 with a Retry-After retries at
//!    `now + min(hint, cfg.max_hint)` (to the millisecond, no jitter), and anything else retries
//!    at [`next_retry_at`].
//! 6. [`record_failure`]: one UPDATE of the row: `attempts` + 1, `last_attempt_at = now`,
//!    `last_error` = the failure's text cut to [`LAST_ERROR_MAX_BYTES`], and either
//!    `next_retry_at` (status stays `pending`) or `status = 'failed'` with `next_retry_at` NULL.
//! 7. `src/migrations/003_due_index.sql`: the index that serves `DUE_QUERY`, so that its query
//!    plan finds the due rows as a range of the index (`SEARCH`, not a walk over every pending
//!    row), with no full scan and no sort.
//!
//! Given: the types in [`model`], the migrations and a few statements in [`db`] (`migrate`,
//! `open_in_memory`, `insert_event`, `load`, `mark_sent`), and the retry queue's state in
//! [`queue`]. `tests/visible.rs` shows them in use; the grader adds hidden checks of its own.

use rand::Rng;
use rusqlite::Connection;

pub mod db;
pub mod model;
pub mod queue;

pub use model::{
    BackoffConfig, Failure, GiveUp, LAST_ERROR_MAX_BYTES, Millis, ORDER_PLACED, OutboxRow, Outcome,
    Status,
};

/// The longest backoff after `attempts` failures, in milliseconds:
/// `min(cap, base · 2^(attempts − 1))`.
///
/// `attempts` counts failures, so after the first failure (`attempts = 1`) the ceiling is `base`;
/// 0 is treated as 1.
pub fn backoff_ceiling(attempts: u32, cfg: &BackoffConfig) -> Millis {
    // TODO: the ceiling in whole milliseconds; exact for small values, the cap for huge ones.
    todo!("backoff_ceiling(attempts = {attempts}, cfg = {cfg:?})")
}

/// When a row that has now failed `attempts` times may be tried again: `now` plus a delay drawn
/// uniformly from `[0, min(cap, base · 2^(attempts − 1))]` (full jitter, capped).
pub fn next_retry_at(
    now: Millis,
    attempts: u32,
    cfg: &BackoffConfig,
    rng: &mut impl Rng,
) -> Millis {
    // TODO: every whole millisecond from 0 to the ceiling, both included, equally likely.
    let _ = (cfg, rng);
    todo!("next_retry_at(now = {now}, attempts = {attempts})")
}

/// The due-row query: pending rows whose time has come (never tried, or `next_retry_at`
/// reached), the longest-waiting first, at most `?2` of them. `?1` is `now`.
///
/// Select every column (`SELECT *`), so [`OutboxRow::from_row`] can read the rows. With the
/// index of migration 003, its plan must be a range `SEARCH` of that index (section 16.6).
// TODO: write the query (see the task list above and sections 16.4 and 16.6 of the book).
pub const DUE_QUERY: &str = "";

/// The rows the relay should try at `now`: at most `limit` of them, by [`DUE_QUERY`].
pub fn fetch_due(conn: &Connection, now: Millis, limit: usize) -> rusqlite::Result<Vec<OutboxRow>> {
    // TODO: run DUE_QUERY with ?1 = now and ?2 = limit; every row read by `OutboxRow::from_row`.
    let _ = conn;
    todo!("fetch_due(now = {now}, limit = {limit})")
}

/// The longest prefix of `message` that fits in `max_bytes` bytes without splitting a character.
pub fn truncate_error(message: &str, max_bytes: usize) -> &str {
    // TODO: a message of at most `max_bytes` bytes comes back whole; never panic on UTF-8.
    todo!(
        "truncate_error({} bytes, max_bytes = {max_bytes})",
        message.len()
    )
}

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
    // TODO: the rules of task 5 above; where two apply at once, the first listed wins.
    let _ = (failure, cfg, rng);
    todo!("decide(now = {now}, attempts = {attempts})")
}

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
    // TODO: the row's new state, as the doc comment above describes; no other row changes.
    let _ = (conn, failure, cfg, rng);
    todo!("record_failure(id = {id}, now = {now})")
}
