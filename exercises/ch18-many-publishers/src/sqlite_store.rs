//! Given: the SQLite store's connection. Opening a database file the way several workers share
//! it (WAL journal, a busy timeout), the schema, and a few plain statements for examples and
//! tests. The claim and the lease are yours, in `src/lib.rs`.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, params};

use crate::model::{Millis, ORDER_PLACED, OutboxRow};

/// The schema: `src/sql/sqlite.sql`.
pub const SCHEMA: &str = include_str!("sql/sqlite.sql");

/// How long a statement waits for another connection's write lock before it fails with
/// `SQLITE_BUSY` ("database is locked").
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// One worker's connection to a SQLite outbox.
#[derive(Debug)]
pub struct SqliteStore {
    pub(crate) conn: Connection,
}

impl SqliteStore {
    /// Opens the database file at `path` (creating it and the schema if needed) for one worker.
    ///
    /// Each worker opens its own connection. The file uses the write-ahead log (WAL), so readers
    /// never wait for the writer, and every connection waits up to [`BUSY_TIMEOUT`] for the
    /// single write lock instead of failing at once.
    pub fn open(path: impl AsRef<Path>) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        debug_assert_eq!(mode.to_lowercase(), "wal");
        // In WAL mode, NORMAL is durable across application crashes; only a power loss may
        // undo the last commits. The checks' scratch databases do not need more.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self { conn })
    }

    /// A private in-memory database with the schema: for tests that need only one connection.
    pub fn open_in_memory() -> rusqlite::Result<Self> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self { conn })
    }

    /// The connection, to run statements of your own.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The connection, mutably: transactions (`transaction_with_behavior`) and busy handlers
    /// need it.
    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Writes a new pending `OrderPlaced` event about `aggregate_id`, created at `now`, and
    /// returns its id.
    pub fn insert_event(
        &self,
        aggregate_id: i64,
        payload: &str,
        now: Millis,
    ) -> rusqlite::Result<i64> {
        self.conn.execute(
            "INSERT INTO outbox (aggregate_id, event_type, payload, created_at)
             VALUES (?1, ?2, ?3, ?4)",
            params![aggregate_id, ORDER_PLACED, payload, now],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The row with this id, or `Err(QueryReturnedNoRows)`.
    pub fn load(&self, id: i64) -> rusqlite::Result<OutboxRow> {
        self.conn.query_row(
            "SELECT * FROM outbox WHERE id = ?1",
            [id],
            OutboxRow::from_sqlite,
        )
    }

    /// Every row, by id.
    pub fn all_rows(&self) -> rusqlite::Result<Vec<OutboxRow>> {
        let mut statement = self.conn.prepare("SELECT * FROM outbox ORDER BY id")?;
        let rows = statement.query_map([], OutboxRow::from_sqlite)?;
        rows.collect()
    }
}
