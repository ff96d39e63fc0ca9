//! Checks of which failures the orchestrator retries, and how many times.

use std::time::Duration;

use exercise::{Action, OnExhausted, Saga, SagaStatus, StepPolicy, StepStatus};

use super::fixture::{Act, Recorder, policy, run};
use super::support::show;

/// `max_attempts` under the checks' policy, stopping when they run out, with a budget of an hour
/// so that 300 attempts (waits of at most 1 s) fit in it.
fn stopping(max_attempts: u32) -> StepPolicy {
    StepPolicy {
        max_attempts,
        total_budget: Duration::from_secs(3_600),
        on_exhausted: OnExhausted::Stop,
        ..policy()
    }
}

#[tokio::test(start_paused = true)]
async fn one_place() {
    // 300: beyond the caps a loop might hide (10, 100, a u8 counter's 255).
    for max_attempts in [3, 5, 1, 300] {
        let step = Recorder::scripted("shipping", [Act::Transient]);
        let saga = Saga::new("order-1").step(step.clone(), stopping(max_attempts));
        run(&saga, 1).await;
        let client_retries: Vec<u32> = step
            .calls()
            .iter()
            .map(|call| call.ctx.client_retries)
            .collect();
        assert!(
            step.service_calls() == max_attempts as usize,
            "a step whose service always fails transiently, with max_attempts = {max_attempts}, \
             must reach that service exactly {max_attempts} times; yours reached it {} times in \
             {} attempt(s), with client_retries = {client_retries:?} in the StepContexts. Each \
             retrying layer multiplies the others: the step's client library must not retry \
             on its own (client_retries: 0), and the orchestrator must stop after max_attempts",
            step.service_calls(),
            step.attempts(),
        );
    }

    // A compensation is retried by the same loop: its client must not retry on its own either.
    // Payment's refund always fails transiently; its execution is one call that succeeds.
    for max_attempts in [3, 1, 300] {
        let payment = Recorder::build("payment", Duration::ZERO, [Act::Ok], [Act::Transient]);
        let shipping = Recorder::scripted("shipping", [Act::Permanent]);
        let saga = Saga::new("order-1")
            .step(payment.clone(), compensating(max_attempts))
            .step(shipping.clone(), policy());
        let run = run(&saga, 1).await;
        let refunds = payment.calls_of(Action::Compensate);
        let client_retries: Vec<u32> = refunds.iter().map(|call| call.ctx.client_retries).collect();
        let refund_calls = payment.service_calls().saturating_sub(payment.attempts());
        assert!(
            refund_calls == max_attempts as usize,
            "payment's refund always fails transiently and payment's policy allows \
             max_attempts = {max_attempts}: the refund must reach the payment service exactly \
             {max_attempts} times; yours reached it {refund_calls} times in {} attempt(s), with \
             client_retries = {client_retries:?} in the compensation's StepContexts (the saga \
             ended {:?}). A compensation goes through the same retry loop as an execution, and \
             every StepContext says client_retries: 0",
            refunds.len(),
            run.status,
        );
    }
}

/// Payment's policy for the compensation case of [`one_place`]: `max_attempts`, compensate,
/// a budget of an hour.
fn compensating(max_attempts: u32) -> StepPolicy {
    StepPolicy {
        max_attempts,
        total_budget: Duration::from_secs(3_600),
        ..policy()
    }
}

#[tokio::test(start_paused = true)]
async fn permanent_not_retried() {
    let cases = [
        (vec![Act::Permanent], 1, "fails permanently at once"),
        (
            vec![Act::Transient, Act::Permanent],
            2,
            "fails transiently, then permanently",
        ),
    ];
    for (script, expected, case) in cases {
        let step = Recorder::scripted("payment", script);
        let saga = Saga::new("order-2").step(step.clone(), stopping(5));
        let run = run(&saga, 2).await;
        let waited_after = run.ended
            - step
                .attempt_instants()
                .last()
                .copied()
                .unwrap_or(run.started);
        assert!(
            step.attempts() == expected && waited_after.is_zero(),
            "a step that {case} must be attempted {expected} time(s) and given up on at once \
             (max_attempts = 5): a permanent error will not go away by waiting. Yours made {} \
             attempt(s) and returned {} after the last one",
            step.attempts(),
            show(waited_after),
        );
        assert_eq!(
            run.status,
            SagaStatus::Failed,
            "after a permanent error, a step whose policy says Stop ends the saga Failed; yours \
             ended it {:?}",
            run.status,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn transient_until_success() {
    let payment = Recorder::scripted("payment", [Act::Transient, Act::Transient, Act::Ok]);
    let shipping = Recorder::new("shipping");
    let saga = Saga::new("order-3")
        .step(payment.clone(), stopping(5))
        .step(shipping.clone(), stopping(5));
    let run = run(&saga, 3).await;
    let record = &run.final_log().steps[0];
    assert!(
        payment.attempts() == 3
            && shipping.attempts() == 1
            && record.status == StepStatus::Succeeded
            && run.status == SagaStatus::Completed,
        "a payment step that fails twice transiently and then succeeds (max_attempts = 5) \
         must be attempted 3 times and end Succeeded, then shipping runs once and the saga ends \
         Completed; yours made {} payment attempt(s) (status {:?}), {} shipping attempt(s), \
         and the saga ended {:?}",
        payment.attempts(),
        record.status,
        shipping.attempts(),
        run.status,
    );
}
