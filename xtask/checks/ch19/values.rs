//! Exact values on seeded data: each query function, first on small cases that isolate one
//! rule (a boundary, a status), then on the mix of `fixture::mix`, then the whole snapshot and
//! an empty database.

use exercise::{Dashboard, Millis};
use rusqlite::Connection;

use super::fixture::{
    HOUR, MINUTE, NOW, Row, SECOND, call, database, describe_all, insert_dead_letter, mix,
    mix_dashboard, mix_dead_letters, mix_rows, ms, rel, with_rows,
};

/// A small case: the rows, what they show, and the value the function must return.
struct Case<T> {
    what: &'static str,
    rows: Vec<Row>,
    expected: T,
    rule: &'static str,
}

fn case<T>(what: &'static str, rows: Vec<Row>, expected: T, rule: &'static str) -> Case<T> {
    Case {
        what,
        rows,
        expected,
        rule,
    }
}

/// Runs `f` on each case's database, then on the mix, and fails at the first wrong value.
fn check_cases<T: PartialEq + std::fmt::Debug>(
    name: &str,
    cases: Vec<Case<T>>,
    mix_expected: T,
    f: impl Fn(&Connection) -> rusqlite::Result<T>,
) {
    for case in cases {
        let conn = with_rows(&case.rows);
        let got = call(name, || f(&conn));
        assert!(
            got == case.expected,
            "with {}, {name} returned {got:?}; expected {:?}: {}. The rows:\n{}",
            case.what,
            case.expected,
            case.rule,
            describe_all(&case.rows),
        );
    }
    let conn = mix();
    let got = call(name, || f(&conn));
    assert!(
        got == mix_expected,
        "on the seeded mix, {name} returned {got:?}; expected {mix_expected:?}. The outbox \
         rows:\n{}",
        describe_all(&mix_rows()),
    );
}

/// Past any round number a query might cap its count at (1,000, 10,000).
const SCALE: i64 = 10_200;
/// Attempts values 0 to 300: past any fixed number of histogram buckets, and past a u8.
const SCALE_BUCKETS: i64 = 301;

/// A queue at scale, seeded by SQLite itself: `due` pending rows due now (those with no
/// attempts never tried), then `waiting` pending rows in backoff, their attempts `id % 301`,
/// and `dead` dead letters, all but the first 100 of them in the last hour.
fn at_scale(due: i64, waiting: i64, dead: i64) -> Connection {
    let conn = database();
    conn.execute_batch(&format!(
        "WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < {rows})
         INSERT INTO outbox (id, aggregate_id, event_type, payload, status, attempts,
                             next_retry_at, created_at)
         SELECT id, 'order-' || id, 'OrderPlaced', '{{}}', 'pending', id % {buckets},
                CASE WHEN id > {due} THEN {now} + id
                     WHEN id % {buckets} = 0 THEN NULL
                     ELSE {now} - id END,
                {now} - {hour} - id
           FROM n WHERE {rows} > 0;
         WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < {dead})
         INSERT INTO dead_letters (id, aggregate_id, event_type, payload, attempts, last_error,
                                   reason, created_at, failed_at)
         SELECT id, 'order-' || id, 'OrderPlaced', '{{}}', 10, '503 Service Unavailable',
                'exhausted', {now} - 2 * {hour},
                CASE WHEN id <= 100 THEN {now} - {hour} - id ELSE {now} - id END
           FROM n WHERE {dead} > 0;",
        rows = due + waiting,
        buckets = SCALE_BUCKETS,
        now = NOW,
        hour = HOUR,
    ))
    .expect("seeding a queue at scale");
    conn
}

/// Runs `f` on `conn`, a queue at scale described by `what`, and fails unless it returns
/// `expected`.
fn check_at_scale<T: PartialEq + std::fmt::Debug>(
    conn: &Connection,
    what: &str,
    name: &str,
    expected: T,
    shown: impl Fn(&T) -> String,
    f: impl Fn(&Connection) -> rusqlite::Result<T>,
) {
    let got = call(name, || f(conn));
    assert!(
        got == expected,
        "on a queue of {what}, {name} returned {}; expected {}. Every figure is exact however \
         large: no LIMIT inside a count, one histogram pair per attempts value, no ceiling of \
         the query's own",
        shown(&got),
        shown(&expected),
    );
}

