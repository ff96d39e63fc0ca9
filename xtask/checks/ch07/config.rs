//! Checks of `Exponential::new`: what it refuses, and the edge cases it must accept.

use std::time::Duration;

use exercise::{Exponential, InvalidBackoff};

use super::fixture::{MS, SECOND, Setting};
use super::support::catch;

#[test]
fn refuses_nonsense() {
    let cases = [
        (
            Setting::new(Duration::ZERO, 2, 30 * SECOND),
            InvalidBackoff::ZeroBase,
            "a zero base",
        ),
        (
            Setting::new(100 * MS, 0, 30 * SECOND),
            InvalidBackoff::FactorBelowOne { factor: 0 },
            "a factor of 0",
        ),
        (
            Setting::new(60 * SECOND, 2, 30 * SECOND),
            InvalidBackoff::BaseAboveCap {
                base: 60 * SECOND,
                cap: 30 * SECOND,
            },
            "a base above the cap",
        ),
        (
            Setting::new(100 * MS, 2, Duration::ZERO),
            InvalidBackoff::BaseAboveCap {
                base: 100 * MS,
                cap: Duration::ZERO,
            },
            "a base above a zero cap (a zero cap is not \"no cap\": that is Duration::MAX)",
        ),
        (
            Setting::new(Duration::ZERO, 0, 30 * SECOND),
            InvalidBackoff::ZeroBase,
            "a zero base and a factor of 0 (the base is checked first)",
        ),
        (
            Setting::new(60 * SECOND, 0, 30 * SECOND),
            InvalidBackoff::FactorBelowOne { factor: 0 },
            "a factor of 0 and a base above the cap (the factor is checked first)",
        ),
    ];
    for (setting, refusal, case) in cases {
        let Setting { base, factor, cap } = setting;
        let outcome = catch(|| Exponential::new(base, factor, cap, 5));
        let shown = match &outcome {
            Ok(Ok(_)) => "accepted it".to_owned(),
            Ok(Err(other)) => format!("returned Err({other:?})"),
            Err(message) => format!("panicked: {message}"),
        };
        assert!(
            matches!(&outcome, Ok(Err(found)) if *found == refusal),
            "Exponential::new({}, max_retries = 5) has {case}; it must return Err({refusal:?}), \
             yours {shown}",
            setting.describe(),
        );
    }
}

#[test]
fn accepts_the_edges() {
    let cases = [
        (
            Setting::new(30 * SECOND, 2, 30 * SECOND),
            5,
            "a base equal to the cap",
        ),
        (
            Setting::new(100 * MS, 1, 30 * SECOND),
            5,
            "a factor of 1 (a fixed delay)",
        ),
        (
            Setting::new(100 * MS, 2, 30 * SECOND),
            0,
            "max_retries = 0 (no retry at all)",
        ),
        (
            Setting::new(Duration::from_nanos(1), u32::MAX, Duration::MAX),
            u32::MAX,
            "the extremes: 1 ns, factor u32::MAX, cap Duration::MAX, max_retries u32::MAX",
        ),
    ];
    for (setting, max_retries, case) in cases {
        if let Err(message) = setting.try_build(max_retries) {
            panic!("{case} is a valid configuration: {message}");
        }
    }
}
