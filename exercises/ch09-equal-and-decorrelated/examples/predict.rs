//! Predict, then run: how long do the three jitters wait, and how short can a wait get?
//!
//! `cargo run -p ch09_equal_and_decorrelated --example predict` draws the delays of 10,000
//! clients before 10 retries (base 50 ms, cap 500 ms) with full, equal and decorrelated jitter,
//! using your `EqualJitter` and `DecorrelatedJitter`. For each retry it prints the mean delay and
//! the shortest one, and for decorrelated jitter the share of clients sitting exactly at the cap;
//! then how long the first three delays add up to.
//! Write your predictions down first (book §9.6).

use std::time::Duration;

use ch09_equal_and_decorrelated::{DecorrelatedJitter, EqualJitter, backoff_ceiling};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

const BASE: Duration = Duration::from_millis(50);
const CAP: Duration = Duration::from_millis(500);
const CLIENTS: usize = 10_000;
const RETRIES: u32 = 10;
/// The seed of the book's figures and table: the same seed, the same numbers.
const SEED: u64 = 2015;

// ANCHOR: draw
/// Chapter 8's full jitter as a policy: before retry `attempt`, a delay drawn from `[0, t]`.
fn full_jitter(rng: &mut impl Rng) -> impl Iterator<Item = Duration> {
    (0..RETRIES).map(move |attempt| {
        let t = backoff_ceiling(attempt, BASE, CAP);
        rng.random_range(Duration::ZERO..=t)
    })
}

/// The delays of every client before every retry, `delays[client][retry]`. One generator serves
/// all clients in turn, each drawing its delays in order.
fn draw(mut client: impl FnMut(&mut StdRng) -> Vec<Duration>) -> Vec<Vec<Duration>> {
    let mut rng = StdRng::seed_from_u64(SEED);
    (0..CLIENTS).map(|_| client(&mut rng)).collect()
}
// ANCHOR_END: draw

/// The mean and the shortest of the delays before one retry, in milliseconds.
fn mean_and_shortest(delays: &[Vec<Duration>], retry: usize) -> (f64, f64) {
    let before: Vec<f64> = delays
        .iter()
        .map(|client| client[retry].as_secs_f64() * 1e3)
        .collect();
    let mean = before.iter().sum::<f64>() / before.len() as f64;
    let shortest = before.iter().copied().fold(f64::INFINITY, f64::min);
    (mean, shortest)
}

fn main() {
    let full = draw(|rng| full_jitter(rng).collect());
    let equal = draw(|rng| EqualJitter::new(BASE, CAP, RETRIES, rng).collect());
    let decorrelated = draw(|rng| DecorrelatedJitter::new(BASE, CAP, RETRIES, rng).collect());

    println!("{CLIENTS} clients, base 50 ms, cap 500 ms, StdRng seed {SEED}");
    println!("mean delay before each retry in ms (the shortest in brackets)\n");
    println!("retry      t |       full jitter |      equal jitter |      decorrelated | at cap");
    let mut totals = [0.0; 3];
    for retry in 0..RETRIES as usize {
        let t = backoff_ceiling(retry as u32, BASE, CAP).as_secs_f64() * 1e3;
        let mut cells = Vec::new();
        for (total, delays) in totals.iter_mut().zip([&full, &equal, &decorrelated]) {
            let (mean, shortest) = mean_and_shortest(delays, retry);
            *total += mean;
            cells.push(format!("{mean:7.1} ({shortest:5.1})"));
        }
        let at_cap = decorrelated
            .iter()
            .filter(|client| client[retry] == CAP)
            .count();
        let share = 100.0 * at_cap as f64 / CLIENTS as f64;
        println!(
            "{retry:>5} {t:>6.0} | {} | {share:5.1} %",
            cells.join(" | ")
        );
    }
    println!("\nthe first three delays together (the wait before retry 2), in ms:");
    for (name, delays) in [
        ("full", &full),
        ("equal", &equal),
        ("decorrelated", &decorrelated),
    ] {
        let waits: Vec<f64> = delays
            .iter()
            .map(|client| client[..3].iter().sum::<Duration>().as_secs_f64() * 1e3)
            .collect();
        let mean = waits.iter().sum::<f64>() / waits.len() as f64;
        let shortest = waits.iter().copied().fold(f64::INFINITY, f64::min);
        let longest = waits.iter().copied().fold(0.0, f64::max);
        println!("{name:>14}: shortest {shortest:6.1}, mean {mean:6.1}, longest {longest:6.1}");
    }
    let [full, equal, decorrelated] = totals;
    println!(
        "\nsum of the means over {RETRIES} retries: full {full:.0} ms, equal {equal:.0} ms, decorrelated {decorrelated:.0} ms"
    );
}
