//! The text blocks of the book page, computed by the solution and pinned with insta snapshots
//! that the page includes (`cargo test -p ch19_watching_the_queue_solution book`): the query
//! plans of the dashboard's queries and of their usual mistakes, what each costs on a table
//! with a long history, and the dashboard watching a simulated outbox through two incidents.

use std::fmt::Write as _;

use rusqlite::{Connection, StatementStatus};

use crate::scenario::{self, SEED, Simulation};
use crate::{
    ATTEMPTS_HISTOGRAM_SQL, DEAD_LETTERS_LAST_HOUR_SQL, DEAD_LETTERS_SQL, DUE_NOW_SQL,
    OLDEST_PENDING_AGE_SQL, SECOND, WAITING_SQL,
};

/// The plan of `sql` as SQLite prints it: one step per line, indented under its parent.
fn plan(conn: &Connection, sql: &str) -> String {
    let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let parameters = statement.parameter_count();
    let now = crate::scenario::T0;
    let steps: Vec<(i64, i64, String)> = statement
        .query_map(
            rusqlite::params_from_iter(std::iter::repeat_n(now, parameters)),
            |row| Ok((row.get(0)?, row.get(1)?, row.get(3)?)),
        )
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut depth: Vec<(i64, usize)> = Vec::new();
    let mut text = String::new();
    for (id, parent, detail) in steps {
        let level = depth
            .iter()
            .find(|&&(step, _)| step == parent)
            .map_or(0, |&(_, level)| level + 1);
        depth.push((id, level));
        let _ = writeln!(text, "{}{detail}", "  ".repeat(level + 1));
    }
    text
}

/// The simulation of section 19.7, two and a half minutes in (the broker is down): the schema
/// with a few hundred rows in it.
fn database() -> Simulation {
    let mut simulation = Simulation::new(SEED).unwrap();
    simulation.run_until(150 * SECOND).unwrap();
    simulation
}

/// The dashboard's queries, by name.
const QUERIES: [(&str, &str); 6] = [
    ("DUE_NOW_SQL", DUE_NOW_SQL),
    ("WAITING_SQL", WAITING_SQL),
    ("OLDEST_PENDING_AGE_SQL", OLDEST_PENDING_AGE_SQL),
    ("ATTEMPTS_HISTOGRAM_SQL", ATTEMPTS_HISTOGRAM_SQL),
    ("DEAD_LETTERS_SQL", DEAD_LETTERS_SQL),
    ("DEAD_LETTERS_LAST_HOUR_SQL", DEAD_LETTERS_LAST_HOUR_SQL),
];

#[test]
fn plans() {
    let simulation = database();
    let conn = simulation.conn();
    let mut text = String::new();
    for (name, sql) in QUERIES {
        let _ = write!(text, "{name}\n{}", plan(conn, sql));
    }
    insta::assert_snapshot!(text);
}

/// The usual mistakes: the same counts, written so that the indexes cannot serve them.
const MISTAKES: [(&str, &str); 5] = [
    (
        "waiting, NULL-safe with a function around the column",
        "SELECT COUNT(*) FROM outbox WHERE status = 'pending' AND COALESCE(next_retry_at, 0) > ?1",
    ),
    (
        "due now, written as \"not sent, not failed\"",
        "SELECT COUNT(*) FROM outbox WHERE status NOT IN ('sent', 'failed') AND (next_retry_at IS NULL OR next_retry_at <= ?1)",
    ),
    (
        "due now, without the status",
        "SELECT COUNT(*) FROM outbox WHERE next_retry_at IS NULL OR next_retry_at <= ?1",
    ),
    (
        "oldest pending age, filtered inside the aggregate",
        "SELECT ?1 - MIN(CASE WHEN status = 'pending' THEN created_at END) FROM outbox",
    ),
    (
        "dead letters of the last hour, arithmetic on the column",
        "SELECT COUNT(*) FROM dead_letters WHERE failed_at + 3600000 > ?1",
    ),
];

