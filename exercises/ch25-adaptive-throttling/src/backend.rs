//! Given: what a backend can answer, and a scripted stand-in for one.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// How a request can fail at the backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// The backend refused the request because it is overloaded (HTTP 429 or 503, gRPC
    /// `RESOURCE_EXHAUSTED`): it did not accept it.
    Overloaded,
    /// The backend accepted the request and it failed for another reason (a 404, a bad argument).
    Failed(String),
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Overloaded => write!(f, "the backend is overloaded"),
            BackendError::Failed(why) => write!(f, "the request failed: {why}"),
        }
    }
}

impl std::error::Error for BackendError {}

/// What a call through the throttle can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThrottleError {
    /// The client rejected the request itself: it never reached the backend.
    Throttled,
    /// The request reached the backend and failed.
    Backend(BackendError),
}

impl fmt::Display for ThrottleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThrottleError::Throttled => write!(f, "rejected by the client's own throttle"),
            ThrottleError::Backend(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ThrottleError {}

/// A backend that answers at once: overloaded while `set_overloaded(true)`, fine otherwise. It
/// counts the requests that reach it.
#[derive(Debug, Default)]
pub struct Backend {
    overloaded: AtomicBool,
    received: AtomicU32,
}

impl Backend {
    pub fn healthy() -> Self {
        Self::default()
    }

    pub fn set_overloaded(&self, overloaded: bool) {
        self.overloaded.store(overloaded, Ordering::SeqCst);
    }

    /// One request: `Ok` with the request's number, or `Overloaded`.
    pub async fn handle(&self) -> Result<u32, BackendError> {
        let number = self.received.fetch_add(1, Ordering::SeqCst) + 1;
        if self.overloaded.load(Ordering::SeqCst) {
            Err(BackendError::Overloaded)
        } else {
            Ok(number)
        }
    }

    /// How many requests reached the backend.
    pub fn received(&self) -> u32 {
        self.received.load(Ordering::SeqCst)
    }
}
