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
//! 1. [`Saga::compensate_step`]: undo step `index`, retrying until its compensation succeeds or
//!    gives up.
//!    - A compensation is a request of its own, with its own idempotency key derived from the
//!      step's and a reference to the execution it undoes: the context of `Action::Compensate`
//!      (`self.context`) carries both. Every attempt of it carries the same key and its
//!      number, counted from 1.
//!    - The log tells the truth at every moment: while an attempt is in flight (or the next one
//!      is awaited) the record says `Compensating` with the number of attempts started; every
//!      failure leaves its message in `last_error`; the end is `Compensated`, or
//!      `CompensationFailed` (its work still stands) when it gives up.
//!    - A transient failure is retried after a wait of `self.policy.delay(retry, rng)` on tokio's
//!      clock, `retry` counted from 0 (the wait after the first failure uses 0), at most
//!      `self.policy.max_attempts` calls in all. A permanent failure is not retried. Giving up
//!      returns the last error, with no wait (and no draw from `rng`) after it.
//! 2. [`Saga::run`]: execute the steps in order, each **once** (this chapter does not retry
//!    forward steps; chapter 22 does), and log each outcome (`Succeeded`; `Failed` with its
//!    `last_error`). At the first failure, of any kind, compensate exactly the steps that
//!    completed before it, **newest first**: never the failed step, never a step that did not
//!    run. A compensation that gives up does not stop the others: undo everything that can be
//!    undone, then hand over. Return:
//!    - `SagaOutcome::Completed` if every step succeeded;
//!    - `SagaOutcome::Compensated { failed, compensated }` if every compensation succeeded;
//!    - `SagaOutcome::NeedsHuman { failed, stuck, compensated }` if any gave up, each stuck step
//!      with its last error; both lists in the order the compensations ran.
//!
//! Given, ready-made: [`error`] (the error and its kind), [`step`] (the [`Step`] trait and its
//! context), [`log`] (the saga log), [`saga`] (the [`Saga`], its [`CompensationPolicy`] and
//! [`SagaOutcome`]), and [`stubs`] (inventory, payment and shipping stubs that write every call
//! into a shared journal). `tests/visible.rs` shows them in use, with a mockall mock of a step;
//! `examples/timeline.rs` runs the story of the book's prediction box (§21.8) on your code.

use rand::Rng;

pub mod error;
pub mod log;
pub mod saga;
pub mod step;
pub mod stubs;

pub use error::{ErrorKind, StepError};
pub use log::{SagaLog, StepRecord, StepStatus};
pub use saga::{CompensationPolicy, Saga, SagaOutcome, StepFailure};
pub use step::{Action, BoxFuture, Step, StepContext};

impl Saga {
    /// Runs the saga: executes each step once, in order; at the first failure, compensates the
    /// steps that completed before it, newest first, and says how the saga ended.
    pub async fn run(&self, rng: &mut impl Rng) -> SagaOutcome {
        // TODO: the forward run, then (after a failure) the way back; see task 2 above.
        let _ = rng;
        todo!(
            "Saga::run(saga = {:?}, steps.len() = {})",
            self.id,
            self.steps.len()
        )
    }

    /// Compensates step `index` until it succeeds or gives up, keeping its log record true.
    /// Transient errors are retried with the policy's backoff, at most `max_attempts` calls in
    /// all; a permanent error is not retried.
    pub async fn compensate_step(&self, index: usize, rng: &mut impl Rng) -> Result<(), StepError> {
        // TODO: the retry loop of one compensation; see task 1 above.
        let _ = rng;
        todo!(
            "Saga::compensate_step(index = {index}) on saga {:?}",
            self.id
        )
    }
}
