//! Given: the error of one attempt that had a time limit.

use std::error::Error;
use std::fmt;

// ANCHOR: attempt_error
/// Why one attempt did not produce a value: it ran out of time, or the operation itself failed.
///
/// The two cases are different facts. `Failed` means the service answered, and the answer was an
/// error. `TimedOut` means nobody knows what happened: the request may never have arrived, or it
/// may have been carried out and only the answer was lost (book §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptError<E> {
    /// The attempt did not finish within its time limit and was abandoned; its outcome is unknown.
    TimedOut,
    /// The operation finished in time and failed with its own error.
    Failed(E),
}
// ANCHOR_END: attempt_error

impl<E> AttemptError<E> {
    /// Whether this attempt ran out of time (rather than failing with its own error).
    pub fn is_timeout(&self) -> bool {
        matches!(self, AttemptError::TimedOut)
    }
}

impl<E: fmt::Display> fmt::Display for AttemptError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttemptError::TimedOut => write!(f, "the attempt timed out; its outcome is unknown"),
            AttemptError::Failed(error) => write!(f, "the attempt failed: {error}"),
        }
    }
}

impl<E: Error + 'static> Error for AttemptError<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            AttemptError::TimedOut => None,
            AttemptError::Failed(error) => Some(error),
        }
    }
}
