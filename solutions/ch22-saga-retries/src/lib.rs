//! Chapter 22 — Retry design inside a saga: the reference solution.
//!
//! The orchestrator is the one place that retries. [`classify_status`] decides which HTTP
//! failures are worth another attempt, [`full_jitter`] and [`plan_retry`] decide when (or
//! whether) the next attempt comes, [`Saga::run_step`] runs one step's attempts and keeps its
//! log line true, and [`Saga::run`] runs the steps in order and, when one gives up, does what
//! that step's policy says: compensate, stop, or hand the saga to a human.

use std::time::Duration;

use rand::{Rng, RngExt};
use tokio::time::Instant;

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

#[cfg(test)]
mod worked_example;

// ANCHOR: classify_status
/// Whether waiting can fix an HTTP error response.
///
/// 408 Request Timeout, 429 Too Many Requests and the 5xx server errors are transient (except
/// 501 Not Implemented and 505 HTTP Version Not Supported, which no wait will change); with a
/// `Retry-After` value they become [`ErrorKind::RetryAfter`]. A status outside 100..=599 is
/// invalid, and RFC 9110 has it handled as a 5xx. Every other status is permanent: 400 Bad
/// Request, 401 Unauthorized, 403 Forbidden, 404 Not Found and the rest of 4xx describe the
/// request, and the same request will fail the same way.
pub fn classify_status(status: u16, retry_after: Option<Duration>) -> ErrorKind {
    let status = if (100..=599).contains(&status) {
        status
    } else {
        500
    };
    let transient = match status {
        408 | 429 => true,
        501 | 505 => false,
        500..=599 => true,
        _ => false,
    };
    match (transient, retry_after) {
        (false, _) => ErrorKind::Permanent,
        (true, None) => ErrorKind::Transient,
        (true, Some(delay)) => ErrorKind::RetryAfter(delay),
    }
}
// ANCHOR_END: classify_status

// ANCHOR: full_jitter
/// Full jitter: a delay drawn uniformly from `[0, min(cap, base · 2^retry)]`, where `retry` is
/// 0 for the sleep after the first failure. Never overflows, whatever `retry` is.
pub fn full_jitter(retry: u32, base: Duration, cap: Duration, rng: &mut impl Rng) -> Duration {
    // Doubling stops at the cap (or a zero base): exact for every retry, and no power of two
    // is computed that could overflow.
    let mut ceiling = base.min(cap);
    for _ in 0..retry {
        if ceiling.is_zero() || ceiling == cap {
            break;
        }
        ceiling = ceiling.saturating_mul(2).min(cap);
    }
    rng.random_range(Duration::ZERO..=ceiling)
}
// ANCHOR_END: full_jitter

// ANCHOR: plan_retry
/// What to do after attempt number `attempt` (counted from 1) failed with `error`, `elapsed`
/// after the step's first attempt started.
///
/// A permanent error is not retried; after `max_attempts` attempts there is no other; the wait
/// is the server's `Retry-After` (capped at `max_hint`) if it sent one, else a full-jitter draw;
/// and a wait that would end at or past `total_budget` is not started, because the next attempt
/// could not start in time. For a hint, the budget sees the hint as the server sent it.
pub fn plan_retry(
    policy: &StepPolicy,
    attempt: u32,
    error: &StepError,
    elapsed: Duration,
    rng: &mut impl Rng,
) -> Plan {
    // What the server asked for, and what we will wait.
    let (asked, delay) = match error.kind {
        ErrorKind::Permanent => return Plan::GiveUp(GiveUp::Permanent),
        _ if attempt >= policy.max_attempts => return Plan::GiveUp(GiveUp::AttemptsUsedUp),
        ErrorKind::RetryAfter(hint) => (hint, hint.min(policy.max_hint)),
        ErrorKind::Transient => {
            let delay = full_jitter(attempt - 1, policy.base, policy.cap, rng);
            (delay, delay)
        }
    };
    if elapsed.saturating_add(asked) >= policy.total_budget {
        return Plan::GiveUp(GiveUp::OutOfTime);
    }
    Plan::RetryIn(delay)
}
// ANCHOR_END: plan_retry

