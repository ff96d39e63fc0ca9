//! # Chapter 6 — Fixed and linear backoff, and why they march in step
//!
//! Book: `book/src/ch06-fixed-and-linear.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch06`. Stuck? `cargo xtask hint ch06`.
//!
//! ## Your task
//!
//! A policy is an iterator of delays, one per retry, where `None` means "give up" (chapter 5).
//! The two policy types, [`Fixed`] and [`Linear`], and their constructors are given in
//! `src/policy.rs`; you write how they count and compute, then measure what they do to a server.
//!
//! 1. `impl Iterator for Fixed`: yield `delay` exactly `max_retries` times, then `None` (and
//!    `None` again on every later call). `Fixed::new(3 s, 4)` gives 3 s, 3 s, 3 s, 3 s.
//! 2. [`Linear::delay`]: the delay before retry number `retry + 1` (`retry` counts from 0), that
//!    is `initial + retry · increment`. It must not panic for any input, up to `retry = u32::MAX`
//!    and `Duration::MAX`: saturate at `Duration::MAX` instead.
//! 3. `impl Iterator for Linear`: yield `delay(0)`, `delay(1)`, … exactly `max_retries` times,
//!    then `None`. `Linear::new(3 s, 3 s, 4)` gives 3 s, 6 s, 9 s, 12 s.
//! 4. [`load_per_window`]: `clients` clients all fail at t = 0 and follow the same schedule of
//!    delays; every call fails at once, so retry `r` arrives at the sum of the first `r` delays.
//!    Count the retries arriving in each window `[k · window, (k + 1) · window)`: an arrival
//!    exactly on a boundary counts in the later window. Return the counts from window 0 up to
//!    the window of the last retry (an empty schedule gives an empty `Vec`).
//!
//! `tests/visible.rs` shows a few examples; the grader adds hidden checks of its own. Once
//! everything passes, `cargo run -p ch06_fixed_and_linear --example predict` answers the
//! "predict, then run" question of book §6.5.

use std::time::Duration;

mod policy;

pub use policy::{Fixed, Linear};

impl Iterator for Fixed {
    type Item = Duration;

    /// The delay before the next retry, or `None` once `max_retries` delays have been handed out.
    fn next(&mut self) -> Option<Duration> {
        // TODO: `delay`, exactly `max_retries` times; then None, and None ever after.
        todo!("Fixed::next() with {self:?}")
    }
}

impl Linear {
    /// The delay before retry number `retry + 1` (so `retry` counts from 0, as chapters 7 and 8
    /// count `attempt`): `initial + retry · increment`, saturating at `Duration::MAX`.
    pub fn delay(&self, retry: u32) -> Duration {
        // TODO: initial + retry · increment, exact to the nanosecond; for any input, a result
        // too long for a Duration is Duration::MAX (never a panic, never a wrap-around).
        todo!("Linear::delay(retry = {retry}) with {self:?}")
    }
}

impl Iterator for Linear {
    type Item = Duration;

    /// The delay before the next retry, or `None` once `max_retries` delays have been handed out.
    fn next(&mut self) -> Option<Duration> {
        // TODO: delay(0), delay(1), … exactly `max_retries` times; then None, and None ever
        // after.
        todo!("Linear::next() with {self:?}")
    }
}

/// How many retries reach the server in each time window when `clients` clients, which all made
/// their first call at t = 0 and saw it fail, follow the same `schedule` of delays in step.
///
/// `schedule` lists the delays before retries 1, 2, 3, … (what a policy yields). Retry `r`
/// arrives at the sum of the first `r` delays (a sum too long for a `Duration` is
/// `Duration::MAX`). Window `k` covers `[k · window, (k + 1) · window)`: an arrival exactly on a
/// boundary counts in the later window, whatever the window's length (not only whole
/// milliseconds). The result runs from window 0 up to the window of the last retry; an empty
/// schedule gives an empty `Vec`.
///
/// # Panics
///
/// If `window` is zero.
pub fn load_per_window(schedule: &[Duration], clients: usize, window: Duration) -> Vec<usize> {
    // TODO: the histogram described above, exact at every window boundary.
    todo!("load_per_window(schedule = {schedule:?}, clients = {clients}, window = {window:?})")
}
