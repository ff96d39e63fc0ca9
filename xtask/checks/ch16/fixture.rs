//! Shared by the checks of chapter 16: a migrated in-memory database, rows seeded with plain SQL
//! (never through the learner's code), the learner's functions called with panics and errors
//! turned into readable failures, and the ceiling the checks hold delays to. No checks live here.

use std::time::Duration;

use exercise::db::{load, open_in_memory};
use exercise::{BackoffConfig, Failure, Millis, OutboxRow, Outcome};
use rusqlite::{Connection, params};

use rand::rngs::StdRng;

use super::support::{catch, show};

/// 2026-01-01 00:00:00 UTC: "now" in every check unless it says otherwise.
pub const T0: Millis = 1_767_225_600_000;
pub const SECOND: Millis = 1_000;
pub const MINUTE: Millis = 60 * SECOND;
pub const HOUR: Millis = 60 * MINUTE;

/// A number of milliseconds, readable: `1.5 s`, `250 ms`, `-2 s`.
pub fn ms(value: Millis) -> String {
    let shown = show(Duration::from_millis(value.unsigned_abs()));
    if value < 0 {
        format!("-{shown}")
    } else {
        shown
    }
}

/// A moment relative to `now`: `now`, `now + 1.5 s`, `now - 2 s`.
pub fn rel(at: Millis, now: Millis) -> String {
    match at - now {
        0 => "now".to_owned(),
        d if d > 0 => format!("now + {}", ms(d)),
        d => format!("now - {}", ms(-d)),
    }
}

/// A fresh in-memory database with every migration applied, including yours (003).
pub fn database() -> Connection {
    match catch(open_in_memory) {
        Ok(Ok(conn)) => conn,
        Ok(Err(error)) => panic!(
            "the migrations failed, so no check can run: {error}. Look at your \
             src/migrations/003_due_index.sql: it must hold valid SQLite (or only comments)"
        ),
        Err(message) => panic!("db::open_in_memory() panicked: {message}"),
    }
}

/// One row as a check seeds it, with plain SQL.
#[derive(Clone, Debug)]
pub struct Seed {
    pub id: i64,
    pub status: &'static str,
    pub created_at: Millis,
    pub attempts: u32,
    pub next_retry_at: Option<Millis>,
}

impl Seed {
    /// A pending row never tried: attempts 0, next_retry_at NULL.
    pub fn new(id: i64, created_at: Millis) -> Self {
        Self {
            id,
            status: "pending",
            created_at,
            attempts: 0,
            next_retry_at: None,
        }
    }

    /// A pending row that failed `attempts` times and waits for `next_retry_at`.
    pub fn waiting(id: i64, created_at: Millis, attempts: u32, next_retry_at: Millis) -> Self {
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

    pub fn insert(&self, conn: &Connection) {
        conn.execute(
            "INSERT INTO outbox (id, aggregate_id, event_type, payload, status, created_at,
                                 attempts, next_retry_at)
             VALUES (?1, ?1, 'OrderPlaced', '{}', ?2, ?3, ?4, ?5)",
            params![
                self.id,
                self.status,
                self.created_at,
                self.attempts,
                self.next_retry_at
            ],
        )
        .expect("seeding a row");
    }

    /// The row's sort key in the due-row query: COALESCE(next_retry_at, created_at).
    pub fn due_key(&self) -> Millis {
        self.next_retry_at.unwrap_or(self.created_at)
    }

    /// "row 3 (next_retry_at = now - 2 s, created_at = now - 40 s)".
    pub fn describe(&self, now: Millis) -> String {
        let next = self
            .next_retry_at
            .map_or_else(|| "NULL".to_owned(), |at| rel(at, now));
        let status = if self.status == "pending" {
            String::new()
        } else {
            format!("status '{}', ", self.status)
        };
        format!(
            "row {} ({status}next_retry_at = {next}, created_at = {})",
            self.id,
            rel(self.created_at, now)
        )
    }
}

pub fn insert_all(conn: &Connection, seeds: &[Seed]) {
    for seed in seeds {
        seed.insert(conn);
    }
}

