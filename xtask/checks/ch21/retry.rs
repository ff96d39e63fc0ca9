//! Checks of the compensation's retry loop: transient errors retried with backoff, permanent
//! ones not, and no wait once the loop gives up.

use std::collections::BTreeSet;
use std::time::Duration;

use exercise::ErrorKind::{Permanent, Transient};
use exercise::{CompensationPolicy, SagaOutcome};
use rand::RngExt;

use super::fixture::{
    Kind, MS, TICK, ceiling, ceiling_of, compensated, error_message, fails, list, ok, policy, run,
    run_saga, stuck,
};
use super::support::{seeded, show, show_all};

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

    // The last allowed attempt (4 of 4) succeeds: that is a success, not a hand-over.
    let steps = [
        ok("inventory"),
        ok("payment").compensation_fails(3, Transient),
        fails("shipping", Permanent),
    ];
    let last_try = super::fixture::run(&steps, 15).await;
    let refunds = last_try.count("payment", Kind::Compensate);
    assert!(
        refunds == 4 && matches!(&last_try.outcome, Some(SagaOutcome::Compensated { .. })),
        "payment's compensation fails 3 times and succeeds on its 4th attempt, the last one \
         max_attempts = 4 allows: it must be called 4 times and the saga must end \
         SagaOutcome::Compensated; yours called it {refunds} time(s) and ended {}",
        last_try.outcome_text(),
    );
}

/// The waits a correct orchestrator sleeps, in order, when its compensations fail as
/// `failures` says (newest step first), drawn from a clone of the check's seeded generator.
fn expected_waits(seed: u64, policy: &CompensationPolicy, failures: &[u32]) -> Vec<Vec<Duration>> {
    let mut rng = seeded(seed);
    failures
        .iter()
        .map(|&failed| {
            let retries = failed.min(policy.max_attempts - 1);
            (0..retries)
                .map(|retry| rng.random_range(Duration::ZERO..=ceiling_of(policy, retry)))
                .collect()
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn waits_are_policy_draws() {
    // Undone newest first: shipping fails once, payment keeps failing (4 attempts, 3 waits),
    // inventory fails twice. Each wait is the next draw of the generator the saga was given.
    let steps = [
        ok("inventory").compensation_fails(2, Transient),
        ok("payment").compensation_stuck(Transient),
        ok("shipping").compensation_fails(1, Transient),
        fails("invoice", Permanent),
    ];
    for seed in 0..20 {
        let run = run(&steps, seed).await;
        let expected = expected_waits(seed, &policy(), &[1, u32::MAX, 2]);
        for (step, waits) in ["shipping", "payment", "inventory"].iter().zip(&expected) {
            let times: Vec<Duration> = run
                .calls_to(step, Kind::Compensate)
                .iter()
                .map(|call| call.at)
                .collect();
            let observed: Vec<Duration> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
            let matches = observed.len() == waits.len()
                && observed
                    .iter()
                    .zip(waits)
                    .all(|(seen, drawn)| *seen >= *drawn && *seen <= *drawn + TICK);
            assert!(
                matches,
                "each wait between two attempts of a compensation is self.policy.delay(retry, \
                 rng): the next draw of the generator run was given, retry counted from 0 for \
                 each compensation, and no draw when the loop gives up. With seed {seed}, \
                 shipping, payment and inventory (undone in that order) fail 1, 4 and 2 times: \
                 {step}'s waits must be {}; yours were {}",
                show_all(waits, 4),
                show_all(&observed, 4),
            );
        }
    }
    // Long waits, slept as drawn: 40 attempts, ceilings from 1 ms doubling up to a day (reached
    // at retry 27), so the last 12 waits are drawn under a day and the run lasts days of virtual
    // time. A wait clamped to a minute or an hour, a retry number clamped, or a loop that stops
    // after an hour of waiting all sleep otherwise.
    let long = CompensationPolicy {
        max_attempts: 40,
        base: MS,
        cap: Duration::from_secs(86_400),
    };
    let steps = [
        ok("inventory"),
        ok("payment").compensation_stuck(Transient),
        fails("shipping", Permanent),
    ];
    for seed in 0..3 {
        let run = run_saga("order-21", &steps, seed, long).await;
        let waits = &expected_waits(seed, &long, &[u32::MAX])[0];
        let times: Vec<Duration> = run
            .calls_to("payment", Kind::Compensate)
            .iter()
            .map(|call| call.at)
            .collect();
        let observed: Vec<Duration> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
        let first_wrong = (0..waits.len().max(observed.len())).find(|&retry| {
            match (observed.get(retry), waits.get(retry)) {
                (Some(seen), Some(drawn)) => *seen < *drawn || *seen > *drawn + TICK,
                _ => true,
            }
        });
        if let Some(retry) = first_wrong {
            let seen = observed.get(retry).map_or_else(
                || "no wait (no further attempt)".to_owned(),
                |wait| show(*wait),
            );
            let drawn = waits.get(retry).map_or_else(
                || "no wait (the loop gives up)".to_owned(),
                |wait| show(*wait),
            );
            panic!(
                "each wait is self.policy.delay(retry, rng), slept as drawn however long: with \
                 max_attempts = 40, base 1 ms and cap 1 day, payment's compensation keeps failing \
                 and must be called 40 times, with 39 waits drawn under ceilings doubling from \
                 1 ms to a day. With seed {seed}, wait {} (retry {retry}, ceiling {}) must be {drawn}; \
                 yours was {seen} ({} call(s) in all, {} waits)",
                retry + 1,
                show(ceiling_of(&long, retry as u32)),
                times.len(),
                observed.len(),
            );
        }
    }
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
        // Correct waits are full-jitter draws (rounded up to tokio's 1 ms tick, which only raises
        // them): their mean falls below limit / 5 when 60 uniform draws on [0, 1] sum below 12,
        // probability 4.8 in 10^18 (Irwin-Hall), and all 60 land on at most 9 of the >= 100
        // possible whole-millisecond values with probability below C(100, 9)·(9/100)^60, about
        // 3 in 10^51. Both tests, for all 3 retries: below 1.5 in 10^17.
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
    // A permanent error after a transient one: the first is retried, the second is not.
    let steps = [
        ok("inventory"),
        ok("payment").compensation_script(&[Transient, Permanent]),
        fails("shipping", Permanent),
    ];
    let refused = super::fixture::run(&steps, 16).await;
    let refunds = refused.count("payment", Kind::Compensate);
    let last = error_message("payment", Kind::Compensate, 2);
    let reported = stuck(&refused.outcome)
        .and_then(|stuck| stuck.first())
        .map(|failure| (failure.error.kind, failure.error.message.clone()));
    assert!(
        refunds == 2 && reported == Some((Permanent, last.clone())),
        "payment's compensation fails transiently, then permanently: the transient failure is \
         retried, the permanent one is not, whatever attempt it comes on. It must be called \
         twice and handed over with its permanent error {last:?}; yours called it {refunds} \
         time(s) and ended {}",
        refused.outcome_text(),
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
