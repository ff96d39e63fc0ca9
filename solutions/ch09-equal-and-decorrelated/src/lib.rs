//! Chapter 9 — Equal and decorrelated jitter: the reference solution.
//!
//! Two backoff policies, each an iterator of delays that owns its random generator:
//!
//! - [`EqualJitter`] keeps half of the capped exponential delay and randomises the other half:
//!   `t = min(cap, base · 2^attempt)`, `sleep = t/2 + random_between(0, t/2)`.
//! - [`DecorrelatedJitter`] grows each delay from the previous one:
//!   `sleep = min(cap, random_between(base, previous · 3))`, starting from `previous = base`.
//!
//! Both yield exactly `max_retries` delays and then `None`, so they plug straight into the given
//! [`retry::retry`] loop, or into any other loop that reads a policy as an iterator.

use std::iter::FusedIterator;
use std::time::Duration;

use rand::{Rng, RngExt};

pub mod ceiling;
pub mod retry;

pub use ceiling::backoff_ceiling;

// ANCHOR: equal_jitter
/// Equal jitter: before retry number `attempt` (counted from 0), a delay drawn uniformly from
/// `[t/2, t]`, where `t = min(cap, base · 2^attempt)`.
///
/// Half of the exponential delay is always kept, so no delay is ever shorter than `t/2`.
#[derive(Debug, Clone)]
pub struct EqualJitter<R> {
    base: Duration,
    cap: Duration,
    max_retries: u32,
    /// How many delays have been yielded so far; also the exponent of the next one.
    attempt: u32,
    rng: R,
}

impl<R: Rng> EqualJitter<R> {
    /// A policy of `max_retries` delays that draws its randomness from `rng`.
    pub fn new(base: Duration, cap: Duration, max_retries: u32, rng: R) -> Self {
        Self {
            base,
            cap,
            max_retries,
            attempt: 0,
            rng,
        }
    }
}

impl<R: Rng> Iterator for EqualJitter<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.attempt >= self.max_retries {
            return None;
        }
        let ceiling = backoff_ceiling(self.attempt, self.base, self.cap);
        self.attempt += 1;
        // Split the ceiling into a kept half and a random half that add up to exactly `ceiling`
        // (for an odd number of nanoseconds, `ceiling / 2` twice would fall 1 ns short).
        let kept = ceiling / 2;
        let random = self.rng.random_range(Duration::ZERO..=ceiling - kept);
        Some(kept + random)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.max_retries - self.attempt) as usize;
        (left, Some(left))
    }
}
// ANCHOR_END: equal_jitter

impl<R: Rng> ExactSizeIterator for EqualJitter<R> {}
impl<R: Rng> FusedIterator for EqualJitter<R> {}

// ANCHOR: decorrelated_struct
/// Decorrelated jitter: each delay is drawn uniformly from `[base, previous · 3]` and capped,
/// `sleep = min(cap, random_between(base, previous · 3))`, where `previous` is the delay this
/// policy yielded last, or `base` before the first one.
///
/// The policy is stateful: it remembers the delay it returned last.
#[derive(Debug, Clone)]
pub struct DecorrelatedJitter<R> {
    base: Duration,
    cap: Duration,
    max_retries: u32,
    /// How many delays have been yielded so far.
    attempt: u32,
    /// The delay yielded last, or `base` before the first one.
    previous: Duration,
    rng: R,
}

impl<R: Rng> DecorrelatedJitter<R> {
    /// A policy of `max_retries` delays that draws its randomness from `rng`.
    ///
    /// The cap is a promise no delay breaks, so a `base` above `cap` is lowered to `cap`.
    pub fn new(base: Duration, cap: Duration, max_retries: u32, rng: R) -> Self {
        let base = base.min(cap);
        Self {
            base,
            cap,
            max_retries,
            attempt: 0,
            previous: base,
            rng,
        }
    }
}
// ANCHOR_END: decorrelated_struct

// ANCHOR: decorrelated_next
impl<R: Rng> Iterator for DecorrelatedJitter<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.attempt >= self.max_retries {
            return None;
        }
        self.attempt += 1;
        // `previous` is never below `base`, so the range is never empty; near Duration::MAX the
        // product saturates instead of panicking.
        let upper = self.previous.saturating_mul(3);
        let delay = self.rng.random_range(self.base..=upper).min(self.cap);
        self.previous = delay;
        Some(delay)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.max_retries - self.attempt) as usize;
        (left, Some(left))
    }
}
// ANCHOR_END: decorrelated_next

impl<R: Rng> ExactSizeIterator for DecorrelatedJitter<R> {}
impl<R: Rng> FusedIterator for DecorrelatedJitter<R> {}
