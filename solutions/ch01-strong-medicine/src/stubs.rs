//! Given: two stand-ins for a remote service, the drivers of this chapter's exercise.
//!
//! Both answer a call with the call's number (counted from 1), `Ok` or `Err`, and both count
//! their calls, so a test or a program can ask how much load the retry loop put on them.
//!
//! Neither takes more than [`CALL_LIMIT`] calls: nothing in this chapter needs that many, so a
//! retry loop that never gives up fails at once with a message instead of hanging.

use std::fmt;

use rand::{Rng, RngExt};

/// The most calls a stub answers; the next one panics.
pub const CALL_LIMIT: u32 = 1_000_000;

/// Counts one more call on `calls` and returns its number, or panics past [`CALL_LIMIT`].
fn count_call(calls: &mut u32) -> u32 {
    assert!(
        *calls < CALL_LIMIT,
        "this stub has answered {CALL_LIMIT} calls, far more than this chapter needs: \
         is a retry loop failing to give up?"
    );
    *calls += 1;
    *calls
}

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

/// A service whose calls fail independently of each other, each with the same probability.
///
/// The coin is a seeded random generator, so a run can be repeated exactly. A failure
/// probability of 1.0 is a full outage: every call fails.
#[derive(Debug)]
pub struct Flaky<R> {
    failure_probability: f64,
    rng: R,
    calls: u32,
}

impl<R: Rng> Flaky<R> {
    /// A service whose every call fails with probability `failure_probability`.
    ///
    /// # Panics
    ///
    /// If `failure_probability` is not within `[0, 1]`.
    pub fn new(failure_probability: f64, rng: R) -> Self {
        assert!(
            (0.0..=1.0).contains(&failure_probability),
            "a failure probability must lie within [0, 1], not {failure_probability}"
        );
        Self {
            failure_probability,
            rng,
            calls: 0,
        }
    }

    /// One call to the service: fails with the configured probability, whatever came before.
    pub fn call(&mut self) -> Result<u32, StubError> {
        let call = count_call(&mut self.calls);
        if self.rng.random_bool(self.failure_probability) {
            Err(StubError { call })
        } else {
            Ok(call)
        }
    }

    /// How many times [`Flaky::call`] has been called.
    pub fn calls(&self) -> u32 {
        self.calls
    }
}

// ANCHOR: recovers_after
/// A service that fails a fixed number of calls, then answers every call.
#[derive(Debug)]
pub struct RecoversAfter {
    failures: u32,
    calls: u32,
}

impl RecoversAfter {
    /// Fails the first `failures` calls, then succeeds.
    pub fn new(failures: u32) -> Self {
        Self { failures, calls: 0 }
    }

    /// A permanent failure: every call fails.
    pub fn never() -> Self {
        Self::new(u32::MAX)
    }

    /// One call to the service: `Ok` with the call's number once the failures are used up.
    pub fn call(&mut self) -> Result<u32, StubError> {
        let call = count_call(&mut self.calls);
        if call > self.failures {
            Ok(call)
        } else {
            Err(StubError { call })
        }
    }

    /// How many times [`RecoversAfter::call`] has been called.
    pub fn calls(&self) -> u32 {
        self.calls
    }
}
// ANCHOR_END: recovers_after
