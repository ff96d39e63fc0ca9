//! The queries use the schema's indexes where section 19.4 says they should: `EXPLAIN QUERY
//! PLAN` of the learner's SQL constants, on a database built by the given schema. Each check
//! also makes sure the function runs its constant, so the plan read is the plan that runs.

use exercise::{
    ATTEMPTS_HISTOGRAM_SQL, DEAD_LETTERS_LAST_HOUR_SQL, DUE_NOW_SQL, OLDEST_PENDING_AGE_SQL,
    WAITING_SQL,
};
use rusqlite::Connection;

use super::fixture::{NOW, call, mix, plan, run_scalar, show_plan};

/// A step that reads the whole outbox: the table itself, or a whole index of it. Either way
/// every row ever written is visited, sent ones included.
fn scans_outbox(step: &str) -> bool {
    step.starts_with("SCAN outbox")
}

/// A step that searches `index` (a seek, not a walk of the whole index).
fn searches(step: &str, table: &str, index: &str) -> bool {
    step.starts_with(&format!("SEARCH {table} USING")) && step.contains(&format!("INDEX {index} ("))
}

/// Fails unless `function` returns what `sql` itself returns on the mix.
fn runs_its_query(conn: &Connection, name: &str, sql: &str, function: &str, got: Option<i64>) {
    let direct = run_scalar(conn, name, sql, NOW);
    assert_eq!(
        got, direct,
        "{function} returned {got:?} on the seeded mix, but your {name} run directly returns \
         {direct:?}: {function} must run {name}, the query whose plan this check reads"
    );
}

#[test]
fn due_now_uses_due_index() {
    let conn = mix();
    let steps = plan(&conn, "DUE_NOW_SQL", DUE_NOW_SQL);
    let scans = steps.iter().any(|s| scans_outbox(s));
    assert!(
        !scans && steps.iter().any(|s| searches(s, "outbox", "outbox_due")),
        "EXPLAIN QUERY PLAN of your DUE_NOW_SQL:\n{}\n{}",
        show_plan(&steps),
        if scans {
            "`SCAN outbox` visits every row the outbox ever held, sent ones included, on every \
             scrape. Keep `status = 'pending'` as a plain equality on the bare column (not \
             `status <> 'sent'`, not `NOT IN (...)`, no function around it), so SQLite can seek \
             to the pending rows in the index outbox_due (status, next_retry_at)"
        } else {
            "The query does not search the index outbox_due (status, next_retry_at), the index \
             section 19.4 gives the due count: filter on `status = 'pending'` and on \
             next_retry_at, in the outbox table"
        },
    );
    let got = call("due_now(now)", || exercise::due_now(&conn, NOW));
    runs_its_query(&conn, "DUE_NOW_SQL", DUE_NOW_SQL, "due_now(now)", Some(got));
}

#[test]
fn waiting_ranges_over_next_retry_at() {
    let conn = mix();
    let steps = plan(&conn, "WAITING_SQL", WAITING_SQL);
    let ranged = steps
        .iter()
        .any(|s| searches(s, "outbox", "outbox_due") && s.contains("next_retry_at>"));
    assert!(
        ranged && !steps.iter().any(|s| scans_outbox(s)),
        "EXPLAIN QUERY PLAN of your WAITING_SQL:\n{}\nThe plan should seek the pending rows \
         after now in the index outbox_due (status, next_retry_at), shown as `(status=? AND \
         next_retry_at>?)`, and read nothing else. Compare the bare column with the parameter, \
         `next_retry_at > ?1`: a function around the column (`COALESCE(next_retry_at, 0) > ?1`) \
         or arithmetic on it hides it from the index, and NULL > ?1 is never true anyway",
        show_plan(&steps),
    );
    let got = call("waiting(now)", || exercise::waiting(&conn, NOW));
    runs_its_query(&conn, "WAITING_SQL", WAITING_SQL, "waiting(now)", Some(got));
}

