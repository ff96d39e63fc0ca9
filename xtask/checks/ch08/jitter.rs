//! Checks of `full_jitter`: bounds, spread, and behaviour at huge attempt numbers.

use std::collections::BTreeSet;
use std::time::Duration;

use exercise::full_jitter;

use crate::support::{catch, seeded, show};

const MS: Duration = Duration::from_millis(1);

/// `min(cap, base · 2^attempt)`, the ceiling the checks hold the learner's delays to.
pub fn ceiling(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let exponential = 1u128
        .checked_shl(attempt)
        .and_then(|factor| base.as_nanos().checked_mul(factor));
    match exponential {
        Some(nanos) if nanos < cap.as_nanos() => {
            Duration::new((nanos / 1_000_000_000) as u64, (nanos % 1_000_000_000) as u32)
        }
        None if base.is_zero() => Duration::ZERO,
        _ => cap,
    }
}

/// One call of the learner's `full_jitter`, with a panic turned into a readable failure.
fn draw(attempt: u32, base: Duration, cap: Duration, seed: u64) -> Duration {
    let mut rng = seeded(seed);
    draw_with(attempt, base, cap, &mut rng)
}

fn draw_with(attempt: u32, base: Duration, cap: Duration, rng: &mut rand::rngs::StdRng) -> Duration {
    catch(|| full_jitter(attempt, base, cap, rng)).unwrap_or_else(|message| {
        panic!(
            "full_jitter(attempt = {attempt}, base = {}, cap = {}) panicked: {message}",
            show(base),
            show(cap)
        )
    })
}

#[test]
fn not_deterministic() {
    let (base, cap) = (100 * MS, 10_000 * MS);
    for attempt in 1..=3 {
        let delays: Vec<Duration> = (0..200).map(|seed| draw(attempt, base, cap, seed)).collect();
        let distinct: BTreeSet<Duration> = delays.iter().copied().collect();
        assert!(
            distinct.len() >= 100,
            "across 200 seeded runs your delay before retry {} (attempt = {attempt}, base = 100 ms, \
             cap = 10 s) took only {} distinct value(s), for example {}; a delay must be drawn \
             uniformly from [0, {}], not computed",
            attempt + 1,
            distinct.len(),
            show(delays[0]),
            show(ceiling(attempt, base, cap)),
        );
    }
}

#[test]
fn within_bounds() {
    let settings = [(50 * MS, 500 * MS), (MS, 30_000 * MS), (100 * MS, 100 * MS)];
    for (base, cap) in settings {
        for attempt in 0..=20 {
            let limit = ceiling(attempt, base, cap);
            for seed in 0..50 {
                let delay = draw(attempt, base, cap, seed);
                assert!(
                    delay <= limit,
                    "full_jitter(attempt = {attempt}, base = {}, cap = {}) returned {}, above the \
                     ceiling min(cap, base·2^attempt) = {}",
                    show(base),
                    show(cap),
                    show(delay),
                    show(limit),
                );
            }
        }
    }
}

#[test]
fn uniform() {
    let (attempt, base, cap) = (3, 10 * MS, 1_000 * MS);
    let limit = ceiling(attempt, base, cap).as_secs_f64();
    let mut rng = seeded(2015);
    let fractions: Vec<f64> = (0..4_000)
        .map(|_| draw_with(attempt, base, cap, &mut rng).as_secs_f64() / limit)
        .collect();
    let mean = fractions.iter().sum::<f64>() / fractions.len() as f64;
    let low = fractions.iter().copied().fold(f64::INFINITY, f64::min);
    let high = fractions.iter().copied().fold(0.0, f64::max);
    let ms = |fraction: f64| format!("{:.1} ms", fraction * limit * 1e3);
    assert!(
        (0.45..=0.55).contains(&mean) && low <= 0.05 && high >= 0.95,
        "4,000 draws of full_jitter(attempt = 3, base = 10 ms, cap = 1 s) should spread evenly \
         over [0, 80 ms]: mean near 40 ms, smallest below 4 ms, largest above 76 ms; yours had \
         mean {}, smallest {}, largest {}",
        ms(mean),
        ms(low),
        ms(high),
    );
}

#[test]
fn no_overflow_at_high_attempts() {
    let (base, cap) = (100 * MS, 30_000 * MS);
    for attempt in [31, 32, 33, 63, 64, 65, 1_000, u32::MAX - 1, u32::MAX] {
        let delays: Vec<Duration> = (0..200).map(|seed| draw(attempt, base, cap, seed)).collect();
        let largest = delays.iter().copied().max().unwrap_or_default();
        assert!(
            largest <= cap && largest >= cap * 9 / 10,
            "at attempt = {attempt} (base = 100 ms, cap = 30 s) the ceiling is the cap, so 200 \
             draws should reach close to 30 s without exceeding it; your largest was {}",
            show(largest),
        );
    }
}
