//! Visible tests: run them with `cargo xtask check ch03` (or `cargo test -p ch03_timeouts`).
//! The grader runs hidden checks beside them. Time is tokio's paused clock: a hanging call
//! costs no real time.

use std::time::Duration;

use ch03_timeouts::stubs::{ScriptedService, Step};
use ch03_timeouts::{AttemptError, call_with_timeout, retry_with_timeouts};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn a_fast_answer_comes_back_at_once() {
    let service = ScriptedService::new([Step::Latency(40 * MS)]);
    let started = Instant::now();
    let result = call_with_timeout(service.call(), 1_000 * MS).await;
    assert_eq!(result, Ok(1));
    assert_eq!(started.elapsed(), 40 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_hanging_call_is_cut_at_the_limit_and_dropped() {
    let service = ScriptedService::new([Step::Hang]);
    let started = Instant::now();
    let result = call_with_timeout(service.call(), 200 * MS).await;
    assert_eq!(result, Err(AttemptError::TimedOut));
    assert_eq!(started.elapsed(), 200 * MS);
    assert_eq!(service.abandoned(), 1);
    assert_eq!(service.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn hang_then_answer_succeeds_on_the_second_call() {
    let service = ScriptedService::new([Step::Hang, Step::Latency(50 * MS)]);
    let started = Instant::now();
    let result = retry_with_timeouts(|| service.call(), 3, 200 * MS).await;
    assert_eq!(result, Ok(2));
    assert_eq!(started.elapsed(), 250 * MS);
    assert_eq!(service.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_service_that_always_hangs_uses_every_attempt() {
    let service = ScriptedService::new([Step::Hang]);
    let started = Instant::now();
    let result = retry_with_timeouts(|| service.call(), 3, 100 * MS).await;
    assert_eq!(result, Err(AttemptError::TimedOut));
    assert_eq!(started.elapsed(), 300 * MS);
    assert_eq!(service.calls(), 3);
}
