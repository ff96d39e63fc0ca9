//! Chapter 23 — Circuit breakers. The reference solution.
//!
//! One [`CircuitBreaker`] guards one dependency and is shared by every task that calls it. Its
//! state sits behind one `Mutex`, locked only for bookkeeping and never across an `.await`, so
//! the lock is never held while the dependency works.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use tokio::time::Instant;

pub mod config;
pub mod lab;
pub mod stubs;

pub use config::{AttemptError, BreakerConfig, BreakerError, Breaks, State, Window};

/// A circuit breaker with closed, open and half-open states over a sliding window of outcomes.
#[derive(Debug)]
pub struct CircuitBreaker {
    config: BreakerConfig,
    inner: Mutex<Inner>,
}

// Every task of a client shares one breaker, so it must be `Send + Sync`.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<CircuitBreaker>();
};

#[derive(Debug)]
struct Inner {
    phase: Phase,
    /// Grows by one at every change of phase. A call's outcome counts only in the phase that let
    /// the call through: a late answer from an earlier phase is ignored.
    epoch: u64,
    /// The openings since the breaker was created or last closed: the next break is that of
    /// opening `openings + 1`.
    openings: u32,
    /// Draws the jittered breaks.
    rng: StdRng,
}

#[derive(Debug)]
enum Phase {
    Closed { window: VecDeque<Outcome> },
    Open { until: Instant },
    HalfOpen { admitted: u32, succeeded: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Outcome {
    at: Instant,
    failed: bool,
}

/// Leave to run one call. If the call is dropped before it finishes, the permit gives its
/// probe's place back, so a cancelled probe cannot hold the breaker half-open for ever.
struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    epoch: u64,
    finished: bool,
}

impl Permit<'_> {
    fn finish(mut self, failed: bool) {
        self.finished = true;
        self.breaker.record(self.epoch, failed);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.breaker.abandon(self.epoch);
        }
    }
}

impl CircuitBreaker {
    /// A closed breaker with an empty window, drawing its jittered breaks from a generator
    /// seeded afresh, so that no two breakers draw the same breaks.
    pub fn new(config: BreakerConfig) -> Self {
        Self::with_rng(config, StdRng::seed_from_u64(config::fresh_seed()))
    }

    /// A closed breaker with an empty window, drawing its jittered breaks from `rng`.
    pub fn with_rng(config: BreakerConfig, rng: StdRng) -> Self {
        Self {
            config,
            inner: Mutex::new(Inner {
                phase: closed(),
                epoch: 0,
                openings: 0,
                rng,
            }),
        }
    }

    /// The state now. An open breaker whose break is over reports `HalfOpen`.
    pub fn state(&self) -> State {
        let mut inner = self.lock();
        end_break_if_over(&mut inner, Instant::now());
        match inner.phase {
            Phase::Closed { .. } => State::Closed,
            Phase::Open { .. } => State::Open,
            Phase::HalfOpen { .. } => State::HalfOpen,
        }
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
        let Some(permit) = self.admit() else {
            return Err(BreakerError::Rejected);
        };
        let started = Instant::now();
        let result = op().await;
        let slow = self
            .config
            .slow_call
            .is_some_and(|limit| started.elapsed() >= limit);
        permit.finish(result.is_err() || slow);
        result.map_err(BreakerError::Failed)
    }

