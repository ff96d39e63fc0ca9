//! Given: a retry loop that takes its delays from any backoff policy.
//!
//! A policy is an iterator of delays: `Some(delay)` means "sleep this long, then try again",
//! `None` means "give up". The loop neither knows nor cares how the delays are made, so
//! [`EqualJitter`](crate::EqualJitter), [`DecorrelatedJitter`](crate::DecorrelatedJitter) and
//! any other iterator of `Duration`s plug into it unchanged.

use std::future::Future;
use std::time::Duration;

/// Calls `op` until it returns `Ok`, sleeping (on tokio's clock) each delay the policy yields
/// between two calls. Returns the first `Ok`, or the last `Err` once the policy is exhausted.
///
/// A policy that yields `n` delays allows `n` retries: at most `n + 1` calls.
pub async fn retry<T, E, F, Fut>(
    policy: impl IntoIterator<Item = Duration>,
    mut op: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut delays = policy.into_iter();
    loop {
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        match delays.next() {
            Some(delay) => tokio::time::sleep(delay).await,
            None => return Err(error),
        }
    }
}
