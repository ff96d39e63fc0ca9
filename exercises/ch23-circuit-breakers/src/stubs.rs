//! Given: a stand-in for the dependency behind the breaker, shareable between tasks.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// The error the dependency fails with: which call (counted from 1) it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DependencyError {
    pub call: u32,
}

impl fmt::Display for DependencyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call {} failed: the dependency is down", self.call)
    }
}

impl std::error::Error for DependencyError {}

/// A dependency that answers after a latency and fails every call while it is down.
///
/// It counts the calls that reach it, so a test can tell how many the breaker let through.
#[derive(Debug, Default)]
pub struct Dependency {
    calls: AtomicU32,
    in_flight: AtomicU32,
    down: AtomicBool,
    latency_nanos: AtomicU64,
}

impl Dependency {
    /// A dependency that answers every call at once.
    pub fn healthy() -> Self {
        Self::default()
    }

    /// A dependency that fails every call until [`Dependency::set_down`]`(false)`.
    pub fn down() -> Self {
        let dependency = Self::default();
        dependency.set_down(true);
        dependency
    }

    /// Starts (`true`) or ends (`false`) an outage.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// How long each call takes from now on, on tokio's clock.
    pub fn set_latency(&self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.latency_nanos.store(nanos, Ordering::SeqCst);
    }

    /// One call: waits the latency, then answers with the call's number, or fails if the
    /// dependency is down when the answer is due.
    // ANCHOR: in_flight
    pub async fn handle(&self) -> Result<u32, DependencyError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        // Counted down when the call ends, however it ends: answered, or dropped mid-way by a
        // caller that stopped waiting (a timeout, a `select!` that took another branch).
        let _leaves = InFlight(&self.in_flight);
        let latency = Duration::from_nanos(self.latency_nanos.load(Ordering::SeqCst));
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        if self.down.load(Ordering::SeqCst) {
            Err(DependencyError { call })
        } else {
            Ok(call)
        }
    }
    // ANCHOR_END: in_flight

    /// How many calls are being served right now.
    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// How many calls have reached the dependency.
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

// ANCHOR: guard
/// Holds one place in the in-flight count and gives it back when dropped.
struct InFlight<'a>(&'a AtomicU32);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
// ANCHOR_END: guard
