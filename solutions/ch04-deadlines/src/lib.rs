//! Chapter 4 — Deadlines and the total budget: the reference solution.
//!
//! Three functions: [`worst_case_time`] adds up the longest a policy can take, [`child_deadline`]
//! hands what is left of a deadline to a downstream call, and [`retry_until`] retries inside a
//! deadline and stops at once when cancelled from outside.

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
    let attempts = policy.max_attempts();
    let all_attempts = policy.per_attempt().saturating_mul(attempts);
    (1..attempts)
        .map(|attempt| policy.delay_after(attempt))
        .fold(all_attempts, Duration::saturating_add)
}

/// The time budget to hand to a downstream call: what the parent had left, minus what has been
/// spent since, minus a safety `margin` for the trip back. Zero when nothing is left, never a panic.
pub fn child_deadline(parent_remaining: Duration, spent: Duration, margin: Duration) -> Duration {
    parent_remaining
        .saturating_sub(spent)
        .saturating_sub(margin)
}

/// Calls `op` until it succeeds, the policy's attempts run out, the next step would not fit
/// before `deadline`, or `cancel` fires, whichever comes first.
///
/// - No attempt starts at or after `deadline`; each attempt is cut off after
///   `min(per_attempt, time left)`, so the last one ends at the deadline at the latest.
/// - A sleep that would end at or past the deadline is not started: the loop gives up at once
///   with the last failure instead.
/// - `cancel` interrupts an attempt or a sleep the moment it fires.
///
/// The deadline is a [`tokio::time::Instant`]: a monotonic clock, and the one tokio's timers
/// (and a paused test clock) run on.
pub async fn retry_until<T, E, F, Fut>(
    deadline: Instant,
    policy: &Policy,
    mut op: F,
    cancel: &CancelToken,
) -> Result<T, RetryError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let time_left = || deadline.saturating_duration_since(Instant::now());
    if cancel.is_cancelled() {
        return Err(RetryError::Cancelled);
    }
    if time_left().is_zero() {
        return Err(RetryError::DeadlineExceeded);
    }
    let mut attempt = 1;
    loop {
        let limit = policy.per_attempt().min(time_left());
        let failure = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(RetryError::Cancelled),
            outcome = tokio::time::timeout(limit, op()) => match outcome {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(error)) => RetryError::Failed(error),
                Err(_elapsed) => RetryError::TimedOut,
            },
        };
        if attempt >= policy.max_attempts() {
            return Err(failure);
        }
        let delay = policy.delay_after(attempt);
        if delay >= time_left() {
            // The next attempt could only start at or after the deadline: stop now.
            return Err(failure);
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(RetryError::Cancelled),
            () = tokio::time::sleep(delay) => {}
        }
        attempt += 1;
    }
}
