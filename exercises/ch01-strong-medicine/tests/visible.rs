//! Visible tests: run them with `cargo xtask check ch01` (or `cargo test -p ch01_strong_medicine`).
//! The grader runs hidden checks beside them.

use ch01_strong_medicine::retry_immediately;
use ch01_strong_medicine::stubs::{Flaky, RecoversAfter, StubError};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[test]
fn fails_twice_then_succeeds_on_the_third_call() {
    let mut service = RecoversAfter::new(2);
    let result = retry_immediately(2, || service.call());
    assert_eq!(result, Ok(3));
    assert_eq!(service.calls(), 3);
}

#[test]
fn permanent_failure_makes_one_call_plus_two_retries() {
    let mut service = RecoversAfter::never();
    let result = retry_immediately(2, || service.call());
    assert!(result.is_err());
    assert_eq!(service.calls(), 3);
}

#[test]
fn a_full_outage_gets_three_calls_per_request() {
    let mut service = Flaky::new(1.0, StdRng::seed_from_u64(1));
    for request in 1..=10 {
        let result = retry_immediately(2, || service.call());
        assert_eq!(result, Err(StubError { call: 3 * request }));
    }
    assert_eq!(service.calls(), 30);
}
