//! Checks at huge retry numbers: no panic, no wrap-around, the cap exactly, to the nanosecond.

use std::time::Duration;

use super::fixture::{DAY, MS, SECOND, Setting, delay, expected, try_delay, try_items};
use super::support::show;

/// Configurations whose growth overflows `u32`, `u64` and `u128` at different retry numbers, and
/// one that never grows at all (factor 1: the delay before retry `u32::MAX` is still the base, and
/// a loop that multiplies until it reaches the cap would run four billion times).
const SETTINGS: [Setting; 6] = [
    Setting::new(Duration::from_millis(100), 2, Duration::from_secs(30)),
    Setting::new(Duration::from_millis(250), 1, Duration::from_secs(30)),
    Setting::new(Duration::from_secs(1), 1_000, Duration::from_secs(3_600)),
    Setting::new(Duration::from_millis(1), u32::MAX, Duration::from_secs(DAY)),
    Setting::new(Duration::from_nanos(1), 2, Duration::MAX),
    Setting::new(Duration::MAX, 3, Duration::MAX),
];

/// Retry numbers around the overflow points of 2^n and beyond.
const HUGE_RETRIES: [u32; 14] = [
    31,
    32,
    33,
    63,
    64,
    65,
    95,
    127,
    128,
    129,
    1_000,
    65_536,
    u32::MAX - 1,
    u32::MAX,
];

#[test]
fn no_panic_at_huge_retries() {
    for setting in SETTINGS {
        let schedule = setting.build(200);
        for retry in (0..=200).chain(HUGE_RETRIES) {
            if let Err(message) = try_delay(&schedule, &setting, retry) {
                let advice = if message.contains("float") {
                    "A float grows to infinity, which no Duration holds: compute in integer \
                     nanoseconds, with checked or saturating arithmetic"
                } else {
                    "Past the point where base · factor^retry stops fitting in an integer, the \
                     delay is simply the cap: use checked or saturating arithmetic"
                };
                panic!("{message}. {advice}");
            }
        }
        if let Err(message) = try_items(schedule, &setting, 200) {
            panic!("{message} (within the first 200 delays)");
        }
    }
}

#[test]
fn exactly_cap_at_huge_retries() {
    for setting in SETTINGS {
        let schedule = setting.build(200);
        for retry in (0..=130).chain(HUGE_RETRIES) {
            let wanted = expected(&setting, retry);
            let got = delay(&schedule, &setting, retry);
            if got == wanted {
                continue;
            }
            let why = if got < wanted && wanted == setting.cap {
                "base · factor^retry is far beyond the cap here, so the delay is the cap; a \
                 smaller value means the arithmetic wrapped around (wrapping or truncating \
                 operations, a shift that wrapped, an `as` cast that cut bits)"
            } else if got > setting.cap {
                "the cap is the longest any delay may be"
            } else {
                "the delay is min(cap, base · factor^retry)"
            };
            panic!(
                "with {}, delay(retry = {retry}) should be {} ({:?}); yours was {} ({got:?}): \
                 {why}",
                setting.describe(),
                show(wanted),
                wanted,
                show(got),
            );
        }
    }
}

#[test]
fn cap_exact_to_the_nanosecond() {
    // Caps of 100 days and more whose nanoseconds an f64 number of seconds cannot hold: above
    // 2^23 s (about 97 days) neighbouring f64 values are more than a nanosecond apart.
    let caps = [
        Duration::new(100 * DAY, 1),
        Duration::new(365 * DAY, 999_999_999),
        Duration::new(100_000_000, 123_456_789),
    ];
    for cap in caps {
        for (base, factor) in [(SECOND, 2), (100 * MS, 10)] {
            let setting = Setting::new(base, factor, cap);
            let schedule = setting.build(10);
            for retry in [40, 64, 1_000, u32::MAX] {
                let got = delay(&schedule, &setting, retry);
                let detail = if got > cap {
                    format!("{:?} above it", got - cap)
                } else {
                    format!("{:?} below it", cap - got)
                };
                // An f64 of seconds moves a cap of this size by microseconds at most.
                let advice = if got.abs_diff(cap) < Duration::from_millis(1) {
                    "A cap this large (above 2^23 s, about 97 days) has more nanoseconds than an \
                     f64 number of seconds can hold, so a round trip through \
                     as_secs_f64/from_secs_f64 (or mul_f64) moves it: compute in integer \
                     nanoseconds"
                } else {
                    "base · factor^retry is far beyond the cap here, so the delay is exactly the \
                     cap: min(cap, base · factor^retry), with arithmetic that never wraps or cuts \
                     bits"
                };
                assert!(
                    got == cap,
                    "with {}, delay(retry = {retry}) must be the cap, {cap:?}, to the \
                     nanosecond; yours was {got:?}, {detail}. {advice}",
                    setting.exact(),
                );
            }
        }
    }
}
