//! Given: the error a remote call can fail with, and the verdict a classifier gives it.

use std::fmt;
use std::io;
use std::time::Duration;

/// Everything a call to the remote service can fail with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallError {
    /// The server answered with an error status, perhaps with a `Retry-After` value, already
    /// parsed into a duration (chapter 11 parses the header itself).
    Http {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// The transport failed below HTTP; this is the kind of the `std::io::Error`.
    Io(io::ErrorKind),
    /// No answer came within the time allowed for one attempt.
    Timeout,
    /// The service understood the request and rejected its arguments.
    InvalidArguments,
    /// The service looked for what the request names and found nothing.
    NotFound,
}

impl CallError {
    /// An HTTP error status without a `Retry-After` value.
    pub fn http(status: u16) -> Self {
        Self::Http {
            status,
            retry_after: None,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http {
                status,
                retry_after: None,
            } => write!(f, "HTTP {status}"),
            Self::Http {
                status,
                retry_after: Some(after),
            } => write!(f, "HTTP {status} (Retry-After: {after:?})"),
            Self::Io(kind) => write!(f, "I/O error: {kind}"),
            Self::Timeout => f.write_str("the call timed out"),
            Self::InvalidArguments => f.write_str("the service rejected the arguments"),
            Self::NotFound => f.write_str("the service found nothing by that name"),
        }
    }
}

impl std::error::Error for CallError {}

// ANCHOR: retryability
/// A classifier's verdict on one error: may the call be tried again, and when?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retryability {
    /// Waiting may fix it: the same request may succeed if sent again.
    Transient,
    /// Waiting will not fix it: stop now, and fix the cause.
    Permanent,
    /// Transient, and the server said how long to wait before the next try.
    After(Duration),
}
// ANCHOR_END: retryability
