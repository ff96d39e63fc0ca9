//! Predict, then run (book §5.4): a careless policy of three zero delays meets a service that
//! answers 503 to every call. Write down your predictions, finish the exercise, then run
//!
//!     cargo run -p ch05_retry_loop --example predict
//!
//! Time is tokio's paused clock, so the run takes no real time at all.

use std::time::Duration;

use ch05_retry_loop::Retry;
use ch05_retry_loop::stubs::{ScriptedService, ServiceError};
use tokio::time::Instant;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let service = ScriptedService::always_failing_with(ServiceError::Status(503));
    let start = Instant::now();
    let retry = Retry::new(|| [Duration::ZERO; 3]).notify(|event| {
        println!(
            "{:>4} ms  retrying attempt={} delay={}ms error=\"{}\"",
            start.elapsed().as_millis(),
            event.attempt,
            event.delay.as_millis(),
            event.error,
        );
    });
    let result = retry.run(|| service.call()).await;
    println!(
        "{:>4} ms  returned {result:?} after {} calls",
        start.elapsed().as_millis(),
        service.calls(),
    );
}
