//! # Chapter 25 — Adaptive client-side throttling
//!
//! Book: `book/src/ch25-adaptive-throttling.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch25`. Stuck? `cargo xtask hint ch25`.
//!
//! ## Your task
//!
//! Build the client-side throttle of Google's SRE book ("Handling Overload") as an
//! [`AdaptiveThrottle`] that every task of a client shares (`Arc<AdaptiveThrottle>`).
//!
//! 1. It keeps two counts over a sliding `window` of tokio's clock: **requests**, every request
//!    the application attempted (those the throttle rejected included), and **accepts**, the
//!    requests the backend accepted. An event exactly `window` old has left the window. A
//!    decision may cost what left the window since the last one, never the whole window: the
//!    checks keep up to 15,000 events in it (section 25.5).
//! 2. [`AdaptiveThrottle::rejection_probability`] is
//!    `max(0, (requests − k · accepts) / (requests + 1))`, computed over the window now.
//! 3. [`AdaptiveThrottle::admit`] decides one request: it rejects it with that probability (the
//!    probability of the requests decided before it, those still waiting for an answer
//!    included, and not itself), using one uniform draw from `rng`, and counts it as a request
//!    whether it goes out or not. So on a fresh throttle, the second of two concurrent requests
//!    is decided at `(1 − 0) / (1 + 1) = 0.5`, however healthy the backend. [`AdaptiveThrottle::on_response`] records the
//!    backend's answer to a request that went out: accepted, or refused as overloaded.
//! 4. [`AdaptiveThrottle::call`] puts them together around one request: a rejected request
//!    returns [`ThrottleError::Throttled`] and never reaches the backend. The backend accepted a
//!    request unless it answered [`BackendError::Overloaded`]: a success and any other error
//!    (a 404, say) are answers. The caller gets the backend's own answer.
//!
//! No update may be lost when eight threads use one throttle. [`Backend`] (given) stands in for
//! the backend; `tests/visible.rs` shows it. Once the checks pass,
//! `cargo run -p ch25_adaptive_throttling --example predict` runs the overload lab of section 25.8.

use std::future::Future;
use std::time::Duration;

use rand::Rng;

pub mod backend;
pub mod lab;

pub use backend::{Backend, BackendError, ThrottleError};

/// The SRE book's multiplier: the backend is sent about twice what it accepts.
pub const DEFAULT_K: f64 = 2.0;
/// The SRE book's window: the last two minutes.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(120);

/// A client-side throttle: it rejects requests locally, with a probability that grows as the
/// backend accepts fewer of the requests sent to it.
#[derive(Debug)]
pub struct AdaptiveThrottle {
    k: f64,
    window: Duration,
    // TODO: replace this placeholder with what the throttle remembers, behind a
    // `std::sync::Mutex` (every method takes `&self`, and threads share the throttle).
    _history_to_choose: (),
}

// Every task of a client shares one throttle, so it must be `Send + Sync`: this fails to
// compile if a field makes it otherwise (a `Cell` or `RefCell`, for example).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<AdaptiveThrottle>();
};

impl Default for AdaptiveThrottle {
    fn default() -> Self {
        Self::new(DEFAULT_K, DEFAULT_WINDOW)
    }
}

impl AdaptiveThrottle {
    /// A throttle with multiplier `k` (at least 1) over a sliding `window`.
    pub fn new(k: f64, window: Duration) -> Self {
        // TODO: a throttle with an empty window.
        todo!("AdaptiveThrottle::new(k = {k}, window = {window:?})")
    }

    /// The probability that the next request is rejected locally:
    /// `max(0, (requests − k · accepts) / (requests + 1))` over the window.
    pub fn rejection_probability(&self) -> f64 {
        // TODO: the formula, over the events of the last `window`.
        let _ = (self.k, self.window);
        todo!("AdaptiveThrottle::rejection_probability")
    }

    /// Decides whether one request may go to the backend. The request counts as attempted
    /// either way.
    pub fn admit(&self, rng: &mut impl Rng) -> bool {
        // TODO: reject with the probability, count the request.
        let _ = rng;
        todo!("AdaptiveThrottle::admit")
    }

    /// Records the backend's answer to a request that was sent: accepted, or refused as
    /// overloaded.
    pub fn on_response(&self, accepted: bool) {
        // TODO: remember an accept.
        todo!("AdaptiveThrottle::on_response(accepted = {accepted})")
    }

    /// Sends `op` unless the throttle rejects it, and records whether the backend accepted it.
    pub async fn call<T, F, Fut>(&self, rng: &mut impl Rng, op: F) -> Result<T, ThrottleError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, BackendError>>,
    {
        // TODO: the rules of step 4 of the task list.
        let _ = (rng, op);
        todo!("AdaptiveThrottle::call")
    }
}
