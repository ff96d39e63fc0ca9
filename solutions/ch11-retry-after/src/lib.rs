//! Chapter 11 — Retry-After: the reference solution.
//!
//! Three functions: [`parse_retry_after`] reads a `Retry-After` header value as a wait counted
//! from the moment the response arrived, [`next_delay`] weighs that hint against the client's own
//! backoff, a cap and the time left, and [`retry_honouring_retry_after`] is a retry loop that
//! follows hints without letting them override its attempt limit or its budget.

use std::future::Future;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

pub mod stubs;
pub mod types;

pub use types::{Decision, HttpError};

// ANCHOR: parse_retry_after
/// How long a `Retry-After` value asks the client to wait, counted from `received_at`, the
/// moment the response was received; `None` when the value is not valid.
///
/// RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`.
/// - `delay-seconds = 1*DIGIT`: one or more ASCII digits and nothing else (no sign, no fraction,
///   no exponent). A number too large for a `u64` of seconds is not a real delay: `None`.
/// - `HTTP-date`: any of the three formats a recipient must accept (RFC 9110 §5.6.7), parsed by
///   the `httpdate` crate. A date at or before `received_at` gives `Duration::ZERO`.
///
/// Optional whitespace (spaces and tabs) around the value is ignored.
pub fn parse_retry_after(value: &str, received_at: SystemTime) -> Option<Duration> {
    let value = value.trim_matches([' ', '\t']);
    let is_delay_seconds = !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit());
    if is_delay_seconds {
        return value.parse().ok().map(Duration::from_secs);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(received_at).unwrap_or(Duration::ZERO))
}
// ANCHOR_END: parse_retry_after

// ANCHOR: next_delay
/// What to do after a failed attempt, given the server's `hint` (a parsed `Retry-After`, if
/// any), the client's own `backoff` for this retry, the longest hint the client will honour
/// (`max_hint`), and the time left in its budget.
///
/// - The hint, when there is one, replaces the backoff, capped at `max_hint`. The backoff is
///   used as it is: it has a cap of its own (chapter 7).
/// - If the wait the server asks for (or, without a hint, the backoff) is at least the time
///   left, no attempt could follow it in time: [`Decision::GiveUp`] now, instead of sleeping
///   into the deadline. The uncapped hint is what counts here: a server that says "not before
///   an hour from now" will not serve a retry in 30 seconds just because the cap is 30 seconds.
pub fn next_delay(
    hint: Option<Duration>,
    backoff: Duration,
    max_hint: Duration,
    remaining_budget: Duration,
) -> Decision {
    let wanted = hint.unwrap_or(backoff);
    if wanted >= remaining_budget {
        return Decision::GiveUp;
    }
    match hint {
        Some(hint) => Decision::Sleep(hint.min(max_hint)),
        None => Decision::Sleep(backoff),
    }
}
// ANCHOR_END: next_delay

// ANCHOR: retry_loop
/// Calls `op` until it succeeds, `max_attempts` calls have failed, or the next wait would not
/// end before `budget` (counted from the start of this call, on tokio's clock) runs out.
///
/// After each failure it reads the response's `Retry-After` value with [`parse_retry_after`]
/// (counted from the response's `received_at`) and lets [`next_delay`] choose between that
/// hint and `backoff(retry)`, where `retry` is 0 for the wait after the first failure. A hint
/// changes how long the loop waits, never how often it tries: every failed call counts against
/// `max_attempts` (0 is treated as 1). When it gives up, it returns the last error at once,
/// without a final sleep. Every error is retried here: chapter 2's classifier decides which
/// errors deserve a retry at all.
pub async fn retry_honouring_retry_after<T, F, Fut, B>(
    mut op: F,
    max_attempts: u32,
    mut backoff: B,
    max_hint: Duration,
    budget: Duration,
) -> Result<T, HttpError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, HttpError>>,
    B: FnMut(u32) -> Duration,
{
    let started = Instant::now();
    let mut retry = 0;
    loop {
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let calls_made = retry + 1;
        if calls_made >= max_attempts {
            return Err(error);
        }
        let hint = error
            .retry_after
            .as_deref()
            .and_then(|value| parse_retry_after(value, error.received_at));
        let remaining = budget.saturating_sub(started.elapsed());
        match next_delay(hint, backoff(retry), max_hint, remaining) {
            Decision::Sleep(delay) => tokio::time::sleep(delay).await,
            Decision::GiveUp => return Err(error),
        }
        retry += 1;
    }
}
// ANCHOR_END: retry_loop
