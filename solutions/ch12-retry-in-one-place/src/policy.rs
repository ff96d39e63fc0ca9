//! Given: a retry policy. How many attempts a layer may make, and the full-jitter sleep of
//! chapter 8 between two of them, on tokio's clock.

use std::cell::RefCell;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// How often a layer may call, and how long it sleeps between two calls.
#[derive(Debug)]
pub struct RetryPolicy {
    attempts: u32,
    base: Duration,
    cap: Duration,
    rng: RefCell<StdRng>,
}

impl RetryPolicy {
    /// The attempts of [`RetryPolicy::standard`]: one call and three retries.
    pub const STANDARD_ATTEMPTS: u32 = 4;
    /// The base of [`RetryPolicy::standard`]: the ceiling of the first sleep.
    pub const STANDARD_BASE: Duration = Duration::from_millis(50);
    /// The cap of [`RetryPolicy::standard`]: no sleep is longer.
    pub const STANDARD_CAP: Duration = Duration::from_millis(500);

    /// A policy of at most `attempts` calls, with full-jitter sleeps drawn from
    /// `[0, min(cap, base · 2^retry)]` by a generator seeded with `seed`.
    pub fn new(attempts: u32, base: Duration, cap: Duration, seed: u64) -> Self {
        Self {
            attempts,
            base,
            cap,
            rng: RefCell::new(StdRng::seed_from_u64(seed)),
        }
    }

    /// Four attempts (three retries), base 50 ms, cap 500 ms: the policy every layer of the
    /// given stack uses.
    pub fn standard(seed: u64) -> Self {
        Self::new(
            Self::STANDARD_ATTEMPTS,
            Self::STANDARD_BASE,
            Self::STANDARD_CAP,
            seed,
        )
    }

    /// The most calls a layer with this policy makes for one request.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The longest sleep before retry number `retry` (counted from 0): `min(cap, base · 2^retry)`.
    pub fn ceiling(&self, retry: u32) -> Duration {
        // Doubling stops at the cap (or a zero base): exact for every retry, and no power of
        // two is computed that could overflow.
        let mut ceiling = self.base.min(self.cap);
        for _ in 0..retry {
            if ceiling.is_zero() || ceiling == self.cap {
                break;
            }
            ceiling = ceiling.saturating_mul(2).min(self.cap);
        }
        ceiling
    }

    /// Sleeps a full-jitter delay before retry number `retry` (0 after the first failure).
    pub async fn sleep_before_retry(&self, retry: u32) {
        let ceiling = self.ceiling(retry);
        let delay = self.rng.borrow_mut().random_range(Duration::ZERO..=ceiling);
        tokio::time::sleep(delay).await;
    }
}
