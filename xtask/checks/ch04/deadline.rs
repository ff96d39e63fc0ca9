//! Checks that `retry_until` keeps inside its deadline: no attempt starts at or after it, the
//! last attempt's timeout is cut to what remains, and a sleep that cannot fit is not started.

use std::time::Duration;

use exercise::{Policy, RetryError};

use super::retry::{MS, SEC, Service, Step, run_uncancelled};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn nothing_starts_after_deadline() {
    let cases = [
        (
            Service::failing_fast(),
            "a service that fails at once",
            Policy::fixed(100, SEC, 300 * MS),
            "100 attempts of at most 1 s, 300 ms sleeps",
            SEC,
        ),
        (
            Service::new(&[Step::Fail(400 * MS)]),
            "a service that fails after 400 ms",
            Policy::fixed(50, SEC, 250 * MS),
            "50 attempts of at most 1 s, 250 ms sleeps",
            2 * SEC,
        ),
        // Immediate retries: the third attempt is cut at the deadline, and a retry with no sleep
        // before it would start at the deadline, with no time left.
        (
            Service::hanging(),
            "a service that never answers",
            Policy::fixed(10, SEC, Duration::ZERO),
            "10 attempts of at most 1 s, no sleeps",
            2_500 * MS,
        ),
    ];
    for (service, service_text, policy, policy_text, deadline) in cases {
        let run = run_uncancelled(service, deadline, &policy).await;
        let late = run.starts.iter().position(|start| *start >= deadline);
        if let Some(index) = late {
            panic!(
                "with {service_text}, {policy_text} and a deadline {} away, no attempt may start \
                 at or after the deadline; yours started attempt {} at {} (all starts: {}). \
                 Every retry needs time left before it starts, an immediate one (no sleep) too. \
                 If you measure the time left with SystemTime or std::time::Instant, that is why: \
                 under tokio's paused test clock a wall-clock deadline never comes; use \
                 tokio::time::Instant",
                show(deadline),
                index + 1,
                show(run.starts[index]),
                run.starts(),
            );
        }
        assert!(
            run.returned <= deadline,
            "with {service_text}, {policy_text} and a deadline {} away, the loop must return by \
             the deadline; yours returned {:?} at {}",
            show(deadline),
            run.result,
            show(run.returned),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn last_attempt_truncated() {
    let policy = Policy::fixed(10, SEC, 200 * MS);
    let deadline = 2_500 * MS;
    let run = run_uncancelled(Service::hanging(), deadline, &policy).await;
    let expected = [Duration::ZERO, 1_200 * MS, 2_400 * MS];
    assert!(
        run.starts == expected,
        "with a hanging service, attempts of at most 1 s, 200 ms sleeps and a deadline 2.5 s \
         away, the attempts should start at [0 ms, 1.2 s, 2.4 s]; yours started at {} and \
         returned {:?} at {}",
        run.starts(),
        run.result,
        show(run.returned),
    );
    assert!(
        run.result == Err(RetryError::TimedOut) && run.returned == deadline,
        "the third attempt starts at 2.4 s with only 100 ms left before the deadline (2.5 s), so \
         its timeout is min(per-attempt 1 s, 100 ms left) = 100 ms and the loop must return \
         Err(TimedOut) at exactly 2.5 s; yours returned {:?} at {}, {} past the deadline",
        run.result,
        show(run.returned),
        show(run.returned.saturating_sub(deadline)),
    );
    // The first attempt is an attempt like any other: with a deadline closer than one timeout,
    // it is cut at the deadline too, and it is also the last one.
    let policy = Policy::fixed(3, SEC, 100 * MS);
    let deadline = 300 * MS;
    let run = run_uncancelled(Service::hanging(), deadline, &policy).await;
    assert!(
        run.starts == [Duration::ZERO]
            && run.result == Err(RetryError::TimedOut)
            && run.returned == deadline,
        "with a hanging service, 3 attempts of at most 1 s, 100 ms sleeps and a deadline 300 ms \
         away, the first attempt's timeout is min(per-attempt 1 s, 300 ms left) = 300 ms: it is \
         cut at the deadline, no sleep fits after it, and the loop must return Err(TimedOut) at \
         exactly 300 ms after 1 call. Yours made {} call(s) (starting at {}) and returned {:?} \
         at {}: every attempt's timeout is min(per_attempt, time left), the first one's too",
        run.calls(),
        run.starts(),
        run.result,
        show(run.returned),
    );
}

#[tokio::test(start_paused = true)]
async fn no_sleep_past_deadline() {
    let policy = Policy::fixed(10, 100 * MS, SEC);
    for (deadline, why) in [
        (1_500 * MS, "would end at 2 s, past the deadline at 1.5 s"),
        (
            2 * SEC,
            "would end exactly at the deadline (2 s), leaving no time for an attempt",
        ),
    ] {
        let run = run_uncancelled(Service::failing_fast(), deadline, &policy).await;
        assert!(
            run.result == Err(RetryError::Failed(2)) && run.returned == SEC && run.calls() == 2,
            "with a service that fails at once, 1 s sleeps and a deadline {} away, the attempts \
             start at 0 ms and 1 s; the next sleep {why}, so it must not be started: the loop \
             must return the last error, Err(Failed(2)), at once, at 1 s. Yours made {} call(s) \
             (starting at {}) and returned {:?} at {}",
            show(deadline),
            run.calls(),
            run.starts(),
            run.result,
            show(run.returned),
        );
    }
    // The time left is measured after the attempt, not before it: the attempt's own 400 ms count.
    let policy = Policy::fixed(10, SEC, SEC);
    for (deadline, why) in [
        (1_200 * MS, "would end at 1.4 s, past the deadline at 1.2 s"),
        (1_400 * MS, "would end exactly at the deadline (1.4 s)"),
    ] {
        let run = run_uncancelled(Service::new(&[Step::Fail(400 * MS)]), deadline, &policy).await;
        assert!(
            run.result == Err(RetryError::Failed(1))
                && run.returned == 400 * MS
                && run.calls() == 1,
            "with a service that fails after 400 ms, attempts of at most 1 s, 1 s sleeps and a \
             deadline {} away, the first attempt fails at 400 ms, leaving {} before the \
             deadline; the sleep {why}, so it must not be started: compare the sleep with the \
             time left after the attempt, not before it. Expected Err(Failed(1)) at 400 ms \
             after 1 call; yours made {} call(s) (starting at {}) and returned {:?} at {}",
            show(deadline),
            show(deadline - 400 * MS),
            run.calls(),
            run.starts(),
            run.result,
            show(run.returned),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn sleep_ending_before_deadline_is_taken() {
    // The sleep after attempt 2 ends 1 ms before the deadline: there is time to start attempt 3,
    // even though it gets only 1 ms of its 100 ms timeout.
    let policy = Policy::fixed(10, 100 * MS, SEC);
    let deadline = 2 * SEC + MS;
    let run = run_uncancelled(Service::failing_fast(), deadline, &policy).await;
    let expected = [Duration::ZERO, SEC, 2 * SEC];
    assert!(
        run.starts == expected
            && run.result == Err(RetryError::Failed(3))
            && run.returned == 2 * SEC,
        "with a service that fails at once, 1 s sleeps, attempts of at most 100 ms and a deadline \
         2.001 s away, the sleep after attempt 2 ends at 2 s, 1 ms before the deadline: it must \
         be taken, and attempt 3 started at 2 s (with what is left, 1 ms, as its timeout). Only \
         a sleep that would end at or past the deadline is skipped. Expected calls at [0 ms, \
         1 s, 2 s] and Err(Failed(3)) at 2 s; yours started calls at {} and returned {:?} at {}",
        run.starts(),
        run.result,
        show(run.returned),
    );
}
