//! # Chapter 2 — Transient or permanent?
//!
//! Book: `book/src/ch02-transient-or-permanent.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch02`. Stuck? `cargo xtask hint ch02`.
//!
//! ## Your task
//!
//! Retry only what waiting can fix.
//!
//! 1. [`classify`]: give each [`CallError`] a verdict, a [`Retryability`]:
//!    - HTTP 408, 429 and the 5xx server errors are `Transient` (the book explains why 501 and
//!      505 are exceptions); 400, 401, 403, 404 and the other client errors are `Permanent`.
//!      A status nobody listed follows its class (RFC 9110): an unknown 5xx like 500, an
//!      unknown 4xx like 400. A status outside `100..=599` is invalid, and RFC 9110 has it
//!      handled like a 5xx.
//!    - A transient status that carries a `Retry-After` value `d` is `After(d)`, whatever `d`
//!      (zero included). A permanent status stays `Permanent`, hint or no hint.
//!    - I/O errors: `ConnectionReset`, `ConnectionAborted`, `TimedOut` and `Interrupted` are
//!      `Transient`; `InvalidInput`, `PermissionDenied` and `NotFound` are `Permanent`. Decide
//!      the other kinds yourself, and be ready to defend the choice (book §2.4).
//!    - `Timeout` is `Transient`; the domain errors `InvalidArguments` and `NotFound` are
//!      `Permanent`.
//! 2. [`retry_transient`]: call `op` at most `max_attempts` times. Return the first `Ok`. On an
//!    error, ask `classify`: `Permanent` returns that error at once; `Transient` tries again at
//!    once; `After(d)` sleeps `d` with `tokio::time::sleep` and then tries again. When the
//!    attempts run out, return the last error, without sleeping after it.
//!
//! The given types are in [`errors`]; [`stubs::ScriptedService`] fails with the errors you
//! script. `tests/visible.rs` and `examples/predict.rs` use them; the grader adds hidden checks.

use std::future::Future;

pub mod errors;
pub mod stubs;

pub use errors::{CallError, Retryability};

/// The verdict on one error: is it worth trying the same request again, and when?
pub fn classify(error: &CallError) -> Retryability {
    // TODO: the verdict for every variant, following the rules in the task list above.
    todo!("classify({error:?})")
}

/// Calls `op` at most `max_attempts` times and returns its first `Ok`, or an error: the first
/// permanent one, or the last one when the attempts run out.
///
/// A transient error is retried at once; an `After(d)` error after sleeping exactly `d` on
/// tokio's clock (not rounded, not capped). A permanent error ends the loop whatever attempts are
/// left, and nothing sleeps after the call whose error is returned. `max_attempts = 0` is read as
/// 1: without a call there is no error to return.
pub async fn retry_transient<T, E, F, Fut, C>(max_attempts: u32, op: F, classify: C) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    C: Fn(&E) -> Retryability,
{
    // TODO: the loop described above and in the task list.
    let _ = (op, classify);
    todo!("retry_transient(max_attempts = {max_attempts})")
}
