//! Given: the hook through which a test breaks `place_order` halfway.
//!
//! A real process can die, or a statement can fail, between any two writes. `place_order` calls
//! [`FaultPoint::between_inserts`] after its first insert and before its second, so a test can
//! make exactly that happen and then look at what the database kept.

use rusqlite::Connection;

use crate::error::Fault;

/// A place where a test can inject a failure.
pub trait FaultPoint {
    /// Called by `place_order` after the first of its two inserts and before the second, with
    /// the connection it writes through (inside its transaction, if it has one). An `Err` must
    /// make `place_order` stop and return it as `Error::Fault`.
    fn between_inserts(&mut self, conn: &Connection) -> Result<(), Fault>;
}

/// Production: nothing is injected.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFaults;

impl FaultPoint for NoFaults {
    fn between_inserts(&mut self, _conn: &Connection) -> Result<(), Fault> {
        Ok(())
    }
}

/// Fails every time `place_order` reaches the point between its two inserts.
#[derive(Debug, Clone, Copy, Default)]
pub struct FailBetweenInserts;

impl FaultPoint for FailBetweenInserts {
    fn between_inserts(&mut self, _conn: &Connection) -> Result<(), Fault> {
        Err(Fault {
            point: "between_inserts",
        })
    }
}
