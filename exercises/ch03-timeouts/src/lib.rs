//! # Chapter 3 — Timeouts: bounding one attempt
//!
//! Book: `book/src/ch03-timeouts.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch03`. Stuck? `cargo xtask hint ch03`.
//!
//! ## Your task
//!
//! 1. [`call_with_timeout`]: run one attempt, `op`, for at most `limit` of tokio's time. Return
//!    its value, its own error as [`AttemptError::Failed`], or [`AttemptError::TimedOut`] when
//!    `limit` passes first. A fast answer must come back at once, not after `limit`, and a call
//!    that is cut must be dropped (cancelled), not left running.
//! 2. [`retry_with_timeouts`]: call `op` at most `attempts` times, each call under its own
//!    `limit`; return the first `Ok`, or the **last** error when the attempts run out. A timeout
//!    is a transient failure: retry it like any other. Start the next attempt right away: no
//!    waiting between attempts in this chapter (backoff comes in Part II).
//!
//! Time is tokio's: use `tokio::time`, never `std::thread::sleep`.
//!
//! Given: [`AttemptError`] (in `error.rs`), a [`stubs::ScriptedService`] whose calls answer after
//! a scripted latency, fail, or hang forever, and the [`latency`] model behind the book's
//! histogram. `tests/visible.rs` uses them; the grader adds hidden checks of its own.
//! `cargo run -p ch03_timeouts --example predict` runs the book's "predict, then run" case.

use std::future::Future;
use std::time::Duration;

pub mod error;
pub mod latency;
pub mod stubs;

pub use error::AttemptError;

/// Runs one attempt, `op`, for at most `limit` of tokio's time.
///
/// Returns the operation's value, its own error as [`AttemptError::Failed`], or
/// [`AttemptError::TimedOut`] once `limit` has passed without an answer.
///
/// - An answer (value or error) comes back the moment it arrives; one that arrives at exactly
///   `limit` is in time.
/// - A call cut at `limit` is dropped then and there (dropping a future cancels it).
/// - Any `Duration` is a valid limit: `Duration::ZERO` cuts a call that is not ready at once (it
///   never means "no limit"), and `Duration::MAX` must not overflow.
pub async fn call_with_timeout<T, E, Fut>(op: Fut, limit: Duration) -> Result<T, AttemptError<E>>
where
    Fut: Future<Output = Result<T, E>>,
{
    // TODO: one attempt under `limit`, as described above.
    drop(op);
    todo!("call_with_timeout(limit = {limit:?})")
}

/// Calls `op` at most `attempts` times, each call limited to `limit`, and returns the first `Ok`,
/// or the last error once the attempts run out.
///
/// A timeout is retried like any other failure, and so is the operation's own error. Each attempt
/// is a fresh call with the full `limit` of its own, and starts at the instant the previous one
/// failed or was cut. `attempts = 0` is read as 1: without a call there is no error to return.
pub async fn retry_with_timeouts<T, E, F, Fut>(
    op: F,
    attempts: u32,
    limit: Duration,
) -> Result<T, AttemptError<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // TODO: the retry loop described above.
    let _ = op;
    todo!("retry_with_timeouts(attempts = {attempts}, limit = {limit:?})")
}
