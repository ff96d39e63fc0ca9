//! Checks that the cancel token stops a saga at once, during a sleep or during an attempt.

use std::time::Duration;

use exercise::{CancelToken, OnExhausted, Saga, SagaStatus, StepPolicy, StepStatus};

use super::fixture::{Act, Recorder, SEC, TICK, policy, run_with};
use super::support::show;

/// A token that a spawned task cancels `after` from now, on tokio's clock.
fn cancelled_after(after: Duration) -> CancelToken {
    let token = CancelToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        canceller.cancel();
    });
    token
}

async fn cancelled_run(script: Act, what: &str) {
    let policy = StepPolicy {
        per_attempt_timeout: 5 * SEC,
        on_exhausted: OnExhausted::Compensate,
        ..policy()
    };
    let first = Recorder::new("inventory");
    let step = Recorder::scripted("payment", [script]);
    let saga = Saga::new("order-1")
        .step(first.clone(), policy.clone())
        .step(step.clone(), policy);
    let cancel_at = 3 * SEC;
    let token = cancelled_after(cancel_at);
    let run = run_with(&saga, 1, &token, Duration::from_secs(600)).await;
    let (status, ended) = run.as_ref().map_or((None, None), |run| {
        (Some(run.status), Some(run.at(run.ended)))
    });
    let record = saga.log().step(1);
    assert!(
        status == Some(SagaStatus::Cancelled)
            && ended.is_some_and(|ended| ended >= cancel_at && ended <= cancel_at + TICK)
            && step.attempts() == 1
            && first.calls().len() == 1,
        "the payment step {what}; the token is cancelled 3 s in, so the saga must stop at \
         once: return Cancelled at 3 s after 1 payment attempt, with nothing compensated. Race \
         the attempt and the sleep against cancel.cancelled() with tokio::select!. Yours \
         returned {status:?} at {} after {} payment attempt(s) and {} inventory call(s)",
        ended.map_or("no time at all (it never returned)".to_owned(), show),
        step.attempts(),
        first.calls().len(),
    );
    assert!(
        record.status == StepStatus::Failed
            && record.last_error.as_deref() == Some("cancelled")
            && record.next_retry_at.is_none(),
        "a cancelled step's record must say status Failed with last_error \"cancelled\", and \
         no next_retry_at: no attempt is coming; yours says {:?} with {:?}, next_retry_at {:?}",
        record.status,
        record.last_error,
        record.next_retry_at,
    );
}

#[tokio::test(start_paused = true)]
async fn during_sleep() {
    cancelled_run(
        Act::RetryAfter(10 * SEC),
        "fails at once with Retry-After: 10 s, so the orchestrator sleeps",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn during_attempt() {
    cancelled_run(Act::Hang, "hangs (its timeout is 5 s)").await;
}

#[tokio::test(start_paused = true)]
async fn during_compensation() {
    // Shipping fails for good at once; payment's refund answers 503 with Retry-After: 10 s, so
    // the orchestrator sleeps in the middle of a compensation when the token fires.
    let inventory = Recorder::new("inventory");
    let payment = Recorder::build(
        "payment",
        Duration::ZERO,
        [Act::Ok],
        [Act::RetryAfter(10 * SEC), Act::Ok],
    );
    let shipping = Recorder::scripted("shipping", [Act::Permanent]);
    let saga = Saga::new("order-2")
        .step(inventory.clone(), policy())
        .step(payment.clone(), policy())
        .step(shipping.clone(), policy());
    let cancel_at = 3 * SEC;
    let token = cancelled_after(cancel_at);
    let run = run_with(&saga, 2, &token, Duration::from_secs(600)).await;
    let (status, ended) = run.as_ref().map_or((None, None), |run| {
        (Some(run.status), Some(run.at(run.ended)))
    });
    let record = saga.log().step(1);
    assert!(
        status == Some(SagaStatus::Cancelled)
            && ended.is_some_and(|ended| ended >= cancel_at && ended <= cancel_at + TICK)
            && inventory.calls_of(exercise::Action::Compensate).is_empty(),
        "the payment's compensation sleeps 10 s (Retry-After) when the token is cancelled 3 s \
         in: the saga must stop at once, return Cancelled at 3 s and compensate nothing more. \
         Yours returned {status:?} at {} and compensated inventory {} time(s)",
        ended.map_or("no time at all (it never returned)".to_owned(), show),
        inventory.calls_of(exercise::Action::Compensate).len(),
    );
    assert!(
        record.status == StepStatus::CompensationFailed
            && record.last_error.as_deref() == Some("cancelled")
            && record.next_retry_at.is_none(),
        "a compensation stopped by the cancel token did not undo its step: the record must say \
         CompensationFailed (its work still stands), with last_error \"cancelled\" and no \
         next_retry_at (no attempt is coming); yours says {:?} with {:?}, next_retry_at {:?}",
        record.status,
        record.last_error,
        record.next_retry_at,
    );
}

/// A step that cancels the saga's token while it answers `Ok`.
struct CancelsAsItSucceeds(CancelToken);

impl exercise::Step for CancelsAsItSucceeds {
    fn name(&self) -> &str {
        "inventory"
    }

    fn execute(
        &self,
        _ctx: &exercise::StepContext,
    ) -> impl Future<Output = Result<(), exercise::StepError>> + Send {
        self.0.cancel();
        std::future::ready(Ok(()))
    }

    fn compensate(
        &self,
        _ctx: &exercise::StepContext,
    ) -> impl Future<Output = Result<(), exercise::StepError>> + Send {
        std::future::ready(Ok(()))
    }
}

#[tokio::test(start_paused = true)]
async fn cancel_wins_ties() {
    // When payment's first attempt starts, the token is already cancelled and the attempt (which
    // answers at once) is ready too: the cancel must win, every time.
    for seed in 0..32 {
        let token = CancelToken::new();
        let payment = Recorder::new("payment");
        let saga = Saga::new("order-9")
            .step(CancelsAsItSucceeds(token.clone()), policy())
            .step(payment.clone(), policy());
        let run = run_with(&saga, seed, &token, Duration::from_secs(60)).await;
        let status = run.as_ref().map(|run| run.status);
        assert!(
            status == Some(SagaStatus::Cancelled) && payment.attempts() == 0,
            "the token was cancelled as inventory succeeded; when payment's attempt would start, \
             the cancel and the attempt are both ready, and the cancel must win (`biased;` in \
             tokio::select!, cancel branch first): the saga ends Cancelled and payment is never \
             called. In run {} of 32 yours ended {status:?} after {} payment attempt(s)",
            seed + 1,
            payment.attempts(),
        );
    }
}
