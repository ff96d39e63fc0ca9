//! Chapter 13 — Retry budgets: the reference solution.
//!
//! [`RetryBudget`] is gRPC's retry throttle (proposal A6): a token count that failures drain and
//! successes refill, shared by every request a client sends to one service. Retries are allowed
//! only while the count is above half its maximum. [`retry_with_budget`] is the capped retry
//! loop of [`capped`], with the budget asked before each retry and told every outcome.

use std::future::Future;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

pub mod capped;
pub mod error;
pub mod stubs;

pub use error::{BudgetError, MAX_TOKENS_LIMIT, TOKEN_STEP};

/// Thousandths per token: A6 supports up to three decimal places, so the budget counts in
/// whole thousandths and its arithmetic is exact.
const MILLI: u32 = 1_000;

/// A retry budget in the style of gRPC's retry throttling: failures cost one token, successes
/// earn `token_ratio`, and retries are allowed only while more than half of `max_tokens` is left.
///
/// One budget serves a whole client: share it as `Arc<RetryBudget>`. Every method takes `&self`
/// and is safe to call from many threads at once.
#[derive(Debug)]
pub struct RetryBudget {
    /// `max_tokens`, in thousandths of a token.
    max: u32,
    /// `token_ratio`, in thousandths of a token.
    ratio: u32,
    /// The current count, in thousandths of a token; always within `0..=max`.
    tokens: AtomicU32,
}

// The budget is shared by every task of a client, so it must be `Send + Sync`: this fails to
// compile if a field ever makes it otherwise.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<RetryBudget>();
};

/// `value` in whole thousandths, if it is a finite number from 0.001 up to `limit`.
fn thousandths(value: f64, limit: f64) -> Option<u32> {
    let in_range = (TOKEN_STEP..=limit).contains(&value);
    // Rounded, not truncated: in binary floating point, 2.01 · 1000 is 2009.9999999999998.
    in_range.then(|| (value * f64::from(MILLI)).round() as u32)
}

impl RetryBudget {
    /// A full budget: `max_tokens` tokens, earning `token_ratio` per success.
    ///
    /// `max_tokens` must lie in `[0.001, 1000]` and `token_ratio` must be at least `0.001`; both
    /// are kept to three decimal places. A6's example is `RetryBudget::new(10.0, 0.1)`.
    pub fn new(max_tokens: f64, token_ratio: f64) -> Result<Self, BudgetError> {
        let max =
            thousandths(max_tokens, MAX_TOKENS_LIMIT).ok_or(BudgetError::MaxTokens(max_tokens))?;
        let ratio =
            thousandths(token_ratio, f64::MAX).ok_or(BudgetError::TokenRatio(token_ratio))?;
        Ok(Self {
            max,
            ratio,
            tokens: AtomicU32::new(max),
        })
    }

    /// Replaces the count `t` with `change(t)` as one atomic step.
    ///
    /// Another thread may change the count between our load and our write. `compare_exchange`
    /// writes only if the count is still the value we computed from; otherwise it hands us the
    /// new value and we compute again. No update is ever lost. `Relaxed` is enough: the count
    /// publishes no other data, and every read-modify-write of one atomic sees the latest value.
    fn update(&self, change: impl Fn(u32) -> u32) {
        let tokens = &self.tokens;
        let mut current = tokens.load(Relaxed);
        loop {
            let new = change(current);
            match tokens.compare_exchange_weak(current, new, Relaxed, Relaxed) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Records a successful call: the count rises by `token_ratio`, up to `max_tokens`.
    pub fn on_success(&self) {
        self.update(|tokens| tokens.saturating_add(self.ratio).min(self.max));
    }

    /// Records a failed call: the count falls by one token, down to zero.
    pub fn on_failure(&self) {
        self.update(|tokens| tokens.saturating_sub(MILLI));
    }

    /// Whether a failed request may be retried now: only while the count is strictly above
    /// `max_tokens / 2`.
    pub fn can_retry(&self) -> bool {
        // Exact in whole thousandths: t > m/2 holds exactly when t > ⌊m/2⌋, for odd m too.
        self.tokens.load(Relaxed) > self.max / 2
    }

    /// The current token count, with three decimal places: the `f64` nearest to that number
    /// (0.009 for nine thousandths, not 0.009000000000000001).
    pub fn tokens(&self) -> f64 {
        f64::from(self.tokens.load(Relaxed)) / f64::from(MILLI)
    }
}

/// Calls `op` at most `attempts` times, like [`capped::retry_capped`], and also asks `budget`
/// before every retry. Returns the first `Ok`, or the last `Err` when the attempts run out or the
/// budget refuses a retry; a refused retry returns at once, without waiting for tokens.
///
/// Every outcome is reported to the budget: `on_success` for an `Ok`, `on_failure` for each
/// `Err` (the last one included). The failure is recorded *before* the budget is asked, so the
/// call that just failed already counts against the retry it would trigger.
/// `attempts = 0` is treated as 1.
pub async fn retry_with_budget<T, E, F, Fut>(
    mut op: F,
    attempts: u32,
    budget: &RetryBudget,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut call = 1;
    loop {
        let outcome = op().await;
        let Err(error) = outcome else {
            budget.on_success();
            return outcome;
        };
        budget.on_failure();
        if call >= attempts || !budget.can_retry() {
            return Err(error);
        }
        call += 1;
    }
}
