//! # Chapter 22 — Retry design inside a saga
//!
//! Book: `book/src/ch22-saga-retries.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch22`. Stuck? `cargo xtask hint ch22`.
//!
//! A checkout saga reserves stock, charges a card and books a shipment. You write its
//! orchestrator: the **one place** that retries.
//!
//! ## Your task
//!
//! 1. [`classify_status`]: 408, 429 and 5xx are transient (`RetryAfter(d)` when the response
//!    carried a `Retry-After` of `d`); 400, 401, 403, 404 and the rest are permanent, hint or not.
//! 2. [`full_jitter`]: a delay drawn uniformly from `[0, min(cap, base · 2^retry)]`, with
//!    `retry = 0` for the sleep after the first failure. No overflow, whatever `retry` is.
//! 3. [`plan_retry`]: after attempt `attempt` failed, `elapsed` into the step: give up on a
//!    permanent error, or after `max_attempts` attempts; wait the `Retry-After` hint if there is
//!    one, else a full-jitter delay; but give up now if that wait would end at or past
//!    `total_budget`.
//! 4. [`Saga::run_step`]: run one step's `action` (execute or compensate) until it succeeds or
//!    gives up:
//!    - one idempotency key per step, `"{saga id}:{step name}"`, stored in the step's log
//!      record the first time and reused on every attempt, and by the compensation;
//!    - `client_retries: 0` in every [`StepContext`]: the step's client library must not retry
//!      on its own (its default, [`DEFAULT_CLIENT_RETRIES`], would multiply your attempts);
//!    - each attempt cut off after `min(per_attempt_timeout, what is left of total_budget)`,
//!      a timeout being the transient [`StepError::timed_out`];
//!    - the log, through `self.log.update_step(index, |record| …)`: **before** each attempt,
//!      `attempt_count` = this attempt's number, `status` = `action.in_flight()`,
//!      `next_retry_at` = `None`; after a failure, `last_error` = its message, then either
//!      `status` = `action.waiting()` with `next_retry_at` = when the next attempt starts
//!      (**before** sleeping until then), or `status` = `Failed`; after success,
//!      `status` = `action.done()`;
//!    - the `cancel` token stops an attempt or a sleep at once: the step is marked `Failed`
//!      with `last_error` "cancelled", and the result is `Err(StepEnd::Cancelled)`.
//! 5. [`Saga::run`]: set the saga's status to `Running`; run the steps in order; when one gives
//!    up, do what **its** policy's `on_exhausted` says: `Compensate` (status `Compensating`,
//!    then compensate every step that completed, newest first, with `run_step`; `Compensated`,
//!    or `NeedsHuman` if a compensation gives up), `Stop` (`Failed`), `HandToHuman`
//!    (`NeedsHuman`). All steps done: `Completed`. Cancelled: `Cancelled`. Write the final
//!    status to the log and return it.
//!
//! Given, ready-made: the [`Step`] trait and its [`StepContext`]; [`StepError`]; the policy
//! types ([`StepPolicy`], [`OnExhausted`], [`Plan`], [`GiveUp`]); the [`Saga`] and its log
//! ([`SharedLog`], [`StepRecord`]); [`CancelToken`]; [`stubs`] with the three services and the
//! checkout saga; [`timeline::Timeline`], which prints a saga's log as it changes.
//! `tests/visible.rs` shows a mock step (mockall); `examples/checkout.rs` runs the checkout.

use std::time::Duration;

use rand::Rng;

pub mod cancel;
pub mod error;
pub mod log;
pub mod policy;
pub mod saga;
pub mod step;
pub mod stubs;
pub mod timeline;

pub use cancel::CancelToken;
pub use error::{ErrorKind, StepError};
pub use log::{SagaLog, SagaStatus, SharedLog, StepRecord, StepStatus};
pub use policy::{GiveUp, OnExhausted, Plan, StepPolicy};
pub use saga::{Action, Saga, StepEnd};
pub use step::{DEFAULT_CLIENT_RETRIES, Step, StepContext};

