//! Given: chapter 13's retry budget, in the style of gRPC's retry throttling (proposal A6).
//!
//! One budget per service, shared by every saga that calls it. A failed call costs one token, a
//! successful one earns `token_ratio`, and a retry is allowed only while more than half of
//! `max_tokens` is left. Record the outcome first, then ask: a retry after a failure is allowed
//! only if the bucket still holds more than half *after* paying for that failure.

use std::cell::Cell;

/// Thousandths per token: the arithmetic is exact in whole thousandths.
const MILLI: u32 = 1_000;

/// The numbers of a [`RetryBudget`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetConfig {
    /// The bucket's size, and its content at the start.
    pub max_tokens: f64,
    /// What one successful call earns.
    pub token_ratio: f64,
}

impl Default for BudgetConfig {
    /// A6's example numbers: ten tokens, a tenth of a token per success.
    fn default() -> Self {
        Self {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }
    }
}

impl BudgetConfig {
    /// The most calls a service may receive when its clients make `first_attempts` first
    /// attempts and retry within this budget: `(1 + token_ratio) · first_attempts +
    /// max_tokens / 2 + 1`, rounded down.
    ///
    /// Why: every retry follows a failure that left more than `max_tokens / 2` in the bucket,
    /// and only successes (at most one per first attempt) refill it, so the retries stay below
    /// `max_tokens / 2 + token_ratio · first_attempts`. The `+ 1` forgives a client that asks
    /// before it pays for the failure, which allows one retry more.
    pub fn load_bound(&self, first_attempts: u64) -> u64 {
        let ratio = (self.token_ratio * f64::from(MILLI)).round() as u64;
        let half = (self.max_tokens * f64::from(MILLI)).round() as u64 / 2;
        first_attempts + (ratio * first_attempts + half) / u64::from(MILLI) + 1
    }
}

/// A retry budget: a token bucket that failures drain and successes refill.
#[derive(Debug)]
pub struct RetryBudget {
    /// `max_tokens` in thousandths; `None` for a budget that never refuses.
    max: Option<u32>,
    /// `token_ratio` in thousandths.
    ratio: u32,
    /// The current count in thousandths, within `0..=max`.
    tokens: Cell<u32>,
}

impl RetryBudget {
    /// A full budget.
    pub fn new(config: BudgetConfig) -> Self {
        let max = (config.max_tokens * f64::from(MILLI)).round() as u32;
        Self {
            max: Some(max),
            ratio: (config.token_ratio * f64::from(MILLI)).round() as u32,
            tokens: Cell::new(max),
        }
    }

    /// A budget that allows every retry: what a client without a budget does.
    pub fn unlimited() -> Self {
        Self {
            max: None,
            ratio: 0,
            tokens: Cell::new(0),
        }
    }

    // ANCHOR: budget
    /// Records a successful call: the bucket gains `token_ratio`, up to `max_tokens`.
    pub fn on_success(&self) {
        if let Some(max) = self.max {
            self.tokens.set((self.tokens.get() + self.ratio).min(max));
        }
    }

    /// Records a failed call (a transient error or a timeout): the bucket loses one token.
    pub fn on_failure(&self) {
        self.tokens.set(self.tokens.get().saturating_sub(MILLI));
    }

    /// Whether a retry may be made now: only while more than half the bucket is left.
    pub fn can_retry(&self) -> bool {
        match self.max {
            Some(max) => self.tokens.get() > max / 2,
            None => true,
        }
    }
    // ANCHOR_END: budget

    /// The tokens left, with three decimals (`None` for an unlimited budget).
    pub fn tokens(&self) -> Option<f64> {
        self.max
            .map(|_| f64::from(self.tokens.get()) / f64::from(MILLI))
    }
}
