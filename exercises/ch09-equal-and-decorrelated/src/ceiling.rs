//! Given: the capped exponential ceiling of chapters 7 and 8, `min(cap, base · 2^attempt)`.
//!
//! Equal jitter draws below this ceiling; decorrelated jitter does not use it at all.

use std::time::Duration;

/// The capped exponential delay before retry number `attempt` (counted from 0):
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
