//! Given: the numbers of the checkout's retry policies, and chapter 8's full jitter.

use std::time::Duration;

use rand::{Rng, RngExt};

/// How one step's action is retried (chapter 22).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepPolicy {
    /// Attempts in all, the first one included.
    pub max_attempts: u32,
    /// The full-jitter ceiling before the first retry; it doubles before each later retry.
    pub base: Duration,
    /// The ceiling never grows past this.
    pub cap: Duration,
    /// The longest one attempt may take before it is cut off.
    pub per_attempt_timeout: Duration,
    /// The longest the whole action may take, from the start of its first attempt: attempts,
    /// timeouts and sleeps together. No sleep may end at or past it.
    pub total_budget: Duration,
}

/// The policies of the checkout saga.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutConfig {
    /// For the steps' work: reserve, charge, book.
    pub execute: StepPolicy,
    /// For the compensations: release, refund. They must succeed, so they get more attempts
    /// and more time.
    pub compensate: StepPolicy,
}

impl Default for CheckoutConfig {
    /// Each step: four attempts of at most 1 s within 10 s, full jitter from 100 ms up to a
    /// 2 s cap. Each compensation: six attempts of at most 1 s within 20 s, full jitter from
    /// 500 ms up to a 4 s cap, to let the trouble pass.
    fn default() -> Self {
        Self {
            execute: StepPolicy {
                max_attempts: 4,
                base: Duration::from_millis(100),
                cap: Duration::from_secs(2),
                per_attempt_timeout: Duration::from_secs(1),
                total_budget: Duration::from_secs(10),
            },
            compensate: StepPolicy {
                max_attempts: 6,
                base: Duration::from_millis(500),
                cap: Duration::from_secs(4),
                per_attempt_timeout: Duration::from_secs(1),
                total_budget: Duration::from_secs(20),
            },
        }
    }
}

impl CheckoutConfig {
    /// The longest one checkout can take: every step's execution and every compensation uses
    /// its whole time budget (three steps, and at most three compensations: the failed step is
    /// undone too when its work may have been done).
    pub fn worst_case(&self) -> Duration {
        self.execute.total_budget * 3 + self.compensate.total_budget * 3
    }
}

/// How the outbox relay publishes and reschedules (chapters 15 and 16).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    /// The most rows one pass takes.
    pub batch: usize,
    /// The longest one publish may take before the relay gives up on it.
    pub publish_timeout: Duration,
    /// The full-jitter ceiling after a row's first failure; it doubles with every failure.
    pub base: Duration,
    /// The backoff ceiling never grows past this.
    pub cap: Duration,
    /// A broker's `Retry-After` is followed, but never beyond this.
    pub max_hint: Duration,
    /// The failure that brings a row's attempts to this number marks it failed: no event is
    /// retried forever. (With this chapter's chaos, a row fails a handful of times at most.)
    pub max_attempts: u32,
}

impl Default for RelayConfig {
    /// Ten rows a pass, 500 ms per publish, backoff from 250 ms to 4 s, hints up to 8 s,
    /// twenty attempts.
    fn default() -> Self {
        Self {
            batch: 10,
            publish_timeout: Duration::from_millis(500),
            base: Duration::from_millis(250),
            cap: Duration::from_secs(4),
            max_hint: Duration::from_secs(8),
            max_attempts: 20,
        }
    }
}

/// Full jitter (chapter 8): a delay drawn uniformly from `[0, min(cap, base · 2^retry)]`,
/// where `retry` is 0 for the wait after the first failure. Never overflows.
pub fn full_jitter(retry: u32, base: Duration, cap: Duration, rng: &mut impl Rng) -> Duration {
    // Doubling stops at the cap (or a zero base): exact for every retry, and no power of two
    // is computed that could overflow.
    let mut ceiling = base.min(cap);
    for _ in 0..retry {
        if ceiling.is_zero() || ceiling == cap {
            break;
        }
        ceiling = ceiling.saturating_mul(2).min(cap);
    }
    rng.random_range(Duration::ZERO..=ceiling)
}
