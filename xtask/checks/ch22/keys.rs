//! Checks of the idempotency key: one per step, the same on every attempt.

use std::collections::BTreeSet;

use exercise::{Action, OnExhausted, Saga, StepPolicy};

use super::fixture::{Act, MS, Recorder, SEC, policy, run};

fn keys(step: &Recorder, action: Action) -> Vec<String> {
    step.calls_of(action)
        .into_iter()
        .map(|call| call.ctx.idempotency_key)
        .collect()
}

/// Runs a three-step saga whose last step fails for good, and returns the keys each step's
/// calls carried (execute, then compensate) and the keys in the log.
async fn keys_of_saga(saga_id: &str) -> Vec<(String, Vec<String>, Vec<String>, Option<String>)> {
    let inventory = Recorder::new("inventory");
    let payment = Recorder::scripted("payment", [Act::Transient, Act::Transient, Act::Ok]);
    let shipping = Recorder::scripted("shipping", [Act::Transient, Act::Permanent]);
    let saga = Saga::new(saga_id)
        .step(inventory.clone(), policy())
        .step(payment.clone(), policy())
        .step(shipping.clone(), policy());
    let run = run(&saga, 4).await;
    [inventory, payment, shipping]
        .iter()
        .enumerate()
        .map(|(index, step)| {
            (
                step.label(),
                keys(step, Action::Execute),
                keys(step, Action::Compensate),
                run.final_log().steps[index].idempotency_key.clone(),
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn same_key_every_attempt() {
    let first = keys_of_saga("order-1").await;
    for (step, executed, compensated, logged) in &first {
        let all: BTreeSet<&String> = executed.iter().chain(compensated).collect();
        assert!(
            all.len() == 1,
            "every call of one step must carry the same idempotency key, attempt after attempt \
             and in its compensation, so that the service can recognise a repeat; the calls of \
             step {step} in saga order-1 carried {} different keys: execute {executed:?}, \
             compensate {compensated:?}",
            all.len(),
        );
        assert!(
            logged.as_ref() == executed.first(),
            "the step's log record must keep the key its calls carry, so a restarted \
             orchestrator (or an operator) can reuse it; step {step} used {:?} but its record \
             says {logged:?}",
            executed.first(),
        );
    }
    let distinct: BTreeSet<&String> = first
        .iter()
        .filter_map(|(_, keys, _, _)| keys.first())
        .collect();
    assert!(
        distinct.len() == first.len(),
        "each step needs its own key: the payment must not be deduplicated against the \
         reservation; your three steps used {:?}",
        first
            .iter()
            .map(|(_, keys, _, _)| keys.first())
            .collect::<Vec<_>>(),
    );
    let second = keys_of_saga("order-2").await;
    for ((step, one, _, _), (_, two, _, _)) in first.iter().zip(&second) {
        assert!(
            one.first() != two.first(),
            "two sagas must not share a key: step {step} of order-1 and of order-2 both used \
             {:?}, so the second order's {step} would be answered from the first one's. Put \
             the saga id in the key",
            one.first(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn no_double_charge() {
    let payment = Recorder::scripted("payment", [Act::DoThenHang, Act::Ok]);
    let policy = StepPolicy {
        per_attempt_timeout: 2 * SEC,
        base: 100 * MS,
        on_exhausted: OnExhausted::Stop,
        ..policy()
    };
    let saga = Saga::new("order-5").step(payment.clone(), policy);
    run(&saga, 5).await;
    assert!(
        payment.times_done() == 1,
        "the first payment attempt charged the card and then never answered; it was cut off by \
         its 2 s timeout and retried. The retry must carry the same idempotency key so the \
         payment service answers from its record instead of charging again; the card was \
         charged {} times over {} attempt(s), with keys {:?}",
        payment.times_done(),
        payment.attempts(),
        keys(&payment, Action::Execute),
    );
}
