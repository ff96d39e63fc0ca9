//! Checks of the index (migration 003): `EXPLAIN QUERY PLAN` of the learner's `DUE_QUERY`, on a
//! database built by the learner's migrations, must read the pending rows through an index, as a
//! range that ends at `now` (a `SEARCH`, not a walk over every pending entry), and need no sort.
//! The query must also be the one `fetch_due` runs.

use exercise::DUE_QUERY;
use rusqlite::{Connection, params};

use super::fixture::{SECOND, Seed, T0, database, due_ids, insert_all};

/// The plan's steps (the `detail` column), or why there is none.
fn plan(conn: &Connection) -> Vec<String> {
    assert!(
        !DUE_QUERY.trim().is_empty(),
        "DUE_QUERY is empty: write the due-row query there (and run it in fetch_due), so its \
         plan can be read"
    );
    let sql = format!("EXPLAIN QUERY PLAN {DUE_QUERY}");
    let mut statement = conn.prepare(&sql).unwrap_or_else(|error| {
        panic!("EXPLAIN QUERY PLAN of your DUE_QUERY failed: {error}. DUE_QUERY:\n{DUE_QUERY}")
    });
    let parameters = statement.parameter_count();
    assert!(
        parameters == 2,
        "DUE_QUERY should take two parameters, ?1 = now and ?2 = limit; yours has {parameters}"
    );
    statement
        .query_map(params![T0, 10], |row| row.get::<_, String>(3))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
        .unwrap_or_else(|error| panic!("EXPLAIN QUERY PLAN of your DUE_QUERY failed: {error}"))
}

/// A database with some rows in it, built by the learner's migrations.
fn seeded_database() -> Connection {
    let conn = database();
    let mut seeds: Vec<Seed> = (1..=40)
        .map(|id| Seed::waiting(id, T0 - 100 * SECOND, 1, T0 + (id - 20) * SECOND))
        .collect();
    seeds.extend((41..=50).map(|id| Seed::new(id, T0 - id * SECOND)));
    seeds.push(Seed::new(51, T0 - 500 * SECOND).status("sent"));
    insert_all(&conn, &seeds);
    conn
}

/// The ids that `DUE_QUERY` itself returns.
fn query_ids(conn: &Connection, now: i64, limit: i64) -> Vec<i64> {
    let mut statement = conn.prepare(DUE_QUERY).expect("DUE_QUERY prepares");
    statement
        .query_map(params![now, limit], |row| row.get::<_, i64>("id"))
        .and_then(|rows| rows.collect())
        .unwrap_or_else(|error| panic!("running DUE_QUERY directly failed: {error}"))
}

