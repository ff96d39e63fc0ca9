//! A wrong retry loop to diagnose (book §5.3). It compiles, it retries, and it even succeeds;
//! read it, find what is wrong with its order, then run it:
//!
//!     cargo run -p ch05_retry_loop --example diagnose
//!
//! Time is tokio's paused clock, so the run takes no real time at all. The program needs nothing
//! from your exercise but the given stub.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use ch05_retry_loop::stubs::{ScriptedService, ServiceError};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

// ANCHOR: sloppy
/// WRONG, on purpose: a retry loop whose steps are in the wrong order.
async fn sloppy_retry<T, E, Fut>(
    mut delays: impl Iterator<Item = Duration>,
    mut op: impl FnMut() -> Fut,
    log: impl Fn(u32, Duration, &E),
) -> Result<T, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    let mut failures = 0;
    loop {
        let outcome = op().await;
        let wait = delays.next();
        tokio::time::sleep(wait.unwrap_or_default()).await;
        match (outcome, wait) {
            (Ok(answer), _) => return Ok(answer),
            (Err(failure), None) => return Err(failure),
            (Err(failure), Some(wait)) => {
                failures += 1;
                log(failures, wait, &failure);
            }
        }
    }
}
// ANCHOR_END: sloppy

/// Runs the sloppy loop with the policy [100 ms, 200 ms, 400 ms] and prints what happened when.
async fn play(name: &str, service: ScriptedService) {
    let start = Instant::now();
    let log = |failures: u32, wait: Duration, error: &dyn Display| {
        println!(
            "  {:>4} ms  log: attempt={failures} delay={}ms error=\"{error}\"",
            start.elapsed().as_millis(),
            wait.as_millis(),
        );
    };
    println!("{name}:");
    let policy = [100 * MS, 200 * MS, 400 * MS].into_iter();
    let result = sloppy_retry(
        policy,
        || service.call(),
        |n, d, e: &ServiceError| log(n, d, e),
    )
    .await;
    println!(
        "  {:>4} ms  returned {result:?} after {} call(s)",
        start.elapsed().as_millis(),
        service.calls(),
    );
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: play
    play(
        "two 503s, then an answer",
        ScriptedService::failing_with([ServiceError::Status(503); 2]),
    )
    .await;
    play(
        "a 404",
        ScriptedService::always_failing_with(ServiceError::Status(404)),
    )
    .await;
    // ANCHOR_END: play
}
