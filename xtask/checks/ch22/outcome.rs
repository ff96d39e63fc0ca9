//! Checks of how a saga ends: completed, compensated in reverse order, stopped, or handed to a
//! human, as the policy of the step that gave up says.

use std::sync::Arc;
use std::time::Duration;

use exercise::{Action, OnExhausted, Saga, SagaStatus, StepPolicy, StepStatus};
use tokio::time::Instant;

use super::fixture::{Act, MS, Recorder, Run, policy, run};

fn with(on_exhausted: OnExhausted) -> StepPolicy {
    StepPolicy {
        on_exhausted,
        ..policy()
    }
}

const LATENCY: Duration = Duration::from_millis(10);

/// Steps named `names`, each answering `Ok` after 10 ms, except the last, which fails
/// permanently; the first step's policy is `first`, the failing step's is `failing`.
fn saga_failing_last(
    names: &[&str],
    first: OnExhausted,
    failing: OnExhausted,
) -> (Saga, Vec<Arc<Recorder>>) {
    let mut saga = Saga::new("order-1");
    let mut steps = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let last = index + 1 == names.len();
        let script = if last {
            vec![Act::Permanent]
        } else {
            vec![Act::Ok]
        };
        let step = Recorder::slow(name, LATENCY, script);
        let policy = match index {
            0 => with(first),
            _ if last => with(failing),
            _ => with(OnExhausted::Compensate),
        };
        saga = saga.step(step.clone(), policy);
        steps.push(step);
    }
    (saga, steps)
}

/// The names of the steps in the order their calls of `action` came.
fn order_of(steps: &[Arc<Recorder>], action: Action) -> Vec<String> {
    let mut calls: Vec<(Instant, String)> = steps
        .iter()
        .flat_map(|step| {
            step.calls_of(action)
                .into_iter()
                .map(|call| (call.at, step.label()))
                .collect::<Vec<_>>()
        })
        .collect();
    calls.sort();
    calls.into_iter().map(|(_, name)| name).collect()
}

