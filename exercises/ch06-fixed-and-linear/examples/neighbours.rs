//! Two neighbours of this chapter's exercise (book §6.3 and §6.5), to read before you write yours.
//!
//! `cargo run -p ch06_fixed_and_linear --example neighbours` runs both. Neither uses your code.
//!
//! - `Listed`: a policy whose delays come from a list in the configuration, such as
//!   `[1 s, 5 s, 30 s]`: an iterator of delays that ends, and stays ended.
//! - `rounded_window`: a wrong way to find the window of an arrival, to diagnose.

use std::time::Duration;

// ANCHOR: listed
/// Delays read from configuration, one per retry: `Listed::new(vec![1 s, 5 s, 30 s])` yields
/// 1 s, 5 s and 30 s, then `None` for ever.
#[derive(Clone, Debug)]
struct Listed {
    delays: Vec<Duration>,
    /// Where the next delay is in `delays`.
    position: usize,
}

impl Listed {
    fn new(delays: Vec<Duration>) -> Self {
        Listed {
            delays,
            position: 0,
        }
    }
}

impl Iterator for Listed {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // `get` answers None past the end; the position stops there, so None is final.
        let delay = *self.delays.get(self.position)?;
        self.position += 1;
        Some(delay)
    }
}
// ANCHOR_END: listed

// ANCHOR: rounded
/// The window of an arrival at `at`, computed in floating point and rounded to the nearest whole
/// window. Looks reasonable; is wrong for half of every window.
fn rounded_window(at: Duration, window: Duration) -> usize {
    (at.as_secs_f64() / window.as_secs_f64()).round() as usize
}
// ANCHOR_END: rounded

fn main() {
    let seconds = Duration::from_secs;
    let mut policy = Listed::new(vec![seconds(1), seconds(5), seconds(30)]);
    let delays: Vec<Duration> = policy.by_ref().collect();
    println!(
        "Listed [1 s, 5 s, 30 s] yields {delays:?}, then {:?}",
        policy.next()
    );
    assert_eq!(delays, [seconds(1), seconds(5), seconds(30)]);
    assert_eq!(policy.next(), None, "None is final");

    let window = Duration::from_millis(10);
    println!("\n10 ms windows: window [k·10 ms, (k+1)·10 ms) is number k");
    // Each arrival, in microseconds, and the window the rule gives it: floor(at / 10 ms).
    for (micros, rule) in [
        (4_000, 0),
        (5_000, 0),
        (9_999, 0),
        (10_000, 1),
        (14_999, 1),
        (15_000, 1),
    ] {
        let at = Duration::from_micros(micros);
        let rounded = rounded_window(at, window);
        let verdict = if rounded == rule { "" } else { "  <- wrong" };
        println!("  arrival at {at:>9?}: window {rule} by the rule, {rounded} rounded{verdict}");
    }
}
