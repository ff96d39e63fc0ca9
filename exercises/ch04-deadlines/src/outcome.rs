//! Given: how a retry loop with a deadline reports that it gave up.

use std::error::Error;
use std::fmt;

/// Why [`retry_until`](crate::retry_until) returned without a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryError<E> {
    /// The last attempt failed with this error, and no further attempt was allowed: the
    /// attempts were used up, or the sleep before the next one would have ended past the deadline.
    Failed(E),
    /// The last attempt was cut off by its timeout (the per-attempt limit, or what was left of
    /// the deadline, whichever was shorter), and no further attempt was allowed.
    TimedOut,
    /// The deadline had already passed when the call began: nothing was attempted.
    DeadlineExceeded,
    /// The cancel token fired: the loop stopped without waiting for its attempt or its sleep.
    Cancelled,
}

impl<E: fmt::Display> fmt::Display for RetryError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed(error) => write!(f, "gave up after the last attempt failed: {error}"),
            Self::TimedOut => f.write_str("gave up after the last attempt timed out"),
            Self::DeadlineExceeded => f.write_str("the deadline had passed before any attempt"),
            Self::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl<E: Error + 'static> Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Failed(error) => Some(error),
            _ => None,
        }
    }
}
