//! # Chapter 19 — Watching the retry queue
//!
//! Book: `book/src/ch19-watching-the-queue.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch19`. Stuck? `cargo xtask hint ch19`.
//!
//! The retry columns of chapter 16 make the retry queue visible: a few queries tell an operator
//! whether it is piling up. Times are [`Millis`] on the table's clock, always passed in as `now`.
//! The schema, with its indexes, is given in `src/schema.sql`.
//!
//! ## Your task
//!
//! 1. The six queries, as `pub const` SQL strings (the checks read their plans with
//!    `EXPLAIN QUERY PLAN`), and the function that runs each one:
//!    - [`DUE_NOW_SQL`] / [`due_now`]: pending rows with `next_retry_at` NULL or `<= now` (`?1`);
//!    - [`WAITING_SQL`] / [`waiting`]: pending rows with `next_retry_at > now` (`?1`);
//!    - [`OLDEST_PENDING_AGE_SQL`] / [`oldest_pending_age`]: `now − MIN(created_at)` over the
//!      pending rows (`?1` is now), `None` when no row is pending;
//!    - [`ATTEMPTS_HISTOGRAM_SQL`] / [`attempts_histogram`]: `(attempts, rows)` of the pending
//!      rows, grouped by `attempts`, in ascending order;
//!    - [`DEAD_LETTERS_SQL`] / [`dead_letter_count`]: every row of `dead_letters`;
//!    - [`DEAD_LETTERS_LAST_HOUR_SQL`] / [`dead_letters_last_hour`]: dead letters with
//!      `now − 1 h < failed_at <= now` (`?1` is now).
//!
//!    Only `status = 'pending'` rows are pending. The counts of the outbox must go through the
//!    schema's indexes, as section 19.4 explains: no query may read the whole outbox, and
//!    `WAITING_SQL` and `DEAD_LETTERS_LAST_HOUR_SQL` must range over their indexed column.
//! 2. [`snapshot`]: all six into one [`Dashboard`].
//! 3. [`render`]: the dashboard as text, in exactly the layout its doc comment shows.
//! 4. [`alerts`]: the three alert rules of [`Thresholds`], in their order, each firing only when
//!    its value is strictly above its limit.
//!
//! Given: the types in [`model`] (with [`clock`], which formats an age), the schema and
//! [`db`], and a simulated outbox in [`scenario`] for `examples/outage.rs`. `tests/visible.rs`
//! shows a few examples; the grader adds hidden checks of its own.

use rusqlite::Connection;

pub mod db;
pub mod model;
pub mod scenario;

pub use model::{Alert, Dashboard, HOUR, MINUTE, Millis, SECOND, Thresholds, clock};

// TODO: write the six queries (see the task list above and section 19.3 of the book).

/// Pending rows the relay may take now: never tried (NULL), or due at or before `?1` (now).
pub const DUE_NOW_SQL: &str = "";

/// Pending rows in backoff: due after `?1` (now).
pub const WAITING_SQL: &str = "";

/// How long the oldest pending row has waited at `?1` (now); NULL when no row is pending.
pub const OLDEST_PENDING_AGE_SQL: &str = "";

/// How many pending rows have failed 0, 1, 2, … times, by attempts.
pub const ATTEMPTS_HISTOGRAM_SQL: &str = "";

/// Every dead letter.
pub const DEAD_LETTERS_SQL: &str = "";

/// Dead letters of the hour up to `?1` (now): `now − 1 h < failed_at ≤ now`.
pub const DEAD_LETTERS_LAST_HOUR_SQL: &str = "";

/// How many pending rows are due at `now` ([`DUE_NOW_SQL`]).
pub fn due_now(conn: &Connection, now: Millis) -> rusqlite::Result<i64> {
    // TODO: the count of DUE_NOW_SQL at `now`.
    let _ = conn;
    todo!("due_now(now = {now})")
}

/// How many pending rows wait for a `next_retry_at` after `now` ([`WAITING_SQL`]).
pub fn waiting(conn: &Connection, now: Millis) -> rusqlite::Result<i64> {
    // TODO: the count of WAITING_SQL at `now`.
    let _ = conn;
    todo!("waiting(now = {now})")
}

/// `now − created_at` of the oldest pending row, or `None` when no row is pending
/// ([`OLDEST_PENDING_AGE_SQL`]).
pub fn oldest_pending_age(conn: &Connection, now: Millis) -> rusqlite::Result<Option<Millis>> {
    // TODO: the age from OLDEST_PENDING_AGE_SQL at `now`; `None` when nothing is pending.
    let _ = conn;
    todo!("oldest_pending_age(now = {now})")
}

/// `(attempts, rows)` for the pending rows, in ascending order of attempts
/// ([`ATTEMPTS_HISTOGRAM_SQL`]).
pub fn attempts_histogram(conn: &Connection) -> rusqlite::Result<Vec<(u32, i64)>> {
    // TODO: every `(attempts, rows)` pair of ATTEMPTS_HISTOGRAM_SQL, in its order.
    let _ = conn;
    todo!("attempts_histogram()")
}

/// How many dead letters there are ([`DEAD_LETTERS_SQL`]).
pub fn dead_letter_count(conn: &Connection) -> rusqlite::Result<i64> {
    // TODO: the count of DEAD_LETTERS_SQL.
    let _ = conn;
    todo!("dead_letter_count()")
}

/// How many rows became dead letters in the hour up to `now` ([`DEAD_LETTERS_LAST_HOUR_SQL`]).
pub fn dead_letters_last_hour(conn: &Connection, now: Millis) -> rusqlite::Result<i64> {
    // TODO: the count of DEAD_LETTERS_LAST_HOUR_SQL at `now`.
    let _ = conn;
    todo!("dead_letters_last_hour(now = {now})")
}

/// The whole dashboard at `now`: every query above, once.
pub fn snapshot(conn: &Connection, now: Millis) -> rusqlite::Result<Dashboard> {
    // TODO: task 2.
    let _ = conn;
    todo!("snapshot(now = {now})")
}

/// The dashboard as text, one line per figure, each ending in `\n`:
///
/// ```text
/// due now                   12
/// waiting                   30
/// oldest pending      00:04:05
/// dead letters               3
/// dead letters (1 h)         1
/// pending rows by attempts
///    0 | ######################################## 40
///    1 | #################### 20
///   12 | # 1
/// ```
///
/// Labels are left-aligned in 20 columns and values right-aligned in 8; the age is
/// [`clock`] (`-` when nothing is pending). Each histogram line is `{attempts:>4} | {bar}
/// {rows}`, whose bar holds `ceil(rows · 40 / largest rows)` `#`s, so the largest bucket gets 40
/// and every bucket at least one. With no pending row, the histogram is the line `  (none)`.
pub fn render(dashboard: &Dashboard) -> String {
    // TODO: the layout above, character for character.
    todo!("render({dashboard:?})")
}

/// The alert rules, in this order: the oldest pending row waited longer than
/// `max_oldest_pending`; more than `max_dead_letters_last_hour` dead letters in the last hour;
/// more than `max_storm_rows` pending rows with `storm_min_attempts` failed attempts or more.
/// Every rule fires only when its value is strictly above its limit.
pub fn alerts(dashboard: &Dashboard, thresholds: &Thresholds) -> Vec<Alert> {
    // TODO: every rule that fires, in the order above, with the values that made it fire.
    todo!("alerts({dashboard:?}, {thresholds:?})")
}
