//! Checks of `EqualJitter`: its bounds `[t/2, t]`, its spread, and huge attempt numbers.

use std::time::Duration;

use exercise::EqualJitter;

use crate::support::{catch, seeded, show, show_all};

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);

/// `t = min(cap, base · 2^attempt)`, the ceiling the checks hold equal jitter to.
pub fn ceiling(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let exponential = 1u128
        .checked_shl(attempt)
        .and_then(|factor| base.as_nanos().checked_mul(factor));
    match exponential {
        Some(nanos) if nanos < cap.as_nanos() => Duration::new(
            (nanos / 1_000_000_000) as u64,
            (nanos % 1_000_000_000) as u32,
        ),
        None if base.is_zero() => Duration::ZERO,
        _ => cap,
    }
}

/// Every delay of one `EqualJitter` policy (at most a few more than `max_retries`, so an endless
/// iterator cannot hang the check), with a panic turned into a readable failure.
pub fn delays(base: Duration, cap: Duration, max_retries: u32, seed: u64) -> Vec<Duration> {
    let limit = max_retries as usize + 5;
    catch(|| {
        EqualJitter::new(base, cap, max_retries, seeded(seed))
            .take(limit)
            .collect()
    })
    .unwrap_or_else(|message| {
        panic!(
            "EqualJitter::new(base = {}, cap = {}, max_retries = {max_retries}, rng) \
                 panicked while yielding its delays (seed {seed}): {message}",
            show(base),
            show(cap),
        )
    })
}

/// The (base, cap) pairs the bound checks try: the cap reached early, late, at once, and a base
/// above the cap.
const SETTINGS: [(Duration, Duration); 4] = [
    (Duration::from_millis(50), Duration::from_millis(500)),
    (Duration::from_millis(1), Duration::from_secs(30)),
    (Duration::from_millis(100), Duration::from_millis(100)),
    (Duration::from_millis(300), Duration::from_millis(200)),
];

#[test]
fn within_bounds() {
    for (base, cap) in SETTINGS {
        for seed in 0..50 {
            let delays = delays(base, cap, 20, seed);
            for (attempt, delay) in (0u32..).zip(&delays) {
                let t = ceiling(attempt, base, cap);
                assert!(
                    *delay <= t,
                    "with base = {}, cap = {}, your delay before retry {attempt} was {}, above \
                     t = min(cap, base·2^{attempt}) = {}; equal jitter draws from [t/2, t] and \
                     never waits longer than t (seed {seed}, delays {})",
                    show(base),
                    show(cap),
                    show(*delay),
                    show(t),
                    show_all(&delays, 8),
                );
            }
        }
    }
}

#[test]
fn never_below_half() {
    for (base, cap) in SETTINGS {
        for seed in 0..50 {
            let delays = delays(base, cap, 20, seed);
            for (attempt, delay) in (0u32..).zip(&delays) {
                let t = ceiling(attempt, base, cap);
                assert!(
                    *delay >= t / 2,
                    "with base = {}, cap = {}, your delay before retry {attempt} was {}, below \
                     half of t = min(cap, base·2^{attempt}) = {}; equal jitter keeps t/2 = {} \
                     and adds a random part on top, so no delay is ever shorter (seed {seed}, \
                     delays {})",
                    show(base),
                    show(cap),
                    show(*delay),
                    show(t),
                    show(t / 2),
                    show_all(&delays, 8),
                );
            }
        }
    }
}

#[test]
fn spread() {
    let (base, cap, retries) = (10 * MS, SECOND, 8);
    let runs: Vec<Vec<Duration>> = (0..400)
        .map(|seed| delays(base, cap, retries, seed))
        .collect();
    for attempt in 0..retries {
        let t = ceiling(attempt, base, cap);
        let half = (t - t / 2).as_secs_f64();
        // Where each delay falls inside [t/2, t], as a fraction from 0 (t/2) to 1 (t).
        let fractions: Vec<f64> = runs
            .iter()
            .filter_map(|run| run.get(attempt as usize))
            .map(|delay| (delay.as_secs_f64() - (t / 2).as_secs_f64()) / half)
            .collect();
        assert!(
            fractions.len() == runs.len(),
            "with max_retries = {retries}, only {} of 400 seeded policies yielded a delay before \
             retry {attempt}",
            fractions.len(),
        );
        let mean = fractions.iter().sum::<f64>() / fractions.len() as f64;
        let low = fractions.iter().copied().fold(f64::INFINITY, f64::min);
        let high = fractions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ms =
            |fraction: f64| format!("{:.1} ms", ((t / 2).as_secs_f64() + fraction * half) * 1e3);
        assert!(
            (0.4..=0.6).contains(&mean) && low <= 0.1 && high >= 0.9,
            "across 400 seeds, the delay before retry {attempt} (base = 10 ms, cap = 1 s, so \
             t = {}) should spread evenly over [{}, {}]: mean near {}, smallest below {}, \
             largest above {}; yours had mean {}, smallest {}, largest {}. Draw the random half \
             afresh for every delay",
            show(t),
            show(t / 2),
            show(t),
            ms(0.5),
            ms(0.1),
            ms(0.9),
            ms(mean),
            ms(low),
            ms(high),
        );
    }
}

#[test]
fn no_overflow_at_high_attempts() {
    // 1 ms · 2^16 is above 60 s, so from retry 16 on t is the cap; 300 retries pass attempt 32,
    // 64 and 128, where 2^attempt no longer fits a u32, a u64 or a u128.
    let (base, cap) = (MS, 60 * SECOND);
    for seed in 0..20 {
        let delays = delays(base, cap, 300, seed);
        assert!(
            delays.len() == 300,
            "EqualJitter(base = 1 ms, cap = 60 s, max_retries = 300) should yield 300 delays; \
             yours yielded {} (seed {seed})",
            delays.len(),
        );
        for (attempt, delay) in delays.iter().enumerate().skip(16) {
            let advice = if *delay > cap {
                "compute t with backoff_ceiling, which saturates at the cap instead of growing \
                 or overflowing"
            } else {
                "keep t/2 = 30 s and draw only the rest"
            };
            assert!(
                (30 * SECOND..=cap).contains(delay),
                "with base = 1 ms and cap = 60 s, t is the cap from retry 16 on, so every delay \
                 must lie in [30 s, 60 s]; yours was {} before retry {attempt} (seed {seed}): \
                 {advice}",
                show(*delay),
            );
        }
    }
    // A base so large that base · 2 already overflows a Duration.
    let (base, cap) = (Duration::from_secs(u64::MAX / 4), Duration::MAX);
    let delays = delays(base, cap, 6, 1);
    for (attempt, delay) in (0u32..).zip(&delays) {
        let t = ceiling(attempt, base, cap);
        assert!(
            t / 2 <= *delay && *delay <= t,
            "with base = u64::MAX / 4 seconds and cap = Duration::MAX, your delay before retry \
             {attempt} was {}, outside [t/2, t] = [{}, {}]",
            show(*delay),
            show(t / 2),
            show(t),
        );
    }
}
