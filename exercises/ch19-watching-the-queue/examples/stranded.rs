//! A neighbouring figure (book §19.3), which needs none of your code: the failed rows still in
//! the outbox, waiting for their move to the dead letters (chapter 17), and how long the oldest
//! of them has waited since its last attempt.
//!
//!     cargo run -p ch19_watching_the_queue --example stranded

use ch19_watching_the_queue::{Millis, SECOND, db};
use rusqlite::Connection;

// ANCHOR: neighbour
/// Failed rows not yet moved, and the age of the oldest by its last attempt (NULL if none).
const STRANDED_SQL: &str = "\
SELECT COUNT(*), ?1 - MIN(last_attempt_at) FROM outbox
WHERE status = 'failed'";

/// How many failed rows wait for their move, and how long the oldest of them has waited:
/// `(0, None)` when there is none (`MIN` over no rows is NULL).
fn stranded(conn: &Connection, now: Millis) -> rusqlite::Result<(i64, Option<Millis>)> {
    conn.query_row(STRANDED_SQL, [now], |counts| {
        Ok((counts.get(0)?, counts.get(1)?))
    })
}
// ANCHOR_END: neighbour

fn main() -> rusqlite::Result<()> {
    let conn = db::open_in_memory()?;
    let now: Millis = 1_767_225_600_000;
    println!("no failed row:   {:?}", stranded(&conn, now)?);
    conn.execute_batch(&format!(
        "INSERT INTO outbox (aggregate_id, event_type, payload, status, attempts, last_attempt_at,
                             created_at)
         VALUES ('order-1', 'OrderPlaced', '{{}}', 'failed', 10, {a}, {a}),
                ('order-2', 'OrderPlaced', '{{}}', 'failed', 1, {b}, {b}),
                ('order-3', 'OrderPlaced', '{{}}', 'pending', 0, NULL, {b});",
        a = now - 90 * SECOND,
        b = now - 5 * SECOND,
    ))?;
    println!("two failed rows: {:?}", stranded(&conn, now)?);
    Ok(())
}