/// The row with this id, read back after the learner's code ran.
pub fn row(conn: &Connection, id: i64) -> OutboxRow {
    load(conn, id).unwrap_or_else(|error| panic!("reading row {id} back failed: {error}"))
}

/// The learner's `fetch_due`, with a panic or an error turned into a readable failure.
pub fn fetch_due(conn: &Connection, now: Millis, limit: usize) -> Vec<OutboxRow> {
    match catch(|| exercise::fetch_due(conn, now, limit)) {
        Ok(Ok(rows)) => rows,
        Ok(Err(error)) => panic!("fetch_due(now, limit = {limit}) returned an error: {error}"),
        Err(message) => panic!("fetch_due(now, limit = {limit}) panicked: {message}"),
    }
}

/// The ids `fetch_due` returns.
pub fn due_ids(conn: &Connection, now: Millis, limit: usize) -> Vec<i64> {
    fetch_due(conn, now, limit).iter().map(|r| r.id).collect()
}

/// The learner's `record_failure`, drawing from `rng`.
pub fn record_failure(
    conn: &Connection,
    id: i64,
    now: Millis,
    failure: &Failure,
    cfg: &BackoffConfig,
    rng: &mut StdRng,
) -> Outcome {
    match catch(|| exercise::record_failure(conn, id, now, failure, cfg, rng)) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(error)) => panic!(
            "record_failure(row {id}, failure = {}) returned an error: {error}",
            short(failure)
        ),
        Err(message) => panic!(
            "record_failure(row {id}, failure = {}) panicked: {message}",
            short(failure)
        ),
    }
}

/// The learner's `next_retry_at`, drawing from `rng`, with a panic turned into a readable
/// failure.
pub fn next_retry_at(now: Millis, attempts: u32, cfg: &BackoffConfig, rng: &mut StdRng) -> Millis {
    catch(|| exercise::next_retry_at(now, attempts, cfg, rng)).unwrap_or_else(|message| {
        panic!(
            "next_retry_at(now, attempts = {attempts}, {}) panicked: {message}",
            describe(cfg)
        )
    })
}

/// A configuration in milliseconds.
pub fn config(base: Millis, cap: Millis, max_hint: Millis, max_attempts: u32) -> BackoffConfig {
    BackoffConfig {
        base: Duration::from_millis(base as u64),
        cap: Duration::from_millis(cap as u64),
        max_hint: Duration::from_millis(max_hint as u64),
        max_attempts,
    }
}

/// "base = 1 s, cap = 60 s".
pub fn describe(cfg: &BackoffConfig) -> String {
    format!("base = {}, cap = {}", show(cfg.base), show(cfg.cap))
}

/// `min(cap, base · 2^(attempts − 1))` in milliseconds, with attempts = 0 read as 1.
pub fn ceiling(attempts: u32, cfg: &BackoffConfig) -> Millis {
    let doublings = attempts.saturating_sub(1);
    let exponential = cfg
        .base
        .as_millis()
        .saturating_mul(2u128.saturating_pow(doublings));
    Millis::try_from(exponential.min(cfg.cap.as_millis())).unwrap_or(Millis::MAX)
}

/// A failure for a message, its text cut short: `Transient("ééééé…" (601 bytes))`.
pub fn short(failure: &Failure) -> String {
    let cut = |text: &str| {
        if text.len() <= 40 {
            format!("{text:?}")
        } else {
            let head: String = text.chars().take(12).collect();
            format!("\"{head}…\" ({} bytes)", text.len())
        }
    };
    match failure {
        Failure::Transient(text) => format!("Transient({})", cut(text)),
        Failure::Permanent(text) => format!("Permanent({})", cut(text)),
        other => format!("{other:?}"),
    }
}

/// An outcome with its moment relative to `now`: `RetryAt(now + 10 s)`, `Failed(Permanent)`.
pub fn show_outcome(outcome: Outcome, now: Millis) -> String {
    match outcome {
        Outcome::RetryAt(at) => format!("RetryAt({})", rel(at, now)),
        Outcome::Failed(why) => format!("Failed({why:?})"),
    }
}
