//! Given: the server, one row under optimistic concurrency control (OCC).
//!
//! The row carries a version number, starting at 0. A client reads the version, then sends a
//! conditional write: "write my update if the version is still `v`". The first such write to
//! arrive wins and moves the version to `v + 1`; every other write that names `v` arrives too
//! late and is refused. So each version is won by exactly one write, whoever else tried.

/// What a client can ask of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Read the row's current version.
    Read,
    /// Write the row if its version is still `version`.
    Write { version: u64 },
}

/// The answer to a conditional write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The version matched: this write won it, and the row moved on to the next version.
    Won,
    /// Another client's write got there first: nothing was written.
    Conflict,
}

/// The one row every client wants to update.
#[derive(Debug, Default)]
pub struct Row {
    version: u64,
}

impl Row {
    /// A row at version 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// A read: the current version.
    pub fn read(&self) -> u64 {
        self.version
    }

    /// A conditional write: wins, and bumps the version, only if `expected` is still current.
    pub fn write(&mut self, expected: u64) -> WriteOutcome {
        if expected == self.version {
            self.version += 1;
            WriteOutcome::Won
        } else {
            WriteOutcome::Conflict
        }
    }
}
