//! Predict, then run (book §3.4): one scripted service, two time limits.
//!
//! Run it with `cargo run -p ch03_timeouts --example predict`. The clock is tokio's
//! paused clock, so the run takes no real time at all.

use std::time::Duration;

use ch03_timeouts::retry_with_timeouts;
use ch03_timeouts::stubs::{ScriptedService, Step};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    for limit in [200 * MS, 300 * MS] {
        // The first call hangs, the second answers after 250 ms, the third after 50 ms.
        let script = [Step::Hang, Step::Latency(250 * MS), Step::Latency(50 * MS)];
        let service = ScriptedService::new(script);
        let started = Instant::now();
        let result = retry_with_timeouts(|| service.call(), 3, limit).await;
        println!(
            "limit {:>3} ms: {:?} after {} ms, {} call(s), {} abandoned",
            limit.as_millis(),
            result,
            started.elapsed().as_millis(),
            service.calls(),
            service.abandoned(),
        );
    }
}
