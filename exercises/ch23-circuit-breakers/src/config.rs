//! Given: the breaker's settings, its three states and the error a caller sees.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

/// Which recent calls the failure rate is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The outcomes of the last `n` calls that finished while the breaker was closed. `Count(0)`
    /// keeps none, so it never opens the breaker.
    Count(u32),
    /// The outcomes recorded in the last `d` of tokio's clock, while the breaker was closed. An
    /// outcome's age counts from when its call finished, and an outcome exactly `d` old has left
    /// the window. `Time(Duration::ZERO)` keeps none, so it never opens the breaker.
    Time(Duration),
}

/// The settings of one circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// The breaker opens when the failure rate of the window, in percent, reaches this value
    /// (equal or greater). Between 1 and 100.
    pub failure_rate_percent: u32,
    /// No failure rate is computed until the window holds at least this many outcomes. An empty
    /// window has no rate at all, so 0 works as 1.
    pub minimum_calls: u32,
    /// The calls the failure rate is computed over.
    pub window: Window,
    /// How long the breaker stays open before it lets probe calls through: every break with
    /// [`Breaks::Fixed`], the base of the growth with [`Breaks::Jittered`].
    pub break_duration: Duration,
    /// Whether every break lasts `break_duration`, or breaks grow and are jittered.
    pub breaks: Breaks,
    /// How many probe calls the half-open breaker lets through; all of them must succeed to close
    /// it. At least 1.
    pub half_open_probes: u32,
    /// A call that takes at least this long (on tokio's clock) counts as a failure, even if it
    /// returned `Ok`. `None`: duration never counts.
    pub slow_call: Option<Duration>,
}

impl BreakerConfig {
    /// resilience4j's defaults: 50 % over the last 100 calls, at least 100 calls, open for 60 s,
    /// 10 probes. resilience4j also counts calls slower than 60 s, against a slow-call rate of its
    /// own (100 %); that is not modelled here.
    pub fn resilience4j() -> Self {
        Self {
            failure_rate_percent: 50,
            minimum_calls: 100,
            window: Window::Count(100),
            break_duration: Duration::from_secs(60),
            breaks: Breaks::Fixed,
            half_open_probes: 10,
            slow_call: None,
        }
    }

    /// Polly v8's defaults: a failure ratio of 0.1 over 30 s, at least 100 calls, open for 5 s,
    /// one probe.
    pub fn polly() -> Self {
        Self {
            failure_rate_percent: 10,
            minimum_calls: 100,
            window: Window::Time(Duration::from_secs(30)),
            break_duration: Duration::from_secs(5),
            breaks: Breaks::Fixed,
            half_open_probes: 1,
            slow_call: None,
        }
    }
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self::resilience4j()
    }
}

/// How long each break lasts.
///
/// The n-th opening counts the openings since the breaker was created or last closed: the
/// opening from closed is the first (n = 1), and each failed probe that reopens a half-open
/// breaker adds one. Closing (every probe succeeded) starts the count again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaks {
    /// Every break lasts `break_duration`, whatever n is. The default.
    Fixed,
    /// The n-th opening lasts a duration drawn uniformly from `[c / 2, c]`, both ends included,
    /// where `c = min(cap, break_duration · 2^(n−1))` and `c / 2` is rounded down to the
    /// nanosecond ("equal jitter"). The first opening draws from `[break_duration / 2,
    /// break_duration]`, each reopening doubles `c` until it reaches `cap`, and `c` stays `cap`
    /// for every larger n, however large: the product is never computed past the cap.
    Jittered {
        /// The largest `c`: no break lasts longer.
        cap: Duration,
    },
}

/// A seed for a breaker's own random number generator, different at every call: two breakers
/// built with [`crate::CircuitBreaker::new`] draw different breaks. It comes from the random keys
/// the standard library gives each `RandomState`.
pub fn fresh_seed() -> u64 {
    RandomState::new().hash_one(0_u8)
}

/// The state of a breaker, as [`crate::CircuitBreaker::state`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Calls go through; their outcomes fill the window.
    Closed,
    /// Calls are refused at once, without reaching the dependency.
    Open,
    /// The break is over: a few probe calls go through, the others are refused.
    HalfOpen,
}

/// What a call through the breaker can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakerError<E> {
    /// The breaker refused the call: the operation was never started.
    Rejected,
    /// The operation ran and failed with this error.
    Failed(E),
}

impl<E: fmt::Display> fmt::Display for BreakerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BreakerError::Rejected => write!(f, "the circuit breaker refused the call"),
            BreakerError::Failed(error) => write!(f, "{error}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for BreakerError<E> {}

/// How one attempt of [`crate::attempt`] failed, once the breaker let it through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptError<E> {
    /// The operation had not answered when the attempt's time limit was up; it was dropped.
    TimedOut,
    /// The operation answered in time with this error.
    Failed(E),
}

impl<E: fmt::Display> fmt::Display for AttemptError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttemptError::TimedOut => write!(f, "the attempt timed out"),
            AttemptError::Failed(error) => write!(f, "{error}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for AttemptError<E> {}