#[test]
fn due_now_exact() {
    let cases = vec![
        case(
            "one pending row never tried (next_retry_at NULL)",
            vec![Row::new(1, NOW - MINUTE)],
            1,
            "a row never tried is due at once",
        ),
        case(
            "one pending row whose next_retry_at is exactly now",
            vec![Row::retrying(1, NOW - MINUTE, 2, NOW)],
            1,
            "a row is due at its next_retry_at, not a millisecond later: next_retry_at <= ?1",
        ),
        case(
            "one pending row due a millisecond from now",
            vec![Row::retrying(1, NOW - MINUTE, 2, NOW + 1)],
            0,
            "a row whose next_retry_at is after now is waiting, not due",
        ),
        case(
            "one sent row whose next_retry_at (left from its last retry) is an hour ago",
            vec![Row::retrying(1, NOW - 2 * HOUR, 4, NOW - HOUR).status("sent")],
            0,
            "only rows with status = 'pending' are in the queue; sent rows never count",
        ),
        case(
            "one failed row (next_retry_at NULL)",
            vec![Row::new(1, NOW - HOUR).status("failed")],
            0,
            "only rows with status = 'pending' are in the queue; failed rows never count",
        ),
    ];
    check_cases("due_now(now)", cases, mix_dashboard().due_now, |conn| {
        exercise::due_now(conn, NOW)
    });
    let conn = at_scale(SCALE, 1, 0);
    let what = "10,200 pending rows due (some never tried) and one waiting";
    check_at_scale(&conn, what, "due_now(now)", SCALE, i64::to_string, |conn| {
        exercise::due_now(conn, NOW)
    });
}

#[test]
fn waiting_exact() {
    let cases = vec![
        case(
            "one pending row never tried (next_retry_at NULL)",
            vec![Row::new(1, NOW - MINUTE)],
            0,
            "a row never tried is due, not waiting",
        ),
        case(
            "one pending row whose next_retry_at is exactly now",
            vec![Row::retrying(1, NOW - MINUTE, 2, NOW)],
            0,
            "a row is due at its next_retry_at, so it is no longer waiting: next_retry_at > ?1",
        ),
        case(
            "one pending row due a millisecond from now",
            vec![Row::retrying(1, NOW - MINUTE, 2, NOW + 1)],
            1,
            "a row whose next_retry_at is after now is waiting",
        ),
        case(
            "one sent row whose next_retry_at (left from its last retry) is in 5 minutes",
            vec![Row::retrying(1, NOW - 3 * HOUR, 1, NOW + 5 * MINUTE).status("sent")],
            0,
            "only rows with status = 'pending' are in the queue; sent rows never count",
        ),
        case(
            "one failed row whose next_retry_at is in 30 s",
            vec![Row::retrying(1, NOW - HOUR, 3, NOW + 30 * SECOND).status("failed")],
            0,
            "only rows with status = 'pending' are in the queue; failed rows never count",
        ),
    ];
    check_cases("waiting(now)", cases, mix_dashboard().waiting, |conn| {
        exercise::waiting(conn, NOW)
    });
    let conn = at_scale(1, SCALE, 0);
    let what = "one pending row due and 10,200 waiting";
    check_at_scale(&conn, what, "waiting(now)", SCALE, i64::to_string, |conn| {
        exercise::waiting(conn, NOW)
    });
}

#[test]
fn oldest_pending_age_exact() {
    let cases = vec![
        case(
            "one pending row created 90 s ago",
            vec![Row::new(1, NOW - 90 * SECOND)],
            Some(90 * SECOND),
            "the age is now − created_at, in milliseconds",
        ),
        case(
            "pending rows created 30 min and 1 s ago",
            vec![Row::new(1, NOW - SECOND), Row::new(2, NOW - 30 * MINUTE)],
            Some(30 * MINUTE),
            "the age is that of the oldest pending row: now − MIN(created_at)",
        ),
        case(
            "a pending row created 10 min ago that has failed twice since (last tried 5 min ago)",
            vec![Row::retrying(1, NOW - 10 * MINUTE, 2, NOW + SECOND)],
            Some(10 * MINUTE),
            "the age counts from created_at, when the event was written, not from its last \
             attempt: a retried event has waited all along",
        ),
        case(
            "a sent row created 2 h ago and a pending row created 1 min ago",
            vec![
                Row::new(1, NOW - 2 * HOUR).status("sent"),
                Row::retrying(2, NOW - MINUTE, 1, NOW + SECOND),
            ],
            Some(MINUTE),
            "only pending rows count; a sent row is not waiting for anything",
        ),
        case(
            "only a sent and a failed row",
            vec![
                Row::new(1, NOW - 2 * HOUR).status("sent"),
                Row::new(2, NOW - HOUR).status("failed"),
            ],
            None,
            "with no pending row there is no age: MIN over no rows is NULL, which reads as None",
        ),
        case(
            "a pending row created 60 days ago (more milliseconds than an i32 or a u32 holds)",
            vec![Row::new(1, NOW - 1_440 * HOUR), Row::new(2, NOW - MINUTE)],
            Some(1_440 * HOUR),
            "the age is a Millis (i64), exact however old the row",
        ),
    ];
    check_cases(
        "oldest_pending_age(now)",
        cases,
        mix_dashboard().oldest_pending_age,
        |conn| exercise::oldest_pending_age(conn, NOW),
    );
}

