//! Checks of `plan_retry` and `full_jitter` as pure functions, at the edges of their rules.

use std::collections::BTreeSet;
use std::time::Duration;

use exercise::{
    ErrorKind, GiveUp, OnExhausted, Plan, StepError, StepPolicy, full_jitter, plan_retry,
};
use rand::rngs::StdRng;

use super::fixture::{MS, SEC};
use super::support::{catch, seeded, show};

const NS: Duration = Duration::from_nanos(1);

/// 4 attempts, jitter from 100 ms (cap 1 s), a 10 s budget, hints followed for up to 3 s.
fn policy() -> StepPolicy {
    StepPolicy {
        max_attempts: 4,
        base: 100 * MS,
        cap: SEC,
        per_attempt_timeout: 2 * SEC,
        total_budget: 10 * SEC,
        max_hint: 3 * SEC,
        on_exhausted: OnExhausted::Stop,
    }
}

fn error(kind: ErrorKind) -> StepError {
    StepError {
        kind,
        message: "HTTP 503 Service Unavailable".to_owned(),
    }
}

/// 300 attempts, jitter from 100 ms up to a day, a budget of 3,650 days, hints followed for up
/// to 30 days: every quantity far beyond the caps a loop might hide (10 attempts, a minute, an
/// hour, a day).
fn long_policy() -> StepPolicy {
    StepPolicy {
        max_attempts: 300,
        base: 100 * MS,
        cap: DAY,
        per_attempt_timeout: 2 * SEC,
        total_budget: 3_650 * DAY,
        max_hint: 30 * DAY,
        on_exhausted: OnExhausted::Stop,
    }
}

const DAY: Duration = Duration::from_secs(86_400);

fn plan(attempt: u32, kind: ErrorKind, elapsed: Duration, rng: &mut StdRng) -> Plan {
    plan_under(&policy(), attempt, kind, elapsed, rng)
}

fn plan_under(
    policy: &StepPolicy,
    attempt: u32,
    kind: ErrorKind,
    elapsed: Duration,
    rng: &mut StdRng,
) -> Plan {
    let policy = policy.clone();
    let error = error(kind);
    catch(|| plan_retry(&policy, attempt, &error, elapsed, rng)).unwrap_or_else(|message| {
        panic!(
            "plan_retry(attempt = {attempt}, {kind:?}, elapsed = {elapsed:?}) panicked: {message}"
        )
    })
}

fn jitter(retry: u32, base: Duration, cap: Duration, rng: &mut StdRng) -> Duration {
    catch(|| full_jitter(retry, base, cap, rng)).unwrap_or_else(|message| {
        panic!("full_jitter(retry = {retry}, base = {base:?}, cap = {cap:?}) panicked: {message}")
    })
}

