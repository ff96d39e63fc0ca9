//! Checks of `EqualJitter`: its bounds `[t/2, t]`, its spread, and huge attempt numbers.

use std::time::Duration;

use exercise::EqualJitter;

use super::support::{catch, seeded, show, show_all};

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

/// The (base, cap) pairs the bound checks try: the cap reached early, late, at once, a base
/// above the cap, a cap 1 ns either side of base·2^3, and a 1 ns base whose ceiling keeps doubling
/// past attempt 32 (where 2^attempt no longer fits a u32) up to attempt 49.
const SETTINGS: [(Duration, Duration); 7] = [
    (Duration::from_millis(50), Duration::from_millis(500)),
    (Duration::from_millis(1), Duration::from_secs(30)),
    (Duration::from_millis(100), Duration::from_millis(100)),
    (Duration::from_millis(300), Duration::from_millis(200)),
    (Duration::from_millis(10), Duration::from_nanos(80_000_001)),
    (Duration::from_millis(10), Duration::from_nanos(79_999_999)),
    (Duration::from_nanos(1), Duration::from_secs(1_000_000)),
];

#[test]
fn within_bounds() {
    for (base, cap) in SETTINGS {
        for seed in 0..50 {
            let delays = delays(base, cap, 60, seed);
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
            let delays = delays(base, cap, 60, seed);
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
        let advice = if low >= 0.9 {
            "Every delay sits at t: the random part is missing. Keep t/2 and add a draw from \
             [0, t - t/2]"
        } else if high <= 0.1 {
            "Every delay sits at t/2: the random part is missing or always zero. Add a draw from \
             [0, t - t/2]"
        } else {
            "Draw the random part uniformly over the whole of [0, t - t/2]"
        };
        assert!(
            (0.4..=0.6).contains(&mean) && low <= 0.1 && high >= 0.9,
            "across 400 seeds, the delay before retry {attempt} (base = 10 ms, cap = 1 s, so \
             t = {}) should spread evenly over [{}, {}]: mean near {}, smallest below {}, \
             largest above {}; yours had mean {}, smallest {}, largest {}. {advice}",
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
    // A 1 ns base under the largest cap there is: t = 2^attempt ns keeps doubling past attempt
    // 64 (2^64 ns is about 584 years) up to attempt 93, and is Duration::MAX from 94 on.
    let (base, cap) = (Duration::from_nanos(1), Duration::MAX);
    for seed in 0..5 {
        let delays = delays(base, cap, 100, seed);
        for (attempt, delay) in (0u32..).zip(&delays).skip(60) {
            let t = ceiling(attempt, base, cap);
            assert!(
                t / 2 <= *delay && *delay <= t,
                "with base = 1 ns and cap = Duration::MAX, t = min(cap, 2^{attempt} ns) = {} \
                 before retry {attempt}, so the delay must lie in [{}, {}]; yours was {} (seed \
                 {seed}). The exponent is the attempt number itself, however large",
                show(t),
                show(t / 2),
                show(t),
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

/// `[t/2, t]` in whole nanoseconds, for a message.
fn nanos(delays: impl IntoIterator<Item = Duration>) -> String {
    let parts: Vec<String> = delays
        .into_iter()
        .map(|delay| format!("{} ns", delay.as_nanos()))
        .collect();
    format!("[{}]", parts.join(", "))
}

#[test]
fn nanosecond_edges() {
    // Ceilings of a few nanoseconds, odd ones among them, and caps 1 ns either side of base·2^2:
    // (1 ns, 7 ns) gives t = 1, 2, 4, 7, 7 ns; (3 ns, 11 ns) gives 3, 6, 11 ns; (3 ns, 13 ns) gives
    // 3, 6, 12, 13 ns; a zero base gives t = 0. Across 300 seeds every whole nanosecond of
    // [t/2, t] turns up, so the largest delay seen must be t itself and the smallest at most t/2
    // rounded up.
    for (base, cap) in [(1, 7), (3, 11), (3, 13), (0, 5)]
        .map(|(base, cap)| (Duration::from_nanos(base), Duration::from_nanos(cap)))
    {
        let runs: Vec<Vec<Duration>> = (0..300).map(|seed| delays(base, cap, 5, seed)).collect();
        for attempt in 0..5u32 {
            let t = ceiling(attempt, base, cap);
            let seen: Vec<Duration> = runs
                .iter()
                .filter_map(|run| run.get(attempt as usize).copied())
                .collect();
            let low = seen.iter().copied().min().unwrap_or_default();
            let high = seen.iter().copied().max().unwrap_or_default();
            let half_up = t - t / 2;
            assert!(
                seen.len() == runs.len() && high == t && low <= half_up && low >= t / 2,
                "with base = {} ns and cap = {} ns, t = min(cap, base·2^{attempt}) = {} ns, and \
                 across 300 seeds the delay before retry {attempt} should take every whole \
                 nanosecond of [t/2, t] = [{} ns, {} ns], t itself included; yours ranged over \
                 {} (from {} delays). When t is odd, t/2 rounds down: draw the random part from \
                 [0, t - t/2] so that the two parts can add up to t",
                base.as_nanos(),
                cap.as_nanos(),
                t.as_nanos(),
                (t / 2).as_nanos(),
                t.as_nanos(),
                nanos([low, high]),
                seen.len(),
            );
        }
    }
}

/// Where `delay` falls inside `[t/2, t]`, from 0 (at t/2) to 1 (at t).
fn fraction(delay: Duration, t: Duration) -> f64 {
    let half = (t - t / 2).as_secs_f64();
    (delay.as_secs_f64() - (t / 2).as_secs_f64()) / half
}

#[test]
fn spread_at_cap() {
    // With base = 10 ms and cap = 1 s, t is the cap from retry 7 on. Each delay from there on is
    // still drawn afresh from [500 ms, 1 s]: its mean stays near 750 ms and hardly any delay sits
    // exactly on the cap (a uniform draw over a billion nanoseconds almost never hits one).
    // For a correct solution the mean position of 200 draws (spread 0.02) leaves [0.35, 0.65]
    // with probability 1 in 10^13 (Irwin-Hall, exact), the smallest stays above 0.15 and the
    // largest below 0.85 each with probability 0.85^200, about 1 in 10^14: across the 33
    // retries, about 4 in 10^12. (The window [0.4, 0.6] was left with probability 8·10^-7 a
    // retry, 3·10^-5 for the check.) Capping after the split puts every delay from retry 8 on
    // exactly on the cap, far over the 10 allowed.
    let (base, cap, retries) = (10 * MS, SECOND, 40);
    let runs: Vec<Vec<Duration>> = (0..200)
        .map(|seed| delays(base, cap, retries, seed))
        .collect();
    for attempt in 7..retries {
        let t = ceiling(attempt, base, cap);
        let at: Vec<Duration> = runs
            .iter()
            .filter_map(|run| run.get(attempt as usize).copied())
            .collect();
        let fractions: Vec<f64> = at.iter().map(|delay| fraction(*delay, t)).collect();
        let mean = fractions.iter().sum::<f64>() / fractions.len().max(1) as f64;
        let on_cap = at.iter().filter(|delay| **delay == t).count();
        let low = fractions.iter().copied().fold(f64::INFINITY, f64::min);
        let high = fractions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ms = |fraction: f64| format!("{:.1} ms", 500.0 + fraction * 500.0);
        assert!(
            at.len() == runs.len()
                && (0.35..=0.65).contains(&mean)
                && on_cap <= 10
                && low <= 0.15
                && high >= 0.85,
            "with base = 10 ms and cap = 1 s, t is the cap from retry 7 on, and each delay is \
             still drawn afresh from [500 ms, 1 s]: across 200 seeds the delay before retry \
             {attempt} should average near 750 ms, range from below 575 ms to above 925 ms, and \
             sit exactly on the cap almost never; yours averaged {}, ranged from {} to {}, and was \
             exactly 1 s in {on_cap} of {} runs. {}",
            ms(mean),
            ms(low),
            ms(high),
            at.len(),
            if on_cap > 10 {
                "Split the capped t, not the uncapped exponential"
            } else {
                "Draw the random part uniformly over [0, t - t/2] for every delay, at the cap too"
            },
        );
    }
}

#[test]
fn independent_draws() {
    // Each delay's random half is a fresh draw: where one delay falls inside its [t/2, t] says
    // nothing about where the next one falls. Across 400 seeds the correlation of the positions
    // of consecutive delays is near 0 (its spread is about 0.05); one random factor reused for
    // every delay makes it 1. For fresh draws |r| reaches 0.4 with probability about 1.4·10^-16
    // a pair (an importance-sampled estimate), 7·10^-16 for the five pairs; at 0.3 it was
    // 1.1·10^-9 a pair, 5·10^-9 for the check.
    let (base, cap, retries) = (10 * MS, SECOND, 16);
    let runs: Vec<Vec<Duration>> = (0..400)
        .map(|seed| delays(base, cap, retries, seed))
        .collect();
    for attempt in [0u32, 3, 6, 7, 12] {
        let pairs: Vec<(f64, f64)> = runs
            .iter()
            .filter_map(|run| {
                let first = run.get(attempt as usize)?;
                let second = run.get(attempt as usize + 1)?;
                Some((
                    fraction(*first, ceiling(attempt, base, cap)),
                    fraction(*second, ceiling(attempt + 1, base, cap)),
                ))
            })
            .collect();
        let r = correlation(&pairs);
        assert!(
            pairs.len() == runs.len() && r.abs() <= 0.4,
            "each equal-jitter delay draws its random half afresh, so where the delay before \
             retry {attempt} falls inside its [t/2, t] should say nothing about where the next \
             one falls. Across 400 seeds (base = 10 ms, cap = 1 s) the correlation between the \
             two was {r:.2} (near 0 expected, at most 0.4 in size): draw a new random part for \
             every delay instead of reusing one"
        );
    }
}

/// The Pearson correlation of paired samples; 1 when either side does not vary (a position that
/// never changes is no fresh draw).
pub fn correlation(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len().max(1) as f64;
    let (mean_x, mean_y) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let covariance: f64 = pairs.iter().map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let spread_x: f64 = pairs.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
    let spread_y: f64 = pairs.iter().map(|(_, y)| (y - mean_y).powi(2)).sum();
    if spread_x == 0.0 || spread_y == 0.0 {
        return 1.0;
    }
    covariance / (spread_x * spread_y).sqrt()
}

/// How often each whole nanosecond of `[low, high]` occurs among `delays`, as shares of all of them.
pub fn shares(delays: &[Duration], low: u128, high: u128) -> Vec<(u128, f64)> {
    let total = delays.len().max(1) as f64;
    (low..=high)
        .map(|nanos| {
            let count = delays.iter().filter(|d| d.as_nanos() == nanos).count();
            (nanos, count as f64 / total)
        })
        .collect()
}

/// Shares as "2 ns: 25.1 %, 3 ns: 24.8 %", for a message.
pub fn show_shares(shares: &[(u128, f64)]) -> String {
    let parts: Vec<String> = shares
        .iter()
        .map(|(nanos, share)| format!("{nanos} ns: {:.1} %", share * 100.0))
        .collect();
    parts.join(", ")
}

#[test]
fn uniform_to_the_nanosecond() {
    // "Uniformly from [t/2, t]" holds to the nanosecond: with base = cap = 5 ns, t = 5 ns before
    // every retry, and each of 2, 3, 4 and 5 ns comes up a quarter of the time (with 4 ns, each of
    // 2, 3 and 4 ns a third). Over 6,000 delays a share strays by about 0.6 percentage points, so
    // the window of ±5 points is about nine of those wide. A random fraction scaled to the range
    // and rounded gives each end only half the share of an inner value (1/6 against 1/3 for t = 5).
    for (t, expected) in [(5u64, 0.25), (4, 1.0 / 3.0)] {
        let t = Duration::from_nanos(t);
        let all: Vec<Duration> = (0..10).flat_map(|seed| delays(t, t, 600, seed)).collect();
        let shares = shares(&all, (t / 2).as_nanos(), t.as_nanos());
        let even = shares
            .iter()
            .all(|(_, share)| (share - expected).abs() <= 0.05);
        assert!(
            all.len() == 6_000 && even,
            "with base = cap = {} ns, t = {} ns before every retry, and each whole nanosecond of \
             [t/2, t] = [{} ns, {} ns] should come up equally often ({:.1} % each); across {} of \
             your delays the shares were {}. Draw whole nanoseconds uniformly (an inclusive \
             Duration range does), not a rounded fraction of the range",
            t.as_nanos(),
            t.as_nanos(),
            (t / 2).as_nanos(),
            t.as_nanos(),
            expected * 100.0,
            all.len(),
            show_shares(&shares),
        );
    }
}

#[test]
fn spread_beyond_u64_nanoseconds() {
    // The rule is the same however long t is. With base = u64::MAX / 16 seconds (about 3.7·10^19 s,
    // far more nanoseconds than a u64 holds) and cap = Duration::MAX, each delay is still drawn
    // over the whole of [t/2, t]: across 200 seeds its position averages near the middle and
    // comes near both ends. A random part computed in u64 nanoseconds stays near t/2.
    // For a correct solution the mean leaves [0.35, 0.65] with probability 1 in 10^13 and each
    // end stays unreached with probability 0.85^200, about 1 in 10^14: across the 6 retries,
    // about 7 in 10^13 (with [0.4, 0.6] it was 8·10^-7 a retry, 5·10^-6 for the check). The
    // u64 random part keeps every position below 10^-7.
    let (base, cap, retries) = (Duration::from_secs(u64::MAX / 16), Duration::MAX, 6);
    let runs: Vec<Vec<Duration>> = (0..200)
        .map(|seed| delays(base, cap, retries, seed))
        .collect();
    for attempt in 0..retries {
        let t = ceiling(attempt, base, cap);
        let fractions: Vec<f64> = runs
            .iter()
            .filter_map(|run| run.get(attempt as usize))
            .map(|delay| fraction(*delay, t))
            .collect();
        let mean = fractions.iter().sum::<f64>() / fractions.len().max(1) as f64;
        let low = fractions.iter().copied().fold(f64::INFINITY, f64::min);
        let high = fractions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert!(
            fractions.len() == runs.len()
                && (0.35..=0.65).contains(&mean)
                && low <= 0.15
                && high >= 0.85,
            "with base = u64::MAX / 16 s and cap = Duration::MAX, t before retry {attempt} is \
             {} and each delay is drawn uniformly from [t/2, t]; as a position from 0 (t/2) to 1 \
             (t), across 200 seeds yours averaged {mean:.3} (near 0.5 expected) and ranged from \
             {low:.3} to {high:.3}. Draw the random part over the whole of t - t/2, which here \
             is more nanoseconds than a u64 can hold",
            show(t),
        );
    }
}