#[test]
fn attempts_histogram_exact() {
    let cases = vec![
        case(
            "pending rows with 3, 0, 3 and 1 failed attempts, inserted in that order",
            vec![
                Row::retrying(1, NOW - MINUTE, 3, NOW + SECOND),
                Row::new(2, NOW - MINUTE),
                Row::retrying(3, NOW - MINUTE, 3, NOW - SECOND),
                Row::retrying(4, NOW - MINUTE, 1, NOW + MINUTE),
            ],
            vec![(0, 1), (1, 1), (3, 2)],
            "one (attempts, rows) pair per attempts value present, in ascending order of attempts",
        ),
        case(
            "a pending row with 2 attempts, a sent row with 4 and a failed row with 10",
            vec![
                Row::retrying(1, NOW - MINUTE, 2, NOW + SECOND),
                Row::retrying(2, NOW - HOUR, 4, NOW - HOUR).status("sent"),
                Row::retrying(3, NOW - HOUR, 10, NOW - HOUR).status("failed"),
            ],
            vec![(2, 1)],
            "only pending rows are in the queue; sent and failed rows never count",
        ),
    ];
    check_cases(
        "attempts_histogram()",
        cases,
        mix_dashboard().attempts,
        exercise::attempts_histogram,
    );
    let shown = |pairs: &Vec<(u32, i64)>| match (pairs.first(), pairs.last()) {
        (Some(first), Some(last)) => format!("{} pairs, from {first:?} to {last:?}", pairs.len()),
        _ => "no pairs".to_owned(),
    };
    // 602 pending rows, attempts 0 to 300 twice over: two rows per value.
    let conn = at_scale(301, 301, 0);
    let expected: Vec<(u32, i64)> = (0..301).map(|attempts| (attempts, 2)).collect();
    check_at_scale(
        &conn,
        "602 pending rows, two with each attempts value from 0 to 300",
        "attempts_histogram()",
        expected,
        shown,
        exercise::attempts_histogram,
    );
}

