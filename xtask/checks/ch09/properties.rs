//! Property tests: the bounds of both policies hold for every base, cap, length and seed.

use std::time::Duration;

use exercise::{DecorrelatedJitter, EqualJitter};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use super::equal::ceiling;
use super::support::{catch, seeded, show, show_all};

/// Durations from zero to `Duration::MAX`: small ones (up to 1,000 s) most often, any second
/// count up to `u64::MAX` too, and both extremes.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        4 => (0u64..=1_000_000_000_000).prop_map(Duration::from_nanos),
        2 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
    ]
}

fn config() -> ProptestConfig {
    // A fixed seed: every run tries the same 256 cases, so a verdict never changes between runs.
    ProptestConfig {
        failure_persistence: None,
        cases: 256,
        rng_seed: RngSeed::Fixed(9),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn equal_bounds(base in duration(), cap in duration(), max_retries in 0u32..=300, seed in any::<u64>()) {
        let limit = max_retries as usize + 5;
        let delays = catch(|| EqualJitter::new(base, cap, max_retries, seeded(seed)).take(limit).collect::<Vec<_>>());
        prop_assert!(
            delays.is_ok(),
            "EqualJitter::new(base = {}, cap = {}, max_retries = {max_retries}, seed {seed}) \
             panicked: {}",
            show(base), show(cap), delays.as_ref().err().cloned().unwrap_or_default(),
        );
        let delays = delays.unwrap_or_default();
        prop_assert!(
            delays.len() == max_retries as usize,
            "EqualJitter with max_retries = {max_retries} must yield exactly that many delays; yours \
             yielded {} (base = {}, cap = {}, seed {seed})",
            delays.len(), show(base), show(cap),
        );
        for (attempt, delay) in (0u32..).zip(&delays) {
            let t = ceiling(attempt, base, cap);
            prop_assert!(
                t / 2 <= *delay && *delay <= t,
                "with base = {}, cap = {} (seed {seed}), your delay before retry {attempt} was {}, \
                 outside [t/2, t] = [{}, {}] where t = min(cap, base·2^attempt); delays {}",
                show(base), show(cap), show(*delay), show(t / 2), show(t), show_all(&delays, 6),
            );
        }
    }

    #[test]
    fn decorrelated_bounds(base in duration(), cap in duration(), max_retries in 0u32..=300, seed in any::<u64>()) {
        let limit = max_retries as usize + 5;
        let delays = catch(|| DecorrelatedJitter::new(base, cap, max_retries, seeded(seed)).take(limit).collect::<Vec<_>>());
        prop_assert!(
            delays.is_ok(),
            "DecorrelatedJitter::new(base = {}, cap = {}, max_retries = {max_retries}, seed {seed}) \
             panicked: {}",
            show(base), show(cap), delays.as_ref().err().cloned().unwrap_or_default(),
        );
        let delays = delays.unwrap_or_default();
        prop_assert!(
            delays.len() == max_retries as usize,
            "DecorrelatedJitter with max_retries = {max_retries} must yield exactly that many delays; yours \
             yielded {} (base = {}, cap = {}, seed {seed})",
            delays.len(), show(base), show(cap),
        );
        // A base above the cap is lowered to the cap.
        let floor = base.min(cap);
        let mut previous = floor;
        for (retry, delay) in delays.iter().enumerate() {
            let upper = previous.saturating_mul(3).min(cap);
            prop_assert!(
                floor <= *delay && *delay <= upper,
                "with base = {}, cap = {} (seed {seed}), your delay before retry {retry} was {}, \
                 outside [min(base, cap), min(cap, 3·previous)] = [{}, {}] with previous = {}; \
                 delays {}",
                show(base), show(cap), show(*delay), show(floor), show(upper), show(previous),
                show_all(&delays, 6),
            );
            previous = *delay;
        }
    }
}
