//! Given: a stand-in for the remote service behind the retry loop.
//!
//! A [`Backend`] counts its calls with an atomic counter, so one backend can be shared by many
//! tasks and threads (`Arc<Backend>`), just like the budget in front of it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The error every failed call returns: which call (counted from 1) it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendError {
    pub call: u64,
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call {} failed: service unavailable", self.call)
    }
}

impl std::error::Error for BackendError {}

/// Which calls fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    /// Every call succeeds.
    Up,
    /// Every call fails: a full outage.
    Down,
    /// Calls number `n`, `2n`, `3n`, … fail; the others succeed.
    FailingEvery(u64),
}

/// A service that answers or fails by a fixed plan, and counts its calls.
#[derive(Debug)]
pub struct Backend {
    health: Health,
    calls: AtomicU64,
}

impl Backend {
    fn new(health: Health) -> Self {
        Self {
            health,
            calls: AtomicU64::new(0),
        }
    }

    /// A healthy service: every call succeeds.
    pub fn up() -> Self {
        Self::new(Health::Up)
    }

    /// A full outage: every call fails.
    pub fn down() -> Self {
        Self::new(Health::Down)
    }

    /// Occasional failures: every `n`-th call fails (`n = 10` fails calls 10, 20, 30, …).
    /// `n = 0` is treated as 1, a full outage.
    pub fn failing_every(n: u64) -> Self {
        Self::new(Health::FailingEvery(n.max(1)))
    }

    /// One call: `Ok` with the call's number, or a [`BackendError`] naming it.
    pub async fn call(&self) -> Result<u64, BackendError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let fails = match self.health {
            Health::Up => false,
            Health::Down => true,
            Health::FailingEvery(n) => call.is_multiple_of(n),
        };
        if fails {
            Err(BackendError { call })
        } else {
            Ok(call)
        }
    }

    /// How many times [`Backend::call`] has been called.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}
