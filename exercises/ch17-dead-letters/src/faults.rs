//! Given: fault injection. A fault makes one kind of write fail inside the database, the way a
//! crash, a full disk or a lost connection would at that point. Each fault is a temporary
//! trigger that aborts the statement with `RAISE(ABORT, …)`; the function under test sees an
//! error from that statement, after every statement before it has succeeded.
//!
//! `inject(&conn, Fault::DeleteFromOutbox)` lets a move copy its row into `dead_letters` and
//! then fails the delete: exactly the moment between the insert and the delete.

use rusqlite::Connection;

/// A write that fails while the fault is injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    InsertIntoOutbox,
    UpdateOutbox,
    DeleteFromOutbox,
    InsertIntoDeadLetters,
    DeleteFromDeadLetters,
}

impl Fault {
    /// Every fault, for tests that try them all.
    pub const ALL: [Fault; 5] = [
        Fault::InsertIntoOutbox,
        Fault::UpdateOutbox,
        Fault::DeleteFromOutbox,
        Fault::InsertIntoDeadLetters,
        Fault::DeleteFromDeadLetters,
    ];

    /// The statement that fails, e.g. `DELETE FROM outbox`.
    pub fn statement(self) -> &'static str {
        match self {
            Fault::InsertIntoOutbox => "INSERT INTO outbox",
            Fault::UpdateOutbox => "UPDATE outbox",
            Fault::DeleteFromOutbox => "DELETE FROM outbox",
            Fault::InsertIntoDeadLetters => "INSERT INTO dead_letters",
            Fault::DeleteFromDeadLetters => "DELETE FROM dead_letters",
        }
    }

    fn trigger(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Fault::InsertIntoOutbox => ("fault_insert_outbox", "INSERT", "outbox"),
            Fault::UpdateOutbox => ("fault_update_outbox", "UPDATE", "outbox"),
            Fault::DeleteFromOutbox => ("fault_delete_outbox", "DELETE", "outbox"),
            Fault::InsertIntoDeadLetters => ("fault_insert_dead_letters", "INSERT", "dead_letters"),
            Fault::DeleteFromDeadLetters => ("fault_delete_dead_letters", "DELETE", "dead_letters"),
        }
    }
}

/// Makes every `fault.statement()` on this connection fail until [`clear`] is called.
pub fn inject(conn: &Connection, fault: Fault) -> rusqlite::Result<()> {
    let (name, operation, table) = fault.trigger();
    conn.execute_batch(&format!(
        "CREATE TEMP TRIGGER IF NOT EXISTS {name} BEFORE {operation} ON main.{table}
         BEGIN SELECT RAISE(ABORT, 'injected fault: {statement}'); END;",
        statement = fault.statement(),
    ))
}

/// Removes every injected fault.
pub fn clear(conn: &Connection) -> rusqlite::Result<()> {
    for fault in Fault::ALL {
        let (name, _, _) = fault.trigger();
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS temp.{name};"))?;
    }
    Ok(())
}
