//! Checks of the notification hook: once per retry, the right details, before the sleep, and
//! never once the loop gives up.

use std::time::Duration;

use exercise::Retry;

use super::fixture::{Ear, Failure, MS, Service, run, run_on, show_heard, show_policy};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn once_per_retry_with_details() {
    let policy = [10 * MS, 20 * MS, 40 * MS, 80 * MS];
    let cases = [
        (Service::always_failing(), "always fails", 4),
        (Service::succeeding_at(3), "fails twice, then answers", 2),
    ];
    for (service, behaviour, retries) in cases {
        let outcome = run(&policy, service).await;
        let heard: Vec<_> = outcome
            .heard
            .iter()
            .map(|h| (h.attempt, h.delay, h.error.call))
            .collect();
        let expected: Vec<_> = (1..=retries)
            .map(|n| (n, policy[n as usize - 1], n))
            .collect();
        let expected_text: Vec<String> = expected
            .iter()
            .map(|(attempt, delay, call)| {
                format!("(attempt {attempt}, {}, call {call})", show(*delay))
            })
            .collect();
        assert!(
            heard == expected,
            "with the policy {} and a service that {behaviour}, the hook should be called once \
             per retry, {retries} time(s): [{}] (the attempt that failed counted from 1, the delay \
             about to be slept, that attempt's error); yours heard {} in {} call(s) of the service",
            show_policy(&policy),
            expected_text.join(", "),
            show_heard(&outcome.heard),
            outcome.calls(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn before_the_sleep() {
    let policy = [30 * MS, 50 * MS, 70 * MS];
    let outcome = run(&policy, Service::always_failing()).await;
    let calls = outcome.service.instants();
    assert!(
        outcome.heard.len() == policy.len() && calls.len() == policy.len() + 1,
        "with the policy {} and a service that always fails, expected 4 calls and 3 hook calls; \
         yours made {} call(s) and heard {}",
        show_policy(&policy),
        calls.len(),
        show_heard(&outcome.heard),
    );
    for (index, heard) in outcome.heard.iter().enumerate() {
        let failed_at = calls[index];
        let next_call = calls[index + 1];
        let after_failure = heard.at - failed_at;
        let before_next = next_call - heard.at;
        assert!(
            after_failure.is_zero() && before_next == heard.delay,
            "the hook must run at the moment attempt {} fails, before the sleep, and announce the \
             delay actually slept; yours ran {} after the failure, {} before the next call, and \
             announced {} (policy {})",
            index + 1,
            show(after_failure),
            show(before_next),
            show(heard.delay),
            show_policy(&policy),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn silent_on_give_up() {
    let cases: [(&[Duration], u32); 3] = [(&[10 * MS, 10 * MS], 3), (&[25 * MS], 2), (&[], 1)];
    for (policy, calls) in cases {
        let outcome = run(policy, Service::always_failing()).await;
        let about_last = outcome.heard.iter().find(|h| h.error.call >= calls);
        assert!(
            outcome.calls() == calls
                && outcome.heard.len() == calls as usize - 1
                && about_last.is_none(),
            "with the policy {} the loop gives up after call {calls}: the hook must hear of the {} \
             retries only, never of the final failure, since no retry follows it; yours made {} \
             call(s) and heard {}",
            show_policy(policy),
            calls - 1,
            outcome.calls(),
            show_heard(&outcome.heard),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn builder_order_does_not_matter() {
    // notify before when: each builder method replaces its own part and keeps the other.
    let policy = [10 * MS, 20 * MS, 30 * MS];
    let ear = Ear::default();
    let retry = Retry::new(|| policy.to_vec())
        .notify(|event| ear.hear(event))
        .when(|error: &Failure| error.retryable);
    let outcome = run_on(&retry, &ear, Service::permanent_at(3)).await;
    let attempts: Vec<u32> = outcome.heard.iter().map(|heard| heard.attempt).collect();
    assert!(
        outcome.calls() == 3 && attempts == [1, 2],
        "a Retry built with .notify(hook) and then .when(classifier) must keep both: against a \
         service whose call 3 fails with an error the classifier rejects (policy {}), it makes \
         3 calls and the hook hears attempts 1 and 2; yours made {} call(s) and the hook heard \
         {}",
        show_policy(&policy),
        outcome.calls(),
        show_heard(&outcome.heard),
    );

    // Called twice, a builder method replaces its part again: the latest classifier and the
    // latest hook are the ones used, not combined with (or added to) the earlier ones.
    let earlier = Ear::default();
    let retry = Retry::new(|| policy.to_vec())
        .when(|_: &Failure| false)
        .notify(|event| earlier.hear(event))
        .when(|error: &Failure| error.retryable)
        .notify(|event| ear.hear(event));
    let outcome = run_on(&retry, &ear, Service::permanent_at(3)).await;
    let attempts: Vec<u32> = outcome.heard.iter().map(|heard| heard.attempt).collect();
    let earlier_heard = earlier.take();
    assert!(
        outcome.calls() == 3 && attempts == [1, 2] && earlier_heard.is_empty(),
        "a Retry built with .when(reject every error).notify(first hook) and then \
         .when(classifier).notify(second hook) uses the second classifier and the second hook \
         only: each call of when or notify replaces its part, it does not add a condition or a \
         listener. Against a service whose call 3 fails with an error the classifier rejects \
         (policy {}), it makes 3 calls, the second hook hears attempts 1 and 2 and the first \
         hook hears nothing; yours made {} call(s), the second hook heard {} and the first \
         heard {}",
        show_policy(&policy),
        outcome.calls(),
        show_heard(&outcome.heard),
        show_heard(&earlier_heard),
    );
}
