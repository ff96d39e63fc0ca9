//! # Chapter 23 — Circuit breakers
//!
//! Book: `book/src/ch23-circuit-breakers.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch23`. Stuck? `cargo xtask hint ch23`.
//!
//! ## Your task
//!
//! Build a [`CircuitBreaker`] that guards one dependency and is shared by every task calling it
//! (`Arc<CircuitBreaker>`). Its settings are a [`BreakerConfig`] (given, in `src/config.rs`).
//!
//! 1. **Closed.** Calls go through. Each finished call adds its outcome to a sliding window: the
//!    last `n` outcomes ([`Window::Count`]) or those recorded in the last `d` of tokio's clock
//!    ([`Window::Time`]; an outcome exactly `d` old has left). A call that returns `Err`, or takes
//!    at least `slow_call` (when set), is a failure; an outcome's age counts from when its call
//!    finished. The breaker **opens** when the window's failure rate **reaches**
//!    `failure_rate_percent` (equal or greater), but never while the window holds fewer than
//!    `minimum_calls` outcomes, and never with an empty window (no outcomes, no rate). The rate
//!    is judged when an outcome is recorded, and only then: outcomes ageing out of a time window
//!    never open or close anything by themselves.
//! 2. **Open.** Every call is refused with [`BreakerError::Rejected`] at once: the operation is
//!    never started. After `break_duration` (at exactly that instant) the breaker is half-open.
//! 3. **Half-open.** At most `half_open_probes` calls go through, concurrent callers included;
//!    the others are refused. One failed (or slow) probe opens the breaker again, for a new full
//!    `break_duration` from that moment. When every probe has succeeded, the breaker closes with
//!    an empty window.
//! 4. **Shared and cancellable.** An outcome counts only in the state that let its call through:
//!    the late answer of a call from before the last change of state is ignored. A call dropped
//!    before it finishes (its caller timed out, say) records nothing, and a probe that is dropped
//!    gives its place back. Never hold a lock across an `.await`.
//! 5. **Breaks that grow, with jitter.** [`break_duration`] says how long the n-th opening since
//!    the breaker was created or last closed stays open (n starts at 1; each failed probe adds
//!    one; closing starts again from 1). With [`Breaks::Fixed`] it is always `break_duration`.
//!    With [`Breaks::Jittered`] it is drawn uniformly from `[c / 2, c]`, both ends included,
//!    where `c = min(cap, break_duration · 2^(n−1))`, for any n up to `u32::MAX` without
//!    overflowing. The breaker draws its breaks from the generator given to
//!    [`CircuitBreaker::with_rng`].
//! 6. **One attempt with a time limit.** [`attempt`] runs one call through the breaker with at
//!    most `limit` to answer, in the order of section 23.8: the timeout inside the breaker, so
//!    that an attempt that hangs ends as a failure the breaker records.
//!
//! [`CircuitBreaker::call`] returns the operation's own result (`Ok` value, or its error as
//! [`BreakerError::Failed`]), even when the call counted as slow. [`CircuitBreaker::state`]
//! reports the state now; an open breaker whose break is over reports [`State::HalfOpen`].
//!
//! [`stubs::Dependency`] stands in for the service: `Dependency::down()`, `set_down(false)`,
//! `set_latency(…)`, and a count of the calls that reached it. `tests/visible.rs` shows it; the
//! grader adds hidden checks, each at the edge of one of the rules above.

use std::future::Future;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
// rand 0.10's `random_range` is a method of `RngExt`: the draws you write use it.
#[allow(unused_imports)]
use rand::RngExt;

pub mod config;
pub mod lab;
pub mod stubs;

pub use config::{AttemptError, BreakerConfig, BreakerError, Breaks, State, Window};

/// A circuit breaker with closed, open and half-open states over a sliding window of outcomes.
#[derive(Debug)]
pub struct CircuitBreaker {
    config: BreakerConfig,
    // TODO: replace this placeholder with the state you need, behind a `std::sync::Mutex` (every
    // method takes `&self`, and the breaker is shared between tasks), the generator given to
    // `with_rng` included.
    _state_to_choose: (),
}

// Every task of a client shares one breaker, so it must be `Send + Sync`: this fails to compile
// if a field makes it otherwise (a `Cell` or `RefCell`, for example).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<CircuitBreaker>();
};

impl CircuitBreaker {
    /// A closed breaker with an empty window, drawing its jittered breaks from a generator
    /// seeded afresh, so that no two breakers draw the same breaks. Given: it calls yours.
    pub fn new(config: BreakerConfig) -> Self {
        Self::with_rng(config, StdRng::seed_from_u64(config::fresh_seed()))
    }

    /// A closed breaker with an empty window, drawing its jittered breaks from `rng`.
    pub fn with_rng(config: BreakerConfig, rng: StdRng) -> Self {
        // TODO: a closed breaker that remembers `config` and keeps `rng` for its breaks.
        let _ = (config, rng);
        todo!("CircuitBreaker::with_rng")
    }

    /// The state now. An open breaker whose break is over reports `HalfOpen`.
    pub fn state(&self) -> State {
        // TODO: the state, as of tokio's `Instant::now()`.
        let _ = &self.config;
        todo!("CircuitBreaker::state")
    }

    /// Runs `op` if the breaker lets the call through, and records how it went.
    ///
    /// Refused calls return [`BreakerError::Rejected`] at once, without calling `op`. A call that
    /// fails, or takes at least `slow_call`, counts as a failure; the caller still gets `op`'s own
    /// result.
    pub async fn call<T, E, F, Fut>(&self, op: F) -> Result<T, BreakerError<E>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        // TODO: the rules of the task list, for one call.
        let _ = op;
        todo!("CircuitBreaker::call")
    }
}

/// How long the `opening`-th opening since the breaker was created or last closed stays open
/// (`opening` starts at 1).
///
/// [`Breaks::Fixed`]: `break_duration`, drawing nothing. [`Breaks::Jittered`]: a draw from `rng`,
/// uniform over `[c / 2, c]` with `c = min(cap, break_duration · 2^(opening−1))`, computed
/// without overflow for any `opening`.
pub fn break_duration(config: &BreakerConfig, opening: u32, rng: &mut impl Rng) -> Duration {
    // TODO: the break of this opening, as the doc comment and `Breaks` state it.
    let _ = (config, opening, rng);
    todo!("break_duration")
}

/// One attempt at a dependency through `breaker`, with at most `limit` of tokio's clock to answer.
///
/// A refused attempt returns [`BreakerError::Rejected`] at once, without calling `op`. An
/// operation still running when `limit` is up is dropped, and the attempt fails with
/// [`AttemptError::TimedOut`] exactly `limit` after it started; the breaker records that as a
/// failed call, so a dependency that hangs opens a closed breaker and reopens a half-open one.
/// An answer in time comes back as it is: `Ok`, or its error as [`AttemptError::Failed`].
pub async fn attempt<T, E, F, Fut>(
    breaker: &CircuitBreaker,
    limit: Duration,
    op: F,
) -> Result<T, BreakerError<AttemptError<E>>>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // TODO: one call through the breaker whose operation cannot take longer than `limit`.
    let _ = (breaker, limit, op);
    todo!("attempt")
}