#[test]
fn dead_letter_counts_exact() {
    let describe = |moments: &[Millis]| {
        moments
            .iter()
            .map(|&at| format!("failed_at = {}", rel(at)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cases: [(&[Millis], i64, i64); 5] = [
        (&[NOW - HOUR], 1, 0),
        (&[NOW - HOUR + 1], 1, 1),
        // A dashboard read for a moment just before the last move: that dead letter is not in
        // the hour up to now.
        (&[NOW + 1, NOW], 2, 1),
        (&[NOW, NOW - 10 * MINUTE], 2, 2),
        (&mix_dead_letters(), 5, 3),
    ];
    for (moments, total, last_hour) in cases {
        let conn = with_rows(&mix_rows());
        for (id, &failed_at) in (1..).zip(moments) {
            insert_dead_letter(&conn, id, failed_at);
        }
        let got_total = call("dead_letter_count()", || exercise::dead_letter_count(&conn));
        assert_eq!(
            got_total,
            total,
            "with {} dead letter(s) ({}) and 13 outbox rows (two of them failed), \
             dead_letter_count() returned {got_total}; it counts the rows of the dead_letters \
             table, nothing else",
            moments.len(),
            describe(moments),
        );
        let got = call("dead_letters_last_hour(now)", || {
            exercise::dead_letters_last_hour(&conn, NOW)
        });
        assert_eq!(
            got,
            last_hour,
            "with dead letters at {}, dead_letters_last_hour(now) returned {got}; expected \
             {last_hour}: the last hour is now − 1 h < failed_at <= now, {}",
            describe(moments),
            if moments.iter().any(|&at| at > NOW) {
                "so a dead letter after now (a dashboard read for a past moment) is not in it: \
                 the window has an upper end, failed_at <= ?1"
                    .to_owned()
            } else {
                format!(
                    "so a dead letter exactly one hour old ({}) is outside it and one a \
                     millisecond younger is inside",
                    ms(HOUR)
                )
            },
        );
    }
    let conn = at_scale(0, 0, SCALE);
    let what = "10,200 dead letters, 10,100 of them in the last hour";
    check_at_scale(
        &conn,
        what,
        "dead_letter_count()",
        SCALE,
        i64::to_string,
        exercise::dead_letter_count,
    );
    check_at_scale(
        &conn,
        what,
        "dead_letters_last_hour(now)",
        SCALE - 100,
        i64::to_string,
        |conn| exercise::dead_letters_last_hour(conn, NOW),
    );
}

/// The fields of two dashboards that differ, for a message.
fn differences(got: &Dashboard, expected: &Dashboard) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = |name: &str, got: String, expected: String| {
        if got != expected {
            fields.push(format!("  {name}: yours {got}, expected {expected}"));
        }
    };
    field(
        "due_now",
        got.due_now.to_string(),
        expected.due_now.to_string(),
    );
    field(
        "waiting",
        got.waiting.to_string(),
        expected.waiting.to_string(),
    );
    field(
        "oldest_pending_age",
        format!("{:?}", got.oldest_pending_age),
        format!("{:?}", expected.oldest_pending_age),
    );
    field(
        "attempts",
        format!("{:?}", got.attempts),
        format!("{:?}", expected.attempts),
    );
    field(
        "dead_letters",
        got.dead_letters.to_string(),
        expected.dead_letters.to_string(),
    );
    field(
        "dead_letters_last_hour",
        got.dead_letters_last_hour.to_string(),
        expected.dead_letters_last_hour.to_string(),
    );
    fields
}

#[test]
fn snapshot_collects_every_field() {
    let conn = mix();
    let got = call("snapshot(conn, now)", || exercise::snapshot(&conn, NOW));
    let expected = mix_dashboard();
    let wrong = differences(&got, &expected);
    assert!(
        wrong.is_empty(),
        "on the seeded mix, snapshot(conn, now) got {} field(s) wrong:\n{}\nEach field is the \
         value of its own query at the same now",
        wrong.len(),
        wrong.join("\n"),
    );
    let later = NOW + 10 * MINUTE;
    let got = call("snapshot(conn, now + 10 min)", || {
        exercise::snapshot(&conn, later)
    });
    let expected = Dashboard {
        due_now: 8,
        waiting: 0,
        oldest_pending_age: Some(40 * MINUTE),
        attempts: mix_dashboard().attempts,
        dead_letters: 5,
        dead_letters_last_hour: 2,
    };
    let wrong = differences(&got, &expected);
    assert!(
        wrong.is_empty(),
        "on the seeded mix ten minutes later, snapshot(conn, now + 10 min) got {} field(s) \
         wrong:\n{}\nEvery query must use the now it is given",
        wrong.len(),
        wrong.join("\n"),
    );
}

#[test]
fn empty_database() {
    let conn = database();
    let got = call("snapshot(conn, now) on an empty database", || {
        exercise::snapshot(&conn, NOW)
    });
    let wrong = differences(&got, &Dashboard::default());
    assert!(
        wrong.is_empty(),
        "on an empty database, snapshot(conn, now) should be all zeros, no age and an empty \
         histogram (Dashboard::default()); it got {} field(s) wrong:\n{}",
        wrong.len(),
        wrong.join("\n"),
    );
    let conn = with_rows(&[
        Row::new(1, NOW - HOUR).status("sent"),
        Row::new(2, NOW - HOUR).status("failed"),
    ]);
    let got = call("oldest_pending_age(now) with no pending row", || {
        exercise::oldest_pending_age(&conn, NOW)
    });
    assert_eq!(
        got, None,
        "with only a sent and a failed row, nothing is pending, so oldest_pending_age(now) must \
         be None; yours returned {got:?}"
    );
}
