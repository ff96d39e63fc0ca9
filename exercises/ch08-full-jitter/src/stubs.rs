//! Given: two stand-ins for a remote service, the drivers of this chapter's exercise.
//!
//! Both count their calls, so a test can ask how many attempts the retry loop made.

use std::cell::Cell;
use std::fmt;

/// The error every stub call fails with: which call (counted from 1) it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StubError {
    pub call: u32,
}

impl fmt::Display for StubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call {} failed", self.call)
    }
}

impl std::error::Error for StubError {}

/// A service that fails a fixed number of times, then answers every call.
#[derive(Debug)]
pub struct FlakyService {
    failures_before_success: u32,
    calls: Cell<u32>,
}

impl FlakyService {
    /// Fails the first `failures` calls, then succeeds.
    pub fn failing_first(failures: u32) -> Self {
        Self {
            failures_before_success: failures,
            calls: Cell::new(0),
        }
    }

    /// The stub of the exercise: fails twice, then succeeds.
    pub fn fails_twice_then_succeeds() -> Self {
        Self::failing_first(2)
    }

    /// A permanent failure: every call fails.
    pub fn always_fails() -> Self {
        Self::failing_first(u32::MAX)
    }

    /// One call to the service: `Ok` with the call's number once the failures are used up.
    pub async fn call(&self) -> Result<u32, StubError> {
        let call = self.calls.get() + 1;
        self.calls.set(call);
        if call > self.failures_before_success {
            Ok(call)
        } else {
            Err(StubError { call })
        }
    }

    /// How many times [`FlakyService::call`] has been called.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }
}
