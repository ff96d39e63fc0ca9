//! Chapter 8 — Full jitter: the reference solution.
//!
//! Two functions: [`full_jitter`] draws one delay, and [`retry_with_backoff`] calls an operation
//! until it succeeds or runs out of attempts, sleeping a full-jitter delay between attempts.

use std::future::Future;
use std::time::Duration;

use rand::{Rng, RngExt};

pub mod stubs;

// ANCHOR: ceiling
/// The largest delay allowed before retry number `attempt` (counted from 0):
/// `min(cap, base · 2^attempt)`, exact for every input and never overflowing.
pub fn backoff_ceiling(attempt: u32, base: Duration, cap: Duration) -> Duration {
    // base · 2^attempt in nanoseconds. When even a u128 cannot hold it, the product is far
    // beyond any cap a Duration can express (unless base is zero).
    let exponential = 1u128
        .checked_shl(attempt)
        .and_then(|factor| base.as_nanos().checked_mul(factor));
    match exponential {
        Some(nanos) if nanos < cap.as_nanos() => duration_from_nanos(nanos),
        None if base.is_zero() => Duration::ZERO,
        _ => cap,
    }
}

/// A nanosecond count known to fit in a `Duration`.
fn duration_from_nanos(nanos: u128) -> Duration {
    const NANOS_PER_SECOND: u128 = 1_000_000_000;
    let seconds = u64::try_from(nanos / NANOS_PER_SECOND).unwrap_or(u64::MAX);
    Duration::new(seconds, (nanos % NANOS_PER_SECOND) as u32)
}
// ANCHOR_END: ceiling

// ANCHOR: full_jitter
/// Full jitter: a delay drawn uniformly from `[0, min(cap, base · 2^attempt)]`.
///
/// `attempt` is 0 for the sleep after the first failure, 1 after the second, and so on.
pub fn full_jitter(attempt: u32, base: Duration, cap: Duration, rng: &mut impl Rng) -> Duration {
    let ceiling = backoff_ceiling(attempt, base, cap);
    rng.random_range(Duration::ZERO..=ceiling)
}
// ANCHOR_END: full_jitter

// ANCHOR: retry_with_backoff
/// Calls `op` at most `attempts` times and returns its first `Ok`, or the last `Err` once the
/// attempts run out.
///
/// Between two attempts it sleeps a [`full_jitter`] delay on tokio's clock; it never sleeps
/// before the first attempt nor after the last. `attempts = 0` is treated as 1: without a call
/// there is no error to return.
pub async fn retry_with_backoff<T, E, F, Fut>(
    mut op: F,
    attempts: u32,
    base: Duration,
    cap: Duration,
    rng: &mut impl Rng,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut retry = 0;
    loop {
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let calls_made = retry + 1;
        if calls_made >= attempts {
            return Err(error);
        }
        tokio::time::sleep(full_jitter(retry, base, cap, rng)).await;
        retry += 1;
    }
}
// ANCHOR_END: retry_with_backoff
