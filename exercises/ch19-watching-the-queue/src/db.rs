//! Given: opening the database and writing events, as chapter 15's `place_order` does.

use std::path::Path;

use rusqlite::{Connection, params};

use crate::model::Millis;

/// The schema of this chapter (`src/schema.sql`): the tables and the indexes the dashboard's
/// queries run on. Every connection this module opens runs it.
pub const SCHEMA: &str = include_str!("schema.sql");

/// Opens (or creates) the database file at `path` and applies the schema.
pub fn open(path: impl AsRef<Path>) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

/// A fresh in-memory database with the schema applied: what tests use.
pub fn open_in_memory() -> rusqlite::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

/// Writes one pending event to the outbox at `now` and returns its id. In chapter 15 this
/// insert shares a transaction with the business change it announces.
pub fn write_event(
    conn: &Connection,
    aggregate_id: &str,
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