#[test]
fn mistakes() {
    let simulation = database();
    let conn = simulation.conn();
    let mut text = String::new();
    for (name, sql) in MISTAKES {
        let _ = write!(text, "{name}\n  {sql}\n{}", plan(conn, sql));
    }
    insta::assert_snapshot!(text);
}

/// A table with a month of history: 100,000 sent rows, then 1,000 pending ones written in the
/// last ten minutes (650 due, 350 in backoff), and 100 dead letters, one every ten minutes,
/// six of them in the last hour.
fn history() -> Connection {
    let conn = crate::db::open_in_memory().unwrap();
    conn.execute_batch(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
         INSERT INTO outbox (aggregate_id, event_type, payload, status, created_at)
         SELECT 'order-' || i, 'OrderPlaced', '{{}}', 'sent', {now} - 2592000000 + i * 25000
         FROM n;
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
         INSERT INTO outbox (aggregate_id, event_type, payload, status, attempts, next_retry_at,
                             created_at)
         SELECT 'order-' || (100000 + i), 'OrderPlaced', '{{}}', 'pending', i % 8,
                CASE WHEN i % 8 = 0 THEN NULL
                     WHEN i % 5 < 3 THEN {now} - i * 10
                     ELSE {now} + i * 10 END,
                {now} - 600000 + i * 500
         FROM k;
         WITH RECURSIVE d(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM d WHERE i < 100)
         INSERT INTO dead_letters (id, aggregate_id, event_type, payload, attempts, last_error,
                                   reason, created_at, failed_at)
         SELECT 200000 + i, 'order-' || (200000 + i), 'OrderPlaced', '{{}}', 10,
                '503 Service Unavailable', 'exhausted', {now} - i * 600000 - 300000,
                {now} - i * 600000 + 1 FROM d;",
        now = crate::scenario::T0
    ))
    .unwrap();
    conn
}

/// Runs `sql` to the end at [`crate::scenario::T0`] and reports what it cost SQLite: the
/// virtual machine's steps, and the steps of full scans among them.
fn cost(conn: &Connection, sql: &str) -> (i32, i32, String) {
    let mut statement = conn.prepare(sql).unwrap();
    let parameters = statement.parameter_count();
    let now = crate::scenario::T0;
    let mut rows = statement
        .query(rusqlite::params_from_iter(std::iter::repeat_n(
            now, parameters,
        )))
        .unwrap();
    let mut first = None;
    while let Some(row) = rows.next().unwrap() {
        let value: Option<i64> = row.get(row.as_ref().column_count() - 1).unwrap();
        first.get_or_insert(value);
    }
    drop(rows);
    let result = match first.flatten() {
        Some(value) if sql.contains("GROUP BY") => format!("{value} (first group)"),
        Some(value) => value.to_string(),
        None => "NULL".to_owned(),
    };
    (
        statement.get_status(StatementStatus::VmStep),
        statement.get_status(StatementStatus::FullscanStep),
        result,
    )
}

#[test]
fn costs() {
    let conn = history();
    let mut text = String::from(
        "| query | result | VM steps | of which full-scan steps |\n|---|--:|--:|--:|\n",
    );
    let named = QUERIES
        .iter()
        .map(|&(name, sql)| (format!("`{name}`"), sql))
        .chain(
            MISTAKES
                .iter()
                .map(|&(name, sql)| (format!("mistake: {name}"), sql)),
        );
    for (name, sql) in named {
        let (steps, full_scan, result) = cost(&conn, sql);
        let _ = writeln!(text, "| {name} | {result} | {steps} | {full_scan} |");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn timeline() {
    insta::assert_snapshot!(scenario::timeline(SEED).unwrap());
}

#[test]
fn dashboards() {
    let moments = [150 * SECOND, 390 * SECOND];
    insta::assert_snapshot!(scenario::dashboards(SEED, &moments).unwrap());
}
