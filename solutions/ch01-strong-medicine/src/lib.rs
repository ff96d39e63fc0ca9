//! Chapter 1 — Retries are strong medicine: the reference solution.
//!
//! One function, [`retry_immediately`]: the smallest retry policy there is. It re-issues a failed
//! call at once, with no waiting, and stops after a fixed number of retries.

pub mod stubs;

/// Calls `op`, and calls it again at once after each failure, at most `max_retries` more times.
///
/// Returns the first `Ok` as soon as it comes, or the error of the last call once the retries
/// are spent. Nothing sleeps: every retry is re-issued immediately. `max_retries = 0` makes
/// exactly one call; in the worst case there are `1 + max_retries` calls.
pub fn retry_immediately<T, E>(
    max_retries: u32,
    mut op: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let mut retries = 0;
    loop {
        match op() {
            Ok(value) => return Ok(value),
            // No retry left: this failure, the latest, is the answer.
            Err(error) if retries == max_retries => return Err(error),
            // Spend one retry and re-issue at once.
            Err(_) => retries += 1,
        }
    }
}