    /// Lets a call through, or refuses it (`None`).
    fn admit(&self) -> Option<Permit<'_>> {
        let mut inner = self.lock();
        end_break_if_over(&mut inner, Instant::now());
        let epoch = inner.epoch;
        match &mut inner.phase {
            Phase::Closed { .. } => {}
            Phase::Open { .. } => return None,
            Phase::HalfOpen { admitted, .. } => {
                if *admitted >= self.config.half_open_probes {
                    return None;
                }
                *admitted += 1;
            }
        }
        Some(Permit {
            breaker: self,
            epoch,
            finished: false,
        })
    }

    /// Records the outcome of a call let through in phase `epoch`.
    fn record(&self, epoch: u64, failed: bool) {
        let mut inner = self.lock();
        if inner.epoch != epoch {
            return;
        }
        let now = Instant::now();
        let next = match &mut inner.phase {
            Phase::Closed { window } => {
                window.push_back(Outcome { at: now, failed });
                self.forget_old_outcomes(window, now);
                self.failure_rate_reached(window).then_some(Next::Open)
            }
            Phase::HalfOpen { succeeded, .. } => {
                if failed {
                    Some(Next::Open)
                } else {
                    *succeeded += 1;
                    (*succeeded >= self.config.half_open_probes).then_some(Next::Closed)
                }
            }
            Phase::Open { .. } => None,
        };
        match next {
            Some(Next::Open) => self.open(&mut inner, now),
            Some(Next::Closed) => {
                inner.openings = 0;
                enter(&mut inner, closed());
            }
            None => {}
        }
    }

    /// Opens the breaker at `now` for the break of its next opening.
    fn open(&self, inner: &mut Inner, now: Instant) {
        inner.openings = inner.openings.saturating_add(1);
        let length = break_duration(&self.config, inner.openings, &mut inner.rng);
        enter(
            inner,
            Phase::Open {
                until: now + length,
            },
        );
    }

    /// A call let through in phase `epoch` was dropped before it finished: it records nothing,
    /// and a probe gives its place back.
    fn abandon(&self, epoch: u64) {
        let mut inner = self.lock();
        if inner.epoch != epoch {
            return;
        }
        if let Phase::HalfOpen { admitted, .. } = &mut inner.phase {
            *admitted -= 1;
        }
    }

    fn forget_old_outcomes(&self, window: &mut VecDeque<Outcome>, now: Instant) {
        match self.config.window {
            Window::Count(size) => {
                while window.len() > size as usize {
                    window.pop_front();
                }
            }
            Window::Time(span) => {
                while window
                    .front()
                    .is_some_and(|oldest| now.duration_since(oldest.at) >= span)
                {
                    window.pop_front();
                }
            }
        }
    }

    /// At least `minimum_calls` outcomes (and at least one: an empty window has no rate), and
    /// failures at or above the threshold, counted in whole numbers so that exactly 30 % of 10
    /// is 30 %.
    ///
    /// This counts the whole window on every recorded outcome, which is simple and fast enough
    /// for the windows of the checks; a breaker on a hot path keeps running counts instead.
    fn failure_rate_reached(&self, window: &VecDeque<Outcome>) -> bool {
        let calls = window.len() as u64;
        let failures = window.iter().filter(|outcome| outcome.failed).count() as u64;
        calls > 0
            && calls >= u64::from(self.config.minimum_calls)
            && failures * 100 >= u64::from(self.config.failure_rate_percent) * calls
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The bookkeeping never panics half-way, so a poisoned lock still holds a whole state.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What an outcome moves the breaker to.
enum Next {
    Open,
    Closed,
}

fn closed() -> Phase {
    Phase::Closed {
        window: VecDeque::new(),
    }
}

fn enter(inner: &mut Inner, phase: Phase) {
    inner.phase = phase;
    inner.epoch += 1;
}

/// Open → half-open once the break is over, at `until` exactly.
fn end_break_if_over(inner: &mut Inner, now: Instant) {
    if let Phase::Open { until } = inner.phase
        && now >= until
    {
        enter(
            inner,
            Phase::HalfOpen {
                admitted: 0,
                succeeded: 0,
            },
        );
    }
}

/// How long the `opening`-th opening since the breaker was created or last closed stays open
/// (`opening` starts at 1).
///
/// [`Breaks::Fixed`]: `break_duration`, drawing nothing. [`Breaks::Jittered`]: a draw from `rng`,
/// uniform over `[c / 2, c]` with `c = min(cap, break_duration · 2^(opening−1))`, computed
/// without overflow for any `opening`.
pub fn break_duration(config: &BreakerConfig, opening: u32, rng: &mut impl Rng) -> Duration {
    match config.breaks {
        Breaks::Fixed => config.break_duration,
        Breaks::Jittered { cap } => {
            // 2^(opening−1) fits in a u32 up to opening 32; past that, or past the largest
            // Duration, the product is certainly above the cap.
            let ceiling = 1_u32
                .checked_shl(opening.saturating_sub(1))
                .and_then(|factor| config.break_duration.checked_mul(factor))
                .map_or(cap, |grown| grown.min(cap));
            rng.random_range(ceiling / 2..=ceiling)
        }
    }
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
    // The timeout sits inside the breaker: when the time is up, only the operation is dropped,
    // and the breaker's call ends with a failure it records.
    breaker
        .call(|| async move {
            match tokio::time::timeout(limit, op()).await {
                Ok(answer) => answer.map_err(AttemptError::Failed),
                Err(_elapsed) => Err(AttemptError::TimedOut),
            }
        })
        .await
}
