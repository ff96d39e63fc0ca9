//! Visible tests: run them with `cargo xtask check ch04` (or `cargo test -p ch04_deadlines`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch04_deadlines::stubs::ScriptedService;
use ch04_deadlines::{
    CancelToken, Policy, RetryError, child_deadline, retry_until, worst_case_time,
};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

#[test]
fn five_attempts_of_two_seconds_can_take_thirteen() {
    let policy = Policy::new(5, 2 * SEC, [200 * MS, 400 * MS, 800 * MS, 1_600 * MS]);
    assert_eq!(worst_case_time(&policy), 13 * SEC);
}

#[test]
fn the_sre_book_example() {
    assert_eq!(child_deadline(30 * SEC, 7 * SEC, Duration::ZERO), 23 * SEC);
    assert_eq!(child_deadline(30 * SEC, 7 * SEC, SEC), 22 * SEC);
}

#[tokio::test(start_paused = true)]
async fn fails_twice_then_succeeds_within_the_deadline() {
    let service = ScriptedService::fails_then_succeeds(2, 100 * MS);
    let policy = Policy::fixed(5, SEC, 500 * MS);
    let deadline = Instant::now() + 10 * SEC;
    let result = retry_until(deadline, &policy, || service.call(), &CancelToken::new()).await;
    assert_eq!(result, Ok(3));
}

/// The "predict, then run" case of the book (section 4.4): a service that hangs, a 3 s deadline,
/// attempts of at most 1 s and 500 ms sleeps. How many calls, and when does the loop return?
#[tokio::test(start_paused = true)]
async fn a_hanging_service_and_a_three_second_deadline() {
    let service = ScriptedService::always_hangs();
    let policy = Policy::fixed(10, SEC, 500 * MS);
    let start = Instant::now();
    let result = retry_until(
        start + 3 * SEC,
        &policy,
        || service.call(),
        &CancelToken::new(),
    )
    .await;
    assert_eq!(result, Err(RetryError::TimedOut));
    assert_eq!(service.calls(), 2);
    assert_eq!(start.elapsed(), 2_500 * MS);
}
