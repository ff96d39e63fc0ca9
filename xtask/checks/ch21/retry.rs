//! Checks of the compensation's retry loop: transient errors retried with backoff, permanent
//! ones not, and no wait once the loop gives up.

use std::collections::BTreeSet;
use std::time::Duration;

use exercise::ErrorKind::{Permanent, Transient};
use exercise::SagaOutcome;

use super::fixture::{Kind, TICK, ceiling, compensated, fails, list, ok, run, stuck};
use crate::support::{show, show_all};

#[tokio::test(start_paused = true)]
async fn transient_is_retried() {
    let steps = [
        ok("inventory"),
        ok("payment").compensation_fails(2, Transient),
        fails("shipping", Permanent),
    ];
    let run = run(&steps, 5).await;
    let refunds = run.calls_to("payment", Kind::Compensate);
    let attempts: Vec<u32> = refunds.iter().map(|call| call.attempt).collect();
    assert!(
        refunds.len() == 3,
        "payment's compensation fails twice with a transient error, then succeeds: a \
         compensation must succeed, so a transient failure is retried, and it must be called 3 \
         times; yours called it {} time(s) and ended {}",
        refunds.len(),
        run.outcome_text(),
    );
    assert!(
        attempts == [1, 2, 3],
        "each attempt of a compensation must carry its number in the context \
         (self.context(index, attempt)): expected attempts [1, 2, 3], yours passed {attempts:?}",
    );
    let done = matches!(&run.outcome, Some(SagaOutcome::Compensated { .. }))
        && compensated(&run.outcome).is_some_and(|names| names == &["payment", "inventory"]);
    assert!(
        done,
        "once payment's retried compensation succeeds, inventory is undone too and the saga \
         ends SagaOutcome::Compensated with compensated = [payment, inventory]; yours ended {}",
        run.outcome_text(),
    );
}

#[tokio::test(start_paused = true)]
async fn backoff_between_attempts() {
    const SEEDS: u64 = 60;
    let steps = [
        ok("inventory"),
        ok("payment").compensation_fails(3, Transient),
        fails("shipping", Permanent),
    ];
    let mut waits: Vec<Vec<Duration>> = vec![Vec::new(); 3];
    for seed in 0..SEEDS {
        let run = run(&steps, seed).await;
        let times: Vec<Duration> = run
            .calls_to("payment", Kind::Compensate)
            .iter()
            .map(|call| call.at)
            .collect();
        assert!(
            times.len() == 4,
            "payment's compensation fails 3 times with a transient error and then succeeds; with \
             max_attempts = 4 it must be called 4 times; yours called it {} time(s) (seed {seed})",
            times.len(),
        );
        let gaps: Vec<Duration> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
        for (retry, gap) in gaps.iter().enumerate() {
            let limit = ceiling(retry as u32);
            assert!(
                *gap <= limit + TICK,
                "the wait before retry {} of a compensation must be at most \
                 min(cap, base·2^{retry}) = {} (base 100 ms, cap 1 s; the wait after the first \
                 failure uses retry = 0); yours waited {} (seed {seed}, waits {})",
                retry + 1,
                show(limit),
                show(*gap),
                show_all(&gaps, 3),
            );
            waits[retry].push(*gap);
        }
    }
    for (retry, observed) in waits.iter().enumerate() {
        let limit = ceiling(retry as u32);
        let mean = observed.iter().sum::<Duration>() / observed.len() as u32;
        assert!(
            mean >= limit / 5,
            "retries of a compensation must back off: over {SEEDS} seeded runs the wait before \
             retry {} averaged {} (a full-jitter wait under {} averages about {}); sleep \
             self.policy.delay(retry, rng) with tokio::time::sleep between two attempts",
            retry + 1,
            show(mean),
            show(limit),
            show(limit / 2),
        );
        let distinct: BTreeSet<Duration> = observed.iter().copied().collect();
        assert!(
            distinct.len() >= 10,
            "over {SEEDS} seeded runs the wait before retry {} of a compensation took only {} \
             distinct value(s), for example {}: draw it with self.policy.delay(retry, rng), a \
             full-jitter draw, not a fixed schedule (chapter 8)",
            retry + 1,
            distinct.len(),
            show(observed[0]),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn permanent_not_retried() {
    let steps = [
        ok("inventory"),
        ok("payment").compensation_stuck(Permanent),
        fails("shipping", Permanent),
    ];
    let run = run(&steps, 6).await;
    let refunds = run.count("payment", Kind::Compensate);
    assert!(
        refunds == 1,
        "payment's compensation fails with a permanent error, which no wait can fix: it must be \
         called once and not retried; yours called it {refunds} time(s) over {} of virtual time",
        show(run.returned),
    );
    let stuck_names: Option<Vec<&str>> =
        stuck(&run.outcome).map(|stuck| stuck.iter().map(|s| s.step.as_str()).collect());
    assert!(
        stuck_names == Some(vec!["payment"])
            && compensated(&run.outcome).is_some_and(|names| names == &["inventory"]),
        "a compensation that fails permanently goes to a human at once (after inventory is \
         undone too): the saga must end SagaOutcome::NeedsHuman with stuck = [payment] and \
         compensated = [inventory]; yours ended {}",
        run.outcome_text(),
    );
}

#[tokio::test(start_paused = true)]
async fn no_sleep_after_giving_up() {
    let cases = [
        (
            "fails with a transient error every time",
            Transient,
            "its last attempt (4 of 4)",
        ),
        (
            "fails with a permanent error",
            Permanent,
            "its permanent error",
        ),
    ];
    for (what, kind, moment) in cases {
        for seed in 0..20 {
            let steps = [
                ok("inventory"),
                ok("payment").compensation_stuck(kind),
                fails("shipping", Permanent),
            ];
            let run = run(&steps, seed).await;
            let last_refund = run
                .calls_to("payment", Kind::Compensate)
                .last()
                .map(|call| call.at);
            let release = run
                .calls_to("inventory", Kind::Compensate)
                .first()
                .map(|call| call.at);
            let (Some(last_refund), Some(release)) = (last_refund, release) else {
                panic!(
                    "payment's compensation {what}; after it gives up, inventory must still be \
                     compensated; yours made the calls {} (seed {seed})",
                    list(&run.labels()),
                );
            };
            let waited = release.saturating_sub(last_refund);
            assert!(
                waited.is_zero(),
                "payment's compensation {what}: after {moment} the orchestrator must give up at \
                 once and move on to inventory, since no attempt follows; yours waited {} first \
                 (seed {seed})",
                show(waited),
            );
        }
    }
}
