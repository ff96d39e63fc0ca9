//! Chapter 25 — Adaptive client-side throttling. The reference solution.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rand::{Rng, RngExt};
use tokio::time::Instant;

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
    history: Mutex<History>,
}

// Every task of a client shares one throttle, so it must be `Send + Sync`.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<AdaptiveThrottle>();
};

/// When each request was attempted and when each accept arrived, oldest first.
#[derive(Debug, Default)]
struct History {
    requests: VecDeque<Instant>,
    accepts: VecDeque<Instant>,
}

impl History {
    fn forget_older_than(&mut self, window: Duration, now: Instant) {
        for events in [&mut self.requests, &mut self.accepts] {
            while events
                .front()
                .is_some_and(|&at| now.duration_since(at) >= window)
            {
                events.pop_front();
            }
        }
    }
}

impl Default for AdaptiveThrottle {
    fn default() -> Self {
        Self::new(DEFAULT_K, DEFAULT_WINDOW)
    }
}

impl AdaptiveThrottle {
    /// A throttle with multiplier `k` (at least 1) over a sliding `window`.
    pub fn new(k: f64, window: Duration) -> Self {
        Self {
            k,
            window,
            history: Mutex::default(),
        }
    }

    /// The probability that the next request is rejected locally:
    /// `max(0, (requests − k · accepts) / (requests + 1))` over the window.
    pub fn rejection_probability(&self) -> f64 {
        let mut history = self.lock();
        self.probability(&mut history)
    }

    /// Decides whether one request may go to the backend. The request counts as attempted
    /// either way.
    pub fn admit(&self, rng: &mut impl Rng) -> bool {
        let mut history = self.lock();
        let probability = self.probability(&mut history);
        history.requests.push_back(Instant::now());
        rng.random::<f64>() >= probability
    }

    /// Records the backend's answer to a request that was sent: accepted, or refused as
    /// overloaded.
    pub fn on_response(&self, accepted: bool) {
        if accepted {
            self.lock().accepts.push_back(Instant::now());
        }
    }

    /// Sends `op` unless the throttle rejects it, and records whether the backend accepted it.
    pub async fn call<T, F, Fut>(&self, rng: &mut impl Rng, op: F) -> Result<T, ThrottleError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, BackendError>>,
    {
        if !self.admit(rng) {
            return Err(ThrottleError::Throttled);
        }
        let result = op().await;
        self.on_response(!matches!(result, Err(BackendError::Overloaded)));
        result.map_err(ThrottleError::Backend)
    }

    fn probability(&self, history: &mut History) -> f64 {
        history.forget_older_than(self.window, Instant::now());
        let requests = history.requests.len() as f64;
        let accepts = history.accepts.len() as f64;
        ((requests - self.k * accepts) / (requests + 1.0)).max(0.0)
    }

    fn lock(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
