//! Given: a stand-in for a remote service, the driver of this chapter's exercise.
//!
//! It fails with a scripted list of errors, then answers every call, and it counts its calls so a
//! test can ask how many attempts the retry loop made.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;

/// The ways a call to the service can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceError {
    /// The attempt ran out of time; the request may or may not have been carried out.
    Timeout,
    /// The server answered with this HTTP status code, such as 503 or 404.
    Status(u16),
}

impl ServiceError {
    /// Whether waiting could fix this error: timeouts, 408, 429 and 5xx are transient, and so
    /// is an invalid status outside 100..=599 (chapter 2); every other status (400, 401, 403,
    /// 404, …) is permanent.
    pub fn is_transient(&self) -> bool {
        match self {
            ServiceError::Timeout => true,
            ServiceError::Status(status) => {
                !(100..=599).contains(status) || matches!(status, 408 | 429 | 500..=599)
            }
        }
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::Timeout => write!(f, "timed out"),
            ServiceError::Status(status) => write!(f, "HTTP {status}"),
        }
    }
}

impl std::error::Error for ServiceError {}

/// A service that fails with a scripted list of errors, then succeeds.
#[derive(Debug)]
pub struct ScriptedService {
    script: RefCell<VecDeque<ServiceError>>,
    forever: Option<ServiceError>,
    calls: Cell<u32>,
}

impl ScriptedService {
    /// Fails with each of `errors` in turn, then answers every call with `Ok(call number)`.
    pub fn failing_with(errors: impl IntoIterator<Item = ServiceError>) -> Self {
        Self {
            script: RefCell::new(errors.into_iter().collect()),
            forever: None,
            calls: Cell::new(0),
        }
    }

    /// Fails every call with `error`.
    pub fn always_failing_with(error: ServiceError) -> Self {
        Self {
            script: RefCell::new(VecDeque::new()),
            forever: Some(error),
            calls: Cell::new(0),
        }
    }

    /// One call to the service: the next scripted error, or `Ok` with the call's number (from 1).
    pub async fn call(&self) -> Result<u32, ServiceError> {
        let call = self.calls.get() + 1;
        self.calls.set(call);
        if let Some(error) = self.script.borrow_mut().pop_front() {
            return Err(error);
        }
        match self.forever {
            Some(error) => Err(error),
            None => Ok(call),
        }
    }

    /// How many times [`ScriptedService::call`] has been called.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }
}
