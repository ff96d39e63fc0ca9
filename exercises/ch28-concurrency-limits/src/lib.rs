//! # Chapter 28 — Adaptive concurrency limits
//!
//! Book: `book/src/ch28-concurrency-limits.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch28`. Stuck? `cargo xtask hint ch28`.
//!
//! ## Your task
//!
//! Build the two limits of sections 28.4 to 28.6 that a server puts in front of its work.
//!
//! 1. [`AimdLimiter`] admits a request only while fewer than `limit` requests are in flight:
//!    [`AimdLimiter::try_acquire`] returns a [`Permit`], or `None` at the limit. A permit is
//!    the request's place: dropping it gives the place back, exactly once, however the request
//!    ended (a caller that drops its future included).
//! 2. Additive increase: [`Permit::success`] counts one success, whenever its request
//!    started. When the successes counted since the last change of the limit reach the limit
//!    as it is now, the limit grows by 1 (never above `ceiling`) and the count starts again
//!    from 0. With a limit of 4, the 4th success makes it 5; the next increase comes at the 5th
//!    success after that.
//! 3. Multiplicative decrease: [`Permit::dropped`] (the request was refused as overloaded, or
//!    timed out) multiplies the limit by `backoff`, rounded down, never below `floor`, and
//!    starts the count of successes again from 0. At most once per window: a request that
//!    started before the last decrease (an increase does not count) changes nothing when it
//!    is dropped, neither the limit nor the count of successes. A drop at the floor is a
//!    decrease too, though the limit cannot fall. A permit dropped without
//!    either call changes nothing but the count in flight.
//! 4. [`AimdLimiter::call`] runs one request in a place of its own, bounded by a timeout: no
//!    place is [`LimitError::Rejected`] (the operation is not called); success counts as a
//!    success; [`ServiceError::Overloaded`] and a timeout ([`LimitError::TimedOut`]) as drops;
//!    another error changes nothing. The caller gets the service's own answer.
//! 5. [`GradientLimit::on_sample`] takes the RTT of one request and returns the new limit:
//!    `min_rtt` is the smallest RTT seen, this sample included;
//!    `gradient = clamp(tolerance × min_rtt / rtt, 0.5, 1.0)`;
//!    `target = limit × gradient + headroom`;
//!    `limit = clamp((1 − smoothing) × limit + smoothing × target, floor, ceiling)`.
//!    A sample of zero is ignored (the limit is returned unchanged).
//!
//! Both limits start at `initial`, brought within `[floor, ceiling]`. Tasks share one
//! [`AimdLimiter`]: every method takes `&self`. [`Service`] (given) stands in for a service
//! with a few workers. Once the checks pass,
//! `cargo run -p ch28_concurrency_limits --example predict` runs the lab of section 28.8.

use std::future::Future;
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
    // TODO: replace this placeholder with what the limiter remembers (the limit, the count in
    // flight, the successes of the window, what tells a request's window), behind a
    // `std::sync::Mutex`: every method takes `&self`, and tasks share the limiter.
    _state_to_choose: (),
}

/// One place among the requests in flight. Dropping it gives the place back.
#[derive(Debug)]
pub struct Permit<'a> {
    limiter: &'a AimdLimiter,
    // TODO: add what the permit must remember to settle its request when it is dropped.
}

impl Permit<'_> {
    /// The request succeeded in time: it counts towards the next increase.
    pub fn success(self) {
        // TODO: rule 2 of the task list.
        let _ = self.limiter;
        todo!("Permit::success")
    }

    /// The request was refused as overloaded, or timed out: the limit is too high.
    pub fn dropped(self) {
        // TODO: rule 3 of the task list.
        todo!("Permit::dropped")
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        // TODO: give the place back, exactly once.
        todo!("Permit::drop")
    }
}

impl AimdLimiter {
    /// A limiter with `config`, nothing in flight.
    pub fn new(config: AimdConfig) -> Self {
        // TODO: the limit starts at `initial`, within `[floor, ceiling]`.
        todo!("AimdLimiter::new({config:?})")
    }

    /// The current limit.
    pub fn limit(&self) -> u32 {
        // TODO: the limit as it is now.
        let _ = self.config;
        todo!("AimdLimiter::limit")
    }

    /// How many permits are out.
    pub fn in_flight(&self) -> u32 {
        // TODO: the permits given and not yet dropped.
        todo!("AimdLimiter::in_flight")
    }

    /// A place for one request, or `None` when `limit` requests are already in flight.
    pub fn try_acquire(&self) -> Option<Permit<'_>> {
        // TODO: rule 1 of the task list.
        todo!("AimdLimiter::try_acquire")
    }

    /// Runs `op` in a place of its own, bounded by `timeout`, and adjusts the limit by how it
    /// ended.
    pub async fn call<T, F, Fut>(&self, timeout: Duration, op: F) -> Result<T, LimitError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        // TODO: rule 4 of the task list.
        let _ = (timeout, op);
        todo!("AimdLimiter::call")
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
    // TODO: replace this placeholder with the limit and the smallest RTT seen.
    _state_to_choose: (),
}

impl GradientLimit {
    /// A limit with `config` and no RTT seen yet.
    pub fn new(config: GradientConfig) -> Self {
        // TODO: the limit starts at `initial`, within `[floor, ceiling]`.
        todo!("GradientLimit::new({config:?})")
    }

    /// The current limit.
    pub fn limit(&self) -> f64 {
        // TODO: the limit as it is now.
        let _ = self.config;
        todo!("GradientLimit::limit")
    }

    /// The smallest RTT seen so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        // TODO: `None` until the first sample.
        todo!("GradientLimit::min_rtt")
    }

    /// Takes one RTT sample and returns the new limit.
    pub fn on_sample(&mut self, rtt: Duration) -> f64 {
        // TODO: rule 5 of the task list.
        todo!("GradientLimit::on_sample({rtt:?})")
    }
}
