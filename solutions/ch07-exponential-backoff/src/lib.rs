//! Chapter 7 — Exponential backoff with a cap: the reference solution.
//!
//! [`Exponential`] is a retry policy in the shape chapter 5's loop expects: an iterator of the
//! delays to sleep before retry 0, 1, 2, …, each `min(cap, base · factor^retry)`, that ends
//! (`None`: give up) after `max_retries` of them. [`Exponential::delay`] answers the same question
//! for any retry number directly, up to `u32::MAX`, exact to the nanosecond and without overflow.

use std::time::Duration;

mod error;

pub use error::InvalidBackoff;

#[cfg(test)]
mod table;

// ANCHOR: exponential
/// Capped exponential backoff: `base`, `base · factor`, `base · factor²`, … but never more than
/// `cap`, for at most `max_retries` retries.
///
/// As an [`Iterator`] it yields the delay before retry 0, retry 1, and so on, and then `None`,
/// which tells the retry loop to give up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exponential {
    base: Duration,
    factor: u32,
    cap: Duration,
    max_retries: u32,
    /// How many delays the iterator has yielded so far: the next one is `delay(yielded)`.
    yielded: u32,
}
// ANCHOR_END: exponential

impl Exponential {
    // ANCHOR: new
    /// A schedule that starts at `base`, multiplies the delay by `factor` after every retry,
    /// never waits longer than `cap`, and allows `max_retries` retries.
    ///
    /// Refuses what cannot be a backoff: a zero `base` (every delay would be zero), a `factor`
    /// of 0 (every delay after the first would be zero), and a `base` above `cap` (the cap would
    /// cut even the first delay). A `factor` of 1 is allowed and gives a fixed delay.
    pub fn new(
        base: Duration,
        factor: u32,
        cap: Duration,
        max_retries: u32,
    ) -> Result<Self, InvalidBackoff> {
        if base.is_zero() {
            return Err(InvalidBackoff::ZeroBase);
        }
        if factor < 1 {
            return Err(InvalidBackoff::FactorBelowOne { factor });
        }
        if base > cap {
            return Err(InvalidBackoff::BaseAboveCap { base, cap });
        }
        Ok(Self {
            base,
            factor,
            cap,
            max_retries,
            yielded: 0,
        })
    }
    // ANCHOR_END: new

    // ANCHOR: delay
    /// The delay before retry number `retry` (counted from 0): `min(cap, base · factor^retry)`,
    /// exact to the nanosecond, for every `retry` up to `u32::MAX`.
    pub fn delay(&self, retry: u32) -> Duration {
        // Integer nanoseconds in a u128: every Duration fits with room to spare (it stays below
        // 2^94 ns), so only the growth itself can overflow. Saturating operations turn an
        // overflow into u128::MAX, which is above every cap, so `min` then gives the cap exactly.
        let growth = u128::from(self.factor).saturating_pow(retry);
        let uncapped = self.base.as_nanos().saturating_mul(growth);
        duration_from_nanos(uncapped.min(self.cap.as_nanos()))
    }
    // ANCHOR_END: delay
}

/// Turns a nanosecond count back into a `Duration`. The count is never above the cap, itself a
/// `Duration`, so the whole seconds always fit in a `u64`.
fn duration_from_nanos(nanos: u128) -> Duration {
    const NANOS_PER_SECOND: u128 = 1_000_000_000;
    let seconds = u64::try_from(nanos / NANOS_PER_SECOND).unwrap_or(u64::MAX);
    let subsecond_nanos = (nanos % NANOS_PER_SECOND) as u32;
    Duration::new(seconds, subsecond_nanos)
}

// ANCHOR: iterator
impl Iterator for Exponential {
    type Item = Duration;

    /// The delay before the next retry, or `None` once `max_retries` delays have been given.
    fn next(&mut self) -> Option<Duration> {
        if self.yielded >= self.max_retries {
            return None;
        }
        let delay = self.delay(self.yielded);
        self.yielded += 1;
        Some(delay)
    }
}
// ANCHOR_END: iterator
