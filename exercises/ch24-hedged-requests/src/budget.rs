//! Given: the retry budget that hedges spend, as a trait, with two implementations.

use std::sync::{Mutex, PoisonError};

/// A retry budget shared by every call to one server (chapter 13): hedges spend it as retries do.
pub trait Budget: Send + Sync {
    /// Whether one more hedge may be sent now. The first request of a call never asks.
    fn can_retry(&self) -> bool;
    /// A request answered successfully.
    fn on_success(&self);
    /// A request failed with a non-fatal code.
    fn on_failure(&self);
}

/// No budget at all: every hedge may be sent.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unlimited;

impl Budget for Unlimited {
    fn can_retry(&self) -> bool {
        true
    }
    fn on_success(&self) {}
    fn on_failure(&self) {}
}

/// gRPC's retry throttle (proposal A6), counted in thousandths of a token.
#[derive(Debug)]
pub struct TokenBudget {
    max: u32,
    ratio: u32,
    tokens: Mutex<u32>,
}

impl TokenBudget {
    /// A full budget of `max_tokens` that earns `token_ratio` per success (both to three decimal
    /// places; A6's example is `TokenBudget::new(10.0, 0.1)`).
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        let thousandths = |value: f64| (value * 1000.0).round() as u32;
        Self {
            max: thousandths(max_tokens),
            ratio: thousandths(token_ratio),
            tokens: Mutex::new(thousandths(max_tokens)),
        }
    }

    /// The tokens left.
    pub fn tokens(&self) -> f64 {
        f64::from(*self.lock()) / 1000.0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u32> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Budget for TokenBudget {
    fn can_retry(&self) -> bool {
        *self.lock() > self.max / 2
    }
    fn on_success(&self) {
        let mut tokens = self.lock();
        *tokens = (*tokens + self.ratio).min(self.max);
    }
    fn on_failure(&self) {
        let mut tokens = self.lock();
        *tokens = tokens.saturating_sub(1000);
    }
}