/// Whether waiting can fix an HTTP error response: [`ErrorKind::Transient`] for 408, 429 and
/// the 5xx statuses ([`ErrorKind::RetryAfter`] when `retry_after` is given), else
/// [`ErrorKind::Permanent`].
pub fn classify_status(status: u16, retry_after: Option<Duration>) -> ErrorKind {
    // TODO: 408, 429 and 500..=599 are transient (you may keep 501 and 505 permanent: no wait
    // will make a server implement a method); with a Retry-After they become RetryAfter(delay).
    // Everything else is permanent, even with a Retry-After.
    todo!("classify_status(status = {status}, retry_after = {retry_after:?})")
}

/// Full jitter: a delay drawn uniformly from `[0, min(cap, base · 2^retry)]`, where `retry` is
/// 0 for the sleep after the first failure.
pub fn full_jitter(retry: u32, base: Duration, cap: Duration, rng: &mut impl Rng) -> Duration {
    // TODO: the ceiling min(cap, base · 2^retry) without overflow (`checked_pow`, `checked_mul`,
    // and `cap` when either says None), then `rand::RngExt::random_range(Duration::ZERO..=ceiling)`.
    let _ = rng;
    todo!("full_jitter(retry = {retry}, base = {base:?}, cap = {cap:?})")
}

/// What to do after attempt number `attempt` (counted from 1) failed with `error`, `elapsed`
/// after the step's first attempt started: [`Plan::RetryIn`] a delay, or [`Plan::GiveUp`].
pub fn plan_retry(
    policy: &StepPolicy,
    attempt: u32,
    error: &StepError,
    elapsed: Duration,
    rng: &mut impl Rng,
) -> Plan {
    // TODO: in this order: Permanent → GiveUp(Permanent); attempt >= max_attempts →
    // GiveUp(AttemptsUsedUp); the delay is the Retry-After hint, or full_jitter(attempt - 1, …);
    // elapsed + delay >= total_budget → GiveUp(OutOfTime); else RetryIn(delay).
    let _ = (policy, error, rng);
    todo!("plan_retry(attempt = {attempt}, elapsed = {elapsed:?})")
}

impl Saga {
    /// Runs `action` of step number `index` (counted from 0) until it succeeds or gives up,
    /// keeping the step's log record true at every moment (see task 4 above).
    ///
    /// The step is `self.steps[index]`: call it with `self.steps[index].call(action, &ctx)`;
    /// its policy is `self.steps[index].policy`. The saga's id is `self.id`.
    pub async fn run_step(
        &self,
        index: usize,
        action: Action,
        rng: &mut impl Rng,
        cancel: &CancelToken,
    ) -> Result<(), StepEnd> {
        // TODO: mint or reuse the key; loop: log the attempt, build the StepContext (with
        // client_retries: 0), race `tokio::time::timeout(limit, call)` against
        // `cancel.cancelled()` in `tokio::select!`, then on failure ask `plan_retry`, log, and
        // sleep with `tokio::time::sleep_until(next_retry_at)` (raced against the cancel too).
        let _ = (rng, cancel);
        todo!("Saga::run_step(step {index}, {action:?})")
    }

    /// Runs the saga: each step in order, through [`Saga::run_step`]; when a step gives up, its
    /// own policy's [`OnExhausted`] decides the end. Returns the saga's terminal status, which
    /// is also written to the log.
    pub async fn run(&self, rng: &mut impl Rng, cancel: &CancelToken) -> SagaStatus {
        // TODO: `self.log.update(|log| log.status = …)` for the saga's status; compensation
        // walks the completed steps newest first: `for index in (0..failed).rev()`.
        let _ = (rng, cancel);
        todo!(
            "Saga::run(saga {:?} with {} steps)",
            self.id,
            self.steps.len()
        )
    }
}
