//! Given: a stand-in for a remote service that follows a script, on tokio's clock.
//!
//! Each call takes the next [`Reply`] of the script (the last one repeats forever): it answers
//! or fails after a set latency, or it hangs and never answers. The service remembers when each
//! call came, so a test can check when attempts started.

use std::cell::RefCell;
use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

/// The error a failing call returns: which call (counted from 1) it was.
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

/// What one call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Answers `Ok(call number)` after this latency.
    Succeed(Duration),
    /// Fails with [`StubError`] after this latency.
    Fail(Duration),
    /// Never answers: only a timeout or a cancel signal ends the call.
    Hang,
}

/// A service that replays a script of replies and records when it was called.
#[derive(Debug)]
pub struct ScriptedService {
    script: Vec<Reply>,
    calls: RefCell<Vec<Instant>>,
}

impl ScriptedService {
    /// Replays `script`, one reply per call; the last reply repeats once the script runs out.
    ///
    /// # Panics
    /// If `script` is empty.
    pub fn new(script: impl Into<Vec<Reply>>) -> Self {
        let script = script.into();
        assert!(!script.is_empty(), "a script needs at least one reply");
        Self {
            script,
            calls: RefCell::new(Vec::new()),
        }
    }

    /// Fails `failures` times (each after `latency`), then succeeds (after `latency` too).
    pub fn fails_then_succeeds(failures: usize, latency: Duration) -> Self {
        let mut script = vec![Reply::Fail(latency); failures];
        script.push(Reply::Succeed(latency));
        Self::new(script)
    }

    /// Every call fails after `latency`.
    pub fn always_fails(latency: Duration) -> Self {
        Self::new([Reply::Fail(latency)])
    }

    /// Every call hangs.
    pub fn always_hangs() -> Self {
        Self::new([Reply::Hang])
    }

    /// One call: follows the next reply of the script.
    pub async fn call(&self) -> Result<u32, StubError> {
        let call = {
            let mut calls = self.calls.borrow_mut();
            calls.push(Instant::now());
            calls.len()
        };
        let reply = self.script[(call - 1).min(self.script.len() - 1)];
        let call = u32::try_from(call).unwrap_or(u32::MAX);
        match reply {
            Reply::Succeed(latency) => {
                tokio::time::sleep(latency).await;
                Ok(call)
            }
            Reply::Fail(latency) => {
                tokio::time::sleep(latency).await;
                Err(StubError { call })
            }
            Reply::Hang => std::future::pending().await,
        }
    }

    /// How many times [`ScriptedService::call`] has been called.
    pub fn calls(&self) -> u32 {
        u32::try_from(self.calls.borrow().len()).unwrap_or(u32::MAX)
    }

    /// When (on tokio's clock) each call started, in order.
    pub fn call_times(&self) -> Vec<Instant> {
        self.calls.borrow().clone()
    }
}
