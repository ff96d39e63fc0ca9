//! Visible tests: run them with `cargo xtask check ch08` (or `cargo test -p ch08_full_jitter`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch08_full_jitter::stubs::{FlakyService, StubError};
use ch08_full_jitter::{full_jitter, retry_with_backoff};
use rand::SeedableRng;
use rand::rngs::StdRng;

const BASE: Duration = Duration::from_millis(50);
const CAP: Duration = Duration::from_millis(500);

// ANCHOR: seeded
#[test]
fn first_delay_is_at_most_base() {
    let mut rng = StdRng::seed_from_u64(8);
    for _ in 0..100 {
        assert!(full_jitter(0, BASE, CAP, &mut rng) <= BASE);
    }
}
// ANCHOR_END: seeded

#[tokio::test(start_paused = true)]
async fn fails_twice_then_succeeds_on_the_third_call() {
    let service = FlakyService::fails_twice_then_succeeds();
    let mut rng = StdRng::seed_from_u64(8);
    let result = retry_with_backoff(|| service.call(), 3, BASE, CAP, &mut rng).await;
    assert_eq!(result, Ok(3));
    assert_eq!(service.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn permanent_failure_uses_every_attempt() {
    let service = FlakyService::always_fails();
    let mut rng = StdRng::seed_from_u64(8);
    let result = retry_with_backoff(|| service.call(), 3, BASE, CAP, &mut rng).await;
    assert!(result.is_err());
    assert_eq!(service.calls(), 3);
}

// ANCHOR: paused
#[tokio::test(start_paused = true)]
async fn permanent_failure_sleeps_at_most_150_ms() {
    let service = FlakyService::always_fails();
    let mut rng = StdRng::seed_from_u64(7);
    let start = tokio::time::Instant::now();

    let result = retry_with_backoff(|| service.call(), 3, BASE, CAP, &mut rng).await;

    assert_eq!(result, Err(StubError { call: 3 }));
    assert_eq!(service.calls(), 3);
    // Two sleeps at most: 50 ms + 100 ms in the worst case, and none after the last call.
    assert!(start.elapsed() <= Duration::from_millis(150));
}
// ANCHOR_END: paused
