//! Visible tests: run them with `cargo xtask check ch09` (or `cargo test -p ch09_equal_and_decorrelated`).
//! The grader runs hidden checks beside them.

use std::cell::Cell;
use std::time::Duration;

use ch09_equal_and_decorrelated::retry::retry;
use ch09_equal_and_decorrelated::{DecorrelatedJitter, EqualJitter};
use rand::SeedableRng;
use rand::rngs::StdRng;

const BASE: Duration = Duration::from_millis(50);
const CAP: Duration = Duration::from_millis(500);

#[test]
fn equal_jitter_first_delay_keeps_half_of_base() {
    for seed in 0..100 {
        let first = EqualJitter::new(BASE, CAP, 1, StdRng::seed_from_u64(seed)).next();
        let first = first.expect("max_retries = 1 gives one delay");
        assert!(
            BASE / 2 <= first && first <= BASE,
            "{first:?} is outside [25 ms, 50 ms]"
        );
    }
}

#[test]
fn decorrelated_first_delay_lies_between_base_and_three_times_base() {
    for seed in 0..100 {
        let first = DecorrelatedJitter::new(BASE, CAP, 1, StdRng::seed_from_u64(seed)).next();
        let first = first.expect("max_retries = 1 gives one delay");
        assert!(
            BASE <= first && first <= 3 * BASE,
            "{first:?} is outside [50 ms, 150 ms]"
        );
    }
}

#[test]
fn both_yield_max_retries_delays() {
    assert_eq!(
        EqualJitter::new(BASE, CAP, 4, StdRng::seed_from_u64(9)).count(),
        4
    );
    assert_eq!(
        DecorrelatedJitter::new(BASE, CAP, 4, StdRng::seed_from_u64(9)).count(),
        4
    );
}

#[tokio::test(start_paused = true)]
async fn a_policy_drives_the_given_retry_loop() {
    let calls = Cell::new(0);
    let fails_twice = || {
        calls.set(calls.get() + 1);
        let call = calls.get();
        async move { if call <= 2 { Err(call) } else { Ok(call) } }
    };
    let policy = EqualJitter::new(BASE, CAP, 3, StdRng::seed_from_u64(9));
    let start = tokio::time::Instant::now();
    assert_eq!(retry(policy, fails_twice).await, Ok(3));
    // Two sleeps: one in [25, 50] ms and one in [50, 100] ms.
    let slept = start.elapsed();
    assert!(Duration::from_millis(75) <= slept && slept <= Duration::from_millis(150));
}
