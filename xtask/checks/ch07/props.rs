//! Property tests (proptest) over the whole range of retry numbers, up to `u32::MAX`, and a wide
//! range of settings, from 1 ns to `Duration::MAX`. The runner is seeded, so every run tries the
//! same cases and a failure is reproducible; proptest shrinks it to a small example first.

use std::fmt;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use super::fixture::{Setting, from_nanos, try_delay, try_items};

/// The most nanoseconds a `Duration` holds.
fn max_nanos() -> u128 {
    Duration::MAX.as_nanos()
}

/// Nanosecond counts spread over every order of magnitude, from 1 ns to `Duration::MAX`.
fn nanos_any_scale() -> impl Strategy<Value = u128> {
    (1u32..=94, any::<u128>()).prop_map(|(bits, raw)| (raw >> (128 - bits)).clamp(1, max_nanos()))
}

fn factors() -> impl Strategy<Value = u32> {
    prop_oneof![1u32..=10, 1u32..=1_000, 1u32..=u32::MAX, Just(u32::MAX)]
}

fn retries() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..=130, any::<u32>(), (u32::MAX - 1_000)..=u32::MAX]
}

/// Everyday settings (milliseconds to an hour) and settings at any scale, with base ≤ cap.
fn settings() -> impl Strategy<Value = Setting> {
    let everyday = (1u64..=10_000, 1u32..=10, 1u64..=3_600_000).prop_map(|(a, factor, b)| {
        Setting::new(
            Duration::from_millis(a.min(b)),
            factor,
            Duration::from_millis(a.max(b)),
        )
    });
    let any_scale = (nanos_any_scale(), factors(), nanos_any_scale()).prop_map(|(a, factor, b)| {
        Setting::new(from_nanos(a.min(b)), factor, from_nanos(a.max(b)))
    });
    let doubling = (nanos_any_scale(), nanos_any_scale())
        .prop_map(|(a, b)| Setting::new(from_nanos(a.min(b)), 2, from_nanos(a.max(b))));
    prop_oneof![everyday, any_scale, doubling]
}

/// A case as proptest reports it: the setting to the nanosecond and the retry number.
#[derive(Clone)]
struct Case {
    setting: Setting,
    retry: u32,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, retry = {}", self.setting.exact(), self.retry)
    }
}

/// A case with two retry numbers, for comparing two delays.
#[derive(Clone)]
struct Pair {
    setting: Setting,
    retry: u32,
    other: u32,
}

impl fmt::Debug for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, retries {} and {}",
            self.setting.exact(),
            self.retry,
            self.other
        )
    }
}

fn cases() -> impl Strategy<Value = Case> {
    (settings(), retries()).prop_map(|(setting, retry)| Case { setting, retry })
}

/// Runs a property over 256 seeded cases; a failure panics with proptest's smallest example.
fn check<S: Strategy>(rule: &str, strategy: S, property: impl Fn(S::Value) -> Result<(), String>)
where
    S::Value: fmt::Debug,
{
    let config = Config {
        failure_persistence: None,
        cases: 256,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let outcome = runner.run(&strategy, |value| {
        property(value).map_err(TestCaseError::fail)
    });
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(reason, value)) => {
            panic!("{rule}. The smallest failing case proptest found: {value:?}. {reason}")
        }
        Err(TestError::Abort(reason)) => panic!("{rule}: the property test stopped: {reason}"),
    }
}

#[test]
fn never_above_cap() {
    check(
        "No delay may exceed the cap",
        cases(),
        |Case { setting, retry }| {
            let schedule = setting.try_build(70)?;
            let got = try_delay(&schedule, &setting, retry)?;
            if got > setting.cap {
                return Err(format!(
                    "delay(retry = {retry}) returned {got:?}, {:?} above the cap",
                    got - setting.cap
                ));
            }
            let items = try_items(schedule, &setting, 70)?;
            if let Some((index, item)) = items.iter().enumerate().find(|(_, d)| **d > setting.cap) {
                return Err(format!(
                    "The iterator's delay before retry {index} was {item:?}, {:?} above the cap",
                    *item - setting.cap
                ));
            }
            Ok(())
        },
    );
}

#[test]
fn never_decreases() {
    let strategy = (settings(), retries(), retries()).prop_map(|(setting, retry, other)| Pair {
        setting,
        retry,
        other,
    });
    check(
        "The delays must never decrease as the retry number grows",
        strategy,
        |Pair {
             setting,
             retry,
             other,
         }| {
            let schedule = setting.try_build(70)?;
            let mut pairs = vec![(retry.min(other), retry.max(other))];
            if retry < u32::MAX {
                pairs.push((retry, retry + 1));
            }
            for (earlier, later) in pairs {
                let (first, second) = (
                    try_delay(&schedule, &setting, earlier)?,
                    try_delay(&schedule, &setting, later)?,
                );
                if second < first {
                    return Err(format!(
                        "delay(retry = {earlier}) = {first:?} but delay(retry = {later}) = \
                         {second:?}: the wait went down"
                    ));
                }
            }
            let items = try_items(schedule, &setting, 70)?;
            if let Some(i) = (1..items.len()).find(|&i| items[i] < items[i - 1]) {
                return Err(format!(
                    "The iterator yielded {:?} before retry {} and then {:?} before retry {i}",
                    items[i - 1],
                    i - 1,
                    items[i]
                ));
            }
            Ok(())
        },
    );
}

#[test]
fn iterator_matches_delay() {
    check(
        "The iterator's k-th delay must equal delay(k)",
        settings(),
        |setting| {
            let schedule = setting.try_build(64)?;
            let items = try_items(schedule.clone(), &setting, 64)?;
            for (k, item) in items.iter().enumerate() {
                let direct = try_delay(&schedule, &setting, k as u32)?;
                if *item != direct {
                    return Err(format!(
                        "Item {k} of the iterator (the delay before retry {k}) was {item:?}, \
                         but delay({k}) is {direct:?}"
                    ));
                }
            }
            Ok(())
        },
    );
}

#[test]
fn exact_integer_steps() {
    check(
        "delay(0) must be the base, and every delay the previous one times the factor, capped, \
         exactly to the nanosecond (factor 2 doubles exactly until the cap)",
        cases(),
        |Case { setting, retry }| {
            let schedule = setting.try_build(0)?;
            let first = try_delay(&schedule, &setting, 0)?;
            if first != setting.base {
                return Err(format!("delay(0) was {first:?}, not the base"));
            }
            let Some(next) = retry.checked_add(1) else {
                return Ok(());
            };
            let (now, then) = (
                try_delay(&schedule, &setting, retry)?,
                try_delay(&schedule, &setting, next)?,
            );
            let stepped = now.as_nanos().saturating_mul(u128::from(setting.factor));
            let wanted = from_nanos(stepped.min(setting.cap.as_nanos()));
            if then != wanted {
                let off = then.abs_diff(wanted);
                // f64 seconds lose nanoseconds, a few microseconds at most for any Duration
                // below 2^64 s; a wrong formula is off by far more.
                let advice =
                    if off < Duration::from_millis(1) && wanted > Duration::from_secs(1 << 23) {
                        ". Integer nanoseconds (u128) are exact; f64 seconds are not, past 2^23 s \
                     (about 97 days)"
                    } else {
                        ""
                    };
                return Err(format!(
                    "delay({retry}) = {now:?}, so delay({next}) must be min(cap, {now:?} · {}) = \
                     {wanted:?}; yours was {then:?}, off by {off:?}{advice}",
                    setting.factor,
                ));
            }
            Ok(())
        },
    );
}
