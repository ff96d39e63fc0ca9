//! Checks of the classifier: a non-retryable error ends the loop at once.

use super::fixture::{MS, Service, run, show_heard, show_policy, show_result};
use crate::support::show;

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