fn statuses(run: &Run) -> Vec<(String, StepStatus)> {
    run.final_log()
        .steps
        .iter()
        .map(|record| (record.step.clone(), record.status))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn completes_in_order() {
    let steps: Vec<Arc<Recorder>> = ["inventory", "payment", "shipping"]
        .iter()
        .map(|name| Recorder::slow(name, LATENCY, [Act::Ok]))
        .collect();
    let mut saga = Saga::new("order-1");
    for step in &steps {
        saga = saga.step(step.clone(), policy());
    }
    let run = run(&saga, 1).await;
    let executed = order_of(&steps, Action::Execute);
    assert!(
        run.status == SagaStatus::Completed
            && run.final_log().status == SagaStatus::Completed
            && executed == ["inventory", "payment", "shipping"]
            && order_of(&steps, Action::Compensate).is_empty()
            && statuses(&run)
                .iter()
                .all(|(_, status)| *status == StepStatus::Succeeded),
        "three steps that all succeed must run once each, in order, and the saga must end \
         Completed (returned and in the log); yours ran {executed:?}, compensated {:?}, \
         returned {:?}, logged {:?} with steps {:?}",
        order_of(&steps, Action::Compensate),
        run.status,
        run.final_log().status,
        statuses(&run),
    );
}

#[tokio::test(start_paused = true)]
async fn compensates_in_reverse() {
    let names = ["inventory", "payment", "shipping", "invoice"];
    // The first step says Stop: the policy that counts is the failing step's, Compensate.
    let (saga, steps) = saga_failing_last(&names, OnExhausted::Stop, OnExhausted::Compensate);
    let run = run(&saga, 2).await;
    let compensated = order_of(&steps, Action::Compensate);
    assert_eq!(
        compensated,
        ["shipping", "payment", "inventory"],
        "the 4th step (invoice) fails permanently and its policy says Compensate: the steps \
         that completed must be undone newest first, shipping, payment, inventory, and the \
         failed step not at all (it never completed); yours compensated {compensated:?} \
         (the saga ended {:?})",
        run.status,
    );
    let expected = [
        ("inventory", StepStatus::Compensated),
        ("payment", StepStatus::Compensated),
        ("shipping", StepStatus::Compensated),
        ("invoice", StepStatus::Failed),
    ];
    let logged = statuses(&run);
    assert!(
        run.status == SagaStatus::Compensated
            && run.final_log().status == SagaStatus::Compensated
            && logged.iter().map(|(n, s)| (n.as_str(), *s)).eq(expected),
        "after compensating, the saga must end Compensated (returned and in the log), with \
         the three completed steps Compensated and the failed one Failed; yours returned {:?}, \
         logged {:?}, with steps {logged:?}",
        run.status,
        run.final_log().status,
    );
}

async fn ends_without_compensation(policy: OnExhausted, expected: SagaStatus) {
    let names = ["inventory", "payment"];
    let (saga, mut steps) = saga_failing_last(&names, OnExhausted::Compensate, policy);
    let shipping = Recorder::new("shipping");
    let saga = saga.step(shipping.clone(), with(OnExhausted::Compensate));
    steps.push(shipping.clone());
    let run = run(&saga, 3).await;
    let logged = statuses(&run);
    let expected_steps = [
        ("inventory", StepStatus::Succeeded),
        ("payment", StepStatus::Failed),
        ("shipping", StepStatus::Pending),
    ];
    assert!(
        run.status == expected
            && run.final_log().status == expected
            && order_of(&steps, Action::Compensate).is_empty()
            && shipping.attempts() == 0
            && logged
                .iter()
                .map(|(n, s)| (n.as_str(), *s))
                .eq(expected_steps),
        "the payment step fails permanently and its policy says {policy:?} (inventory's says \
         Compensate, but the failing step's policy decides): the saga must end {expected:?} \
         (returned and in the log) with nothing compensated and shipping never started. Yours \
         returned {:?}, logged {:?}, compensated {:?}, started shipping {} time(s), steps \
         {logged:?}",
        run.status,
        run.final_log().status,
        order_of(&steps, Action::Compensate),
        shipping.attempts(),
    );
}

#[tokio::test(start_paused = true)]
async fn stop_without_compensation() {
    ends_without_compensation(OnExhausted::Stop, SagaStatus::Failed).await;
}

#[tokio::test(start_paused = true)]
async fn hand_to_human() {
    ends_without_compensation(OnExhausted::HandToHuman, SagaStatus::NeedsHuman).await;
}

#[tokio::test(start_paused = true)]
async fn compensation_retried() {
    let cases = [
        (
            vec![Act::Transient, Act::Transient, Act::Ok],
            3,
            SagaStatus::Compensated,
            StepStatus::Compensated,
            "fails twice transiently, then succeeds",
        ),
        (
            vec![Act::Permanent],
            1,
            SagaStatus::NeedsHuman,
            StepStatus::Failed,
            "fails permanently",
        ),
    ];
    for (script, calls, saga_status, step_status, case) in cases {
        let inventory = Recorder::build("inventory", 10 * MS, [Act::Ok], script);
        let payment = Recorder::scripted("payment", [Act::Permanent]);
        let saga = Saga::new("order-4")
            .step(inventory.clone(), policy())
            .step(payment.clone(), with(OnExhausted::Compensate));
        let run = run(&saga, 4).await;
        let record = &run.final_log().steps[0];
        assert!(
            inventory.calls_of(Action::Compensate).len() == calls
                && run.status == saga_status
                && record.status == step_status,
            "payment fails permanently, so inventory is compensated; its compensation {case}. \
             A compensation must be retried like any step (under inventory's policy, 5 \
             attempts): {calls} compensation call(s), the step {step_status:?} and the saga \
             {saga_status:?} (a compensation that cannot be done needs a human). Yours made {} \
             compensation call(s), left the step {:?} and the saga {:?}",
            inventory.calls_of(Action::Compensate).len(),
            record.status,
            run.status,
        );
    }
}
