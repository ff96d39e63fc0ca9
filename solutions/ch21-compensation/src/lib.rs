//! Chapter 21 — Sagas and compensation: the reference solution.
//!
//! [`Saga::run`] executes the steps in order. When one fails, the saga cannot go forward, and
//! it cannot roll back either (every completed step is committed in its own service), so it
//! undoes them: it compensates each completed step, newest first, with
//! [`Saga::compensate_step`]. A compensation must succeed, so a transient failure of it is
//! retried with capped full-jitter backoff, up to the policy's limit; one that still fails, or
//! fails permanently, is left for a human, and the others are undone all the same.

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

#[cfg(test)]
mod worked_example;

impl Saga {
    // ANCHOR: run
    /// Runs the saga: executes each step once, in order. If every step succeeds, the saga is
    /// [`SagaOutcome::Completed`]. The first failure, transient or permanent, ends the forward
    /// run (this chapter does not retry forward steps), and the steps completed before it are
    /// compensated, newest first.
    pub async fn run(&self, rng: &mut impl Rng) -> SagaOutcome {
        for (index, step) in self.steps.iter().enumerate() {
            match step.execute(&self.context(index, Action::Execute, 1)).await {
                Ok(()) => self.log.set_status(index, StepStatus::Succeeded),
                Err(error) => {
                    self.log.update(index, |record| {
                        record.status = StepStatus::Failed;
                        record.last_error = Some(error.message.clone());
                    });
                    let failed = StepFailure {
                        step: step.name().to_owned(),
                        error,
                    };
                    return self.compensate_before(index, failed, rng).await;
                }
            }
        }
        SagaOutcome::Completed
    }

    /// Compensates the steps before `failed_index` (exactly the ones that completed), newest
    /// first. A compensation that gives up does not stop the others: everything that can be
    /// undone is undone, and then the saga is handed to a human.
    async fn compensate_before(
        &self,
        failed_index: usize,
        failed: StepFailure,
        rng: &mut impl Rng,
    ) -> SagaOutcome {
        let mut compensated = Vec::new();
        let mut stuck = Vec::new();
        for index in (0..failed_index).rev() {
            let step = self.step_name(index).to_owned();
            match self.compensate_step(index, rng).await {
                Ok(()) => compensated.push(step),
                Err(error) => stuck.push(StepFailure { step, error }),
            }
        }
        if stuck.is_empty() {
            SagaOutcome::Compensated {
                failed,
                compensated,
            }
        } else {
            SagaOutcome::NeedsHuman {
                failed,
                stuck,
                compensated,
            }
        }
    }
    // ANCHOR_END: run

    // ANCHOR: compensate_step
    /// Compensates step `index` until it succeeds or gives up, keeping its log record true.
    ///
    /// A transient failure is retried after a [`CompensationPolicy::delay`] on tokio's clock,
    /// up to `max_attempts` calls in all; a permanent failure is not retried. Giving up marks
    /// the step `compensation_failed` and returns the last error, without a final wait.
    pub async fn compensate_step(&self, index: usize, rng: &mut impl Rng) -> Result<(), StepError> {
        let step = &self.steps[index];
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.log.update(index, |record| {
                record.status = StepStatus::Compensating;
                record.compensation_attempts = attempt;
            });
            // The compensation is a request of its own: its context carries its own key.
            let ctx = self.context(index, Action::Compensate, attempt);
            let error = match step.compensate(&ctx).await {
                Ok(()) => {
                    self.log.set_status(index, StepStatus::Compensated);
                    return Ok(());
                }
                Err(error) => error,
            };
            let message = error.message.clone();
            self.log
                .update(index, |record| record.last_error = Some(message));

            let attempts_left = attempt < self.policy.max_attempts;
            if error.kind == ErrorKind::Permanent || !attempts_left {
                self.log.set_status(index, StepStatus::CompensationFailed);
                return Err(error);
            }
            tokio::time::sleep(self.policy.delay(attempt - 1, rng)).await;
        }
    }
    // ANCHOR_END: compensate_step
}
