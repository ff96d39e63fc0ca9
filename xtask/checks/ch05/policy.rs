//! Checks of how the loop follows its policy: the delays it yields, `None` to give up, no sleep
//! after the last attempt, and a fresh policy for every run.

use std::time::Duration;

use exercise::Retry;

use super::fixture::{
    Ear, Failure, MS, SAFETY_STOP, Service, run, run_on, show_heard, show_policy, show_result,
};
use super::support::{show, show_all};

#[tokio::test(start_paused = true)]
async fn delays_exactly_as_yielded() {
    // The last policy's 20-minute sleep is slept in full: the loop caps no delay of its own.
    let policies: [&[Duration]; 4] = [
        &[100 * MS, 250 * MS, 1_000 * MS, 3 * MS],
        &[7 * MS, 7 * MS, 7 * MS],
        &[1_500 * MS, 20 * MS],
        &[1_200_000 * MS, 40 * MS],
    ];
    for policy in policies {
        let outcome = run(policy, Service::always_failing()).await;
        assert_eq!(
            outcome.first_call_after(),
            Some(Duration::ZERO),
            "the first call must happen at once, before any sleep; yours came after {}",
            outcome
                .first_call_after()
                .map_or("no call at all".to_owned(), show),
        );
        let gaps = outcome.gaps();
        assert!(
            gaps == policy,
            "with the policy {} and a service that always fails, the sleeps between calls must be \
             exactly the delays the policy yields, in order; yours slept {} ({} call(s))",
            show_policy(policy),
            show_all(&gaps, 8),
            outcome.calls(),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn none_ends_the_loop() {
    // 300 delays: the loop has no limit of its own; only the policy's None ends it.
    for retries in [0usize, 1, 2, 5, 300] {
        let policy = vec![10 * MS; retries];
        let outcome = run(&policy, Service::always_failing()).await;
        let calls = retries as u32 + 1;
        let last_error = Failure {
            call: calls,
            retryable: true,
        };
        let stopped = if outcome.calls() >= SAFETY_STOP {
            " (the test service gave in at that point: your loop never stopped on its own)"
        } else if outcome.calls() < calls {
            " (it stopped before the policy said None: the loop keeps no limit of its own)"
        } else {
            ""
        };
        assert!(
            outcome.calls() == calls && outcome.result == Err(last_error),
            "a policy of {retries} delay(s) then None allows {calls} call(s); when it says None \
             the loop must stop and return the last error as is, Err({last_error}); yours made \
             {} call(s){stopped} and returned {}",
            outcome.calls(),
            show_result(&outcome.result),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn no_sleep_after_last_attempt() {
    let cases: [(&[Duration], &str); 3] = [
        (&[20 * MS, 40 * MS], "gives up after call 3"),
        (&[], "gives up after call 1"),
        (&[20 * MS, 40 * MS, 80 * MS], "succeeds on call 2"),
    ];
    for (index, (policy, ending)) in cases.into_iter().enumerate() {
        let service = if index == 2 {
            Service::succeeding_at(2)
        } else {
            Service::always_failing()
        };
        let outcome = run(policy, service).await;
        assert!(
            outcome.trailing().is_zero(),
            "with the policy {} the loop {ending} and must return at that very moment; yours \
             waited another {} after the last call before returning {}",
            show_policy(policy),
            show(outcome.trailing()),
            show_result(&outcome.result),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn fresh_policy_per_run() {
    let policy = [15 * MS, 30 * MS, 60 * MS];
    let ear = Ear::default();
    let retry = Retry::new(|| policy.to_vec())
        .when(|error: &Failure| error.retryable)
        .notify(|event| ear.hear(event));
    let first = run_on(&retry, &ear, Service::always_failing()).await;
    let second = run_on(&retry, &ear, Service::always_failing()).await;
    for (run, outcome) in [("first", &first), ("second", &second)] {
        let attempts: Vec<u32> = outcome.heard.iter().map(|heard| heard.attempt).collect();
        assert!(
            outcome.calls() == 4 && outcome.gaps() == policy && attempts == [1, 2, 3],
            "one Retry (policy {}) runs twice against a service that always fails; each run must \
             start a fresh policy, so both make 4 calls, sleep {} and number their retries 1, 2, \
             3; your {run} run made {} call(s), slept {} and heard {}",
            show_policy(&policy),
            show_policy(&policy),
            outcome.calls(),
            show_all(&outcome.gaps(), 8),
            show_heard(&outcome.heard),
        );
    }
}
