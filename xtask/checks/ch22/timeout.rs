//! Checks that a hung attempt is cut off by the per-attempt timeout.

use std::time::Duration;

use exercise::{Action, CancelToken, OnExhausted, Saga, StepPolicy};

use super::fixture::{Act, MS, Recorder, SEC, TICK, describe_log, policy, run_with};
use super::support::{show, show_all};

#[tokio::test(start_paused = true)]
async fn hung_attempt_cut() {
    let policy = StepPolicy {
        base: 100 * MS,
        per_attempt_timeout: 2 * SEC,
        on_exhausted: OnExhausted::Stop,
        ..policy()
    };
    for seed in 0..5 {
        let step = Recorder::scripted("payment", [Act::Hang, Act::Ok]);
        let saga = Saga::new("order-1").step(step.clone(), policy.clone());
        let limit = Duration::from_secs(600);
        let Some(run) = run_with(&saga, seed, &CancelToken::new(), limit).await else {
            panic!(
                "the first attempt of this step never answers; after {} of virtual time your \
                 saga was still waiting for it ({}). Cut every attempt off after \
                 per_attempt_timeout (2 s here) with tokio::time::timeout, and treat the \
                 timeout as a transient failure",
                show(limit),
                describe_log(&saga.log().snapshot()),
            );
        };
        let starts: Vec<Duration> = step
            .attempt_instants()
            .iter()
            .map(|at| run.at(*at))
            .collect();
        let second = starts.get(1).copied().unwrap_or_default();
        assert!(
            starts.len() == 2 && second >= 2 * SEC && second <= 2 * SEC + 100 * MS + TICK,
            "the first attempt hangs: it must be cut off at 2 s (per_attempt_timeout) and \
             retried after a full-jitter sleep of at most 100 ms, so the second attempt starts \
             between 2 s and 2.1 s. Yours started attempts at {} (seed {seed})",
            show_all(&starts, 6),
        );
        assert!(
            step.abandoned() == 1,
            "the hung attempt must be dropped when its timeout fires (tokio::time::timeout \
             drops it); {} call(s) of yours were dropped",
            step.abandoned(),
        );
    }

    // A compensation's attempt is cut off the same way: the refund's first attempt hangs.
    let compensating = StepPolicy {
        on_exhausted: OnExhausted::Compensate,
        ..policy
    };
    for seed in 0..3 {
        let payment = Recorder::build("payment", Duration::ZERO, [Act::Ok], [Act::Hang, Act::Ok]);
        let shipping = Recorder::scripted("shipping", [Act::Permanent]);
        let saga = Saga::new("order-1")
            .step(payment.clone(), compensating.clone())
            .step(shipping.clone(), compensating.clone());
        let limit = Duration::from_secs(600);
        let Some(run) = run_with(&saga, seed, &CancelToken::new(), limit).await else {
            panic!(
                "shipping failed for good, so payment is refunded; the refund's first attempt \
                 never answers, and after {} of virtual time your saga was still waiting for it \
                 ({}). A compensation's attempts are cut off after per_attempt_timeout (2 s \
                 here) like an execution's, and retried",
                show(limit),
                describe_log(&saga.log().snapshot()),
            );
        };
        let starts: Vec<Duration> = payment
            .calls_of(Action::Compensate)
            .iter()
            .map(|call| run.at(call.at))
            .collect();
        let first = starts.first().copied().unwrap_or_default();
        let second = starts.get(1).copied().unwrap_or_default();
        let gap = second.saturating_sub(first);
        assert!(
            starts.len() == 2
                && gap >= 2 * SEC
                && gap <= 2 * SEC + 100 * MS + TICK
                && payment.times_undone() == 1,
            "the refund's first attempt hangs: it must be cut off at 2 s (per_attempt_timeout) \
             and retried after a full-jitter sleep of at most 100 ms, so the second attempt \
             starts 2 s to 2.1 s after the first, and the charge is refunded. Yours started \
             refund attempts at {}, and the charge was refunded {} time(s) (seed {seed})",
            show_all(&starts, 6),
            payment.times_undone(),
        );
    }
    // A long per-attempt timeout is kept as given: a hung attempt is cut at 2 hours, not at a
    // minute or an hour.
    let long = StepPolicy {
        base: 100 * MS,
        per_attempt_timeout: 7_200 * SEC,
        total_budget: 86_400 * SEC,
        on_exhausted: OnExhausted::Stop,
        ..super::fixture::policy()
    };
    let step = Recorder::scripted("payment", [Act::Hang, Act::Ok]);
    let saga = Saga::new("order-1").step(step.clone(), long);
    let limit = 2 * 86_400 * SEC;
    let run = run_with(&saga, 4, &CancelToken::new(), limit).await;
    let starts: Vec<Duration> = step
        .attempt_instants()
        .iter()
        .map(|at| run.as_ref().map_or(Duration::ZERO, |run| run.at(*at)))
        .collect();
    let second = starts.get(1).copied().unwrap_or_default();
    assert!(
        starts.len() == 2 && second >= 7_200 * SEC && second <= 7_200 * SEC + 100 * MS + TICK,
        "the first attempt hangs and per_attempt_timeout is 2 h (budget 1 day): it must be cut \
         off at exactly 2 h, the policy's limit, and retried after a full-jitter sleep of at \
         most 100 ms, so the second attempt starts between 2 h and 2 h 100 ms. Yours started \
         attempts at {}{}",
        show_all(&starts, 6),
        if run.is_none() {
            " and was still running after 2 days"
        } else {
            ""
        },
    );
}
