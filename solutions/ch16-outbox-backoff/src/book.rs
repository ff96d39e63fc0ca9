//! The tables of the book page, computed by the solution on seeded randomness and pinned with
//! insta snapshots that the page includes (`cargo test -p ch16_outbox_backoff_solution book`):
//! one row's life in the table, the due-row query's plan with and without its index, and the
//! retry queue's state.

use std::fmt::Write as _;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rusqlite::Connection;

use crate::db::{self, MIGRATIONS};
use crate::queue::QueueState;
use crate::{
    BackoffConfig, DUE_QUERY, Failure, Millis, ORDER_PLACED, Outcome, backoff_ceiling, fetch_due,
    record_failure,
};

/// 2026-01-01 00:00:00 UTC, the moment every story on the page starts.
const T0: Millis = 1_767_225_600_000;
const SEED: u64 = 16;

/// A moment as an offset from [`T0`]: `00:01:02.345`.
fn clock(at: Millis) -> String {
    let ms = at - T0;
    let (h, m, s, milli) = (
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1_000 % 60,
        ms % 1_000,
    );
    format!("{h:02}:{m:02}:{s:02}.{milli:03}")
}

fn optional_clock(at: Option<Millis>) -> String {
    at.map_or_else(|| "NULL".to_owned(), clock)
}

/// What one publish attempt of the story does.
enum Attempt {
    Fails(Failure),
    Succeeds,
}

/// Seconds with their milliseconds: `0.856 s`.
fn seconds(ms: Millis) -> String {
    format!("{:.3} s", ms as f64 / 1e3)
}

/// How long the row waits after this attempt, and why: a backoff draw below its ceiling, the
/// server's hint (capped), or nothing at all.
fn wait(
    failure: &Failure,
    outcome: Outcome,
    now: Millis,
    attempts: u32,
    cfg: &BackoffConfig,
) -> String {
    let hint = match failure {
        Failure::RateLimited { retry_after } | Failure::Overloaded { retry_after } => *retry_after,
        Failure::Transient(_) | Failure::Permanent(_) => None,
    };
    match (outcome, hint) {
        (Outcome::Failed(why), _) => format!("gives up: {why:?}"),
        (Outcome::RetryAt(at), Some(hint)) if hint > cfg.max_hint => {
            format!("{} (hint {hint:?}, capped)", seconds(at - now))
        }
        (Outcome::RetryAt(at), Some(_)) => format!("{} (hint)", seconds(at - now)),
        (Outcome::RetryAt(at), None) => format!(
            "{} of ≤ {}",
            seconds(at - now),
            seconds(backoff_ceiling(attempts, cfg))
        ),
    }
}

