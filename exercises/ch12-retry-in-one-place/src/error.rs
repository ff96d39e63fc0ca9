//! Given: the error every layer of the stack returns, and the one question the layers ask of it.

use std::fmt;

// ANCHOR: call_error
/// Why a request through the stack failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallError {
    /// A transient failure: a timeout, a reset connection, a replica that is restarting.
    /// Another attempt may well succeed, so the one layer that retries may try again.
    Unavailable,
    /// The backend is overloaded and says so: "overloaded; don't retry". Another attempt would
    /// only add to the load that caused the failure, so no layer retries it.
    Overloaded,
}

impl CallError {
    /// Whether another attempt can help: `true` for [`CallError::Unavailable`], `false` for
    /// [`CallError::Overloaded`].
    pub fn is_retryable(self) -> bool {
        matches!(self, CallError::Unavailable)
    }
}
// ANCHOR_END: call_error

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Unavailable => write!(f, "unavailable; a later attempt may succeed"),
            CallError::Overloaded => write!(f, "overloaded; don't retry"),
        }
    }
}

impl std::error::Error for CallError {}
