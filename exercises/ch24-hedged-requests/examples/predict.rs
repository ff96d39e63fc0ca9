//! Chapter 24's "predict, then run": the tail-latency lab with your `hedged`.
//!
//! ```text
//! cargo run -p ch24_hedged_requests --example predict
//! ```
//!
//! Sends 1,000 calls for each of 5 seeds through `hedged` with at most one hedge, for a few
//! hedging delays, and prints the median, the 99th and the 99.9th percentile of how long a call
//! took, and how many extra requests the hedges cost.

use std::time::Duration;

use ch24_hedged_requests::lab::simulate;

fn main() {
    println!("| hedging delay | p50 | p99 | p99.9 | extra requests |");
    println!("|---|---:|---:|---:|---:|");
    // ANCHOR: delays
    let delays = [None, Some(10), Some(40), Some(100)];
    // ANCHOR_END: delays
    for delay in delays {
        let summary = simulate(delay.map(Duration::from_millis), 1_000, 0..5);
        let label = delay.map_or("no hedge".to_owned(), |ms| format!("{ms} ms"));
        println!(
            "| {label} | {} ms | {} ms | {} ms | {:.1} % |",
            summary.p50.as_millis(),
            summary.p99.as_millis(),
            summary.p999.as_millis(),
            summary.extra_load * 100.0
        );
    }
}