#[test]
fn decisions_at_the_edges() {
    use ErrorKind::{Permanent, RetryAfter, Transient};
    let hint = RetryAfter;
    // (why, attempt, kind, elapsed, expected)
    let cases: Vec<(&str, u32, ErrorKind, Duration, Plan)> = vec![
        (
            "a permanent error",
            1,
            Permanent,
            Duration::ZERO,
            Plan::GiveUp(GiveUp::Permanent),
        ),
        (
            "a permanent error on the last attempt is still permanent",
            4,
            Permanent,
            Duration::ZERO,
            Plan::GiveUp(GiveUp::Permanent),
        ),
        (
            "a permanent error past the budget is still permanent",
            2,
            Permanent,
            20 * SEC,
            Plan::GiveUp(GiveUp::Permanent),
        ),
        (
            "attempt 4 of 4 failed",
            4,
            Transient,
            Duration::ZERO,
            Plan::GiveUp(GiveUp::AttemptsUsedUp),
        ),
        (
            "a hint does not lift max_attempts",
            4,
            hint(SEC),
            Duration::ZERO,
            Plan::GiveUp(GiveUp::AttemptsUsedUp),
        ),
        (
            "a hint replaces the backoff",
            1,
            hint(2 * SEC),
            Duration::ZERO,
            Plan::RetryIn(2 * SEC),
        ),
        (
            "a hint of 0 means now",
            2,
            hint(Duration::ZERO),
            Duration::ZERO,
            Plan::RetryIn(Duration::ZERO),
        ),
        (
            "a hint longer than the backoff's cap is followed",
            3,
            hint(2_500 * MS),
            SEC,
            Plan::RetryIn(2_500 * MS),
        ),
        (
            "a hint equal to max_hint",
            1,
            hint(3 * SEC),
            Duration::ZERO,
            Plan::RetryIn(3 * SEC),
        ),
        (
            "a hint 1 ns over max_hint is capped",
            1,
            hint(3 * SEC + NS),
            Duration::ZERO,
            Plan::RetryIn(3 * SEC),
        ),
        (
            "a hint over max_hint is capped",
            1,
            hint(5 * SEC),
            Duration::ZERO,
            Plan::RetryIn(3 * SEC),
        ),
        (
            "a hint ending exactly at the budget",
            2,
            hint(2 * SEC),
            8 * SEC,
            Plan::GiveUp(GiveUp::OutOfTime),
        ),
        (
            "a hint ending 1 ns before the budget",
            2,
            hint(2 * SEC),
            8 * SEC - NS,
            Plan::RetryIn(2 * SEC),
        ),
        (
            "the budget sees the hint before the cap",
            2,
            hint(5 * SEC),
            5 * SEC,
            Plan::GiveUp(GiveUp::OutOfTime),
        ),
        (
            "a capped hint that ends in time, uncapped 1 ns inside",
            2,
            hint(5 * SEC),
            5 * SEC - NS,
            Plan::RetryIn(3 * SEC),
        ),
        (
            "already past the budget",
            1,
            Transient,
            10 * SEC,
            Plan::GiveUp(GiveUp::OutOfTime),
        ),
        (
            "a hint as long as a Duration can be (no overflow)",
            1,
            hint(Duration::MAX),
            SEC,
            Plan::GiveUp(GiveUp::OutOfTime),
        ),
    ];
    for (why, attempt, kind, elapsed, expected) in cases {
        let got = plan(attempt, kind, elapsed, &mut seeded(1));
        assert!(
            got == expected,
            "{why}: plan_retry(attempt = {attempt} of max_attempts = 4, {kind:?}, elapsed = {}) \
             with total_budget 10 s and max_hint 3 s must be {expected:?}; yours returned \
             {got:?}. A permanent error is never retried; no attempt follows the 4th; a hint \
             replaces the backoff, is followed for at most max_hint, and the budget sees it \
             before the cap; no wait may end at or past the budget",
            show(elapsed),
        );
    }

    // The same rules with large numbers: nothing is capped but by the policy.
    let long = long_policy();
    let budget = long.total_budget;
    let long_cases: Vec<(&str, u32, ErrorKind, Duration, Plan)> = vec![
        (
            "attempt 299 of 300 leaves one more",
            299,
            hint(2 * DAY),
            Duration::ZERO,
            Plan::RetryIn(2 * DAY),
        ),
        (
            "attempt 300 of 300 failed",
            300,
            hint(2 * DAY),
            Duration::ZERO,
            Plan::GiveUp(GiveUp::AttemptsUsedUp),
        ),
        (
            "a hint of 2 days under max_hint 30 days",
            1,
            hint(2 * DAY),
            Duration::ZERO,
            Plan::RetryIn(2 * DAY),
        ),
        (
            "a hint of 40 days is capped at max_hint",
            1,
            hint(40 * DAY),
            Duration::ZERO,
            Plan::RetryIn(30 * DAY),
        ),
        (
            "a hint ending exactly at a 10-year budget",
            2,
            hint(2 * DAY),
            budget - 2 * DAY,
            Plan::GiveUp(GiveUp::OutOfTime),
        ),
        (
            "a hint ending 1 ns before a 10-year budget",
            2,
            hint(2 * DAY),
            budget - 2 * DAY - NS,
            Plan::RetryIn(2 * DAY),
        ),
    ];
    for (why, attempt, kind, elapsed, expected) in long_cases {
        let got = plan_under(&long, attempt, kind, elapsed, &mut seeded(1));
        assert!(
            got == expected,
            "{why}: plan_retry(attempt = {attempt} of max_attempts = 300, {kind:?}, elapsed = \
             {}) with total_budget 3,650 days and max_hint 30 days must be {expected:?}; yours \
             returned {got:?}. No limit applies but the policy's: max_attempts, max_hint and \
             the budget, compared to the nanosecond however large",
            show(elapsed),
        );
    }
}

