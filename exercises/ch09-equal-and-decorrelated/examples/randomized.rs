//! A neighbour of this chapter's policies: the "randomization factor" backoff of Google's HTTP
//! client libraries and of the `backoff` crate, written as an iterator (book §9.5).
//!
//! `cargo run -p ch09_equal_and_decorrelated --example randomized` prints the delays of a few
//! seeded clients and checks the bounds this policy promises, which are not the ones yours keep.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

// ANCHOR: policy
/// Randomised exponential backoff: an `interval` that doubles after every retry up to
/// `max_interval`, and each delay drawn uniformly from `interval ± factor · interval`.
pub struct Randomized<R> {
    /// The centre of the next draw. Grows by itself, whatever was drawn.
    interval: Duration,
    max_interval: Duration,
    /// The half-width of the window, as a percentage of the interval (50 = ±50 %).
    factor_percent: u32,
    /// Counts down; the policy gives up when it reaches zero.
    retries_left: u32,
    rng: R,
}

impl<R: Rng> Randomized<R> {
    /// `retries` delays around `initial`, `2 · initial`, `4 · initial`, … `max_interval`.
    pub fn new(initial: Duration, max_interval: Duration, retries: u32, rng: R) -> Self {
        Randomized {
            interval: initial.min(max_interval),
            max_interval,
            factor_percent: 50,
            retries_left: retries,
            rng,
        }
    }
}

impl<R: Rng> Iterator for Randomized<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // `?` ends the iteration once the count is spent: 0 - 1 has no u32.
        self.retries_left = self.retries_left.checked_sub(1)?;
        let spread = (self.interval / 100).saturating_mul(self.factor_percent);
        let window = self.interval - spread..=self.interval.saturating_add(spread);
        let delay = self.rng.random_range(window);
        self.interval = self.interval.saturating_mul(2).min(self.max_interval);
        Some(delay)
    }
}
// ANCHOR_END: policy

fn main() {
    let (initial, max_interval) = (Duration::from_millis(50), Duration::from_millis(500));
    println!("Randomized(initial 50 ms, max_interval 500 ms, ±50 %), 6 retries, in ms:");
    let mut longest = Duration::ZERO;
    for seed in 0..5 {
        let delays: Vec<Duration> =
            Randomized::new(initial, max_interval, 6, StdRng::seed_from_u64(seed)).collect();
        assert_eq!(delays.len(), 6, "one delay per retry, then None");
        // The first delay lies within 50 ms ± 25 ms, whatever the seed.
        assert!((25..=75).contains(&delays[0].as_millis()));
        longest = longest.max(delays.iter().copied().max().unwrap_or_default());
        let shown: Vec<String> = delays
            .iter()
            .map(|delay| format!("{:6.1}", delay.as_secs_f64() * 1e3))
            .collect();
        println!("  seed {seed}: {}", shown.join(" "));
    }
    // The window is centred on the interval, so a delay can pass max_interval by half of it.
    assert!(longest <= max_interval * 3 / 2);
    println!(
        "longest delay: {:.1} ms (max_interval is 500 ms)",
        longest.as_secs_f64() * 1e3
    );
}
