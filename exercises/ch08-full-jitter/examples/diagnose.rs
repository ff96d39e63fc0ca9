//! A wrong version to diagnose (book §8.5): a retry loop as it is often first written.
//!
//! `cargo run -p ch08_full_jitter --example diagnose` runs it against the given stubs on tokio's
//! paused clock and prints when each call happened and when the loop returned. It does not use
//! your code: find its bugs, then make sure your `retry_with_backoff` has none of them.

use std::future::Future;
use std::time::Duration;

use ch08_full_jitter::stubs::FlakyService;
use tokio::time::Instant;

// ANCHOR: naive
/// Retries `op` up to `attempts` times with exponential backoff. Compiles, passes a happy-path
/// test, and is wrong in more ways than one.
async fn retry_naive<T, E, F, Fut>(mut op: F, attempts: u32, base: Duration) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut last_failure = None;
    for attempt in 0..attempts {
        match op().await {
            Ok(answer) => return Ok(answer),
            Err(failure) => last_failure = Some(failure),
        }
        tokio::time::sleep(base * 2u32.pow(attempt)).await;
    }
    Err(last_failure.expect("attempts is at least 1"))
}
// ANCHOR_END: naive

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let base = Duration::from_millis(50);
    for (name, service) in [
        (
            "fails twice, then succeeds",
            FlakyService::fails_twice_then_succeeds(),
        ),
        ("always fails", FlakyService::always_fails()),
    ] {
        let start = Instant::now();
        let mut calls_at = Vec::new();
        let result = retry_naive(
            || {
                calls_at.push(start.elapsed());
                service.call()
            },
            3,
            base,
        )
        .await;
        let returned = start.elapsed();
        let shown: Vec<String> = calls_at
            .iter()
            .map(|at| format!("{} ms", at.as_millis()))
            .collect();
        println!("{name}, attempts = 3, base = 50 ms:");
        println!("  calls at   {}", shown.join(", "));
        println!("  returned   {result:?} at {} ms", returned.as_millis());
        // Two runs, one answer each: the loop does return, it just returns late (or not at all).
        assert_eq!(calls_at.len(), 3);
    }
}
