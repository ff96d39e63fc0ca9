//! Given: the five backoff strategies the lab compares, with the formulas of chapters 7 to 9.
//!
//! Every client owns one [`Backoff`] and asks it for a pause after each conflict. The pauses
//! follow the published simulator of the AWS Architecture Blog post "Exponential Backoff And
//! Jitter" (2015) exactly, including its numbering: the counter goes up *before* the ceiling is
//! computed, so the first pause is drawn with `attempt = 1` (a ceiling of `2 · BASE` = 10 ms),
//! where chapter 8 would use `attempt = 0`.

use std::fmt;
use std::time::Duration;

use rand::{Rng, RngExt};

/// The base delay of every strategy.
pub const BASE: Duration = Duration::from_millis(5);
/// The cap: no pause is ever longer.
pub const CAP: Duration = Duration::from_millis(2_000);

/// How a client waits after a conflict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Try again at once.
    NoBackoff,
    /// Wait exactly `min(cap, base · 2^attempt)`.
    Exponential,
    /// Wait a uniform draw from `[0, min(cap, base · 2^attempt)]` (chapter 8).
    FullJitter,
    /// Wait half the ceiling, plus a uniform draw from `[0, ceiling / 2]` (chapter 9).
    EqualJitter,
    /// Wait `min(cap, uniform(base, 3 · previous pause))`, starting from `previous = base`
    /// (chapter 9).
    Decorrelated,
}

impl Strategy {
    /// Every strategy, in the order the lab reports them.
    pub const ALL: [Strategy; 5] = [
        Strategy::NoBackoff,
        Strategy::Exponential,
        Strategy::FullJitter,
        Strategy::EqualJitter,
        Strategy::Decorrelated,
    ];

    /// The strategy's name in tables and figures: `full jitter`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::NoBackoff => "no backoff",
            Strategy::Exponential => "exponential",
            Strategy::FullJitter => "full jitter",
            Strategy::EqualJitter => "equal jitter",
            Strategy::Decorrelated => "decorrelated",
        }
    }

    /// The strategy's key in `predictions.toml`: `full_jitter`.
    pub fn key(self) -> &'static str {
        match self {
            Strategy::NoBackoff => "no_backoff",
            Strategy::Exponential => "exponential",
            Strategy::FullJitter => "full_jitter",
            Strategy::EqualJitter => "equal_jitter",
            Strategy::Decorrelated => "decorrelated",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One client's backoff: the pause after each of its conflicts, in order.
///
/// It remembers how many conflicts the client has had (the exponent) and, for decorrelated
/// jitter, the previous pause. Give every client its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    strategy: Strategy,
    conflicts: u32,
    previous: Duration,
}

impl Backoff {
    /// A client's backoff before its first conflict.
    pub fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            conflicts: 0,
            previous: BASE,
        }
    }

    /// The strategy this backoff follows.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// How many pauses it has handed out so far.
    pub fn conflicts(&self) -> u32 {
        self.conflicts
    }

    /// The pause after one more conflict.
    pub fn next_delay(&mut self, rng: &mut impl Rng) -> Duration {
        self.conflicts = self.conflicts.saturating_add(1);
        let ceiling = ceiling(self.conflicts);
        match self.strategy {
            Strategy::NoBackoff => Duration::ZERO,
            Strategy::Exponential => ceiling,
            Strategy::FullJitter => rng.random_range(Duration::ZERO..=ceiling),
            Strategy::EqualJitter => ceiling / 2 + rng.random_range(Duration::ZERO..=ceiling / 2),
            Strategy::Decorrelated => {
                let pause = rng.random_range(BASE..=self.previous * 3).min(CAP);
                self.previous = pause;
                pause
            }
        }
    }
}

/// `min(CAP, BASE · 2^attempt)`, saturating instead of overflowing (chapter 8, §8.6).
pub fn ceiling(attempt: u32) -> Duration {
    1u32.checked_shl(attempt)
        .and_then(|factor| BASE.checked_mul(factor))
        .map_or(CAP, |exponential| exponential.min(CAP))
}
