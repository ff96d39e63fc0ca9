//! Checks of `fetch_due`: which rows are due, in which order, how many; and that a failure
//! recorded by `record_failure` is scheduled through the table.

use exercise::{BackoffConfig, Failure, Outcome};

use super::fixture::{
    HOUR, MINUTE, SECOND, Seed, T0, ceiling, database, due_ids, insert_all, ms, next_retry_at,
    record_failure, rel, row, show_outcome,
};
use super::support::seeded;

/// Rows around `T0`: some due, some waiting for a later `next_retry_at`.
fn mixed_rows() -> Vec<Seed> {
    vec![
        Seed::waiting(1, T0 - 10 * SECOND, 1, T0 + 1),
        Seed::new(2, T0 - 9 * SECOND),
        Seed::waiting(3, T0 - 8 * SECOND, 2, T0 + MINUTE),
        Seed::waiting(4, T0 - 7 * SECOND, 1, T0 - 5 * SECOND),
        Seed::waiting(5, T0 - 6 * SECOND, 7, T0 + HOUR),
        Seed::waiting(6, T0 - 5 * SECOND, 3, T0),
        Seed::new(7, T0 - 4 * SECOND),
        Seed::waiting(8, T0 - HOUR, 9, T0 + 23 * HOUR),
    ]
}

