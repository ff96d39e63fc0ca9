//! # Chapter 4 — Deadlines and the total budget
//!
//! Book: `book/src/ch04-deadlines.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch04`. Stuck? `cargo xtask hint ch04`.
//!
//! ## Your task
//!
//! 1. [`worst_case_time`]: the longest a retry under a [`Policy`] can take, when every attempt
//!    runs until its timeout and every sleep between two attempts is taken:
//!    `max_attempts · per_attempt + delay_after(1) + … + delay_after(max_attempts − 1)`.
//!    No sleep follows the last attempt. Saturate at `Duration::MAX` instead of overflowing.
//! 2. [`child_deadline`]: the budget to hand to a downstream call: `parent_remaining − spent −
//!    margin`, or zero when that would be negative. It must never panic.
//! 3. [`retry_until`]: call `op` until it succeeds, with these rules:
//!    - never start an attempt at or after `deadline`;
//!    - cut each attempt off after `min(policy.per_attempt(), time left before the deadline)`;
//!    - after a failed attempt, give up with its failure (`RetryError::Failed(error)`, or
//!      `RetryError::TimedOut` if it was cut off) when the attempts are used up, or when the
//!      sleep `policy.delay_after(attempt)` would end at or past the deadline: do not start it;
//!    - if `cancel` fires during an attempt or a sleep, return `RetryError::Cancelled` at once
//!      (and when the signal and an answer are ready at the same instant, cancellation wins);
//!    - if the deadline is already reached before the first attempt, return
//!      `RetryError::DeadlineExceeded` (or `RetryError::Cancelled` if `cancel` has already
//!      fired) without calling `op`.
//!
//!    All time is tokio's (`tokio::time::Instant` and tokio's timers), so that the paused test
//!    clock governs it.
//!
//! Given, ready-made: [`Policy`] (attempts, per-attempt timeout, sleeps), [`RetryError`] (how the
//! loop gives up), [`CancelToken`] (the cancel signal), and [`stubs::ScriptedService`] (a service
//! that answers, fails or hangs on cue). `tests/visible.rs` uses them; the grader adds hidden
//! checks of its own.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

pub mod cancel;
pub mod outcome;
pub mod policy;
pub mod stubs;

pub use cancel::CancelToken;
pub use outcome::RetryError;
pub use policy::Policy;

/// The longest a retry under `policy` can take: every attempt runs until its timeout cuts it
/// off, and every sleep between two attempts is taken in full.
///
/// `max_attempts · per_attempt + delay_after(1) + … + delay_after(max_attempts − 1)`: there is no
/// sleep after the last attempt. Saturates at `Duration::MAX` instead of overflowing.
pub fn worst_case_time(policy: &Policy) -> Duration {
    // TODO: the sum described above, exact to the nanosecond, saturating instead of overflowing.
    todo!("worst_case_time({policy:?})")
}

/// The time budget to hand to a downstream call: what the parent had left, minus what has been
/// spent since, minus a safety `margin` for the trip back. Zero when nothing is left, never a panic.
pub fn child_deadline(parent_remaining: Duration, spent: Duration, margin: Duration) -> Duration {
    // TODO: the budget described above; every combination of inputs has an answer.
    todo!(
        "child_deadline(parent_remaining = {parent_remaining:?}, spent = {spent:?}, margin = {margin:?})"
    )
}

/// Calls `op` until it succeeds, the policy's attempts run out, the next step would not fit
/// before `deadline`, or `cancel` fires, whichever comes first.
///
/// - No attempt starts at or after `deadline`; each attempt is cut off after
///   `min(per_attempt, time left)`, so the last one ends at the deadline at the latest.
/// - The sleep after failed attempt `k` is `policy.delay_after(k)`. A sleep that would end at or
///   past the deadline is not started: the loop gives up at once with the last failure instead.
///   A sleep that ends before the deadline is taken, however little time it leaves.
/// - `cancel` interrupts an attempt or a sleep the moment it fires. When the cancel signal and
///   an answer are ready at the same instant, cancellation wins. Cancelled before the first
///   attempt, the loop returns `Cancelled` even if the deadline has passed too.
pub async fn retry_until<T, E, F, Fut>(
    deadline: Instant,
    policy: &Policy,
    op: F,
    cancel: &CancelToken,
) -> Result<T, RetryError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // TODO: the loop described above and in the task list.
    let _ = (op, cancel);
    todo!(
        "retry_until(deadline in {:?}, {policy:?})",
        deadline.saturating_duration_since(Instant::now())
    )
}
