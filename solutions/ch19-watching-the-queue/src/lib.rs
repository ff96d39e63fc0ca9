//! Chapter 19 — Watching the retry queue: the reference solution.
//!
//! The retry columns of chapter 16 make the retry queue visible. Six small queries read it, each
//! kept as a `pub const` so its plan can be checked with `EXPLAIN QUERY PLAN`; [`snapshot`]
//! collects them into a [`Dashboard`], [`render`] prints it with a fixed layout, and [`alerts`]
//! applies three alert rules to it.

use std::fmt::Write as _;

use rusqlite::{Connection, params};

pub mod db;
pub mod model;
pub mod scenario;

#[cfg(test)]
mod book;

pub use model::{Alert, Dashboard, HOUR, MINUTE, Millis, SECOND, Thresholds, clock};

// ANCHOR: queries
/// Pending rows the relay may take now: never tried (NULL), or due at or before `?1` (now).
pub const DUE_NOW_SQL: &str = "\
SELECT COUNT(*) FROM outbox
WHERE status = 'pending'
  AND (next_retry_at IS NULL OR next_retry_at <= ?1)";

/// Pending rows in backoff: due after `?1` (now).
pub const WAITING_SQL: &str = "\
SELECT COUNT(*) FROM outbox
WHERE status = 'pending'
  AND next_retry_at > ?1";

/// How long the oldest pending row has waited at `?1` (now); NULL when no row is pending.
pub const OLDEST_PENDING_AGE_SQL: &str = "\
SELECT ?1 - MIN(created_at) FROM outbox
WHERE status = 'pending'";

/// How many pending rows have failed 0, 1, 2, … times, by attempts.
pub const ATTEMPTS_HISTOGRAM_SQL: &str = "\
SELECT attempts, COUNT(*) FROM outbox
WHERE status = 'pending'
GROUP BY attempts
ORDER BY attempts";

/// Every dead letter.
pub const DEAD_LETTERS_SQL: &str = "\
SELECT COUNT(*) FROM dead_letters";

/// Dead letters of the hour up to `?1` (now): `now − 1 h < failed_at ≤ now`.
pub const DEAD_LETTERS_LAST_HOUR_SQL: &str = "\
SELECT COUNT(*) FROM dead_letters
WHERE failed_at > ?1 - 3600000
  AND failed_at <= ?1";
// ANCHOR_END: queries

// ANCHOR: functions
/// How many pending rows are due at `now` ([`DUE_NOW_SQL`]).
pub fn due_now(conn: &Connection, now: Millis) -> rusqlite::Result<i64> {
    conn.query_row(DUE_NOW_SQL, [now], |row| row.get(0))
}

/// How many pending rows wait for a `next_retry_at` after `now` ([`WAITING_SQL`]).
pub fn waiting(conn: &Connection, now: Millis) -> rusqlite::Result<i64> {
    conn.query_row(WAITING_SQL, [now], |row| row.get(0))
}

/// `now − created_at` of the oldest pending row, or `None` when no row is pending
/// ([`OLDEST_PENDING_AGE_SQL`]: `MIN` over no rows is NULL).
pub fn oldest_pending_age(conn: &Connection, now: Millis) -> rusqlite::Result<Option<Millis>> {
    conn.query_row(OLDEST_PENDING_AGE_SQL, [now], |row| row.get(0))
}

/// `(attempts, rows)` for the pending rows, in ascending order of attempts
/// ([`ATTEMPTS_HISTOGRAM_SQL`]).
pub fn attempts_histogram(conn: &Connection) -> rusqlite::Result<Vec<(u32, i64)>> {
    let mut statement = conn.prepare_cached(ATTEMPTS_HISTOGRAM_SQL)?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}

/// How many dead letters there are ([`DEAD_LETTERS_SQL`]).
pub fn dead_letter_count(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(DEAD_LETTERS_SQL, [], |row| row.get(0))
}

