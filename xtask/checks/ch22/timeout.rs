//! Checks that a hung attempt is cut off by the per-attempt timeout.

use std::time::Duration;

use exercise::{CancelToken, OnExhausted, Saga, StepPolicy};

use super::fixture::{Act, MS, Recorder, SEC, TICK, describe_log, policy, run_with};
use crate::support::{show, show_all};

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
}