/// Drives one row through `script`, as a relay would: each attempt happens the moment the row is
/// due (checked with `fetch_due` at that moment and one millisecond before), and each failure
/// goes through `record_failure`. Returns the story as a Markdown table.
fn row_life(conn: &Connection, cfg: &BackoffConfig, script: Vec<Attempt>) -> String {
    let mut rng = StdRng::seed_from_u64(SEED);
    let id = db::insert_event(conn, 1042, ORDER_PLACED, r#"{"order_id":1042}"#, T0).unwrap();
    let mut table = String::from(
        "| now | publish | wait | attempts | next_retry_at | last_error | status |\n\
         |---|---|---|--:|---|---|---|\n",
    );
    let _ = writeln!(
        table,
        "| {} | (row written) | | 0 | NULL | NULL | pending |",
        clock(T0)
    );
    for attempt in script {
        let row = db::load(conn, id).unwrap();
        let now = row.next_retry_at.unwrap_or(row.created_at);
        let due = |at: Millis| fetch_due(conn, at, 10).unwrap().iter().any(|r| r.id == id);
        assert!(due(now), "the row is due at {now}");
        if row.next_retry_at.is_some() {
            assert!(!due(now - 1), "the row is not due before {now}");
        }
        let (what, wait) = match &attempt {
            Attempt::Succeeds => {
                db::mark_sent(conn, id, now).unwrap();
                ("published".to_owned(), String::new())
            }
            Attempt::Fails(failure) => {
                let outcome = record_failure(conn, id, now, failure, cfg, &mut rng).unwrap();
                let wait = wait(failure, outcome, now, row.attempts + 1, cfg);
                ("fails".to_owned(), wait)
            }
        };
        let row = db::load(conn, id).unwrap();
        let _ = writeln!(
            table,
            "| {} | {what} | {wait} | {} | {} | {} | {} |",
            clock(now),
            row.attempts,
            optional_clock(row.next_retry_at),
            row.last_error.as_deref().unwrap_or("NULL"),
            row.status,
        );
    }
    table
}

#[test]
fn timeline() {
    let conn = db::open_in_memory().unwrap();
    let cfg = BackoffConfig::default();
    let script = vec![
        Attempt::Fails(Failure::Transient("connection refused".into())),
        Attempt::Fails(Failure::Transient("connection refused".into())),
        Attempt::Fails(Failure::Transient("timed out after 5 s".into())),
        Attempt::Fails(Failure::RateLimited {
            retry_after: Some(Duration::from_secs(30)),
        }),
        Attempt::Fails(Failure::Overloaded { retry_after: None }),
        Attempt::Fails(Failure::Overloaded {
            retry_after: Some(Duration::from_secs(2 * 3_600)),
        }),
        Attempt::Succeeds,
    ];
    insta::assert_snapshot!(row_life(&conn, &cfg, script));
}

#[test]
fn endings() {
    let cfg = BackoffConfig {
        max_attempts: 4,
        ..BackoffConfig::default()
    };
    let poison = vec![Attempt::Fails(Failure::Permanent(
        "payload rejected: field \"order\" must be a string".into(),
    ))];
    let down = (0..4)
        .map(|_| Attempt::Fails(Failure::Transient("connection refused".into())))
        .collect();
    let text = format!(
        "A permanent failure:\n\n{}\nA broker that stays down, with max_attempts = 4:\n\n{}",
        row_life(&db::open_in_memory().unwrap(), &cfg, poison),
        row_life(&db::open_in_memory().unwrap(), &cfg, down),
    );
    insta::assert_snapshot!(text);
}

/// The query plan of `sql` (its parameters bound to 0) drawn as SQLite's shell draws it.
pub(crate) fn query_plan(conn: &Connection, sql: &str) -> String {
    let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let zeros = vec![0; statement.parameter_count()];
    let steps: Vec<(i64, i64, String)> = statement
        .query_map(rusqlite::params_from_iter(zeros), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(3)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut text = String::from("QUERY PLAN\n");
    draw_steps(&steps, 0, "", &mut text);
    text
}

/// Appends the children of step `parent`, each under its parent with `|--` or `` `-- ``.
fn draw_steps(steps: &[(i64, i64, String)], parent: i64, indent: &str, text: &mut String) {
    let children: Vec<&(i64, i64, String)> = steps.iter().filter(|s| s.1 == parent).collect();
    for (i, (id, _, detail)) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let _ = writeln!(text, "{indent}{}{detail}", if last { "`--" } else { "|--" });
        let deeper = format!("{indent}{}", if last { "   " } else { "|  " });
        draw_steps(steps, *id, &deeper, text);
    }
}

/// The indexes the page compares, and whether the query keeps its range term: `(label, index,
/// range term)`. Migration 003 is the last two.
const CANDIDATES: [(&str, &str, bool); 6] = [
    ("no index (migrations 001 and 002 only)", "", true),
    (
        "chapter 15's index on (status, created_at, id)",
        "CREATE INDEX outbox_pending ON outbox (status, created_at, id);",
        true,
    ),
    (
        "an index on next_retry_at",
        "CREATE INDEX outbox_next ON outbox (next_retry_at);",
        true,
    ),
    (
        "an index on (status, next_retry_at)",
        "CREATE INDEX outbox_status_next ON outbox (status, next_retry_at);",
        true,
    ),
    (
        "migration 003, query without the COALESCE(…) <= ?1 term",
        "",
        false,
    ),
    ("migration 003, the query with it", "", true),
];

#[test]
fn plans() {
    let range_term = "  AND COALESCE(next_retry_at, created_at) <= ?1\n";
    assert!(
        DUE_QUERY.contains(range_term),
        "the range term is in DUE_QUERY"
    );
    let mut text = String::new();
    for (label, index, with_range) in CANDIDATES {
        let conn = Connection::open_in_memory().unwrap();
        for (_, sql) in &MIGRATIONS[..2] {
            conn.execute_batch(sql).unwrap();
        }
        let index = if label.starts_with("migration 003") {
            MIGRATIONS[2].1
        } else {
            index
        };
        conn.execute_batch(index).unwrap();
        let query = if with_range {
            DUE_QUERY.to_owned()
        } else {
            DUE_QUERY.replace(range_term, "")
        };
        let _ = writeln!(text, "== {label}\n{}", query_plan(&conn, &query));
    }
    insta::assert_snapshot!(text);
}

// ANCHOR: neighbour
/// A neighbouring problem, for the page: an operator's view of the rows that failed for good
/// since a moment `?1`, the latest first. Its index is partial (only failed rows) and keyed on
/// the view's own ORDER BY.
const RECENT_FAILURES_INDEX: &str = "\
CREATE INDEX outbox_recent_failures
    ON outbox (last_attempt_at)
    WHERE status = 'failed';";

const RECENT_FAILURES: &str = "\
SELECT * FROM outbox
WHERE status = 'failed' AND last_attempt_at >= ?1
ORDER BY last_attempt_at DESC
LIMIT ?2";
// ANCHOR_END: neighbour

#[test]
fn neighbour() {
    let conn = Connection::open_in_memory().unwrap();
    for (_, sql) in &MIGRATIONS[..2] {
        conn.execute_batch(sql).unwrap();
    }
    let mut text = format!("== no index\n{}", query_plan(&conn, RECENT_FAILURES));
    conn.execute_batch(RECENT_FAILURES_INDEX).unwrap();
    let with_parameter = RECENT_FAILURES.replace("status = 'failed'", "status = ?3");
    let _ = write!(
        text,
        "== the partial index\n{}== the partial index, status bound as ?3\n{}",
        query_plan(&conn, RECENT_FAILURES),
        query_plan(&conn, &with_parameter),
    );
    insta::assert_snapshot!(text);
}

#[test]
fn queue_state() {
    let conn = db::open_in_memory().unwrap();
    let cfg = BackoffConfig::default();
    let mut rng = StdRng::seed_from_u64(SEED);
    // A burst of 100 events in the first 10 s. The broker is down for the first minute; two
    // events (ids 40 and 80) carry a payload it will never accept.
    for i in 0..100 {
        db::insert_event(&conn, 1000 + i, ORDER_PLACED, "{}", T0 + i * 100).unwrap();
    }
    let down = Failure::Transient("connection refused".into());
    let poison = Failure::Permanent("payload rejected".into());
    let mut text = String::new();
    // The relay wakes every 5 s and takes at most 50 due rows; the state is read every 10 s.
    for now in (1..=20).map(|poll| T0 + poll * 5_000) {
        for row in fetch_due(&conn, now, 50).unwrap() {
            if row.id % 40 == 0 {
                record_failure(&conn, row.id, now, &poison, &cfg, &mut rng).unwrap();
            } else if now < T0 + 60_000 {
                record_failure(&conn, row.id, now, &down, &cfg, &mut rng).unwrap();
            } else {
                db::mark_sent(&conn, row.id, now).unwrap();
            }
        }
        if (now - T0) % 10_000 == 0 {
            let state = QueueState::read(&conn, now).unwrap();
            let _ = writeln!(text, "{}  {state}", clock(now));
        }
    }
    insta::assert_snapshot!(text);
}
