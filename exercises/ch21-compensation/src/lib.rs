//! # Chapter 21 — Sagas and compensation
//!
//! Book: `book/src/ch21-compensation.md` (run `cargo xtask book --open`).
//! Check your work: `cargo xtask check ch21`. Stuck? `cargo xtask hint ch21`.
//!
//! A checkout saga reserves stock, charges a card and books a shipment, each a local transaction
//! in its own service. When a step fails, nothing can be rolled back: the steps that completed
//! must be undone by compensating actions (release, refund, cancel). You write the orchestrator
//! that does it.
//!
//! ## Your task
//!
//! 1. [`Saga::compensate_step`]: call step `index`'s `compensate` until it succeeds.
//!    - Before each attempt, set the step's log record to `Compensating` and
//!      `compensation_attempts` to the attempt's number (counted from 1); pass the same number
//!      in the context (`self.context(index, attempt)`).
//!    - On `Ok`: mark the step `Compensated` and return `Ok(())`.
//!    - On `Err`: write its message into `last_error`. A **transient** error is retried after
//!      `self.policy.delay(retry, rng)` (`retry` = 0 after the first failure), slept with
//!      `tokio::time::sleep`, up to `self.policy.max_attempts` calls in all. A **permanent**
//!      error, or the last allowed attempt, gives up at once (no wait): mark the step
//!      `CompensationFailed` and return that last error.
//! 2. [`Saga::run`]: execute the steps in order, each **once** (this chapter does not retry
//!    forward steps; chapter 22 does). Mark each success `Succeeded`. At the first failure,
//!    of any kind, mark the step `Failed` with its `last_error`, then compensate the steps that
//!    completed before it, **newest first** — never the failed step, never a step that did not
//!    run. A compensation that gives up does not stop the others. Return:
//!    - `SagaOutcome::Completed` if every step succeeded;
//!    - `SagaOutcome::Compensated { failed, compensated }` if every compensation succeeded;
//!    - `SagaOutcome::NeedsHuman { failed, stuck, compensated }` if any gave up.
//!
//! Given, ready-made: [`error`] (the error and its kind), [`step`] (the [`Step`] trait and its
//! context), [`log`] (the saga log), [`saga`] (the [`Saga`], its [`CompensationPolicy`] and
//! [`SagaOutcome`]), and [`stubs`] (inventory, payment and shipping stubs that write every call
//! into a shared journal). `tests/visible.rs` shows them in use, with a mockall mock of a step;
//! `examples/timeline.rs` runs the book's worked example on your code.

use rand::Rng;

pub mod error;
pub mod log;
pub mod saga;
pub mod step;
pub mod stubs;

pub use error::{ErrorKind, StepError};
pub use log::{SagaLog, StepRecord, StepStatus};
pub use saga::{CompensationPolicy, Saga, SagaOutcome, StepFailure};
pub use step::{BoxFuture, Step, StepContext};

impl Saga {
    /// Runs the saga: executes each step once, in order; at the first failure, compensates the
    /// steps that completed before it, newest first, and says how the saga ended.
    pub async fn run(&self, rng: &mut impl Rng) -> SagaOutcome {
        // TODO: for each step in order, `execute` it with `self.context(index, 1)` and update
        // its log record. At the first `Err`, compensate steps `index - 1` down to 0 with
        // `self.compensate_step`, collecting who was undone and who got stuck.
        let _ = rng;
        todo!(
            "Saga::run(saga = {:?}, {} steps)",
            self.id,
            self.steps.len()
        )
    }

    /// Compensates step `index` until it succeeds or gives up, keeping its log record true.
    /// Transient errors are retried with the policy's backoff, at most `max_attempts` calls in
    /// all; a permanent error is not retried.
    pub async fn compensate_step(&self, index: usize, rng: &mut impl Rng) -> Result<(), StepError> {
        // TODO: loop over attempts 1, 2, …: log `Compensating` and the attempt number, call
        // `self.steps[index].compensate(..)`, then succeed, give up, or sleep
        // `self.policy.delay(attempt - 1, rng)` and try again.
        let _ = rng;
        todo!(
            "Saga::compensate_step(index = {index}) on saga {:?}",
            self.id
        )
    }
}
