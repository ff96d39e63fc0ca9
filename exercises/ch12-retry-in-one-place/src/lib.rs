//! # Chapter 12 — Retry in one place
//!
//! Book: `book/src/ch12-retry-in-one-place.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch12`. Stuck? `cargo xtask hint ch12`.
//!
//! ## Your task
//!
//! 1. [`amplification`]: how many calls reach the bottom of a stack for one request at the top,
//!    when every call fails and layer `i` makes up to `attempts_per_layer[i]` attempts: the
//!    product of the attempts. `&[4, 4, 4]` gives 64, `&[3, 3, 3, 3, 3]` gives 243. No layers
//!    give 1 (the request itself); a layer with 0 attempts never calls down, so it gives 0. A
//!    product too large for a `u64` gives `u64::MAX`: saturate, never panic or wrap.
//! 2. Refactor the stack below, `Frontend -> Service -> Repository -> backend`. As shipped,
//!    every layer retries on its own, up to 4 attempts of whatever failed: one request in a
//!    total outage reaches the backend 4 · 4 · 4 = 64 times. Change it so that
//!    - the [`Repository`] and the [`Service`] make exactly one call per request and pass the
//!      outcome up unchanged (an `Overloaded` error stays `Overloaded`);
//!    - the [`Frontend`] is the one place that retries: up to `policy.attempts()` calls with a
//!      full-jitter sleep between two of them (`policy.sleep_before_retry(retry)`), as now (and
//!      as now, a policy of 0 attempts still makes one call: without one there is no error to
//!      return);
//!    - nobody retries [`CallError::Overloaded`]: the frontend returns it at once.
//!
//!    Keep the three constructors as they are (`Repository::new(backend)`,
//!    `Service::new(repository)`, `Frontend::new(service, policy)`): the grader builds the stack
//!    with them.
//!
//! Given: [`CallError`] (in `error.rs`), the [`Downstream`] trait every layer implements (in
//! `downstream.rs`), the [`RetryPolicy`] with its full-jitter sleep (in `policy.rs`), and in
//! [`stubs`] a scripted [`stubs::Backend`] and a [`stubs::Counted`] wrapper that counts the
//! calls made to a layer. `tests/visible.rs` uses them; the grader adds hidden checks of its own.
//! `cargo run -p ch12_retry_in_one_place --example predict` runs the book's "predict, then run"
//! case: run it before and after your refactor.

use std::future::Future;

pub mod downstream;
pub mod error;
pub mod policy;
pub mod stubs;

pub use downstream::Downstream;
pub use error::CallError;
pub use policy::RetryPolicy;

/// How many calls reach the bottom of a stack for one request at the top, when every call fails
/// and the layer at index `i` (counted from the top) makes up to `attempts_per_layer[i]` attempts
/// for each call it receives.
///
/// No layers give 1; a layer with 0 attempts gives 0; a product too large for a `u64` gives
/// `u64::MAX`.
pub fn amplification(attempts_per_layer: &[u32]) -> u64 {
    // TODO: the product of the attempts, exact whenever it fits in a u64, with the edge cases
    // above.
    todo!("amplification({attempts_per_layer:?})")
}

/// The seed of the repository's own retry policy.
const REPOSITORY_SEED: u64 = 1;
/// The seed of the service's own retry policy.
const SERVICE_SEED: u64 = 2;

// ANCHOR: shipped_loop
/// The retry loop every layer of the shipped stack copied: up to `policy.attempts()` calls with a
/// full-jitter sleep between two of them, whatever the error.
async fn retry_every_error<F, Fut>(policy: &RetryPolicy, mut call: F) -> Result<u32, CallError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<u32, CallError>>,
{
    let mut retry = 0;
    loop {
        let error = match call().await {
            Ok(answer) => return Ok(answer),
            Err(error) => error,
        };
        if retry + 1 >= policy.attempts() {
            return Err(error);
        }
        policy.sleep_before_retry(retry).await;
        retry += 1;
    }
}
// ANCHOR_END: shipped_loop

/// The data-access layer, the only one that talks to the backend.
#[derive(Debug)]
pub struct Repository<D> {
    backend: D,
    policy: RetryPolicy,
}

impl<D: Downstream> Repository<D> {
    /// A repository in front of `backend`.
    pub fn new(backend: D) -> Self {
        // TODO: once the repository no longer retries, it needs no policy of its own.
        Self {
            backend,
            policy: RetryPolicy::standard(REPOSITORY_SEED),
        }
    }
}

impl<D: Downstream> Downstream for Repository<D> {
    async fn call(&self) -> Result<u32, CallError> {
        // TODO: don't retry here. Make exactly one call to the backend and pass its outcome up
        // unchanged.
        retry_every_error(&self.policy, || self.backend.call()).await
    }
}

/// The business layer, between the frontend and the repository.
#[derive(Debug)]
pub struct Service<D> {
    repository: D,
    policy: RetryPolicy,
}

impl<D: Downstream> Service<D> {
    /// A service that reads through `repository`.
    pub fn new(repository: D) -> Self {
        // TODO: once the service no longer retries, it needs no policy of its own.
        Self {
            repository,
            policy: RetryPolicy::standard(SERVICE_SEED),
        }
    }
}

impl<D: Downstream> Downstream for Service<D> {
    async fn call(&self) -> Result<u32, CallError> {
        // TODO: don't retry here either. Make exactly one call to the repository and pass its
        // outcome up unchanged.
        retry_every_error(&self.policy, || self.repository.call()).await
    }
}

/// The top of the stack, the layer that answers the user.
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
    async fn call(&self) -> Result<u32, CallError> {
        // TODO: this is the one place that retries. Keep the attempts and the full-jitter sleeps,
        // but return an error that is not retryable (`CallError::Overloaded`) at once.
        retry_every_error(&self.policy, || self.service.call()).await
    }
}
