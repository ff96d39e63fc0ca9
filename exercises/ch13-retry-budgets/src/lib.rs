//! # Chapter 13 — Retry budgets
//!
//! Book: `book/src/ch13-retry-budgets.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch13`. Stuck? `cargo xtask hint ch13`.
//!
//! ## Your task
//!
//! Build gRPC's retry throttle (proposal A6) as a [`RetryBudget`] that many tasks share, then wire
//! it into the retry loop.
//!
//! 1. Choose the fields of [`RetryBudget`]: the two settings and the token count. Every method
//!    takes `&self` and the budget is shared between threads (`Arc<RetryBudget>`), so the count
//!    needs interior mutability that is `Send + Sync` (a `Cell` or `RefCell` will not compile).
//! 2. [`RetryBudget::new`]: validate the settings as given (`max_tokens` in `[0.001, 1000]`,
//!    `token_ratio` at least `0.001` with no upper limit, both finite; otherwise the matching
//!    [`BudgetError`], carrying the value refused), keep each to three decimal places, and start
//!    **full**, at `max_tokens`.
//! 3. [`RetryBudget::on_failure`] takes one token, never going below 0;
//!    [`RetryBudget::on_success`] adds `token_ratio`, never going above `max_tokens`;
//!    [`RetryBudget::can_retry`] is true only while the count is **strictly above**
//!    `max_tokens / 2`; [`RetryBudget::tokens`] reports the count. Count exactly, to three decimal
//!    places: a sum of floating-point 0.2s drifts, and at the threshold the drift changes the
//!    answer. No update may be lost when eight threads call these methods at once, and no thread
//!    may ever read a count outside `[0, max_tokens]`.
//! 4. [`retry_with_budget`]: the loop of [`capped::retry_capped`] (given), plus the budget:
//!    report every outcome (`on_success` / `on_failure`, the last failure too), and after a
//!    failure retry only if attempts remain **and** `can_retry()` says yes, asked after the
//!    failure was recorded.
//!
//! [`stubs::Backend`] is the service the exercise drives: `Backend::down()` fails every call,
//! `Backend::failing_every(10)` fails one call in ten. `tests/visible.rs` shows both; the grader
//! adds hidden checks, including a full outage of 1,000 requests and eight threads at once. Once
//! they pass, `cargo run -p ch13_retry_budgets --example predict` answers the book's "predict,
//! then run" questions (section 13.9) with your code.

use std::future::Future;

pub mod capped;
pub mod error;
pub mod stubs;

pub use error::{BudgetError, MAX_TOKENS_LIMIT, TOKEN_STEP};

/// A retry budget in the style of gRPC's retry throttling: failures cost one token, successes
/// earn `token_ratio`, and retries are allowed only while more than half of `max_tokens` is left.
///
/// One budget serves a whole client: share it as `Arc<RetryBudget>`.
#[derive(Debug)]
pub struct RetryBudget {
    // TODO: replace this placeholder with the budget's fields: `max_tokens` and `token_ratio`
    // (in thousandths, say), and the token count behind an `AtomicU32` or a `Mutex`.
    _fields_to_choose: (),
}

// The budget is shared by every task of a client, so it must be `Send + Sync`: this fails to
// compile if a field makes it otherwise (a `Cell` or `RefCell`, for example).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<RetryBudget>();
};

impl RetryBudget {
    /// A full budget: `max_tokens` tokens, earning `token_ratio` per success.
    ///
    /// `max_tokens` must lie in `[0.001, 1000]` and `token_ratio` must be at least `0.001`; both
    /// are kept to three decimal places. A6's example is `RetryBudget::new(10.0, 0.1)`.
    pub fn new(max_tokens: f64, token_ratio: f64) -> Result<Self, BudgetError> {
        // TODO: refuse a bad setting with the matching `BudgetError` (NaN and infinities are
        // bad too); otherwise a budget whose count starts at `max_tokens`.
        todo!("RetryBudget::new(max_tokens = {max_tokens}, token_ratio = {token_ratio})")
    }

    /// Records a successful call: the count rises by `token_ratio`, up to `max_tokens`.
    pub fn on_success(&self) {
        // TODO: the count rises by `token_ratio`, never above `max_tokens`, in one atomic step.
        todo!("RetryBudget::on_success()")
    }

    /// Records a failed call: the count falls by one token, down to zero.
    pub fn on_failure(&self) {
        // TODO: the count falls by one token, never below zero, in one atomic step.
        todo!("RetryBudget::on_failure()")
    }

    /// Whether a failed request may be retried now: only while the count is strictly above
    /// `max_tokens / 2`.
    pub fn can_retry(&self) -> bool {
        // TODO: true only while the count is strictly above half of `max_tokens`.
        todo!("RetryBudget::can_retry()")
    }

    /// The current token count, with three decimal places: the `f64` nearest to that number
    /// (0.009 for nine thousandths, not 0.009000000000000001).
    pub fn tokens(&self) -> f64 {
        // TODO: return the count in tokens (4.5, not 4500 thousandths).
        todo!("RetryBudget::tokens()")
    }
}

/// Calls `op` at most `attempts` times, like [`capped::retry_capped`], and also asks `budget`
/// before every retry. Returns the first `Ok`, or the last `Err` when the attempts run out or the
/// budget refuses a retry; a refused retry returns at once, without waiting for tokens.
///
/// Every outcome is reported to the budget: `on_success` for an `Ok`, `on_failure` for each
/// `Err` (the last one included). `attempts = 0` is treated as 1.
pub async fn retry_with_budget<T, E, F, Fut>(
    op: F,
    attempts: u32,
    budget: &RetryBudget,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // TODO: the per-request cap of `capped.rs`, plus the budget as documented above: every
    // outcome reported, and a retry only while attempts remain and the budget allows it.
    let _ = (op, budget);
    todo!("retry_with_budget(attempts = {attempts})")
}
