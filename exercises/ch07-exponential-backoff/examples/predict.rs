//! Predict, then run (book §7.3): base 100 ms, factor 2, with a 30 s cap and without one.
//! Write down your predictions, finish the exercise, then run
//!
//!     cargo run -p ch07_exponential_backoff --example predict
//!
//! Nothing sleeps: the program only asks your `Exponential` for its delays.

use std::time::Duration;

use ch07_exponential_backoff::Exponential;

fn main() {
    let base = Duration::from_millis(100);
    let capped = Exponential::new(base, 2, Duration::from_secs(30), 12).expect("valid");
    let uncapped = Exponential::new(base, 2, Duration::MAX, 12).expect("valid");

    println!("{:>10}  {:>14}  {:>24}", "retry", "cap 30 s", "no cap");
    for retry in (0..=12).chain([20, 64, 1_000, u32::MAX]) {
        println!(
            "{retry:>10}  {:>14.1?}  {:>24.1?}",
            capped.delay(retry),
            uncapped.delay(retry)
        );
    }

    let delays: Vec<Duration> = capped.collect();
    let slept: Duration = delays.iter().sum();
    println!(
        "with max_retries = 12 the iterator yields {} delays, {:.1?} of sleep in all",
        delays.len(),
        slept
    );
}
