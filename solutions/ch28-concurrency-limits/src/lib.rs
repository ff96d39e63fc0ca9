//! Chapter 28 — Adaptive concurrency limits. The reference solution.

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

pub mod lab;
pub mod service;

pub use service::{LimitError, Service, ServiceError};

/// The settings of an [`AimdLimiter`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdConfig {
    /// The limit at the start, brought within `[floor, ceiling]`.
    pub initial: u32,
    /// The lowest limit (at least 1).
    pub floor: u32,
    /// The highest limit (at least `floor`).
    pub ceiling: u32,
    /// The factor a decrease multiplies the limit by, in `(0, 1)`; the result is rounded down.
    pub backoff: f64,
}

impl Default for AimdConfig {
    fn default() -> Self {
        Self {
            initial: 10,
            floor: 1,
            ceiling: 1_000,
            backoff: 0.5,
        }
    }
}

/// A server-side concurrency limit, adjusted by additive increase and multiplicative decrease.
#[derive(Debug)]
pub struct AimdLimiter {
    config: AimdConfig,
    state: Mutex<State>,
}

/// What the limiter remembers between calls.
#[derive(Debug)]
struct State {
    limit: u32,
    in_flight: u32,
    /// Successes counted in the current window.
    successes: u32,
    /// How many decreases have happened: a request remembers the value at its start.
    decreases: u64,
}

/// How a request ended, as far as the limit is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Success,
    Dropped,
    Ignored,
}

/// One place among the requests in flight. Dropping it gives the place back.
#[derive(Debug)]
pub struct Permit<'a> {
    limiter: &'a AimdLimiter,
    /// The limiter's count of decreases when this request started.
    started_after: u64,
    outcome: Outcome,
}

impl Permit<'_> {
    /// The request succeeded in time: it counts towards the next increase.
    pub fn success(mut self) {
        self.outcome = Outcome::Success;
    }

    /// The request was refused as overloaded, or timed out: the limit is too high.
    pub fn dropped(mut self) {
        self.outcome = Outcome::Dropped;
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.limiter.release(self.started_after, self.outcome);
    }
}

impl AimdLimiter {
    /// A limiter with `config`, nothing in flight.
    pub fn new(config: AimdConfig) -> Self {
        let state = State {
            limit: config.initial.clamp(config.floor, config.ceiling),
            in_flight: 0,
            successes: 0,
            decreases: 0,
        };
        Self {
            config,
            state: Mutex::new(state),
        }
    }

    /// The current limit.
    pub fn limit(&self) -> u32 {
        self.lock().limit
    }

    /// How many permits are out.
    pub fn in_flight(&self) -> u32 {
        self.lock().in_flight
    }

    /// A place for one request, or `None` when `limit` requests are already in flight.
    pub fn try_acquire(&self) -> Option<Permit<'_>> {
        let mut state = self.lock();
        if state.in_flight >= state.limit {
            return None;
        }
        state.in_flight += 1;
        Some(Permit {
            limiter: self,
            started_after: state.decreases,
            outcome: Outcome::Ignored,
        })
    }

    /// Runs `op` in a place of its own, bounded by `timeout`, and adjusts the limit by how it
    /// ended.
    pub async fn call<T, F, Fut>(&self, timeout: Duration, op: F) -> Result<T, LimitError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let permit = self.try_acquire().ok_or(LimitError::Rejected)?;
        match tokio::time::timeout(timeout, op()).await {
            Ok(Ok(value)) => {
                permit.success();
                Ok(value)
            }
            Ok(Err(ServiceError::Overloaded)) => {
                permit.dropped();
                Err(LimitError::Service(ServiceError::Overloaded))
            }
            Ok(Err(error)) => Err(LimitError::Service(error)),
            Err(_elapsed) => {
                permit.dropped();
                Err(LimitError::TimedOut)
            }
        }
    }

    /// Gives a place back and applies the request's outcome to the limit.
    fn release(&self, started_after: u64, outcome: Outcome) {
        let mut state = self.lock();
        state.in_flight -= 1;
        match outcome {
            Outcome::Success => {
                state.successes += 1;
                if state.successes >= state.limit {
                    state.limit = (state.limit + 1).min(self.config.ceiling);
                    state.successes = 0;
                }
            }
            // A request that started before the last decrease saw the old limit: that
            // decrease already answered it.
            Outcome::Dropped if started_after == state.decreases => {
                let lowered = (f64::from(state.limit) * self.config.backoff).floor() as u32;
                state.limit = lowered.max(self.config.floor);
                state.successes = 0;
                state.decreases += 1;
            }
            Outcome::Dropped | Outcome::Ignored => {}
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The settings of a [`GradientLimit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradientConfig {
    /// The limit at the start, brought within `[floor, ceiling]`.
    pub initial: f64,
    /// The lowest limit.
    pub floor: f64,
    /// The highest limit.
    pub ceiling: f64,
    /// How much slower than the fastest RTT a sample may be before the limit shrinks (≥ 1).
    pub tolerance: f64,
    /// The weight of each new target in the limit, in `(0, 1]`.
    pub smoothing: f64,
    /// Places added on top of the scaled limit, so that it can grow and probe.
    pub headroom: f64,
}

impl Default for GradientConfig {
    fn default() -> Self {
        Self {
            initial: 10.0,
            floor: 1.0,
            ceiling: 1_000.0,
            tolerance: 1.5,
            smoothing: 0.2,
            headroom: 2.0,
        }
    }
}

/// A concurrency limit driven by latency: it shrinks as requests slow down compared with the
/// fastest RTT seen.
#[derive(Debug, Clone)]
pub struct GradientLimit {
    config: GradientConfig,
    limit: f64,
    min_rtt: Option<Duration>,
}

impl GradientLimit {
    /// A limit with `config` and no RTT seen yet.
    pub fn new(config: GradientConfig) -> Self {
        Self {
            config,
            limit: config.initial.clamp(config.floor, config.ceiling),
            min_rtt: None,
        }
    }

    /// The current limit.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// The smallest RTT seen so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// Takes one RTT sample and returns the new limit.
    pub fn on_sample(&mut self, rtt: Duration) -> f64 {
        if rtt.is_zero() {
            return self.limit;
        }
        let fastest = self.min_rtt.map_or(rtt, |seen| seen.min(rtt));
        self.min_rtt = Some(fastest);
        let GradientConfig {
            floor,
            ceiling,
            tolerance,
            smoothing,
            headroom,
            ..
        } = self.config;
        let gradient = (tolerance * fastest.as_secs_f64() / rtt.as_secs_f64()).clamp(0.5, 1.0);
        let target = self.limit * gradient + headroom;
        self.limit = ((1.0 - smoothing) * self.limit + smoothing * target).clamp(floor, ceiling);
        self.limit
    }
}
