//! Checks of the schedule's values: doubling then flat at the cap, `base` and `factor` each in
//! its role, and an iteration that ends after `max_retries` delays.

use std::time::Duration;

use super::fixture::{
    MS, SECOND, Setting, delay, expected, first_difference, items, show_expected, show_observed,
};
use super::support::{catch, show, show_all};

/// The chapter's running example: 100, 200, 400, 800 ms, … 25.6 s, then 30 s.
const EXAMPLE: Setting = Setting::new(Duration::from_millis(100), 2, Duration::from_secs(30));

/// The example's first twelve delays, written out by hand.
fn example_delays() -> Vec<Duration> {
    [
        100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000, 30_000,
    ]
    .map(|ms| ms * MS)
    .to_vec()
}

#[test]
fn iterator_doubles_then_caps() {
    let wanted = example_delays();
    let got = items(EXAMPLE.build(12), &EXAMPLE, 22);
    if let Some((retry, want, saw)) = first_difference(&wanted, &got) {
        panic!(
            "Exponential::new({}, max_retries = 12) should yield {}: the base, doubled after \
             each retry, then the cap from retry 9 on. Yours yielded {}; the first difference is \
             the delay before retry {retry}: expected {}, got {}",
            EXAMPLE.describe(),
            show_all(&wanted, 12),
            show_all(&got, 12),
            show_expected(want),
            show_observed(saw),
        );
    }
}

#[test]
fn delay_doubles_then_caps() {
    // max_retries limits the iterator, not `delay`: delay answers for any retry number.
    let schedule = EXAMPLE.build(3);
    let wanted = example_delays();
    let got: Vec<Duration> = (0..12)
        .map(|retry| delay(&schedule, &EXAMPLE, retry))
        .collect();
    if let Some((retry, want, saw)) = first_difference(&wanted, &got) {
        panic!(
            "with {} (and max_retries = 3), delay(0) to delay(11) should be {}; yours gave {}. \
             delay({retry}) should be {}, yours was {}. (max_retries ends the iterator; \
             `delay` answers for any retry number.)",
            EXAMPLE.describe(),
            show_all(&wanted, 12),
            show_all(&got, 12),
            show_expected(want),
            show_observed(saw),
        );
    }
}

#[test]
fn base_is_not_the_power() {
    let settings = [
        Setting::new(50 * MS, 2, 600 * SECOND),
        Setting::new(3 * MS, 2, 600 * SECOND),
    ];
    for setting in settings {
        let schedule = setting.build(4);
        let wanted: Vec<Duration> = (0..4).map(|retry| expected(&setting, retry)).collect();
        let got: Vec<Duration> = (0..4)
            .map(|retry| delay(&schedule, &setting, retry))
            .collect();
        if got == wanted {
            continue;
        }
        let base_ms = setting.base.as_millis() as u64;
        let powers: Vec<Duration> = (1..=4u32)
            .map(|n| Duration::from_millis(base_ms.saturating_pow(n)).min(setting.cap))
            .collect();
        let diagnosis = if got == powers {
            format!(
                "those are {base_ms}, {base_ms}², {base_ms}³, … ms: the base raised to a power, \
                 the trap of tokio-retry's ExponentialBackoff::from_millis({base_ms}). The base \
                 is the first delay; the factor is what multiplies it"
            )
        } else {
            "the base is the first delay, and every later delay is the previous one times the \
             factor"
                .to_owned()
        };
        panic!(
            "with {}, the first four delays should be {} (base · factor^retry); yours were {}: \
             {diagnosis}",
            setting.describe(),
            show_all(&wanted, 4),
            show_all(&got, 4),
        );
    }
}

#[test]
fn factor_is_used() {
    let settings = [
        Setting::new(10 * MS, 3, 3_600 * SECOND),
        Setting::new(MS, 10, 10 * SECOND),
        Setting::new(250 * MS, 1, 30 * SECOND),
    ];
    for setting in settings {
        let schedule = setting.build(7);
        let wanted: Vec<Duration> = (0..7).map(|retry| expected(&setting, retry)).collect();
        let got = items(schedule, &setting, 17);
        if let Some((retry, want, saw)) = first_difference(&wanted, &got) {
            panic!(
                "with {} and max_retries = 7 the delays should be {}: each one the previous \
                 times {}, up to the cap. Yours were {}; the delay before retry {retry} should be \
                 {}, yours was {}",
                setting.describe(),
                show_all(&wanted, 7),
                setting.factor,
                show_all(&got, 7),
                show_expected(want),
                show_observed(saw),
            );
        }
    }
}

