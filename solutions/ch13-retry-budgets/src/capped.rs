//! Given: the retry loop of the earlier chapters, with a per-request cap and nothing else.
//!
//! Every request may make up to `attempts` calls, whatever happens to the other requests. In an
//! outage that is `attempts` times the normal load. [`crate::retry_with_budget`] is this loop
//! with a budget wired in.

use std::future::Future;

/// Calls `op` at most `attempts` times and returns its first `Ok`, or the last `Err`.
///
/// Retries at once, without sleeping, so that this chapter counts calls and nothing else;
/// chapter 8's jittered sleep would sit just before `continue`. `attempts = 0` is treated as 1.
pub async fn retry_capped<T, E, F, Fut>(mut op: F, attempts: u32) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut calls = 0;
    loop {
        calls += 1;
        match op().await {
            Ok(value) => return Ok(value),
            Err(error) if calls >= attempts => return Err(error),
            Err(_) => continue,
        }
    }
}