fn show_plan(steps: &[String]) -> String {
    steps
        .iter()
        .map(|step| format!("  {step}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A step that reads the outbox table through an index.
fn through_index(step: &str) -> bool {
    step.contains("outbox USING") && step.contains("INDEX")
}

/// A step that reads the whole outbox table, row by row.
fn full_scan(step: &str) -> bool {
    step.trim() == "SCAN outbox"
}

#[test]
fn due_query_uses_index() {
    let conn = seeded_database();
    let steps = plan(&conn);
    assert!(
        steps.iter().any(|s| through_index(s)) && !steps.iter().any(|s| full_scan(s)),
        "EXPLAIN QUERY PLAN of DUE_QUERY, on a database built by your migrations, reads the \
         outbox without an index:\n{}\nA full `SCAN outbox` reads every row the table has ever \
         held, sent ones included, on every poll. Create an index in \
         src/migrations/003_due_index.sql that the query can use",
        show_plan(&steps),
    );
    let fetched = due_ids(&conn, T0, 15);
    let direct = query_ids(&conn, T0, 15);
    let swapped = query_ids(&conn, 15, T0);
    assert!(
        fetched == direct,
        "fetch_due(now, 15) returned rows {fetched:?}, and DUE_QUERY run with ?1 = now and ?2 = \
         15 returned {direct:?}: {}",
        if fetched == swapped {
            "fetch_due binds the limit to ?1 and now to ?2. DUE_QUERY's contract is ?1 = now, \
             ?2 = limit: write the query that way and bind params![now, limit]"
        } else {
            "fetch_due must run DUE_QUERY, the query whose plan this check reads, with ?1 = now \
             and ?2 = limit"
        },
    );
}

#[test]
fn no_sort_for_order_by() {
    let conn = seeded_database();
    let steps = plan(&conn);
    let sorts = steps.iter().any(|s| s.contains("TEMP B-TREE"));
    assert!(
        steps.iter().any(|s| through_index(s)) && !steps.iter().any(|s| full_scan(s)) && !sorts,
        "EXPLAIN QUERY PLAN of DUE_QUERY, on a database built by your migrations:\n{}\n{}",
        show_plan(&steps),
        if sorts {
            "The plan sorts every pending row (USE TEMP B-TREE FOR ORDER BY) before LIMIT can \
             keep the first few: the index does not deliver the rows in the query's order. Key \
             the index on the ORDER BY itself, COALESCE(next_retry_at, created_at), created_at \
             (a partial index WHERE status = 'pending' keeps it small)"
        } else {
            "The outbox is not read through an index at all; see section 16.6"
        },
    );
}

/// A step that reads the outbox through an index as a range: `SEARCH outbox USING INDEX i (<expr><?)`.
fn range_search(step: &str) -> bool {
    let step = step.trim();
    step.starts_with("SEARCH outbox USING") && step.contains("INDEX") && step.contains('<')
}

#[test]
fn due_rows_found_by_range() {
    let conn = seeded_database();
    let steps = plan(&conn);
    let walks = steps
        .iter()
        .any(|s| s.trim().starts_with("SCAN outbox USING"));
    assert!(
        steps.iter().any(|s| range_search(s)),
        "EXPLAIN QUERY PLAN of DUE_QUERY, on a database built by your migrations:\n{}\n{}",
        show_plan(&steps),
        if walks {
            "`SCAN outbox USING … INDEX` walks the index from its first entry and stops only \
             after LIMIT due rows: when fewer are due (a backlog in backoff after an outage), \
             every poll reads every pending entry. The plan must be a range SEARCH on the \
             index, `SEARCH outbox USING INDEX … (<expr><?)`, that ends at now. SQLite does no \
             algebra: it cannot turn `next_retry_at IS NULL OR next_retry_at <= ?1` into a bound \
             on COALESCE(next_retry_at, created_at). Say the same condition once more in the \
             index's own terms (section 16.6)"
        } else {
            "The due rows must be found as a range of an index (`SEARCH outbox USING INDEX … \
             (<expr><?)`), so a poll reads only the due entries; see section 16.6"
        },
    );
}

/// How many virtual-machine steps SQLite takes to run `DUE_QUERY` at `(now, limit)` to the end.
fn due_query_steps(conn: &Connection, now: i64, limit: i64) -> (i32, Vec<i64>) {
    let mut statement = conn.prepare(DUE_QUERY).expect("DUE_QUERY prepares");
    let ids = statement
        .query_map(params![now, limit], |row| row.get::<_, i64>("id"))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<i64>>>())
        .unwrap_or_else(|error| panic!("running DUE_QUERY directly failed: {error}"));
    (statement.get_status(rusqlite::StatementStatus::VmStep), ids)
}

#[test]
fn poll_reads_only_the_backlog() {
    // §16.6: a poll "reads the due rows and one more entry, however long the backlog", and sent
    // and failed rows cost the index nothing. A SEARCH on an index that also holds the done rows
    // passes the plan checks above, yet its range `COALESCE(next_retry_at, created_at) <= now`
    // takes in every sent row ever written. So: one backlog, then the same backlog beside a
    // history of 3,000 sent and 500 failed rows (next_retry_at NULL, as mark_sent and
    // record_failure leave them). SQLite's count of virtual-machine steps for the same query
    // must not grow with that history (a few steps of slack; reading one more entry costs
    // several).
    let backlog = |conn: &Connection| {
        let mut seeds: Vec<Seed> = (1..=20)
            .map(|id| Seed::waiting(id, T0 - 100 * SECOND, 2, T0 + id * SECOND))
            .collect();
        seeds.extend((21..=25).map(|id| Seed::new(id, T0 - id * SECOND)));
        insert_all(conn, &seeds);
    };
    let lean = database();
    backlog(&lean);
    let with_history = database();
    backlog(&with_history);
    with_history
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3500)
             INSERT INTO outbox (id, aggregate_id, event_type, payload, status, created_at,
                                 sent_at, attempts)
             SELECT 1000 + i, 1000 + i, 'OrderPlaced', '{}',
                    CASE WHEN i <= 3000 THEN 'sent' ELSE 'failed' END,
                    1767225600000 - 86400000 + i * 10,
                    CASE WHEN i <= 3000 THEN 1767225600000 - 86400000 + i * 10 + 5 END,
                    CASE WHEN i <= 3000 THEN 0 ELSE 10 END
               FROM n",
        )
        .expect("seeding the history");
    let (lean_steps, lean_ids) = due_query_steps(&lean, T0, 10);
    let (history_steps, history_ids) = due_query_steps(&with_history, T0, 10);
    assert_eq!(
        lean_ids, history_ids,
        "DUE_QUERY returned other rows once 3,500 sent and failed rows were added: done rows must \
         never be due"
    );
    assert!(
        history_steps <= lean_steps + 20,
        "DUE_QUERY at now with LIMIT 10, on a backlog of 25 pending rows (5 due), took {lean_steps} \
         SQLite steps; beside a history of 3,000 sent and 500 failed rows, the same query on the \
         same backlog took {history_steps}: each poll reads the history too. Sent and failed rows \
         have next_retry_at NULL, so their COALESCE(next_retry_at, created_at) is their \
         created_at, before now, inside the range your SEARCH reads. Make the index hold the \
         pending rows only (a partial index, WHERE status = 'pending'), so the range holds the \
         due rows and nothing else (section 16.6)"
    );
}