#[test]
fn oldest_pending_uses_age_index() {
    let conn = mix();
    let steps = plan(&conn, "OLDEST_PENDING_AGE_SQL", OLDEST_PENDING_AGE_SQL);
    assert!(
        steps.iter().any(|s| searches(s, "outbox", "outbox_age"))
            && !steps.iter().any(|s| scans_outbox(s)),
        "EXPLAIN QUERY PLAN of your OLDEST_PENDING_AGE_SQL:\n{}\nThe plan should search the \
         index outbox_age (status, created_at) by status, shown as `(status=?)`: with `WHERE \
         status = 'pending'` and `MIN(created_at)`, SQLite reads the first pending entry of that \
         index and stops. A step that names the index with no constraint in parentheses has \
         nothing to seek with: a filter inside the aggregate (`MIN(CASE WHEN status = 'pending' \
         …)`) makes SQLite read the whole index, every row the outbox ever held",
        show_plan(&steps),
    );
    let got = call("oldest_pending_age(now)", || {
        exercise::oldest_pending_age(&conn, NOW)
    });
    runs_its_query(
        &conn,
        "OLDEST_PENDING_AGE_SQL",
        OLDEST_PENDING_AGE_SQL,
        "oldest_pending_age(now)",
        got,
    );
}

#[test]
fn histogram_reads_only_pending_rows() {
    let conn = mix();
    let steps = plan(&conn, "ATTEMPTS_HISTOGRAM_SQL", ATTEMPTS_HISTOGRAM_SQL);
    let seeks = steps
        .iter()
        .any(|s| s.starts_with("SEARCH outbox USING") && s.contains("(status=?"));
    assert!(
        seeks && !steps.iter().any(|s| scans_outbox(s)),
        "EXPLAIN QUERY PLAN of your ATTEMPTS_HISTOGRAM_SQL:\n{}\nThe histogram may read every \
         pending row, but only those: the plan should SEARCH the outbox by `status=?` through \
         an index, never SCAN it. Filter with `status = 'pending'` on the bare column",
        show_plan(&steps),
    );
    let got = call("attempts_histogram()", || {
        exercise::attempts_histogram(&conn)
    });
    let mut statement = conn.prepare(ATTEMPTS_HISTOGRAM_SQL).expect("prepares");
    let direct: Vec<(u32, i64)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(|rows| rows.collect())
        .unwrap_or_else(|error| panic!("running your ATTEMPTS_HISTOGRAM_SQL failed: {error}"));
    assert_eq!(
        got, direct,
        "attempts_histogram() returned {got:?} on the seeded mix, but your \
         ATTEMPTS_HISTOGRAM_SQL run directly returns {direct:?}: the function must run the \
         query whose plan this check reads"
    );
}

#[test]
fn last_hour_ranges_over_failed_at() {
    let conn = mix();
    let steps = plan(
        &conn,
        "DEAD_LETTERS_LAST_HOUR_SQL",
        DEAD_LETTERS_LAST_HOUR_SQL,
    );
    let ranged = steps
        .iter()
        .any(|s| searches(s, "dead_letters", "dead_letters_failed_at") && s.contains("failed_at>"));
    assert!(
        ranged,
        "EXPLAIN QUERY PLAN of your DEAD_LETTERS_LAST_HOUR_SQL:\n{}\nThe plan should seek the \
         last hour in the index dead_letters_failed_at, shown as `(failed_at>? AND \
         failed_at<?)`. Put the arithmetic on the parameter side (`failed_at > ?1 - 3600000`), \
         never on the column (`failed_at + 3600000 > ?1` must visit every dead letter)",
        show_plan(&steps),
    );
    let got = call("dead_letters_last_hour(now)", || {
        exercise::dead_letters_last_hour(&conn, NOW)
    });
    runs_its_query(
        &conn,
        "DEAD_LETTERS_LAST_HOUR_SQL",
        DEAD_LETTERS_LAST_HOUR_SQL,
        "dead_letters_last_hour(now)",
        Some(got),
    );
}