#[test]
fn finite() {
    for max_retries in [0, 1, 2, 5, 12, 100, 1_000, 70_000, 1_500_000] {
        let mut schedule = EXAMPLE.build(max_retries);
        let limit = max_retries as usize + 10;
        let run = catch(move || {
            let counted = schedule.by_ref().take(limit).count();
            let after: Vec<Option<Duration>> = (0..3).map(|_| schedule.next()).collect();
            (counted, after)
        });
        let (counted, after) = run.unwrap_or_else(|message| {
            panic!(
                "iterating Exponential::new({}, max_retries = {max_retries}) panicked: {message}",
                EXAMPLE.describe()
            )
        });
        assert!(
            counted == max_retries as usize,
            "with max_retries = {max_retries} the iterator must yield exactly {max_retries} \
             delay(s) and then None (give up); yours yielded {}{}",
            if counted == limit {
                format!("{limit} and was still going when the check stopped asking")
            } else {
                counted.to_string()
            },
            if counted == limit {
                ": a schedule that never returns None retries forever"
            } else {
                ""
            },
        );
        assert!(
            after.iter().all(Option::is_none),
            "with max_retries = {max_retries}, once the iterator has returned None it must keep \
             returning None; yours then returned {}",
            after
                .iter()
                .map(|item| item.map_or("None".to_owned(), |d| format!("Some({})", show(d))))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
}

#[test]
fn cap_one_nanosecond_either_side() {
    // Caps 1 ns either side of base · factor^k, where "reached the cap?" is decided by a single
    // nanosecond: below the product the cap wins from retry k on; above it retry k still gets
    // the exact product and the cap comes one retry later. Each sequence is replayed whole, by the
    // iterator and by `delay`, so a comparison done in milliseconds, in floats, or on the exponent
    // instead of the delay shows.
    let nano = Duration::from_nanos(1);
    let settings = [
        Setting::new(100 * MS, 2, 800 * MS - nano),
        Setting::new(100 * MS, 2, 800 * MS + nano),
        Setting::new(100 * MS, 2, 800 * MS),
        Setting::new(10 * MS, 3, 270 * MS - nano),
        Setting::new(10 * MS, 3, 270 * MS + nano),
        Setting::new(nano, 10, Duration::from_nanos(1_000_001)),
        Setting::new(7 * nano, 2, Duration::from_nanos(7 * 1024 - 1)),
        // Far out, where f64 seconds are 1.9 ns apart: 104,857.6 s · 2^7 is exactly
        // 13,421,772.8 s, and in f64 it equals the f64 of either cap 1 ns away.
        Setting::new(
            104_857_600 * MS,
            2,
            Duration::from_millis(13_421_772_800) + nano,
        ),
        Setting::new(
            104_857_600 * MS,
            2,
            Duration::from_millis(13_421_772_800) - nano,
        ),
    ];
    for setting in settings {
        let wanted: Vec<Duration> = (0..12).map(|retry| expected(&setting, retry)).collect();
        let from_iterator = items(setting.build(12), &setting, 22);
        let schedule = setting.build(12);
        let from_delay: Vec<Duration> = (0..12)
            .map(|retry| delay(&schedule, &setting, retry))
            .collect();
        for (what, got) in [
            ("the iterator", from_iterator),
            ("delay(0..12)", from_delay),
        ] {
            if let Some((retry, want, saw)) = first_difference(&wanted, &got) {
                panic!(
                    "with {} (a cap one nanosecond away from base · factor^k), {what} should give \
                     {wanted:?}; yours gave {got:?}. The delay before retry {retry} should be \
                     {want:?}, yours was {saw:?}: compare the exact product with the exact cap, \
                     to the nanosecond",
                    setting.exact(),
                );
            }
        }
    }
}
