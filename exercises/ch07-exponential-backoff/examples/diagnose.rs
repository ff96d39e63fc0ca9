//! A wrong version to diagnose (book §7.4): capped exponential backoff as it is often first
//! written, as an iterator that remembers its current delay.
//!
//! `cargo run -p ch07_exponential_backoff --example diagnose` shows what it does. It does not use
//! your code; find its bugs, then make sure your `Exponential` has none of them.

use std::panic;
use std::time::Duration;

// ANCHOR: growing
/// Starts at `current`, multiplies by `factor` after every delay, never above `cap`. Short,
/// readable, and wrong in three ways.
struct Growing {
    current: Duration,
    factor: u32,
    cap: Duration,
}

impl Iterator for Growing {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let delay = self.current;
        self.current = (self.current * self.factor).min(self.cap);
        Some(delay)
    }
}
// ANCHOR_END: growing

fn main() {
    let ms = Duration::from_millis;
    let everyday = Growing {
        current: ms(100),
        factor: 2,
        cap: Duration::from_secs(30),
    };
    let first: Vec<Duration> = everyday.take(12).collect();
    println!("base 100 ms, factor 2, cap 30 s, first 12: {first:?}");
    println!("  ... and it never says None: take(12) is what stopped it");

    let typo = Growing {
        current: Duration::from_secs(100),
        factor: 2,
        cap: ms(500),
    };
    let first: Vec<Duration> = typo.take(3).collect();
    println!("base 100 s, cap 500 ms (a typo): {first:?}: the first delay is above the cap");
    assert!(first[0] > ms(500));

    let huge = Growing {
        current: Duration::MAX / 2,
        factor: 3,
        cap: Duration::MAX,
    };
    panic::set_hook(Box::new(|_| {}));
    let outcome = panic::catch_unwind(|| huge.take(3).count());
    let _ = panic::take_hook();
    println!(
        "base Duration::MAX / 2, factor 3, cap Duration::MAX: {}",
        if outcome.is_err() {
            "panics: overflow when multiplying duration by scalar"
        } else {
            "no panic"
        }
    );
    assert!(outcome.is_err());
}
