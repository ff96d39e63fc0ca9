//! Checks of the classifier: a non-retryable error ends the loop at once.

use std::cell::Cell;

use exercise::Retry;

use super::fixture::{
    Ear, Failure, MS, Service, run, run_on, show_heard, show_policy, show_result,
};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn non_retryable_ends_at_once() {
    let policy = [20 * MS, 40 * MS, 80 * MS, 160 * MS];
    for permanent_call in [1u32, 3] {
        let outcome = run(&policy, Service::permanent_at(permanent_call)).await;
        let returned_error = outcome.result.err();
        let retries_heard = outcome.heard.len() as u32;
        assert!(
            outcome.calls() == permanent_call
                && returned_error
                    .is_some_and(|error| error.call == permanent_call && !error.retryable)
                && retries_heard == permanent_call - 1
                && outcome.trailing().is_zero(),
            "call {permanent_call} fails with an error the classifier rejects (policy {}): the \
             loop must return that error at once, with no hook call and no sleep for it, after \
             exactly {permanent_call} call(s); yours made {} call(s), returned {} {} after the \
             last call, and the hook heard {}",
            show_policy(&policy),
            outcome.calls(),
            show_result(&outcome.result),
            show(outcome.trailing()),
            show_heard(&outcome.heard),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn policy_not_asked() {
    // A policy that counts how often it is asked: a rejected error must not cost it a delay
    // (a stateful policy, such as a retry budget, would be charged for a retry that never came).
    let asked = Cell::new(0u32);
    let policy = [20 * MS, 40 * MS, 80 * MS, 160 * MS];
    let ear = Ear::default();
    let retry = Retry::new(|| policy.into_iter().inspect(|_| asked.set(asked.get() + 1)))
        .when(|error: &Failure| error.retryable)
        .notify(|event| ear.hear(event));
    let outcome = run_on(&retry, &ear, Service::permanent_at(3)).await;
    assert!(
        outcome.calls() == 3 && asked.get() == 2,
        "calls 1 and 2 fail with retryable errors and call 3 with an error the classifier \
         rejects (policy {}): the policy must be asked for exactly 2 delays, one per retry; a \
         rejected error ends the loop before the policy is asked. Yours made {} call(s), asked \
         the policy {} time(s) and returned {}",
        show_policy(&policy),
        outcome.calls(),
        asked.get(),
        show_result(&outcome.result),
    );
}