#[test]
fn transient_wait_is_full_jitter_of_the_retry() {
    let policy = policy();
    for seed in 0..50 {
        for attempt in 1..4 {
            let drawn = jitter(attempt - 1, policy.base, policy.cap, &mut seeded(seed));
            let got = plan(
                attempt,
                ErrorKind::Transient,
                Duration::ZERO,
                &mut seeded(seed),
            );
            assert!(
                got == Plan::RetryIn(drawn),
                "after attempt {attempt} fails transiently, the wait is full_jitter(retry = \
                 {}, base, cap, rng), retry counted from 0 (attempt - 1): with the same \
                 generator your full_jitter draws {drawn:?}, but your plan_retry returned {got:?} \
                 (seed {seed})",
                attempt - 1,
            );
            // The same draw at the edge of the budget: ending exactly at it is too late.
            let at_edge = policy.total_budget - drawn;
            let late = plan(attempt, ErrorKind::Transient, at_edge, &mut seeded(seed));
            assert!(
                late == Plan::GiveUp(GiveUp::OutOfTime),
                "a wait of {drawn:?} that would end exactly at the 10 s budget (elapsed {}) must \
                 not be started: the next attempt could not start in time. Expected \
                 GiveUp(OutOfTime); yours returned {late:?} (seed {seed})",
                show(at_edge),
            );
            if !at_edge.is_zero() {
                let in_time = plan(
                    attempt,
                    ErrorKind::Transient,
                    at_edge - NS,
                    &mut seeded(seed),
                );
                assert!(
                    in_time == Plan::RetryIn(drawn),
                    "a wait of {drawn:?} that ends 1 ns before the 10 s budget still fits: \
                     expected RetryIn({drawn:?}); yours returned {in_time:?} (seed {seed})",
                );
            }
        }
    }
    // Late retries of a long policy: ceilings of a day, waits used as drawn, not clamped.
    let long = long_policy();
    for seed in 0..10 {
        for attempt in [40, 299] {
            let drawn = jitter(attempt - 1, long.base, long.cap, &mut seeded(seed));
            let got = plan_under(&long, attempt, ErrorKind::Transient, DAY, &mut seeded(seed));
            assert!(
                got == Plan::RetryIn(drawn),
                "after attempt {attempt} of 300 fails transiently (base 100 ms, cap 1 day, \
                 budget 3,650 days), the wait is full_jitter(retry = {}, base, cap, rng), as \
                 drawn: your full_jitter draws {drawn:?} with the same generator, but your \
                 plan_retry returned {got:?} (seed {seed})",
                attempt - 1,
            );
        }
    }
}

