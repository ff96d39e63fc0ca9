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
//!    carried a `Retry-After` of `d`), and so is a status outside `100..=599`, which RFC 9110
//!    has handled as a 5xx; 400, 401, 403, 404 and the rest are permanent, hint or not. (501 and
//!    505 may be kept permanent: the checks leave them alone.)
//! 2. [`full_jitter`]: a delay drawn uniformly from `[0, min(cap, base · 2^retry)]`, with
//!    `retry = 0` for the sleep after the first failure. No overflow, whatever `retry` is.
//! 3. [`plan_retry`]: the decision after attempt `attempt` failed, `elapsed` into the step. A
//!    permanent error is never retried; there is no attempt after the `max_attempts`-th; the wait
//!    is the server's `Retry-After` if it sent one (followed for at most `max_hint`), else a
//!    full-jitter delay; and no wait is started that would end at or past `total_budget` (for a
//!    hint, the budget sees the hint as the server sent it, before the cap). The [`GiveUp`]
//!    reason says which rule ended the step.
//! 4. [`Saga::run_step`]: run one step's `action` (execute or compensate) until it succeeds or
//!    gives up:
//!    - one idempotency key per step, `"{saga id}:{step name}"`, stored in the step's log
//!      record the first time and reused on every attempt of its execution; a compensation is a
//!      request of its own, so every attempt of it carries its own key, [`undo_key`] of the
//!      step's, and names the step's key in `undoes` (book §21.5, rule 1);
//!    - `client_retries: 0` in every [`StepContext`]: the step's client library must not retry
//!      on its own (its default, [`DEFAULT_CLIENT_RETRIES`], would multiply your attempts);
//!    - each attempt cut off after `min(per_attempt_timeout, what is left of total_budget)`,
//!      a timeout being the transient [`StepError::timed_out`] whose outcome is unknown;
//!    - the log (`self.log.update_step`) true at every moment: during an attempt,
//!      `attempt_count` = its number, `status` = `action.in_flight()`, no `next_retry_at`;
//!      while waiting for the next attempt, `status` = `action.waiting()`, `next_retry_at` = when
//!      it starts (written before the wait begins), `last_error` = the failure's message; after
//!      success `action.done()`; after giving up `action.gave_up()` with the last error;
//!    - giving up returns `StepEnd::GaveUp { error, maybe_done }`, the last error and whether
//!      any attempt timed out;
//!    - the `cancel` token stops an attempt or a sleep at once: the step is marked
//!      `action.gave_up()` with `last_error` "cancelled" and no `next_retry_at` (no attempt is
//!      coming), and the result is `Err(StepEnd::Cancelled)`.
//! 5. [`Saga::run`]: the saga's status in the log is `Running` while the steps run in order,
//!    then its terminal status, which `run` also returns. When a step gives up, **its** policy's
//!    `on_exhausted` decides: `Compensate` undoes every step that may have done its work,
//!    newest first, with `run_step` (status `Compensating` meanwhile): the completed steps, and
//!    the step that gave up too if an attempt of it timed out (book §21.5, rule 3); a
//!    compensation that gives up does not stop the others (rule 2), and the saga ends
//!    `Compensated`, or `NeedsHuman` if any gave up. `Stop` ends it `Failed`, undoing nothing,
//!    unless the step's work may stand (a timed-out attempt): then `NeedsHuman`. `HandToHuman`
//!    ends it `NeedsHuman`. All steps done: `Completed`. Cancelled: `Cancelled`.
//!
//! Given, ready-made: the [`Step`] trait and its [`StepContext`]; [`StepError`]; the policy
//! types ([`StepPolicy`], [`OnExhausted`], [`Plan`], [`GiveUp`]); the [`Saga`] and its log
//! ([`SharedLog`], [`StepRecord`]); [`CancelToken`]; [`stubs`] with the three services and the
//! checkout saga; [`timeline::Timeline`], which prints a saga's log as it changes.
//! `tests/visible.rs` shows a mock step (mockall); `examples/checkout.rs` runs the checkout.

use std::time::Duration;

use rand::Rng;
// rand 0.10's `random_range` is a method of `RngExt`: the draws you write use it.
#[allow(unused_imports)]
use rand::RngExt;

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
pub use step::{DEFAULT_CLIENT_RETRIES, Step, StepContext, undo_key};

/// Whether waiting can fix an HTTP error response: [`ErrorKind::Transient`] for 408, 429 and
/// the 5xx statuses ([`ErrorKind::RetryAfter`] when `retry_after` is given), else
/// [`ErrorKind::Permanent`].
pub fn classify_status(status: u16, retry_after: Option<Duration>) -> ErrorKind {
    // TODO: task 1.
    todo!("classify_status(status = {status}, retry_after = {retry_after:?})")
}

/// Full jitter: a delay drawn uniformly from `[0, min(cap, base · 2^retry)]`, where `retry` is
/// 0 for the sleep after the first failure.
pub fn full_jitter(retry: u32, base: Duration, cap: Duration, rng: &mut impl Rng) -> Duration {
    // TODO: task 2.
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
    // TODO: task 3.
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
        // TODO: task 4.
        let _ = (rng, cancel);
        todo!("Saga::run_step(step {index}, {action:?})")
    }

    /// Runs the saga: each step in order, through [`Saga::run_step`]; when a step gives up, its
    /// own policy's [`OnExhausted`] decides the end. Returns the saga's terminal status, which
    /// is also written to the log.
    pub async fn run(&self, rng: &mut impl Rng, cancel: &CancelToken) -> SagaStatus {
        // TODO: task 5.
        let _ = (rng, cancel);
        todo!(
            "Saga::run(saga = {:?}, steps.len() = {})",
            self.id,
            self.steps.len()
        )
    }
}