/// How many rows became dead letters in the hour up to `now` ([`DEAD_LETTERS_LAST_HOUR_SQL`]).
pub fn dead_letters_last_hour(conn: &Connection, now: Millis) -> rusqlite::Result<i64> {
    conn.query_row(DEAD_LETTERS_LAST_HOUR_SQL, params![now], |row| row.get(0))
}

/// The whole dashboard at `now`: every query above, once.
pub fn snapshot(conn: &Connection, now: Millis) -> rusqlite::Result<Dashboard> {
    Ok(Dashboard {
        due_now: due_now(conn, now)?,
        waiting: waiting(conn, now)?,
        oldest_pending_age: oldest_pending_age(conn, now)?,
        attempts: attempts_histogram(conn)?,
        dead_letters: dead_letter_count(conn)?,
        dead_letters_last_hour: dead_letters_last_hour(conn, now)?,
    })
}
// ANCHOR_END: functions

// ANCHOR: render
/// The width of the label column of the summary lines.
const LABEL_WIDTH: usize = 20;
/// The width of the value column, right-aligned after the labels.
const VALUE_WIDTH: usize = 8;
/// The length of the longest histogram bar.
const BAR_WIDTH: i64 = 40;

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
    let age = dashboard
        .oldest_pending_age
        .map_or_else(|| "-".to_owned(), clock);
    let summary = [
        ("due now", dashboard.due_now.to_string()),
        ("waiting", dashboard.waiting.to_string()),
        ("oldest pending", age),
        ("dead letters", dashboard.dead_letters.to_string()),
        (
            "dead letters (1 h)",
            dashboard.dead_letters_last_hour.to_string(),
        ),
    ];
    let mut text = String::new();
    for (label, value) in summary {
        let _ = writeln!(text, "{label:<LABEL_WIDTH$}{value:>VALUE_WIDTH$}");
    }
    text.push_str("pending rows by attempts\n");
    let largest = dashboard.attempts.iter().map(|&(_, rows)| rows).max();
    match largest {
        Some(largest) if largest > 0 => {
            for &(attempts, rows) in &dashboard.attempts {
                let bar = "#".repeat(bar_length(rows, largest));
                let _ = writeln!(text, "{attempts:>4} | {bar} {rows}");
            }
        }
        _ => text.push_str("  (none)\n"),
    }
    text
}

/// `ceil(rows · BAR_WIDTH / largest)`: the largest bucket gets the full width, any bucket with
/// a row at least one `#`.
fn bar_length(rows: i64, largest: i64) -> usize {
    let scaled = (rows.max(0) * BAR_WIDTH + largest - 1) / largest;
    usize::try_from(scaled).unwrap_or(0)
}
// ANCHOR_END: render

// ANCHOR: alerts
/// The alert rules, in this order: the oldest pending row waited longer than
/// `max_oldest_pending`; more than `max_dead_letters_last_hour` dead letters in the last hour;
/// more than `max_storm_rows` pending rows with `storm_min_attempts` failed attempts or more.
/// Every rule fires only when its value is strictly above its limit.
pub fn alerts(dashboard: &Dashboard, thresholds: &Thresholds) -> Vec<Alert> {
    let mut fired = Vec::new();
    if let Some(age) = dashboard.oldest_pending_age
        && age > thresholds.max_oldest_pending
    {
        fired.push(Alert::OldestPending {
            age,
            limit: thresholds.max_oldest_pending,
        });
    }
    if dashboard.dead_letters_last_hour > thresholds.max_dead_letters_last_hour {
        fired.push(Alert::DeadLetters {
            last_hour: dashboard.dead_letters_last_hour,
            limit: thresholds.max_dead_letters_last_hour,
        });
    }
    let storm_rows: i64 = dashboard
        .attempts
        .iter()
        .filter(|&&(attempts, _)| attempts >= thresholds.storm_min_attempts)
        .map(|&(_, rows)| rows)
        .sum();
    if storm_rows > thresholds.max_storm_rows {
        fired.push(Alert::RetryStorm {
            rows: storm_rows,
            min_attempts: thresholds.storm_min_attempts,
            limit: thresholds.max_storm_rows,
        });
    }
    fired
}
// ANCHOR_END: alerts