impl Saga {
    // ANCHOR: run_step
    /// Runs `action` of step number `index` (counted from 0) until it succeeds or gives up,
    /// keeping the step's log record true at every moment.
    ///
    /// - One idempotency key per step, minted on first use and stored in the record; every
    ///   attempt of the execution carries it. A compensation is a request of its own: every
    ///   attempt of it carries [`undo_key`] of the step's key, and names the step's key as what
    ///   it undoes.
    /// - The step's client must not retry on its own: `client_retries = 0`.
    /// - Each attempt is cut off after `min(per_attempt_timeout, what is left of the budget)`.
    /// - Before an attempt: `attempt_count`, the in-flight status, no `next_retry_at`. After a
    ///   failure: `last_error`, and either the waiting status with `next_retry_at` (then the
    ///   sleep) or the given-up status.
    /// - Giving up says whether an attempt timed out: the action may have taken effect.
    /// - The cancel token stops an attempt or a sleep at once.
    pub async fn run_step(
        &self,
        index: usize,
        action: Action,
        rng: &mut impl Rng,
        cancel: &CancelToken,
    ) -> Result<(), StepEnd> {
        let step = &self.steps[index];
        let policy = &step.policy;
        // One key per step, minted once and kept in the log: every attempt reuses it. The
        // compensation has its own, derived from it, and names it as the work it undoes.
        let key = self
            .log
            .step(index)
            .idempotency_key
            .unwrap_or_else(|| format!("{}:{}", self.id, step.name()));
        self.log
            .update_step(index, |record| record.idempotency_key = Some(key.clone()));
        let (request_key, undoes) = match action {
            Action::Execute => (key, None),
            Action::Compensate => (undo_key(&key), Some(key)),
        };
        let started = Instant::now();

        let mut attempt = 0;
        let mut maybe_done = false;
        loop {
            attempt += 1;
            self.log.update_step(index, |record| {
                record.attempt_count = attempt;
                record.status = action.in_flight();
                record.next_retry_at = None;
            });
            let ctx = StepContext {
                client_retries: 0,
                undoes: undoes.clone(),
                ..StepContext::new(&self.id, step.name(), request_key.clone(), attempt)
            };
            let limit = policy
                .per_attempt_timeout
                .min(policy.total_budget.saturating_sub(started.elapsed()));
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(self.cancelled(index, action)),
                outcome = tokio::time::timeout(limit, step.call(action, &ctx)) => {
                    outcome.unwrap_or_else(|_| {
                        // No answer: the call may have taken effect before it was cut off.
                        maybe_done = true;
                        Err(StepError::timed_out(limit))
                    })
                }
            };
            let error = match outcome {
                Ok(()) => {
                    self.log
                        .update_step(index, |record| record.status = action.done());
                    return Ok(());
                }
                Err(error) => error,
            };

            match plan_retry(policy, attempt, &error, started.elapsed(), rng) {
                Plan::GiveUp(_) => {
                    self.log.update_step(index, |record| {
                        record.status = action.gave_up();
                        record.last_error = Some(error.message.clone());
                    });
                    return Err(StepEnd::GaveUp { error, maybe_done });
                }
                Plan::RetryIn(delay) => {
                    let next_attempt_at = Instant::now() + delay;
                    self.log.update_step(index, |record| {
                        record.status = action.waiting();
                        record.next_retry_at = Some(next_attempt_at);
                        record.last_error = Some(error.message.clone());
                    });
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(self.cancelled(index, action)),
                        () = tokio::time::sleep_until(next_attempt_at) => {}
                    }
                }
            }
        }
    }
    // ANCHOR_END: run_step

    /// Marks `action` of step `index` as stopped by the cancel token.
    fn cancelled(&self, index: usize, action: Action) -> StepEnd {
        self.log.update_step(index, |record| {
            record.status = action.gave_up();
            record.next_retry_at = None;
            record.last_error = Some("cancelled".to_owned());
        });
        StepEnd::Cancelled
    }

    // ANCHOR: run
    /// Runs the saga: each step in order, through [`Saga::run_step`]. When a step gives up, its
    /// own policy's [`OnExhausted`] decides the end. Returns the saga's terminal status, which
    /// is also the log's.
    pub async fn run(&self, rng: &mut impl Rng, cancel: &CancelToken) -> SagaStatus {
        self.set_status(SagaStatus::Running);
        for index in 0..self.steps.len() {
            let maybe_done = match self.run_step(index, Action::Execute, rng, cancel).await {
                Ok(()) => continue,
                Err(StepEnd::Cancelled) => return self.set_status(SagaStatus::Cancelled),
                Err(StepEnd::GaveUp { maybe_done, .. }) => maybe_done,
            };
            // A step whose answer was lost may have done its work: it counts as done.
            let done = if maybe_done { index + 1 } else { index };
            let end = match self.steps[index].policy.on_exhausted {
                OnExhausted::Stop if maybe_done => SagaStatus::NeedsHuman,
                OnExhausted::Stop => SagaStatus::Failed,
                OnExhausted::HandToHuman => SagaStatus::NeedsHuman,
                OnExhausted::Compensate => self.compensate(done, rng, cancel).await,
            };
            return self.set_status(end);
        }
        self.set_status(SagaStatus::Completed)
    }

    /// Undoes steps `0 .. done`, newest first, each retried under its own policy. A
    /// compensation that gives up does not stop the others: everything that can be undone is
    /// undone, and then the saga goes to a person.
    async fn compensate(
        &self,
        done: usize,
        rng: &mut impl Rng,
        cancel: &CancelToken,
    ) -> SagaStatus {
        self.set_status(SagaStatus::Compensating);
        let mut end = SagaStatus::Compensated;
        for index in (0..done).rev() {
            match self.run_step(index, Action::Compensate, rng, cancel).await {
                Ok(()) => {}
                Err(StepEnd::Cancelled) => return SagaStatus::Cancelled,
                Err(StepEnd::GaveUp { .. }) => end = SagaStatus::NeedsHuman,
            }
        }
        end
    }
    // ANCHOR_END: run

    /// Writes the saga's status to the log and returns it.
    fn set_status(&self, status: SagaStatus) -> SagaStatus {
        self.log.update(|log| log.status = status);
        status
    }
}