#[test]
fn full_jitter_function() {
    let (base, cap) = (100 * MS, SEC);
    // Bounds, and no overflow however large the retry number.
    for retry in (0..=40).chain([63, 64, 1_000, u32::MAX]) {
        let ceiling = base.saturating_mul(2u32.saturating_pow(retry)).min(cap);
        for seed in 0..20 {
            let delay = jitter(retry, base, cap, &mut seeded(seed));
            assert!(
                delay <= ceiling,
                "full_jitter(retry = {retry}, base 100 ms, cap 1 s) must stay within [0, {}]; \
                 yours returned {} (seed {seed})",
                show(ceiling),
                show(delay),
            );
        }
    }
    // Large ceilings are reached: base 1 ms, cap 30 days, retries whose ceilings run from 17
    // minutes to the cap (2^31 ms is 24.9 days). 400 uniform draws all stay below 90 % of the
    // ceiling with probability 0.9^400 < 10^-18.
    let month = 30 * 86_400 * SEC;
    for retry in [20, 25, 30, 31, 32, 40, 1_000] {
        // 2^35 ms is above 30 days, so the shift stops there.
        let ceiling = Duration::from_millis(1u64 << retry.min(35)).min(month);
        let mut rng = seeded(7);
        let draws: Vec<Duration> = (0..400)
            .map(|_| jitter(retry, MS, month, &mut rng))
            .collect();
        let high = draws.iter().copied().max().unwrap_or_default();
        assert!(
            high <= ceiling && high >= ceiling * 9 / 10,
            "full_jitter(retry = {retry}, base 1 ms, cap 30 days) draws from [0, min(cap, \
             base · 2^{retry})] = [0, {}]: over 400 draws the largest must be at most that and \
             near it; yours was {}{}",
            show(ceiling),
            show(high),
            if high > ceiling {
                ", above the ceiling: an exponent one too large, or the cap not applied?"
            } else {
                ", far below it: a retry number or a ceiling clamped below the cap?"
            },
        );
    }
    // Past retry 31, 2^retry leaves a u32, yet base · 2^retry can still be far below the cap:
    // base 1 ns, cap a year, retries 32, 40 and 50 give 4.3 s, 18.3 min and 13 days, not the
    // cap. 400 draws all below 90 % of the ceiling: probability 0.9^400 < 10^-18.
    let year = 365 * 86_400 * SEC;
    for retry in [32, 40, 50] {
        let ceiling = Duration::from_nanos(1u64 << retry);
        let mut rng = seeded(11);
        let draws: Vec<Duration> = (0..400)
            .map(|_| jitter(retry, NS, year, &mut rng))
            .collect();
        let high = draws.iter().copied().max().unwrap_or_default();
        assert!(
            high <= ceiling && high >= ceiling * 9 / 10,
            "full_jitter(retry = {retry}, base 1 ns, cap 1 year) draws from [0, min(cap, \
             base · 2^{retry})] = [0, {}]: over 400 draws the largest must be at most that and \
             near it; yours was {}{}",
            show(ceiling),
            show(high),
            if high > ceiling * 1_000 {
                ", near the cap: is the cap taken as soon as 2^retry no longer fits in a u32 \
                 (`checked_pow` giving `None`)? base · 2^retry can still be far below the cap"
            } else if high > ceiling {
                ", above the ceiling: an exponent one too large?"
            } else {
                ", far below it: a retry number or a ceiling clamped too low?"
            },
        );
    }
    // A zero base stays zero at every retry, however large.
    for retry in [32, 1_000, u32::MAX] {
        let delay = jitter(retry, Duration::ZERO, year, &mut seeded(12));
        assert!(
            delay.is_zero(),
            "full_jitter(retry = {retry}, base 0, cap 1 year) must be 0: min(cap, 0 · 2^retry) \
             is 0; yours returned {}",
            show(delay),
        );
    }
    // A cap 1 ns either side of base · 2^k.
    for (cap, ceiling) in [(800 * MS - NS, 800 * MS - NS), (800 * MS + NS, 800 * MS)] {
        let mut rng = seeded(3);
        let draws: Vec<Duration> = (0..400).map(|_| jitter(3, base, cap, &mut rng)).collect();
        let high = draws.iter().copied().max().unwrap_or_default();
        assert!(
            high <= ceiling && high >= ceiling * 9 / 10,
            "full_jitter(retry = 3, base 100 ms, cap {cap:?}) draws from [0, min(cap, 800 ms)] = \
             [0, {ceiling:?}]: over 400 draws the largest must be at most that and near it; \
             yours was {high:?}",
        );
    }
    // The distribution: uniform, so the mean is half the ceiling and a tenth of the draws fall
    // in the lowest tenth.
    let mut rng = seeded(4);
    let ceiling = 400 * MS;
    let draws: Vec<Duration> = (0..4_000).map(|_| jitter(2, base, cap, &mut rng)).collect();
    let mean = draws.iter().sum::<Duration>() / draws.len() as u32;
    let low = draws.iter().filter(|d| **d < ceiling / 10).count();
    assert!(
        (170 * MS..=230 * MS).contains(&mean) && (200..=600).contains(&low),
        "full_jitter(retry = 2, base 100 ms, cap 1 s) is uniform on [0, 400 ms]: the mean of \
         4,000 draws is about 200 ms and about 400 of them fall below 40 ms; yours had mean {} \
         and {low} below 40 ms",
        show(mean),
    );
    // Nanosecond resolution: a 3 ns ceiling is not rounded away.
    let mut rng = seeded(5);
    let tiny: BTreeSet<Duration> = (0..400).map(|_| jitter(0, 3 * NS, SEC, &mut rng)).collect();
    assert!(
        tiny.len() == 4 && tiny.iter().all(|d| *d <= 3 * NS),
        "full_jitter(retry = 0, base 3 ns, cap 1 s) draws uniformly from [0, 3 ns], both ends \
         included and to the nanosecond (not rounded to milliseconds): 400 draws give each of \
         0, 1, 2 and 3 ns many times over; yours gave {tiny:?}",
    );
    for (base, cap) in [(Duration::ZERO, SEC), (100 * MS, Duration::ZERO)] {
        let delay = jitter(5, base, cap, &mut seeded(6));
        assert!(
            delay.is_zero(),
            "full_jitter(retry = 5, base {base:?}, cap {cap:?}) has a ceiling of 0: it must \
             return 0; yours returned {delay:?}",
        );
    }
}
