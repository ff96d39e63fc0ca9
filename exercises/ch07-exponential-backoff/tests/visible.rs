//! Visible tests: run them with `cargo xtask check ch07` (or `cargo test -p ch07_exponential_backoff`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch07_exponential_backoff::{Exponential, InvalidBackoff};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const MS: Duration = Duration::from_millis(1);
const CAP: Duration = Duration::from_secs(30);

#[test]
fn doubles_from_the_base() {
    let policy = Exponential::new(100 * MS, 2, CAP, 4).unwrap();
    let delays: Vec<Duration> = policy.collect();
    assert_eq!(delays, [100 * MS, 200 * MS, 400 * MS, 800 * MS]);
}

#[test]
fn stays_at_the_cap() {
    let policy = Exponential::new(100 * MS, 2, CAP, 20).unwrap();
    assert_eq!(policy.delay(8), 25_600 * MS);
    assert_eq!(policy.delay(9), CAP);
    assert_eq!(policy.delay(100), CAP);
}

#[test]
fn a_zero_factor_is_refused() {
    let refused = Exponential::new(100 * MS, 0, CAP, 5);
    assert_eq!(refused, Err(InvalidBackoff::FactorBelowOne { factor: 0 }));
}

// ANCHOR: property
proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        cases: 256,
        rng_seed: RngSeed::Fixed(2015),
        ..ProptestConfig::default()
    })]

    /// For any base, factor, cap and retry number, even u32::MAX, the delay is at most the cap.
    #[test]
    fn never_above_the_cap(
        base_ms in 1u64..=10_000,
        factor in 1u32..=10,
        extra_ms in 0u64..=3_600_000,
        retry in any::<u32>(),
    ) {
        let base = Duration::from_millis(base_ms);
        let cap = base + Duration::from_millis(extra_ms);
        let schedule = Exponential::new(base, factor, cap, 0).unwrap();
        prop_assert!(schedule.delay(retry) <= cap);
    }
}
// ANCHOR_END: property
