//! Chapter 28's "predict, then run": the lab of section 28.8 with your limits.
//!
//! ```text
//! cargo run -p ch28_concurrency_limits --example predict
//! ```
//!
//! A server of 20 workers (about 2,000 requests a second) loses half of them from second 20 to
//! second 40; clients send 1,500 requests a second and give up after 250 ms. Four gates in
//! front of it: a static limit of 500, a static limit of 12, your AIMD limiter and your
//! gradient limit. Prints, for the healthy seconds and for the degraded ones, the goodput
//! (answers within 250 ms, per second) and the worst second's p99 latency.

use std::ops::Range;

use ch28_concurrency_limits::lab::{DEGRADED, Gate, SECONDS, Second, simulate};

fn name(gate: Gate) -> String {
    match gate {
        Gate::Static(limit) => format!("static limit {limit}"),
        Gate::Aimd(_) => "AIMD".to_owned(),
        Gate::Gradient(_) => "gradient".to_owned(),
    }
}

fn goodput(seconds: &[Second], range: Range<u32>) -> f64 {
    let part = &seconds[range.start as usize..range.end as usize];
    part.iter().map(|s| f64::from(s.good)).sum::<f64>() / part.len() as f64
}

fn worst_p99(seconds: &[Second], range: Range<u32>) -> f64 {
    seconds[range.start as usize..range.end as usize]
        .iter()
        .filter_map(|s| s.p99_ms)
        .fold(0.0, f64::max)
}

fn main() {
    let healthy = 0..DEGRADED.start;
    println!(
        "| gate | healthy: goodput/s | healthy: worst p99 | degraded: goodput/s | degraded: worst p99 | after: goodput/s |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for gate in Gate::all() {
        let seconds = simulate(gate, 1);
        println!(
            "| {} | {:.0} | {:.0} ms | {:.0} | {:.0} ms | {:.0} |",
            name(gate),
            goodput(&seconds, healthy.clone()),
            worst_p99(&seconds, healthy.clone()),
            goodput(&seconds, DEGRADED),
            worst_p99(&seconds, DEGRADED),
            goodput(&seconds, DEGRADED.end..SECONDS),
        );
    }
}
