//! # Chapter 8 — Full jitter
//!
//! Book: `book/src/ch08-full-jitter.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch08`. Stuck? `cargo xtask hint ch08`.
//!
//! ## Your task
//!
//! 1. [`full_jitter`]: return a delay drawn uniformly from `[0, min(cap, base · 2^attempt)]`,
//!    both ends included, at nanosecond resolution. `attempt` is 0 for the sleep after the first
//!    failure. The ceiling must be exact for every `attempt` up to `u32::MAX`: no panic, no
//!    wrap-around, never above `base · 2^attempt` nor the cap, never short of either.
//! 2. [`retry_with_backoff`]: call `op` at most `attempts` times (`attempts = 0` counts as 1, and
//!    any count up to `u32::MAX` is allowed); return the first `Ok`, or the **last** `Err` when the
//!    attempts run out. Between two attempts, and only there, sleep on tokio's clock: the sleep
//!    before retry `r` (counted from 0) is `full_jitter(r, base, cap, rng)`, one draw from `rng`
//!    per sleep.
//!
//! The two stubs in [`stubs`] drive the exercise: one fails twice and then succeeds, one always
//! fails. `tests/visible.rs` uses them; the grader adds hidden checks of its own.

use std::future::Future;
use std::time::Duration;

use rand::Rng;
// rand 0.10's `random_range` is a method of `RngExt`: the draws you write use it.
#[allow(unused_imports)]
use rand::RngExt;

pub mod stubs;

/// Full jitter: a delay drawn uniformly from `[0, min(cap, base · 2^attempt)]`.
///
/// `attempt` is 0 for the sleep after the first failure, 1 after the second, and so on.
pub fn full_jitter(attempt: u32, base: Duration, cap: Duration, rng: &mut impl Rng) -> Duration {
    // TODO: one uniform draw from [0, min(cap, base · 2^attempt)], exact for every attempt.
    let _ = rng;
    todo!("full_jitter(attempt = {attempt}, base = {base:?}, cap = {cap:?})")
}

/// Calls `op` at most `attempts` times and returns its first `Ok`, or the last `Err`.
///
/// Sleeps a [`full_jitter`] delay (on tokio's clock) between two attempts, and only there.
pub async fn retry_with_backoff<T, E, F, Fut>(
    op: F,
    attempts: u32,
    base: Duration,
    cap: Duration,
    rng: &mut impl Rng,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // TODO: the loop the task statement describes. (To call `op` more than once, the binding
    // must be mutable: `mut op: F`.)
    let _ = (op, rng);
    todo!("retry_with_backoff(attempts = {attempts}, base = {base:?}, cap = {cap:?})")
}
