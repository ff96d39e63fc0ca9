//! Checks of the idempotency keys: one per step, the same on every attempt; a compensation's own.

use std::collections::BTreeSet;
use std::time::Duration;

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
    for (step, executed, _, logged) in &first {
        let all: BTreeSet<&String> = executed.iter().collect();
        assert!(
            all.len() == 1,
            "every attempt of one step's execution must carry the same idempotency key, so that \
             the service can recognise a repeat; the attempts of step {step} in saga order-1 \
             carried {} different keys: {executed:?}",
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
    for (step, executed, _, _) in &first {
        let expected = format!("order-1:{step}");
        assert!(
            executed.first() == Some(&expected),
            "a step's key is \"{{saga id}}:{{step name}}\" (section 22.6), so the service, a \
             restarted orchestrator and an operator all name the same operation the same way: \
             step {step} of saga order-1 must carry {expected:?}; yours carried {:?}",
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
async fn compensation_has_its_own_key() {
    let mut compensation_keys = BTreeSet::new();
    for saga_id in ["order-1", "order-2"] {
        let inventory = Recorder::build(
            "inventory",
            Duration::ZERO,
            [Act::Ok],
            [Act::Transient, Act::Ok],
        );
        let payment = Recorder::build(
            "payment",
            Duration::ZERO,
            [Act::Transient, Act::Ok],
            [Act::Transient, Act::Transient, Act::Ok],
        );
        let shipping = Recorder::scripted("shipping", [Act::Permanent]);
        let saga = Saga::new(saga_id)
            .step(inventory.clone(), policy())
            .step(payment.clone(), policy())
            .step(shipping.clone(), policy());
        let run = run(&saga, 6).await;
        for step in [&inventory, &payment] {
            let name = step.label();
            let forward = keys(step, Action::Execute);
            let step_key = forward.first().cloned().unwrap_or_default();
            let undo: Vec<(String, Option<String>)> = step
                .calls_of(Action::Compensate)
                .into_iter()
                .map(|call| (call.ctx.idempotency_key, call.ctx.undoes))
                .collect();
            let undo_keys: Vec<&String> = undo.iter().map(|(key, _)| key).collect();
            assert!(
                !undo.is_empty() && undo.iter().all(|(key, _)| *key != step_key),
                "a compensation is a request of its own (a refund is not the charge), and a key \
                 names one request (chapter 20): the compensation of {name} in {saga_id} must \
                 not carry its execution's key {step_key:?}, or the service answers it with the \
                 charge's saved receipt, or refuses it, and nothing is undone. Its attempts \
                 carried {undo_keys:?} (the saga ended {:?}); derive its own key, \
                 undo_key(step key)",
                run.status,
            );
            let distinct: BTreeSet<&String> = undo_keys.iter().copied().collect();
            assert!(
                distinct.len() == 1,
                "every attempt of {name}'s compensation must carry the same key, so the service \
                 can tell a retried refund from a second refund; yours carried {undo_keys:?}",
            );
            let references: Vec<Option<&str>> =
                undo.iter().map(|(_, undoes)| undoes.as_deref()).collect();
            assert!(
                references
                    .iter()
                    .all(|undoes| *undoes == Some(step_key.as_str())),
                "the compensation of {name} must name the execution it undoes, by the step's \
                 key, in undoes = Some({step_key:?}), so the service knows which charge to \
                 refund; your attempts said {references:?}",
            );
            compensation_keys.insert(undo_keys[0].clone());
        }
        assert!(
            inventory.times_undone() == 1 && payment.times_undone() == 1,
            "shipping failed for good, so payment and inventory must both be undone; the \
             services undid payment {} time(s) and inventory {} time(s) (the saga ended {:?})",
            payment.times_undone(),
            inventory.times_undone(),
            run.status,
        );
    }
    assert!(
        compensation_keys.len() == 4,
        "each compensation needs a key of its own: two steps in two sagas gave {} distinct \
         compensation keys, {compensation_keys:?}",
        compensation_keys.len(),
    );
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
