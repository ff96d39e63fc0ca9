//! # Chapter 9 — Equal and decorrelated jitter
//!
//! Book: `book/src/ch09-equal-and-decorrelated.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch09`. Stuck? `cargo xtask hint ch09`.
//!
//! ## Your task
//!
//! Two backoff policies, each an `Iterator<Item = Duration>` that owns its random generator and
//! yields exactly `max_retries` delays (any number up to `u32::MAX`), then `None` (and `None`
//! again if asked again).
//!
//! 1. [`EqualJitter`]: the delay before retry number `attempt` (counted from 0) is drawn
//!    uniformly from `[t/2, t]`, where `t = min(cap, base · 2^attempt)`:
//!    `sleep = t/2 + random_between(0, t/2)`. Never below `t/2`, never above `t`. Use the given
//!    [`backoff_ceiling`] for `t`: it never overflows. At the cap, the delays still spread over
//!    `[cap/2, cap]`, and every delay's random part is a fresh draw.
//! 2. [`DecorrelatedJitter`]: each delay is `min(cap, random_between(base, previous · 3))`, where
//!    `previous` is the delay yielded last, or `base` before the first one. Never below `base`,
//!    never above `cap`, never above `3 · previous`; from the cap it can fall back. `previous · 3`
//!    must saturate instead of overflowing. If `base > cap`, lower `base` to `cap` in `new`: the
//!    cap always wins.
//! 3. Both: the same seed gives the same sequence, and every delay comes from the generator the
//!    policy owns (no global state shared between two policies).
//!
//! Given: [`ceiling`] (`backoff_ceiling`) and [`retry`] (a loop that sleeps the delays of any
//! policy between calls). `tests/visible.rs` shows both in use; the grader adds hidden checks.
//! When everything passes, compare the three jitters:
//! `cargo run -p ch09_equal_and_decorrelated --example predict` (book §9.6).

use std::time::Duration;

use rand::Rng;
// rand 0.10's `random_range` is a method of `RngExt`: the draws you write use it.
#[allow(unused_imports)]
use rand::RngExt;

pub mod ceiling;
pub mod retry;

pub use ceiling::backoff_ceiling;

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
        // TODO: a policy that has yielded no delay yet.
        let _ = rng;
        todo!("EqualJitter::new(base = {base:?}, cap = {cap:?}, max_retries = {max_retries})")
    }
}

impl<R: Rng> Iterator for EqualJitter<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // TODO: the delay before the next retry, uniform over [t/2, t] with both ends possible
        // (t counts whole nanoseconds and may be odd); None once `max_retries` delays have been
        // yielded, and ever after.
        let _ = &mut self.rng;
        todo!(
            "EqualJitter::next (attempt {} of {}, base = {:?}, cap = {:?})",
            self.attempt,
            self.max_retries,
            self.base,
            self.cap
        )
    }
}

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
        // TODO: a policy that has yielded no delay yet (so `previous` is the base), with a base
        // above the cap lowered to the cap.
        let _ = rng;
        todo!(
            "DecorrelatedJitter::new(base = {base:?}, cap = {cap:?}, max_retries = {max_retries})"
        )
    }
}

impl<R: Rng> Iterator for DecorrelatedJitter<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // TODO: the next delay, min(cap, uniform over [base, previous · 3] with both ends
        // possible), which becomes `previous`; None once `max_retries` delays have been yielded,
        // and ever after. Nothing may overflow, even near Duration::MAX.
        let _ = &mut self.rng;
        todo!(
            "DecorrelatedJitter::next (attempt {} of {}, base = {:?}, cap = {:?}, previous = {:?})",
            self.attempt,
            self.max_retries,
            self.base,
            self.cap,
            self.previous
        )
    }
}
