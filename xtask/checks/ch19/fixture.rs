//! Shared by the checks of chapter 19: databases seeded with the checks' own SQL (never through
//! the learner's code), the learner's functions called with panics and errors turned into
//! readable failures, and query plans. No checks live here.

use std::time::Duration;

use exercise::{Dashboard, Millis};
use rusqlite::{Connection, params};

use super::support::{catch, show};

/// 2026-01-01 00:00:00 UTC: "now" in every check.
pub const NOW: Millis = 1_767_225_600_000;
pub const SECOND: Millis = 1_000;
pub const MINUTE: Millis = 60 * SECOND;
pub const HOUR: Millis = 60 * MINUTE;

/// A span of milliseconds, readable: `1.5 s`, `30 min`, `-2 s`.
pub fn ms(value: Millis) -> String {
    let shown = show(Duration::from_millis(value.unsigned_abs()));
    if value < 0 {
        format!("-{shown}")
    } else {
        shown
    }
}

/// A moment relative to [`NOW`]: `now`, `now + 1 ms`, `now - 30 min`.
pub fn rel(at: Millis) -> String {
    match at - NOW {
        0 => "now".to_owned(),
        d if d > 0 => format!("now + {}", ms(d)),
        d => format!("now - {}", ms(-d)),
    }
}

/// A fresh in-memory database with the given schema.
pub fn database() -> Connection {
    match catch(exercise::db::open_in_memory) {
        Ok(Ok(conn)) => conn,
        Ok(Err(error)) => panic!("db::open_in_memory() failed, so no check can run: {error}"),
        Err(message) => panic!("db::open_in_memory() panicked: {message}"),
    }
}

/// One outbox row as a check seeds it.
#[derive(Clone, Debug)]
pub struct Row {
    pub id: i64,
    pub status: &'static str,
    pub attempts: u32,
    pub next_retry_at: Option<Millis>,
    pub created_at: Millis,
}

impl Row {
    /// A pending row never tried: attempts 0, next_retry_at NULL.
    pub fn new(id: i64, created_at: Millis) -> Self {
        Self {
            id,
            status: "pending",
            attempts: 0,
            next_retry_at: None,
            created_at,
        }
    }

    /// A pending row that failed `attempts` times and is due again at `next_retry_at`.
    pub fn retrying(id: i64, created_at: Millis, attempts: u32, next_retry_at: Millis) -> Self {
        Self {
            attempts,
            next_retry_at: Some(next_retry_at),
            ..Self::new(id, created_at)
        }
    }

    pub fn status(mut self, status: &'static str) -> Self {
        self.status = status;
        self
    }

    /// When a row that has failed was last tried: halfway between its creation and now, so a
    /// query that reads the wrong time column (an age since the last attempt) gives another
    /// answer. `None` for a row never tried.
    pub fn last_attempt_at(&self) -> Option<Millis> {
        (self.attempts > 0).then(|| self.created_at + (NOW - self.created_at).max(0) / 2)
    }

    pub fn insert(&self, conn: &Connection) {
        conn.execute(
            "INSERT INTO outbox (id, aggregate_id, event_type, payload, status, attempts,
                                 next_retry_at, last_attempt_at, created_at)
             VALUES (?1, 'order-' || ?1, 'OrderPlaced', '{}', ?2, ?3, ?4, ?5, ?6)",
            params![
                self.id,
                self.status,
                self.attempts,
                self.next_retry_at,
                self.last_attempt_at(),
                self.created_at
            ],
        )
        .expect("seeding an outbox row");
    }

    /// "row 4 (pending, attempts 2, next_retry_at = now, created_at = now - 3 min)".
    pub fn describe(&self) -> String {
        let next = self.next_retry_at.map_or_else(|| "NULL".to_owned(), rel);
        format!(
            "row {} ({}, attempts {}, next_retry_at = {next}, created_at = {})",
            self.id,
            self.status,
            self.attempts,
            rel(self.created_at)
        )
    }
}

