//! Shared by the checks of chapter 7: building the learner's schedule, asking it for delays with
//! panics turned into readable failures, and describing a configuration. No checks live here.

use std::fmt;
use std::time::Duration;

use exercise::Exponential;

use super::support::{catch, show};

pub const MS: Duration = Duration::from_millis(1);
pub const SECOND: Duration = Duration::from_secs(1);
pub const DAY: u64 = 86_400;

/// One configuration of the schedule (without `max_retries`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub base: Duration,
    pub factor: u32,
    pub cap: Duration,
}

impl Setting {
    pub const fn new(base: Duration, factor: u32, cap: Duration) -> Self {
        Self { base, factor, cap }
    }

    /// `base = 100 ms, factor = 2, cap = 30 s`, readable.
    pub fn describe(&self) -> String {
        format!(
            "base = {}, factor = {}, cap = {}",
            readable(self.base),
            self.factor,
            readable(self.cap)
        )
    }

    /// The same, to the nanosecond (`Duration`'s `Debug`), for messages about exactness.
    pub fn exact(&self) -> String {
        format!(
            "base = {:?}, factor = {}, cap = {:?}",
            self.base, self.factor, self.cap
        )
    }

    /// The learner's `Exponential::new(..)`, or why it could not be built.
    pub fn try_build(&self, max_retries: u32) -> Result<Exponential, String> {
        let Setting { base, factor, cap } = *self;
        match catch(|| Exponential::new(base, factor, cap, max_retries)) {
            Ok(Ok(schedule)) => Ok(schedule),
            Ok(Err(refusal)) => Err(format!(
                "Exponential::new({}, max_retries = {max_retries}) refused a valid \
                 configuration with {refusal:?}",
                self.exact()
            )),
            Err(message) => Err(format!(
                "Exponential::new({}, max_retries = {max_retries}) panicked: {message}",
                self.exact()
            )),
        }
    }

    /// The learner's schedule; a refusal or a panic fails the check with a readable message.
    pub fn build(&self, max_retries: u32) -> Exponential {
        self.try_build(max_retries)
            .unwrap_or_else(|message| panic!("{message}"))
    }
}

/// A duration for a message: `100 ms` or `30 s` when that is exact, else `Duration`'s own
/// `Debug` (`1ns`, `8640000.000000001s`), which is exact to the nanosecond.
pub fn readable(duration: Duration) -> String {
    let whole_ms = duration.subsec_nanos().is_multiple_of(1_000_000);
    if duration == Duration::MAX {
        "Duration::MAX".to_owned()
    } else if whole_ms && duration >= MS && duration <= Duration::from_secs(DAY) {
        show(duration)
    } else {
        format!("{duration:?}")
    }
}

/// Shown to the nanosecond, as proptest reports a failing case.
impl fmt::Debug for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.exact())
    }
}

/// The learner's `delay(retry)`, with a panic turned into a readable message.
pub fn try_delay(
    schedule: &Exponential,
    setting: &Setting,
    retry: u32,
) -> Result<Duration, String> {
    catch(|| schedule.delay(retry)).map_err(|message| {
        format!(
            "delay(retry = {retry}) panicked with {}: {message}",
            setting.describe()
        )
    })
}

/// The learner's `delay(retry)`; a panic fails the check with a readable message.
pub fn delay(schedule: &Exponential, setting: &Setting, retry: u32) -> Duration {
    try_delay(schedule, setting, retry).unwrap_or_else(|message| panic!("{message}"))
}

/// At most `limit` items of the learner's iterator (so an iterator that never ends cannot hang
/// the check), with a panic turned into a readable message.
pub fn try_items(
    schedule: Exponential,
    setting: &Setting,
    limit: usize,
) -> Result<Vec<Duration>, String> {
    catch(move || schedule.take(limit).collect::<Vec<Duration>>()).map_err(|message| {
        format!(
            "iterating the schedule ({}) panicked: {message}",
            setting.describe()
        )
    })
}

/// At most `limit` items of the learner's iterator; a panic fails the check.
pub fn items(schedule: Exponential, setting: &Setting, limit: usize) -> Vec<Duration> {
    try_items(schedule, setting, limit).unwrap_or_else(|message| panic!("{message}"))
}

/// `min(cap, base · factor^retry)`, exact, computed by the checks themselves.
pub fn expected(setting: &Setting, retry: u32) -> Duration {
    let growth = u128::from(setting.factor).checked_pow(retry);
    let nanos = growth.and_then(|growth| setting.base.as_nanos().checked_mul(growth));
    match nanos {
        Some(nanos) if nanos < setting.cap.as_nanos() => from_nanos(nanos),
        _ => setting.cap,
    }
}

/// A nanosecond count that fits in a `Duration`.
pub fn from_nanos(nanos: u128) -> Duration {
    Duration::new(
        (nanos / 1_000_000_000) as u64,
        (nanos % 1_000_000_000) as u32,
    )
}

/// Where two sequences first differ: `(index, expected, observed)`, or `None` if they are equal.
pub fn first_difference(
    expected: &[Duration],
    observed: &[Duration],
) -> Option<(usize, Option<Duration>, Option<Duration>)> {
    let longest = expected.len().max(observed.len());
    (0..longest)
        .map(|i| (i, expected.get(i).copied(), observed.get(i).copied()))
        .find(|(_, e, o)| e != o)
}

/// An expected item: `30 s`, or `None` where the iteration should have ended.
pub fn show_expected(item: Option<Duration>) -> String {
    item.map_or_else(|| "None (the end of the schedule)".to_owned(), show)
}

/// An observed item: `30 s`, or `None` where the learner's iterator had ended.
pub fn show_observed(item: Option<Duration>) -> String {
    item.map_or_else(|| "None (your iterator had ended)".to_owned(), show)
}
