//! Checks of the saga's shape: which steps run, which are compensated, and in what order.

use exercise::ErrorKind::{Permanent, Transient};
use exercise::SagaOutcome;

use super::fixture::{Kind, Spec, compensated, error_message, failed, fails, list, ok, run};

const NAMES: [&str; 4] = ["inventory", "payment", "shipping", "invoice"];

/// Four steps, of which number `failing` (from 0) fails permanently.
fn failing_at(failing: usize) -> Vec<Spec> {
    NAMES
        .iter()
        .enumerate()
        .map(|(index, name)| {
            if index == failing {
                fails(name, Permanent)
            } else {
                ok(name)
            }
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn all_success_compensates_nothing() {
    let run = run(&[ok("inventory"), ok("payment"), ok("shipping")], 1).await;
    let expected = ["inventory.execute", "payment.execute", "shipping.execute"];
    assert!(
        run.labels() == expected && run.outcome == Some(SagaOutcome::Completed),
        "a saga whose 3 steps all succeed must execute each once, in order, compensate nothing, \
         and end SagaOutcome::Completed; yours made the calls {} and ended {}",
        list(&run.labels()),
        run.outcome_text(),
    );
    let attempts: Vec<u32> = run.calls.iter().map(|call| call.attempt).collect();
    assert!(
        attempts == [1, 1, 1],
        "each step is executed once, so every execution's context says attempt 1 (attempts are \
         counted from 1); yours passed the attempts {attempts:?}",
    );
    let empty = super::fixture::run(&[], 1).await;
    assert!(
        empty.calls.is_empty() && empty.outcome == Some(SagaOutcome::Completed),
        "a saga without steps has nothing to do and nothing to undo: it ends \
         SagaOutcome::Completed; yours made the calls {} and ended {}",
        list(&empty.labels()),
        empty.outcome_text(),
    );
}

#[tokio::test(start_paused = true)]
async fn reverse_order() {
    let run = run(&failing_at(3), 2).await;
    let order = run.compensation_order();
    let expected = ["shipping", "payment", "inventory"];
    assert!(
        order == expected,
        "inventory, payment and shipping completed, then invoice (step 4 of 4) failed: the three \
         must be compensated newest first, shipping, payment, inventory (the reverse of their \
         execution, so each undo finds the state its step left); yours compensated {}",
        list(&order),
    );
    let reported = compensated(&run.outcome);
    assert!(
        reported.is_some_and(|names| names == &expected),
        "SagaOutcome::Compensated must list the undone steps in the order they were undone, \
         [shipping, payment, inventory]; yours ended {}",
        run.outcome_text(),
    );
    // A long saga: 150 steps complete, the 151st fails. Every one of them is undone, newest
    // first: no cap on how many steps a way back covers.
    let names: Vec<&'static str> = (1..=151)
        .map(|n| &*Box::leak(format!("step-{n}").into_boxed_str()))
        .collect();
    let mut long: Vec<Spec> = names[..150].iter().map(|name| ok(name)).collect();
    long.push(fails(names[150], Permanent));
    let run = super::fixture::run(&long, 2).await;
    let order = run.compensation_order();
    let expected: Vec<&str> = names[..150].iter().rev().copied().collect();
    assert!(
        order == expected,
        "150 steps completed, then step 151 failed: all 150 must be compensated, newest first, \
         step-150 down to step-1; yours compensated {} step(s), from {} to {}",
        order.len(),
        order.first().map_or("none", String::as_str),
        order.last().map_or("none", String::as_str),
    );
}

#[tokio::test(start_paused = true)]
async fn only_completed_steps() {
    for failing in 0..NAMES.len() {
        let run = run(&failing_at(failing), 3).await;
        let name = NAMES[failing];
        let expected: Vec<&str> = NAMES[..failing].iter().rev().copied().collect();
        let order = run.compensation_order();
        let mut why = String::new();
        if order.iter().any(|step| step == name) {
            why = format!(
                ": {name} itself failed, so nothing of it was done and there is nothing to undo"
            );
        } else if let Some(later) = order
            .iter()
            .find(|step| !NAMES[..failing].contains(&step.as_str()))
        {
            why = format!(": {later} never ran, so there is nothing of it to undo");
        }
        assert!(
            order == expected,
            "when {name} (step {} of 4) failed, only the steps that completed before it may be \
             compensated, newest first: {}; yours compensated {}{why}",
            failing + 1,
            list(&expected),
            list(&order),
        );
        let executed = run.execution_order();
        assert!(
            executed == NAMES[..=failing],
            "after {name} (step {} of 4) failed, no later step may be executed; yours executed {}",
            failing + 1,
            list(&executed),
        );
        let message = error_message(name, Kind::Execute, 1);
        let reported = failed(&run.outcome)
            .filter(|failure| failure.error.message == message)
            .map(|failure| failure.step.as_str());
        assert!(
            reported == Some(name)
                && compensated(&run.outcome).is_some_and(|names| names == &expected),
            "when {name} failed and {} were undone, the saga must end \
             SagaOutcome::Compensated {{ failed: {name} (with its error {message:?}), \
             compensated: {} }}; yours ended {}",
            list(&expected),
            list(&expected),
            run.outcome_text(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn forward_failure_is_final() {
    let steps = [ok("inventory"), fails("payment", Transient), ok("shipping")];
    let run = run(&steps, 4).await;
    let tries = run.count("payment", Kind::Execute);
    assert!(
        tries == 1,
        "payment's execution fails with a transient error: in this chapter a forward step is \
         not retried, whatever the error (chapter 22 adds forward retries), so it must be \
         executed exactly once; yours executed it {tries} time(s)",
    );
    let reported = failed(&run.outcome).map(|failure| (failure.step.as_str(), failure.error.kind));
    assert!(
        reported == Some(("payment", Transient))
            && compensated(&run.outcome).is_some_and(|names| names == &["inventory"])
            && run.count("shipping", Kind::Execute) == 0,
        "after payment's transient failure the saga must stop going forward and compensate \
         inventory, ending SagaOutcome::Compensated {{ failed: payment (its transient error), \
         compensated: [inventory] }}; yours made the calls {} and ended {}",
        list(&run.labels()),
        run.outcome_text(),
    );
}