fn describe_ids(ids: &[i64], seeds: &[Seed], now: i64) -> String {
    let parts: Vec<String> = ids
        .iter()
        .map(|id| {
            seeds
                .iter()
                .find(|s| s.id == *id)
                .map_or_else(|| format!("row {id}"), |s| s.describe(now))
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

#[test]
fn future_rows_never_fetched() {
    let conn = database();
    let seeds = mixed_rows();
    insert_all(&conn, &seeds);
    for now in [T0, T0 + MINUTE, T0 + 2 * HOUR] {
        let fetched = due_ids(&conn, now, 100);
        let early: Vec<i64> = fetched
            .iter()
            .copied()
            .filter(|id| {
                seeds
                    .iter()
                    .any(|s| s.id == *id && s.next_retry_at.is_some_and(|at| at > now))
            })
            .collect();
        assert!(
            early.is_empty(),
            "fetch_due(now, 100) returned rows whose next_retry_at is still in the future: {}. \
             A row is due only once next_retry_at <= now (or when it is NULL, never tried)",
            describe_ids(&early, &seeds, now),
        );
    }
}

#[test]
fn due_rows_all_fetched() {
    let conn = database();
    let seeds = mixed_rows();
    insert_all(&conn, &seeds);
    for now in [T0, T0 + MINUTE] {
        let fetched = due_ids(&conn, now, 100);
        let missing: Vec<i64> = seeds
            .iter()
            .filter(|s| s.next_retry_at.is_none_or(|at| at <= now))
            .map(|s| s.id)
            .filter(|id| !fetched.contains(id))
            .collect();
        assert!(
            missing.is_empty(),
            "fetch_due(now, 100) left out rows that are due: {}. Due means status 'pending' and \
             (next_retry_at IS NULL OR next_retry_at <= now): a row never tried has a NULL \
             next_retry_at, and a row whose next_retry_at equals now is due now",
            describe_ids(&missing, &seeds, now),
        );
    }
}

#[test]
fn only_pending_rows() {
    let conn = database();
    let seeds = vec![
        Seed::new(1, T0 - 30 * SECOND).status("sent"),
        Seed::new(2, T0 - 20 * SECOND),
        Seed::waiting(3, T0 - 15 * SECOND, 10, T0 - 10 * SECOND).status("failed"),
        Seed::new(4, T0 - 12 * SECOND).status("failed"),
        Seed::waiting(5, T0 - 11 * SECOND, 1, T0 - SECOND),
    ];
    insert_all(&conn, &seeds);
    let fetched = due_ids(&conn, T0, 100);
    let wrong: Vec<i64> = fetched
        .iter()
        .copied()
        .filter(|id| seeds.iter().any(|s| s.id == *id && s.status != "pending"))
        .collect();
    assert!(
        wrong.is_empty() && fetched.len() == 2,
        "fetch_due(now, 100) should return exactly the 2 pending rows (2 and 5); it returned {}{}",
        describe_ids(&fetched, &seeds, T0),
        if wrong.is_empty() {
            ". Both pending rows are due: row 2 was never tried (next_retry_at NULL), row 5's \
             next_retry_at has passed"
                .to_owned()
        } else {
            format!(
                ", including {}. Sent rows are done and failed rows wait for a person (chapter \
                 17): filter on status = 'pending'",
                describe_ids(&wrong, &seeds, T0)
            )
        },
    );
}

#[test]
fn oldest_first() {
    let conn = database();
    // Inserted in an order that neither the id nor created_at alone puts right.
    let seeds = vec![
        Seed::waiting(1, T0 - 50 * SECOND, 2, T0 - 2 * SECOND),
        Seed::new(2, T0 - 40 * SECOND),
        Seed::waiting(3, T0 - 60 * SECOND, 4, T0 - SECOND),
        Seed::waiting(4, T0 - 20 * SECOND, 1, T0 - 30 * SECOND),
        Seed::waiting(5, T0 - 45 * SECOND, 1, T0 - 30 * SECOND),
        Seed::new(6, T0 - 5 * SECOND),
    ];
    insert_all(&conn, &seeds);
    let mut expected = seeds.clone();
    expected.sort_by_key(|s| (s.due_key(), s.created_at));
    let expected: Vec<i64> = expected.iter().map(|s| s.id).collect();
    let fetched = due_ids(&conn, T0, 100);
    assert!(
        fetched == expected,
        "fetch_due(now, 100) returned the due rows in the order {fetched:?}; expected \
         {expected:?}, by COALESCE(next_retry_at, created_at), then created_at: the row that has \
         waited longest for its turn first, ties broken by age. The rows: {}",
        describe_ids(&expected, &seeds, T0),
    );
}

#[test]
fn limit() {
    let conn = database();
    // 30 due rows, one second apart, and 10 rows waiting for later.
    let mut seeds: Vec<Seed> = (1..=30)
        .map(|id| Seed::waiting(id, T0 - HOUR, 1, T0 - (31 - id) * SECOND))
        .collect();
    seeds.extend((31..=40).map(|id| Seed::waiting(id, T0 - HOUR, 1, T0 + id * SECOND)));
    insert_all(&conn, &seeds);
    for (limit, expected) in [(5, 5), (1, 1), (0, 0), (30, 30), (1_000, 30)] {
        let fetched = due_ids(&conn, T0, limit);
        let first: Vec<i64> = (1..=expected as i64).collect();
        assert!(
            fetched == first,
            "with 30 rows due, fetch_due(now, limit = {limit}) should return the {expected} that \
             have waited longest (rows 1 to {expected}, in order); it returned {} row(s): {:?}. \
             The query takes at most `limit` rows (LIMIT ?2)",
            fetched.len(),
            fetched,
        );
    }
    // Ids in the reverse of the due order, and a limit below the number due: the rows a fetch
    // takes are the first of the due order itself, not the lowest ids put in order afterwards.
    let conn = database();
    let reversed: Vec<Seed> = (1..=10)
        .map(|id| Seed::waiting(id, T0 - HOUR, 1, T0 - id * SECOND))
        .collect();
    insert_all(&conn, &reversed);
    let fetched = due_ids(&conn, T0, 3);
    let by_id = [3, 2, 1];
    assert!(
        fetched == [10, 9, 8],
        "10 rows are due, row 10 the longest-waiting and row 1 the least ({}); fetch_due(now, \
         limit = 3) should return rows [10, 9, 8], and it returned {fetched:?}{}",
        describe_ids(&[10, 1], &reversed, T0),
        if fetched == by_id {
            ": the three lowest ids, put in due order afterwards. The rows a fetch takes are \
             chosen by the due order itself: ORDER BY COALESCE(next_retry_at, created_at), \
             created_at goes before the LIMIT, in DUE_QUERY"
        } else {
            ""
        },
    );
    // A backlog past any round number a relay might keep as its own ceiling (100, 1,000,
    // 1,024): the limit is the caller's, and only the caller's.
    let conn = database();
    conn.execute_batch("BEGIN").expect("seeding a backlog");
    let backlog = 2_500;
    for id in 1..=backlog {
        Seed::waiting(id, T0 - HOUR, 1, T0 - (backlog + 1 - id)).insert(&conn);
    }
    conn.execute_batch("COMMIT").expect("seeding a backlog");
    for (limit, expected) in [(2_000, 2_000), (5_000, backlog)] {
        let fetched = due_ids(&conn, T0, limit);
        let in_order = fetched.iter().copied().eq(1..=expected);
        assert!(
            in_order,
            "with {backlog} rows due, fetch_due(now, limit = {limit}) should return the \
             {expected} that have waited longest, in order; it returned {} row(s){}. The query \
             takes `limit` rows when that many are due (LIMIT ?2 bound to the caller's limit), \
             with no ceiling of its own",
            fetched.len(),
            match fetched.first() {
                Some(first) => format!(", from row {first} to row {}", fetched[fetched.len() - 1]),
                None => String::new(),
            },
        );
    }
}

#[test]
fn scheduler_reads_the_table() {
    let cfg = BackoffConfig::default();
    let down = Failure::Transient("connection refused".into());
    let mut rng = seeded(16);
    let conn = database();
    for id in 1..=8 {
        Seed::new(id, T0 - SECOND).insert(&conn);
    }
    for id in 1..=8 {
        let mut now = T0;
        for failure in 1..=3 {
            let outcome = record_failure(&conn, id, now, &down, &cfg, &mut rng);
            let shown = show_outcome(outcome, now);
            let at = row(&conn, id).next_retry_at.unwrap_or_else(|| {
                panic!(
                    "after failure {failure} (transient, {failure} of 10 attempts used) the row's \
                     next_retry_at is NULL; it must hold the moment of the next attempt"
                )
            });
            let limit = ceiling(failure, &cfg);
            let why = if at < now {
                "an absolute time in milliseconds since the epoch, not a delay"
            } else if outcome != Outcome::RetryAt(at) {
                "what record_failure returns is what it wrote"
            } else if own_draws_exceed(now, failure, limit, &cfg) {
                "a later moment than this failure's ceiling allows, and your next_retry_at alone \
                 does the same for this count of failures: see backoff.within_bounds"
            } else {
                "a later moment than this failure's ceiling allows, although your next_retry_at \
                 alone keeps to it: the schedule follows this row's own count of failures, and \
                 the UPDATE writes this row only (WHERE id = ?1)"
            };
            assert!(
                (now..=now + limit).contains(&at) && outcome == Outcome::RetryAt(at),
                "after failure {failure} at `now`, the row's next_retry_at is {} and \
                 record_failure returned {shown}; both should be the same moment, within \
                 [now, now + {}]: {why}",
                rel(at, now),
                ms(limit),
            );
            let before = due_ids(&conn, at - 1, 100).contains(&id);
            let at_time = due_ids(&conn, at, 100).contains(&id);
            assert!(
                !before && at_time,
                "after failure {failure} the row's next_retry_at is {}; fetch_due one millisecond \
                 earlier {} it, and fetch_due at that moment {} it. The relay finds a retry by \
                 reading the table: not before next_retry_at, and from then on",
                rel(at, now),
                if before { "returned" } else { "did not return" },
                if at_time {
                    "returned"
                } else {
                    "did not return"
                },
            );
            now = at;
        }
    }
}

/// Whether the learner's `next_retry_at`, called alone 200 times for `failures` failures,
/// ever goes past `now + limit`.
fn own_draws_exceed(now: i64, failures: u32, limit: i64, cfg: &BackoffConfig) -> bool {
    let mut rng = seeded(1_616);
    (0..200).any(|_| next_retry_at(now, failures, cfg, &mut rng) > now + limit)
}

#[test]
fn rows_differing_in_one_column() {
    // Pairs of rows that share every column but one: the status, or next_retry_at by a single
    // millisecond, or next_retry_at NULL against set. A filter that tests the wrong column, or
    // the right column with the wrong comparison, takes one row of a pair and not the other.
    let conn = database();
    let created = T0 - MINUTE;
    let seeds = vec![
        Seed::waiting(1, created, 2, T0),
        Seed::waiting(2, created, 2, T0).status("failed"),
        Seed::waiting(3, created, 2, T0).status("sent"),
        Seed::waiting(4, created, 2, T0 + 1),
        Seed::waiting(5, created, 2, T0 - 1),
        Seed::new(6, created),
        Seed::new(7, created).status("sent"),
        Seed::new(8, created).status("failed"),
        Seed::new(9, T0 - 1),
        Seed::waiting(10, T0, 0, T0 + 1),
    ];
    insert_all(&conn, &seeds);
    for (now, expected) in [(T0 - 1, vec![6, 5, 9]), (T0, vec![6, 5, 9, 1])] {
        let mut fetched = due_ids(&conn, now, 100);
        let order = fetched.clone();
        fetched.sort_unstable();
        let mut wanted = expected.clone();
        wanted.sort_unstable();
        assert!(
            fetched == wanted,
            "fetch_due at {} returned rows {order:?}; exactly rows {expected:?} are due. The rows, \
             which share every column but one with a neighbour: {}. Due means status 'pending' \
             (not 'sent', not 'failed') and next_retry_at NULL (never tried) or at most now",
            rel(now, T0),
            describe_ids(&(1..=10).collect::<Vec<_>>(), &seeds, now),
        );
    }
}

/// The ids `DUE_QUERY` returns when run directly, with `?1 = now` and `?2 = limit`.
fn direct_ids(conn: &rusqlite::Connection, now: i64, limit: i64) -> Vec<i64> {
    assert!(
        !exercise::DUE_QUERY.trim().is_empty(),
        "DUE_QUERY is empty: write the due-row query there, with ?1 = now and ?2 = limit"
    );
    let mut statement = conn
        .prepare(exercise::DUE_QUERY)
        .unwrap_or_else(|error| panic!("preparing your DUE_QUERY failed: {error}"));
    statement
        .query_map(rusqlite::params![now, limit], |row| row.get::<_, i64>("id"))
        .and_then(|rows| rows.collect())
        .unwrap_or_else(|error| {
            panic!("running DUE_QUERY with ?1 = now and ?2 = limit failed: {error}")
        })
}

#[test]
fn query_with_documented_parameters() {
    // DUE_QUERY is public, and its contract names its parameters: ?1 is now, ?2 the limit. Run
    // on its own, at the edges: a row due at exactly now, one due a millisecond later, a row
    // never tried that was written at now, a sent row, and limits on both sides of the count.
    // (Rows are always written at or before the now passed in, as the task says.)
    let conn = database();
    let seeds = vec![
        Seed::waiting(1, T0 - MINUTE, 1, T0),
        Seed::waiting(2, T0 - MINUTE, 1, T0 + 1),
        Seed::new(3, T0),
        Seed::waiting(4, T0 - HOUR, 2, T0 - SECOND),
        Seed::new(5, T0 - 2 * HOUR).status("sent"),
    ];
    insert_all(&conn, &seeds);
    for (now, limit, expected) in [
        (T0, 10, vec![4, 1, 3]),
        (T0, 2, vec![4, 1]),
        (T0, 0, vec![]),
        (T0 + 1, 10, vec![4, 1, 3, 2]),
    ] {
        let got = direct_ids(&conn, now, limit);
        let swapped = direct_ids(&conn, limit, now);
        assert!(
            got == expected,
            "DUE_QUERY run directly with ?1 = now and ?2 = limit = {limit} returned rows \
             {got:?}; its contract says {expected:?}. The rows, seen from that now: {}{}",
            describe_ids(&[1, 2, 3, 4, 5], &seeds, now),
            if swapped == expected && !expected.is_empty() {
                ". With the two parameters the other way round it gives the right rows: \
                 DUE_QUERY reads now from ?1 and the limit from ?2, and fetch_due binds them \
                 in that order (params![now, limit])"
            } else {
                ""
            },
        );
    }
}
