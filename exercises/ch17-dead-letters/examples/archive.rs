//! A neighbouring problem (book §17.3 and §17.5), which needs none of your code.
//!
//! 1. A first draft of a relay pass that stops at the first error. Diagnose it.
//! 2. An archive job that moves old `sent` rows out of the outbox into a table of their own, in
//!    one transaction, run once with an injected fault on `DELETE FROM outbox` and once without.
//!
//!     cargo run -p ch17_dead_letters --example archive

use ch17_dead_letters::broker::StubBroker;
use ch17_dead_letters::faults::{self, Fault};
use ch17_dead_letters::{Broker, Millis, db, queue};
use rusqlite::Connection;

// ANCHOR: draft
/// First draft of a relay pass: publish the due rows, oldest first, and mark each one sent.
fn draft_pass(conn: &Connection, broker: &mut impl Broker, now: Millis) -> Result<usize, String> {
    let mut published = 0;
    for row in queue::fetch_due(conn, now, 100).map_err(|e| e.to_string())? {
        broker.publish(&row).map_err(|e| e.to_string())?;
        queue::mark_sent(conn, row.id, now).map_err(|e| e.to_string())?;
        published += 1;
    }
    Ok(published)
}
// ANCHOR_END: draft

// ANCHOR: archive
/// Moves every `sent` row written before `before` into `outbox_archive`: all of them, or, if
/// anything fails on the way, none of them. Returns how many moved.
fn archive_sent(conn: &mut Connection, before: Millis) -> rusqlite::Result<usize> {
    let moving = conn.transaction()?;
    let archived = moving.execute(
        "INSERT INTO outbox_archive SELECT * FROM outbox
          WHERE status = 'sent' AND created_at < ?1",
        [before],
    )?;
    moving.execute(
        "DELETE FROM outbox WHERE status = 'sent' AND created_at < ?1",
        [before],
    )?;
    moving.commit()?;
    Ok(archived)
}
// ANCHOR_END: archive

/// How many rows each table holds.
fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
        row.get(0)
    })
    .unwrap_or(-1)
}

fn main() -> rusqlite::Result<()> {
    let mut conn = db::open_in_memory()?;
    for order in 1..=4 {
        let total = if order == 1 { "12,50" } else { "8.00" };
        let payload = format!(r#"{{"order":{order},"total":"{total}"}}"#);
        db::write_event(
            &conn,
            &format!("order-{order}"),
            "OrderPlaced",
            &payload,
            order * 10,
        )?;
    }
    let mut broker = StubBroker::new().rejecting(
        r#"{"order":1,"total":"12,50"}"#,
        "schema violation: total is not a number",
    );
    for now in [1_000, 2_000, 3_000] {
        let outcome = draft_pass(&conn, &mut broker, now);
        println!("draft pass at {now} ms: {outcome:?}");
    }
    println!(
        "broker calls: {}, published: {:?}",
        broker.calls().len(),
        broker.published()
    );

    conn.execute("UPDATE outbox SET status = 'sent' WHERE id > 1", [])?;
    conn.execute_batch("CREATE TABLE outbox_archive AS SELECT * FROM outbox WHERE 0")?;
    faults::inject(&conn, Fault::DeleteFromOutbox)?;
    match archive_sent(&mut conn, 1_000) {
        Ok(moved) => println!("archive with a fault on DELETE FROM outbox: moved {moved}"),
        Err(error) => println!("archive with a fault on DELETE FROM outbox: Err({error})"),
    }
    faults::clear(&conn)?;
    println!(
        "  outbox {} rows, archive {} rows",
        count(&conn, "outbox"),
        count(&conn, "outbox_archive")
    );
    let moved = archive_sent(&mut conn, 1_000)?;
    println!("archive without it: moved {moved}");
    println!(
        "  outbox {} rows, archive {} rows",
        count(&conn, "outbox"),
        count(&conn, "outbox_archive")
    );
    Ok(())
}
