//! Predict, then run: 100 clients fail at the same moment. How does their load reach the server
//! under a fixed and under a linear policy?
//!
//! `cargo run -p ch06_fixed_and_linear --example predict` builds both policies of book §6.5 with
//! your `Fixed` and `Linear`, feeds their delays to your `load_per_window` for 100 clients in
//! 10 ms windows, and prints where the retries land. Write your prediction down first.

use std::time::Duration;

use ch06_fixed_and_linear::{Fixed, Linear, load_per_window};

/// How many clients failed together at t = 0.
const CLIENTS: usize = 100;
/// The width of one window of the histogram.
const WINDOW: Duration = Duration::from_millis(10);

fn report(name: &str, schedule: &[Duration]) {
    let load = load_per_window(schedule, CLIENTS, WINDOW);
    let busy: Vec<(usize, usize)> = load
        .iter()
        .enumerate()
        .filter(|&(_, &count)| count > 0)
        .map(|(window, &count)| (window, count))
        .collect();
    let busiest = load.iter().copied().max().unwrap_or(0);
    let total: usize = load.iter().sum();
    println!("{name}");
    println!("  delays:              {schedule:?}");
    println!("  windows with load:   {} of {}", busy.len(), load.len());
    println!("  busiest 10 ms:       {busiest} retries");
    println!("  retries in all:      {total}");
    let spikes: Vec<String> = busy
        .iter()
        .map(|&(window, count)| {
            let start = WINDOW * u32::try_from(window).unwrap_or(u32::MAX);
            format!("{count} at {start:?}")
        })
        .collect();
    println!("  where:               {}", spikes.join(", "));
}

fn main() {
    let seconds = Duration::from_secs(3);
    let fixed: Vec<Duration> = Fixed::new(seconds, 4).collect();
    let linear: Vec<Duration> = Linear::new(seconds, seconds, 4).collect();
    println!("{CLIENTS} clients fail together at t = 0 and retry 4 times; 10 ms windows\n");
    report("Fixed: 3 s before every retry", &fixed);
    println!();
    report("Linear: 3 s, then 3 s more each time", &linear);
}
