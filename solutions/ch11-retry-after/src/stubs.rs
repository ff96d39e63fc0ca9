//! Given: a stand-in for an HTTP service that follows a script, on tokio's clock.
//!
//! Each call takes the next [`Reply`] of the script (the last one repeats forever) and answers it
//! after a fixed latency. The server keeps a simulated wall clock that starts at [`clock_start`]
//! and advances with tokio's (paused) clock, so a failed call's
//! [`received_at`](crate::HttpError::received_at) is an ordinary `SystemTime` that an HTTP-date
//! can be compared with, while a test still takes no real time.

use std::cell::RefCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::types::HttpError;

/// The moment every [`ScriptedServer`]'s wall clock starts: `Fri, 31 Dec 1999 23:57:59 GMT`,
/// two minutes before the date in RFC 9110's example `Retry-After: Fri, 31 Dec 1999 23:59:59 GMT`.
pub fn clock_start() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(946_684_679)
}

/// What one call does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answers `Ok(call number)`.
    Succeed,
    /// Fails with this status and, if given, this raw `Retry-After` value.
    Fail {
        status: u16,
        retry_after: Option<String>,
    },
}

impl Reply {
    /// A failure without a `Retry-After` header.
    pub fn status(status: u16) -> Self {
        Self::Fail {
            status,
            retry_after: None,
        }
    }

    /// A failure whose response carries `Retry-After: value`.
    pub fn retry_after(status: u16, value: &str) -> Self {
        Self::Fail {
            status,
            retry_after: Some(value.to_owned()),
        }
    }
}

/// A server that replays a script of replies and records when it was called.
#[derive(Debug)]
pub struct ScriptedServer {
    script: Vec<Reply>,
    latency: Duration,
    created: Instant,
    calls: RefCell<Vec<Instant>>,
}

impl ScriptedServer {
    /// Replays `script`, one reply per call, each at once; the last reply repeats once the
    /// script runs out. The server's wall clock reads [`clock_start`] now.
    ///
    /// # Panics
    /// If `script` is empty.
    pub fn new(script: impl Into<Vec<Reply>>) -> Self {
        let script = script.into();
        assert!(!script.is_empty(), "a script needs at least one reply");
        Self {
            script,
            latency: Duration::ZERO,
            created: Instant::now(),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// The same server, but every call takes `latency` (of tokio's time) to answer.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// One call: waits the latency, then follows the next reply of the script.
    pub async fn call(&self) -> Result<u32, HttpError> {
        let call = {
            let mut calls = self.calls.borrow_mut();
            calls.push(Instant::now());
            calls.len()
        };
        let reply = &self.script[(call - 1).min(self.script.len() - 1)];
        tokio::time::sleep(self.latency).await;
        match reply {
            Reply::Succeed => Ok(u32::try_from(call).unwrap_or(u32::MAX)),
            Reply::Fail {
                status,
                retry_after,
            } => Err(HttpError {
                status: *status,
                retry_after: retry_after.clone(),
                received_at: self.wall_clock(),
            }),
        }
    }

    /// The server's wall clock now: [`clock_start`] plus the tokio time since it was created.
    pub fn wall_clock(&self) -> SystemTime {
        clock_start() + self.created.elapsed()
    }

    /// How many times [`ScriptedServer::call`] has been called.
    pub fn calls(&self) -> u32 {
        u32::try_from(self.calls.borrow().len()).unwrap_or(u32::MAX)
    }

    /// When each call started, as tokio time since the server was created, in order.
    pub fn call_times(&self) -> Vec<Duration> {
        let calls = self.calls.borrow();
        calls.iter().map(|call| *call - self.created).collect()
    }
}
