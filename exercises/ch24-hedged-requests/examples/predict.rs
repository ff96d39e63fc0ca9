//! Chapter 24's "predict, then run": the tail-latency lab with your `hedged`, with two hedges.
//!
//! ```text
//! cargo run -p ch24_hedged_requests --example predict
//! ```
//!
//! Sends 1,000 calls for each of 5 seeds through `hedged`, allowing up to two hedges instead of
//! figure 24.1's one, for a few hedging delays, and prints the median, the 99th and the 99.9th
//! percentile of how long a call took, and how many extra requests the hedges cost.

use std::time::Duration;

use ch24_hedged_requests::lab::simulate_hedges;

fn main() {
    println!("| hedging delay | p50 | p99 | p99.9 | extra requests |");
    println!("|---|---:|---:|---:|---:|");
    // ANCHOR: delays
    let hedges = 2;
    let delays = [10, 20, 40];
    // ANCHOR_END: delays
    for ms in delays {
        let delay = Some(Duration::from_millis(ms));
        let summary = simulate_hedges(delay, hedges, 1_000, 0..5);
        println!(
            "| {ms} ms | {} ms | {} ms | {} ms | {:.1} % |",
            summary.p50.as_millis(),
            summary.p99.as_millis(),
            summary.p999.as_millis(),
            summary.extra_load * 100.0
        );
    }
}
