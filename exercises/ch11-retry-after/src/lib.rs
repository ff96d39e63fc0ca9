//! # Chapter 11 — Retry-After: when the server tells you when
//!
//! Book: `book/src/ch11-retry-after.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch11`. Stuck? `cargo xtask hint ch11`.
//!
//! ## Your task
//!
//! 1. [`parse_retry_after`]: read a `Retry-After` header value (RFC 9110 §10.2.3:
//!    `Retry-After = HTTP-date / delay-seconds`) as a wait counted from `received_at`, the moment
//!    the response was received.
//!    - Ignore spaces and tabs around the value.
//!    - `delay-seconds` is one or more ASCII digits and nothing else: `"120"` is 120 s. A sign,
//!      a fraction, an exponent, or a number too large for a `u64` gives `None`.
//!    - An `HTTP-date` comes in three formats, and all three must be accepted. Do not write the
//!      date parser yourself: `httpdate::parse_http_date` reads all three.
//!    - A date at or before `received_at` gives `Some(Duration::ZERO)`.
//!    - Anything else (empty, whitespace only, garbage) gives `None`.
//! 2. [`next_delay`]: decide what to do after a failed attempt.
//!    - If the wait the server asks for (the `hint`), or without a hint the `backoff`, is at
//!      least `remaining_budget`, return [`Decision::GiveUp`]: nothing could follow that sleep
//!      in time. Compare the hint itself, before any cap.
//!    - Otherwise sleep the hint capped at `max_hint`, or, without a hint, the `backoff`.
//! 3. [`retry_honouring_retry_after`]: a retry loop. Call `op`; on `Ok` return it. After a
//!    failure, give up with that error once `max_attempts` calls have been made; otherwise parse
//!    the error's `retry_after` (from its `received_at`), ask [`next_delay`] with
//!    `backoff(retry)` (`retry` is 0 after the first failure) and the time left of `budget`
//!    (measured on tokio's clock from the start of the call), and sleep or give up as it says.
//!    A hint never earns an extra attempt.
//!
//! Given, ready-made: [`HttpError`] (a failed response with its raw `Retry-After` value and the
//! time it was received), [`Decision`], and [`stubs::ScriptedServer`] (a server that fails on
//! cue, with a simulated wall clock). `tests/visible.rs` uses them; the grader adds hidden checks
//! of its own.

use std::future::Future;
use std::time::{Duration, SystemTime};

pub mod stubs;
pub mod types;

pub use types::{Decision, HttpError};

/// How long a `Retry-After` value asks the client to wait, counted from `received_at`, the
/// moment the response was received; `None` when the value is not valid.
///
/// `delay-seconds` (`1*DIGIT`) or any of the three `HTTP-date` formats; a date at or before
/// `received_at` gives `Duration::ZERO`. Spaces and tabs around the value are ignored.
pub fn parse_retry_after(value: &str, received_at: SystemTime) -> Option<Duration> {
    // TODO: the wait the value asks for, by the rules above, or `None` for anything that is
    // neither delay-seconds nor an HTTP-date.
    let _ = received_at;
    todo!("parse_retry_after({value:?}, received_at)")
}

/// What to do after a failed attempt: sleep the server's hint (capped at `max_hint`) or, without
/// a hint, the `backoff`; or give up now if that wait would reach the end of the budget.
pub fn next_delay(
    hint: Option<Duration>,
    backoff: Duration,
    max_hint: Duration,
    remaining_budget: Duration,
) -> Decision {
    // TODO: the decision by the rules above; the budget sees the hint before the cap does.
    todo!(
        "next_delay(hint = {hint:?}, backoff = {backoff:?}, max_hint = {max_hint:?}, \
         remaining_budget = {remaining_budget:?})"
    )
}

/// Calls `op` until it succeeds, `max_attempts` calls have failed, or the next wait would not
/// end before `budget` (counted from the start of this call, on tokio's clock) runs out.
///
/// Between two calls it sleeps what [`next_delay`] decides from the error's `Retry-After` value
/// and `backoff(retry)` (`retry` = 0 after the first failure). Returns the first `Ok`, or the
/// last error. `max_attempts = 0` is read as 1: without a call there is no error to return.
pub async fn retry_honouring_retry_after<T, F, Fut, B>(
    op: F,
    max_attempts: u32,
    backoff: B,
    max_hint: Duration,
    budget: Duration,
) -> Result<T, HttpError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, HttpError>>,
    B: FnMut(u32) -> Duration,
{
    // TODO: the loop by the rules above, on tokio's clock; a hint changes the wait, never the
    // number of attempts.
    let _ = (op, backoff);
    todo!(
        "retry_honouring_retry_after(max_attempts = {max_attempts}, max_hint = {max_hint:?}, \
         budget = {budget:?})"
    )
}
