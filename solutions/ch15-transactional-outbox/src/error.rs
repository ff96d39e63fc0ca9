//! Given: the chapter's error type.

use std::fmt;

/// A failure injected by a test at a named point of the code (see [`crate::faults`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Where the fault struck, for example `"between_inserts"`.
    pub point: &'static str,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "injected fault at {}", self.point)
    }
}

impl std::error::Error for Fault {}

/// Why `place_order` or `relay_once` gave up.
#[derive(Debug)]
pub enum Error {
    /// The database refused a statement.
    Db(rusqlite::Error),
    /// A test injected a failure.
    Fault(Fault),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Db(error) => write!(f, "database error: {error}"),
            Error::Fault(fault) => fault.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Db(error) => Some(error),
            Error::Fault(fault) => Some(fault),
        }
    }
}

impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Error::Db(error)
    }
}

impl From<Fault> for Error {
    fn from(fault: Fault) -> Self {
        Error::Fault(fault)
    }
}
