//! Chapter 3 — Timeouts: bounding one attempt. The reference solution.
//!
//! Two functions: [`call_with_timeout`] gives one attempt a time limit and cancels it when the
//! limit passes, and [`retry_with_timeouts`] makes up to `attempts` such attempts, one right after
//! the other, treating a timeout like any other transient failure.

use std::future::Future;
use std::time::Duration;

pub mod error;
pub mod latency;
pub mod stubs;

pub use error::AttemptError;

// ANCHOR: call_with_timeout
/// Runs one attempt, `op`, for at most `limit` of tokio's time.
///
/// Returns the operation's value, its own error as [`AttemptError::Failed`], or
/// [`AttemptError::TimedOut`] once `limit` has passed without an answer. A fast answer comes back
/// as soon as it is ready; the limit is a bound, not a wait.
pub async fn call_with_timeout<T, E, Fut>(op: Fut, limit: Duration) -> Result<T, AttemptError<E>>
where
    Fut: Future<Output = Result<T, E>>,
{
    match tokio::time::timeout(limit, op).await {
        Ok(outcome) => outcome.map_err(AttemptError::Failed),
        // `timeout` owned `op` and has dropped it: the abandoned call is cancelled, not left
        // running with nobody waiting for its answer.
        Err(_elapsed) => Err(AttemptError::TimedOut),
    }
}
// ANCHOR_END: call_with_timeout

// ANCHOR: retry_with_timeouts
/// Calls `op` at most `attempts` times, each call limited to `limit`, and returns the first `Ok`,
/// or the last error once the attempts run out.
///
/// A timeout is a transient failure like any other and is retried. The next attempt starts as
/// soon as the previous one has failed or been cut: this chapter does not wait between attempts
/// (backoff comes in Part II). `attempts = 0` is treated as 1: without a call there is no error
/// to return.
pub async fn retry_with_timeouts<T, E, F, Fut>(
    mut op: F,
    attempts: u32,
    limit: Duration,
) -> Result<T, AttemptError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut calls_made = 0;
    loop {
        // A fresh call each time: a future that timed out is gone, and a new one is a new request.
        let error = match call_with_timeout(op(), limit).await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        calls_made += 1;
        if calls_made >= attempts {
            return Err(error);
        }
    }
}
// ANCHOR_END: retry_with_timeouts
