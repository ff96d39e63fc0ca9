//! Given: the database schema, applied with one `execute_batch`.
//!
//! The SQL lives in `schema.sql` beside this file; read it before writing any query.

use rusqlite::Connection;

/// The chapter's schema: the `orders` table and the `outbox` table.
pub const SCHEMA: &str = include_str!("schema.sql");

/// Creates the tables and the index if they do not exist yet. Safe to run more than once.
pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)
}

/// A fresh in-memory database with the schema applied: what the tests and examples start from.
pub fn open_in_memory() -> rusqlite::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    migrate(&conn)?;
    Ok(conn)
}
