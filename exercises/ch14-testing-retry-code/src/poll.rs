//! Given, and not under test: a neighbour of `retry.rs` for the book's worked examples.
//!
//! [`wait_until_ready`] polls a dependency's health check until it reports ready, pausing a
//! jittered interval between polls, and gives up when the next poll would start after a time
//! limit. It waits, rolls dice and depends on another service, like the retry loop, so the same
//! five techniques test it. `src/worked.rs` holds one worked test per technique; your suite tests
//! `retry.rs`, not this file.

use std::future::Future;
use std::time::Duration;

use rand::{Rng, RngExt};
use tokio::time::Instant;

/// How often to poll, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollPolicy {
    /// The longest pause between two polls; each pause is drawn from `[interval / 2, interval]`.
    pub interval: Duration,
    /// No poll starts later than this, counted from the first one.
    pub limit: Duration,
}

/// A dependency that can say whether it is ready. In test builds, mockall generates
/// `MockHealthCheck` from this trait.
#[cfg_attr(test, mockall::automock)]
pub trait HealthCheck {
    /// Asks whether `service` is ready to take traffic.
    fn is_ready(&self, service: &str) -> impl Future<Output = bool> + Send;
}

/// The dependency never said ready in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotReady {
    /// How many polls were made.
    pub polls: u32,
}

/// Equal jitter: a pause drawn uniformly from `[interval / 2, interval]`, in whole milliseconds
/// (tokio's timer counts whole milliseconds).
pub fn poll_pause(interval: Duration, rng: &mut impl Rng) -> Duration {
    let longest = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(rng.random_range(longest - longest / 2..=longest))
}

/// Polls `check` about `service` until it answers ready, and returns how many polls that took.
///
/// Between two polls it sleeps a [`poll_pause`] on tokio's clock. It gives up, with
/// [`NotReady`], when the next poll would start later than `policy.limit` after the first one.
pub async fn wait_until_ready(
    check: &impl HealthCheck,
    service: &str,
    policy: &PollPolicy,
    rng: &mut impl Rng,
) -> Result<u32, NotReady> {
    let first = Instant::now();
    let mut polls = 0;
    loop {
        polls += 1;
        if check.is_ready(service).await {
            return Ok(polls);
        }
        let pause = poll_pause(policy.interval, rng);
        if first.elapsed() + pause > policy.limit {
            return Err(NotReady { polls });
        }
        tokio::time::sleep(pause).await;
    }
}