/// The rows, one per line, for a message.
pub fn describe_all(rows: &[Row]) -> String {
    rows.iter()
        .map(|row| format!("  {}", row.describe()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A database holding exactly `rows` (and no dead letters).
pub fn with_rows(rows: &[Row]) -> Connection {
    let conn = database();
    for row in rows {
        row.insert(&conn);
    }
    conn
}

/// Writes one dead letter that failed at `failed_at`.
pub fn insert_dead_letter(conn: &Connection, id: i64, failed_at: Millis) {
    conn.execute(
        "INSERT INTO dead_letters (id, aggregate_id, event_type, payload, attempts, last_error,
                                   reason, created_at, failed_at)
         VALUES (?1, 'order-' || ?1, 'OrderPlaced', '{}', 10, '503 Service Unavailable',
                 'exhausted', ?2 - 600000, ?2)",
        params![id, failed_at],
    )
    .expect("seeding a dead letter");
}

/// The dead letters of the mix: one two hours old, one exactly an hour old (outside the last
/// hour), one an hour minus a millisecond old, one ten minutes old, one failed right now.
pub fn mix_dead_letters() -> Vec<Millis> {
    vec![
        NOW - 2 * HOUR,
        NOW - HOUR,
        NOW - HOUR + 1,
        NOW - 10 * MINUTE,
        NOW,
    ]
}

/// The seeded mix every exact-value check ends with: pending rows due and waiting (both sides
/// of `now`), sent and failed rows that must never count (some keep the schedule of their last
/// retry, and some are older than any pending row), and five dead letters.
pub fn mix_rows() -> Vec<Row> {
    vec![
        Row::new(1, NOW - 30 * MINUTE),
        Row::new(2, NOW - SECOND),
        Row::retrying(3, NOW - 20 * MINUTE, 1, NOW - 5 * SECOND),
        Row::retrying(4, NOW - 10 * MINUTE, 2, NOW),
        Row::retrying(5, NOW - 10 * MINUTE, 2, NOW + 1),
        Row::retrying(6, NOW - 25 * MINUTE, 3, NOW + 10 * MINUTE),
        Row::retrying(7, NOW - 15 * MINUTE, 7, NOW + MINUTE),
        Row::retrying(8, NOW - 5 * MINUTE, 3, NOW - 1),
        Row::retrying(9, NOW - 2 * HOUR, 4, NOW - HOUR).status("sent"),
        Row::retrying(10, NOW - 3 * HOUR, 1, NOW + 5 * MINUTE).status("sent"),
        Row::new(11, NOW - 50 * MINUTE).status("sent"),
        Row::new(12, NOW - 4 * HOUR).status("failed"),
        Row::retrying(13, NOW - 40 * MINUTE, 3, NOW + 30 * SECOND).status("failed"),
    ]
}

/// The database of the mix.
pub fn mix() -> Connection {
    let conn = with_rows(&mix_rows());
    for (id, failed_at) in (1..).zip(mix_dead_letters()) {
        insert_dead_letter(&conn, id, failed_at);
    }
    conn
}

/// What the dashboard of the mix must say at [`NOW`].
pub fn mix_dashboard() -> Dashboard {
    Dashboard {
        due_now: 5,
        waiting: 3,
        oldest_pending_age: Some(30 * MINUTE),
        attempts: vec![(0, 2), (1, 1), (2, 2), (3, 2), (7, 1)],
        dead_letters: 5,
        dead_letters_last_hour: 3,
    }
}

/// Calls one of the learner's query functions; a panic or an error fails the check with its name.
pub fn call<T>(name: &str, f: impl FnOnce() -> rusqlite::Result<T>) -> T {
    match catch(f) {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => panic!("{name} returned an error: {error}"),
        Err(message) => panic!("{name} panicked: {message}"),
    }
}

/// The steps of the query plan of `sql` (the `detail` column), every parameter bound to [`NOW`].
pub fn plan(conn: &Connection, name: &str, sql: &str) -> Vec<String> {
    assert!(
        !sql.trim().is_empty(),
        "{name} is empty: write the query there (and run it in its function), so that its plan \
         can be read"
    );
    let mut statement = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap_or_else(|error| {
            panic!("EXPLAIN QUERY PLAN of your {name} failed: {error}. {name}:\n{sql}")
        });
    let parameters = statement.parameter_count();
    statement
        .query_map(
            rusqlite::params_from_iter(std::iter::repeat_n(NOW, parameters)),
            |row| row.get::<_, String>(3),
        )
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
        .unwrap_or_else(|error| panic!("EXPLAIN QUERY PLAN of your {name} failed: {error}"))
}

/// A plan, one indented step per line, for a message.
pub fn show_plan(steps: &[String]) -> String {
    steps
        .iter()
        .map(|step| format!("  {step}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `sql` on `conn` with every parameter bound to `now` and reads the first column of the
/// first row as an integer (None for NULL or no row).
pub fn run_scalar(conn: &Connection, name: &str, sql: &str, now: Millis) -> Option<i64> {
    let mut statement = conn
        .prepare(sql)
        .unwrap_or_else(|error| panic!("your {name} does not prepare: {error}"));
    let parameters = statement.parameter_count();
    let mut rows = statement
        .query(rusqlite::params_from_iter(std::iter::repeat_n(
            now, parameters,
        )))
        .unwrap_or_else(|error| panic!("running your {name} failed: {error}"));
    match rows.next() {
        Ok(Some(row)) => row.get::<_, Option<i64>>(0).unwrap_or_else(|error| {
            panic!("the first column of your {name} is not an integer: {error}")
        }),
        Ok(None) => None,
        Err(error) => panic!("running your {name} failed: {error}"),
    }
}
