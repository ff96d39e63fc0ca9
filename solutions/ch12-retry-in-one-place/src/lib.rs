//! Chapter 12 — Retry in one place: the reference solution.
//!
//! [`amplification`] computes how many calls reach the bottom of a stack in which every layer
//! retries on its own. The stack below it, `Frontend -> Service -> Repository -> backend`, retries
//! in one place instead: the [`Frontend`] retries transient failures with full-jitter backoff, the
//! layers under it make exactly one call per request and pass every error up unchanged, and
//! nobody retries [`CallError::Overloaded`].

pub mod downstream;
pub mod error;
pub mod policy;
pub mod stubs;

pub use downstream::Downstream;
pub use error::CallError;
pub use policy::RetryPolicy;

// ANCHOR: amplification
/// How many calls reach the bottom of a stack for one request at the top, when every call fails
/// and the layer at index `i` (counted from the top) makes up to `attempts_per_layer[i]` attempts
/// for each call it receives.
///
/// Each attempt of a layer is one call to the layer below, which makes all of its own attempts,
/// so the count is the product of the attempts: three layers of four give 4 · 4 · 4 = 64.
///
/// - No layers: the request itself is the one call that arrives, so the answer is 1.
/// - A layer with 0 attempts never calls the layer below: nothing arrives, so the answer is 0.
/// - A product too large for a `u64` is `u64::MAX`: it saturates, it never panics or wraps.
pub fn amplification(attempts_per_layer: &[u32]) -> u64 {
    attempts_per_layer.iter().fold(1, |calls: u64, &attempts| {
        calls.saturating_mul(u64::from(attempts))
    })
}
// ANCHOR_END: amplification

// ANCHOR: repository
/// The data-access layer, the only one that talks to the backend.
///
/// It makes exactly one call per request and passes the outcome up unchanged. In particular an
/// [`CallError::Overloaded`] stays `Overloaded`, so the layers above know not to retry it.
#[derive(Debug)]
pub struct Repository<D> {
    backend: D,
}

impl<D: Downstream> Repository<D> {
    /// A repository in front of `backend`.
    pub fn new(backend: D) -> Self {
        Self { backend }
    }
}

impl<D: Downstream> Downstream for Repository<D> {
    async fn call(&self) -> Result<u32, CallError> {
        self.backend.call().await
    }
}
// ANCHOR_END: repository

// ANCHOR: service
/// The business layer, between the frontend and the repository.
///
/// Like the repository, it makes exactly one call per request and passes the outcome up
/// unchanged.
#[derive(Debug)]
pub struct Service<D> {
    repository: D,
}

impl<D: Downstream> Service<D> {
    /// A service that reads through `repository`.
    pub fn new(repository: D) -> Self {
        Self { repository }
    }
}

impl<D: Downstream> Downstream for Service<D> {
    async fn call(&self) -> Result<u32, CallError> {
        self.repository.call().await
    }
}
// ANCHOR_END: service

// ANCHOR: frontend
/// The top of the stack, the layer that answers the user: the one place that retries.
#[derive(Debug)]
pub struct Frontend<D> {
    service: D,
    policy: RetryPolicy,
}

impl<D: Downstream> Frontend<D> {
    /// A frontend that calls `service` and retries as `policy` says.
    pub fn new(service: D, policy: RetryPolicy) -> Self {
        Self { service, policy }
    }
}

impl<D: Downstream> Downstream for Frontend<D> {
    /// Calls the service at most `policy.attempts()` times, with a full-jitter sleep between two
    /// calls. Returns the first `Ok`; an error that is not retryable at once, without a retry;
    /// or the last error when the attempts run out.
    async fn call(&self) -> Result<u32, CallError> {
        let mut retry = 0;
        loop {
            let error = match self.service.call().await {
                Ok(answer) => return Ok(answer),
                Err(error) => error,
            };
            let calls_made = retry + 1;
            if !error.is_retryable() || calls_made >= self.policy.attempts() {
                return Err(error);
            }
            self.policy.sleep_before_retry(retry).await;
            retry += 1;
        }
    }
}
// ANCHOR_END: frontend
