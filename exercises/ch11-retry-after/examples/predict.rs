//! Predict, then run (book §11.6): one scripted server, two budgets.
//!
//! Run it with `cargo run -p ch11_retry_after --example predict` once your exercise passes. The
//! clock is tokio's paused clock, so the run takes no real time at all.

use std::time::Duration;

use ch11_retry_after::retry_honouring_retry_after;
use ch11_retry_after::stubs::{Reply, ScriptedServer};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);

/// Exponential backoff without jitter, to keep the numbers easy to follow: 200 ms, 400 ms, …
fn backoff(retry: u32) -> Duration {
    200 * MS * 2u32.pow(retry.min(10))
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    for (label, budget) in [("2 min", 120 * SECOND), ("2 h", 7_200 * SECOND)] {
        let server = ScriptedServer::new([
            Reply::retry_after(503, "1.5"),
            Reply::retry_after(503, "Fri, 31 Dec 1999 23:57:00 GMT"),
            Reply::retry_after(429, "20"),
            Reply::retry_after(503, "3600"),
            Reply::Succeed,
        ]);
        let started = Instant::now();
        let result =
            retry_honouring_retry_after(|| server.call(), 5, backoff, 30 * SECOND, budget).await;
        let calls: Vec<String> = server
            .call_times()
            .iter()
            .map(|at| format!("{:.1} s", at.as_secs_f64()))
            .collect();
        let result = match result {
            Ok(call) => format!("Ok({call})"),
            Err(error) => format!("Err({error})"),
        };
        println!(
            "budget {label}: calls at [{}]; {result} at {:.1} s",
            calls.join(", "),
            started.elapsed().as_secs_f64(),
        );
    }
}
