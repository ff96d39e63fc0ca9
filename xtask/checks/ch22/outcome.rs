//! Checks of how a saga ends: completed, compensated in reverse order, stopped, or handed to a
//! human, as the policy of the step that gave up says.

use std::sync::Arc;
use std::time::Duration;

use exercise::{Action, OnExhausted, Saga, SagaStatus, StepPolicy, StepStatus};
use tokio::time::Instant;

use super::fixture::{Act, MS, Recorder, Run, SEC, policy, run};

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
    // A long saga: 150 steps complete, the 151st fails. All 150 are undone, newest first: no
    // cap on how many steps the way back covers.
    let names: Vec<String> = (1..=151).map(|n| format!("step-{n}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (saga, steps) = saga_failing_last(&names, OnExhausted::Compensate, OnExhausted::Compensate);
    let run = super::fixture::run(&saga, 2).await;
    let compensated = order_of(&steps, Action::Compensate);
    let expected: Vec<&str> = names[..150].iter().rev().copied().collect();
    assert!(
        compensated == expected,
        "150 steps completed, then step 151 failed permanently (policy Compensate): all 150 \
         must be undone, newest first, step-150 down to step-1; yours compensated {} step(s), \
         from {:?} to {:?} (the saga ended {:?})",
        compensated.len(),
        compensated.first(),
        compensated.last(),
        run.status,
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
            StepStatus::CompensationFailed,
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
             {saga_status:?} (a compensation that cannot be done needs a human, and its step's \
             status says its work still stands: CompensationFailed, not Failed, which would say \
             there is nothing to undo). Yours made {} \
             compensation call(s), left the step {:?} and the saga {:?}",
            inventory.calls_of(Action::Compensate).len(),
            record.status,
            run.status,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn keeps_undoing_after_stuck() {
    // invoice fails for good; shipping's compensation is refused and payment's keeps failing:
    // inventory must still be released, newest first, before the saga goes to a person.
    let cases = [
        (
            vec![Act::Permanent],
            vec![Act::Transient],
            "is refused, then payment's keeps failing",
        ),
        (
            vec![Act::Transient],
            vec![Act::Permanent],
            "keeps failing, then payment's is refused",
        ),
    ];
    for (shipping_undo, payment_undo, story) in cases {
        let inventory = Recorder::slow("inventory", LATENCY, [Act::Ok]);
        let payment = Recorder::build("payment", LATENCY, [Act::Ok], payment_undo);
        let shipping = Recorder::build("shipping", LATENCY, [Act::Ok], shipping_undo);
        let invoice = Recorder::slow("invoice", LATENCY, [Act::Permanent]);
        let steps = vec![
            inventory.clone(),
            payment.clone(),
            shipping.clone(),
            invoice.clone(),
        ];
        let mut saga = Saga::new("order-6");
        for step in &steps {
            saga = saga.step(step.clone(), policy());
        }
        let run = run(&saga, 6).await;
        let undone = order_of(&steps, Action::Compensate);
        let mut first_calls: Vec<String> = Vec::new();
        for name in &undone {
            if !first_calls.contains(name) {
                first_calls.push(name.clone());
            }
        }
        assert!(
            first_calls == ["shipping", "payment", "inventory"] && inventory.times_undone() == 1,
            "invoice failed for good; shipping's compensation {story}. A compensation that gives \
             up must not stop the others (book §21.5, rule 2): inventory must still be undone, \
             after shipping and payment, before the saga goes to a person. Yours compensated \
             {first_calls:?} and undid inventory {} time(s) (the saga ended {:?})",
            inventory.times_undone(),
            run.status,
        );
        let expected = [
            ("inventory", StepStatus::Compensated),
            ("payment", StepStatus::CompensationFailed),
            ("shipping", StepStatus::CompensationFailed),
            ("invoice", StepStatus::Failed),
        ];
        let logged = statuses(&run);
        assert!(
            run.status == SagaStatus::NeedsHuman
                && run.final_log().status == SagaStatus::NeedsHuman
                && logged.iter().map(|(n, s)| (n.as_str(), *s)).eq(expected),
            "after undoing what can be undone, a saga with stuck compensations ends NeedsHuman \
             (returned and in the log), and each step whose compensation gave up says \
             CompensationFailed (its work still stands), never Failed (nothing to undo): \
             expected {expected:?}; yours returned {:?}, logged {:?}, with steps {logged:?}",
            run.status,
            run.final_log().status,
        );
    }
}

#[tokio::test(start_paused = true)]
async fn timed_out_step_compensated() {
    // Payment's answer is lost: the charge may stand. With Compensate, it is undone with the
    // others, newest first (itself first); with Stop, nobody may assume it failed cleanly.
    let timed_out_last = vec![Act::Transient, Act::DoThenHang];
    let timed_out_first = vec![Act::Hang, Act::Transient];
    let cases = [
        (
            timed_out_last.clone(),
            OnExhausted::Compensate,
            "its last attempt timed out",
        ),
        (
            timed_out_first,
            OnExhausted::Compensate,
            "its first attempt timed out, the second got a 503",
        ),
        (
            timed_out_last,
            OnExhausted::Stop,
            "its last attempt timed out",
        ),
    ];
    for (script, on_exhausted, story) in cases {
        let inventory = Recorder::slow("inventory", LATENCY, [Act::Ok]);
        let payment = Recorder::slow("payment", LATENCY, script);
        let stepping = StepPolicy {
            max_attempts: 2,
            per_attempt_timeout: SEC,
            on_exhausted,
            ..policy()
        };
        let saga = Saga::new("order-7")
            .step(inventory.clone(), policy())
            .step(payment.clone(), stepping);
        let run = run(&saga, 7).await;
        let undone = order_of(&[inventory.clone(), payment.clone()], Action::Compensate);
        let charge_stands = payment.work_stands();
        match on_exhausted {
            OnExhausted::Compensate => assert!(
                undone.first().map(String::as_str) == Some("payment")
                    && undone.last().map(String::as_str) == Some("inventory")
                    && !charge_stands
                    && run.status == SagaStatus::Compensated,
                "payment gave up after 2 attempts and {story}: its outcome is unknown, the card \
                 may have been charged. Its policy says Compensate, so it counts as done (book \
                 §21.5, rule 3): it is compensated too, first, then inventory, and the saga ends \
                 Compensated. Yours compensated {undone:?}, left the charge {}, and ended {:?}",
                if charge_stands { "standing" } else { "undone" },
                run.status,
            ),
            _ => assert!(
                undone.is_empty() && run.status == SagaStatus::NeedsHuman,
                "payment gave up after 2 attempts and {story}, so its charge may stand; its policy \
                 says Stop, which undoes nothing, but the saga cannot end Failed as if nothing \
                 were left: it must end NeedsHuman (book §21.5, rule 3). Yours compensated \
                 {undone:?} and ended {:?}",
                run.status,
            ),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn compensation_under_its_steps_policy() {
    // Inventory's compensation keeps failing; inventory's policy allows 2 attempts, payment's
    // (the step that gave up) 5: the compensated step's policy decides.
    let inventory = Recorder::build("inventory", LATENCY, [Act::Ok], [Act::Transient]);
    let payment = Recorder::scripted("payment", [Act::Permanent]);
    let short = StepPolicy {
        max_attempts: 2,
        ..policy()
    };
    let saga = Saga::new("order-8")
        .step(inventory.clone(), short)
        .step(payment.clone(), with(OnExhausted::Compensate));
    let run = run(&saga, 8).await;
    let calls = inventory.calls_of(Action::Compensate).len();
    assert!(
        calls == 2 && run.status == SagaStatus::NeedsHuman,
        "a compensation is retried under the policy of the step it undoes: inventory's allows 2 \
         attempts (payment's, the step that gave up, 5), so inventory's failing compensation is \
         called twice and the saga ends NeedsHuman; yours called it {calls} time(s) and ended \
         {:?}",
        run.status,
    );
}
