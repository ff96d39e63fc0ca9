//! # Chapter 7 — Exponential backoff with a cap
//!
//! Book: `book/src/ch07-exponential-backoff.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch07`. Stuck? `cargo xtask hint ch07`.
//!
//! ## Your task
//!
//! [`Exponential`] is a retry policy: the delays to sleep before retry 0, 1, 2, …, where the
//! delay before retry `r` is `min(cap, base · factor^r)`.
//!
//! 1. [`Exponential::new`]: keep the four settings, or refuse them with the given
//!    [`InvalidBackoff`]: `ZeroBase` for a zero `base`, `FactorBelowOne` for a `factor` of 0,
//!    `BaseAboveCap` for a `base` longer than `cap` (checked in that order).
//! 2. [`Exponential::delay`]: return `min(cap, base · factor^retry)`, exact to the nanosecond, for
//!    **every** `retry` up to `u32::MAX`: no panic, no wrap-around, never above `cap`, and no
//!    floating point (it cannot hold every nanosecond near a large cap).
//! 3. `Iterator for Exponential`: yield `delay(0)`, `delay(1)`, … `delay(max_retries - 1)`, then
//!    `None` (give up) from then on.
//!
//! `base` is the first delay and `factor` is what each delay is multiplied by: with `base = 100 ms`,
//! `factor = 2`, `cap = 30 s` the delays are 100, 200, 400, 800 ms, … 25.6 s, then 30 s every time.
//! `tests/visible.rs` shows a few examples; the grader adds hidden checks, property tests among
//! them, that try retry numbers all the way to `u32::MAX`.

use std::time::Duration;

mod error;

pub use error::InvalidBackoff;

/// Capped exponential backoff: `base`, `base · factor`, `base · factor²`, … but never more than
/// `cap`, for at most `max_retries` retries.
///
/// As an [`Iterator`] it yields the delay before retry 0, retry 1, and so on, and then `None`,
/// which tells the retry loop to give up. You may change the private fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exponential {
    base: Duration,
    factor: u32,
    cap: Duration,
    max_retries: u32,
    /// How many delays the iterator has yielded so far: the next one is `delay(yielded)`.
    yielded: u32,
}

impl Exponential {
    /// A schedule that starts at `base`, multiplies the delay by `factor` after every retry,
    /// never waits longer than `cap`, and allows `max_retries` retries.
    ///
    /// Refuses a zero `base`, a `factor` of 0, and a `base` above `cap`, in that order.
    pub fn new(
        base: Duration,
        factor: u32,
        cap: Duration,
        max_retries: u32,
    ) -> Result<Self, InvalidBackoff> {
        // TODO: the schedule, with no delay yielded yet; or the first refusal that applies.
        todo!(
            "Exponential::new(base = {base:?}, factor = {factor}, cap = {cap:?}, max_retries = {max_retries})"
        )
    }

    /// The delay before retry number `retry` (counted from 0): `min(cap, base · factor^retry)`,
    /// exact to the nanosecond, for every `retry` up to `u32::MAX`.
    pub fn delay(&self, retry: u32) -> Duration {
        // TODO: min(cap, base · factor^retry), exact to the nanosecond for every retry up to
        // u32::MAX, including caps one nanosecond either side of base · factor^k.
        todo!("Exponential::delay(retry = {retry}) for {self:?}")
    }
}

impl Iterator for Exponential {
    type Item = Duration;

    /// The delay before the next retry, or `None` once `max_retries` delays have been given.
    fn next(&mut self) -> Option<Duration> {
        // TODO: delay(0), delay(1), … exactly `max_retries` times (any number up to u32::MAX),
        // then None, and None ever after.
        todo!("Exponential::next() for {self:?}")
    }
}
