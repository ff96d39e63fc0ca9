//! Given: the database. The migrations that build the `outbox` table, and the few statements
//! the rest of the outbox uses (write an event, read a row, mark a row sent).

use rusqlite::{Connection, params};

use crate::model::{Millis, OutboxRow, Status};

/// The migrations, in the order they run: `(name, SQL)`. Each runs once per database;
/// `PRAGMA user_version` counts how many have run.
pub const MIGRATIONS: [(&str, &str); 3] = [
    ("001_outbox", include_str!("migrations/001_outbox.sql")),
    (
        "002_retry_columns",
        include_str!("migrations/002_retry_columns.sql"),
    ),
    // Yours: the index that serves the due-row query.
    (
        "003_due_index",
        include_str!("migrations/003_due_index.sql"),
    ),
];

/// Runs every migration the database has not run yet, each in its own transaction.
pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let applied: u32 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    for (number, (_name, sql)) in (1u32..).zip(MIGRATIONS).skip(applied as usize) {
        let transaction = conn.unchecked_transaction()?;
        transaction.execute_batch(sql)?;
        transaction.pragma_update(None, "user_version", number)?;
        transaction.commit()?;
    }
    Ok(())
}

/// A fresh in-memory database with every migration applied.
pub fn open_in_memory() -> rusqlite::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    migrate(&conn)?;
    Ok(conn)
}

/// Writes a new pending event about `aggregate_id`, created at `now`, and returns its id.
/// (In chapter 15 this insert shares a transaction with the business change; here it stands
/// alone.)
pub fn insert_event(
    conn: &Connection,
    aggregate_id: i64,
    event_type: &str,
    payload: &str,
    now: Millis,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO outbox (aggregate_id, event_type, payload, created_at)
         VALUES (?1, ?2, ?3, ?4)",
        params![aggregate_id, event_type, payload, now],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The row with this id, or `Err(QueryReturnedNoRows)`.
pub fn load(conn: &Connection, id: i64) -> rusqlite::Result<OutboxRow> {
    conn.query_row(
        "SELECT * FROM outbox WHERE id = ?1",
        [id],
        OutboxRow::from_row,
    )
}

// ANCHOR: mark_sent
/// Marks a row sent at `now`: the broker acknowledged it. Its schedule is cleared.
pub fn mark_sent(conn: &Connection, id: i64, now: Millis) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE outbox SET status = ?2, sent_at = ?3, next_retry_at = NULL WHERE id = ?1",
        params![id, Status::Sent, now],
    )?;
    Ok(())
}
// ANCHOR_END: mark_sent
