//! Checks of `next_retry_at`: capped full jitter, counted from the first failure.

use std::collections::BTreeSet;

use exercise::BackoffConfig;

use super::fixture::{SECOND, T0, ceiling, config, describe, ms, next_retry_at};
use super::support::seeded;

/// Three configurations: the default (1 s doubling to 60 s), a small base, and cap = base.
fn settings() -> [BackoffConfig; 3] {
    [
        BackoffConfig::default(),
        config(100, 30 * SECOND, 600 * SECOND, 10),
        config(250, 250, 600 * SECOND, 10),
    ]
}

const HUGE_ATTEMPTS: [u32; 11] = [
    31,
    32,
    33,
    63,
    64,
    65,
    127,
    128,
    1_000,
    u32::MAX - 1,
    u32::MAX,
];

#[test]
fn within_bounds() {
    let mut rng = seeded(16);
    for cfg in settings() {
        for attempts in (0..=20).chain(HUGE_ATTEMPTS) {
            let limit = ceiling(attempts, &cfg);
            for _ in 0..30 {
                let at = next_retry_at(T0, attempts, &cfg, &mut rng);
                assert!(
                    (T0..=T0 + limit).contains(&at),
                    "next_retry_at(now, attempts = {attempts}, {}) returned now + {}; it must lie \
                     within [now, now + min(cap, base·2^(attempts−1))] = [now, now + {}] {}",
                    describe(&cfg),
                    ms(at - T0),
                    ms(limit),
                    if at < T0 {
                        "(it returns a moment, now plus the delay, not the delay alone)"
                    } else {
                        "(attempts counts failures: after the first failure attempts = 1 and the \
                         ceiling is base; attempts = 0 counts as 1)"
                    },
                );
            }
        }
    }
}

#[test]
fn not_deterministic() {
    let cfg = BackoffConfig::default();
    let mut rng = seeded(16);
    for attempts in 1..=4 {
        // 200 rows failing at the same moment, each scheduled with the next draws of one
        // generator, as a relay would schedule them.
        let delays: Vec<i64> = (0..200)
            .map(|_| next_retry_at(T0, attempts, &cfg, &mut rng) - T0)
            .collect();
        let distinct: BTreeSet<i64> = delays.iter().copied().collect();
        assert!(
            distinct.len() >= 100,
            "200 rows failed at the same moment, and your next_retry_at(now, attempts = {attempts}, {}) \
             scheduled them for only {} distinct moment(s), for example now + {}: they would \
             all come due together. Draw the delay uniformly from [0, {}] (full jitter)",
            describe(&cfg),
            distinct.len(),
            ms(delays[0]),
            ms(ceiling(attempts, &cfg)),
        );
    }
}

#[test]
fn spreads_over_the_whole_range() {
    let cfg = BackoffConfig::default();
    let attempts = 3;
    let limit = ceiling(attempts, &cfg) as f64;
    let mut rng = seeded(2016);
    let fractions: Vec<f64> = (0..4_000)
        .map(|_| (next_retry_at(T0, attempts, &cfg, &mut rng) - T0) as f64 / limit)
        .collect();
    let mean = fractions.iter().sum::<f64>() / fractions.len() as f64;
    let low = fractions.iter().copied().fold(f64::INFINITY, f64::min);
    let high = fractions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let shown = |fraction: f64| ms((fraction * limit).round() as i64);
    assert!(
        (0.45..=0.55).contains(&mean) && low <= 0.05 && high >= 0.95,
        "4,000 draws of next_retry_at(now, attempts = 3, base = 1 s, cap = 60 s) should spread \
         evenly over [now, now + 4 s]: mean delay near 2 s, smallest below 200 ms, largest above \
         3.8 s; yours had mean {}, smallest {}, largest {}. The third failure's ceiling is \
         base·2^(3−1) = 4 s, and full jitter draws from zero up to it",
        shown(mean),
        shown(low),
        shown(high),
    );
}

#[test]
fn capped_at_high_attempts() {
    let cfg = BackoffConfig::default();
    let cap = ceiling(u32::MAX, &cfg);
    let mut rng = seeded(16);
    // A solution that draws differently from the reference sees other numbers. One draw falls
    // under 0.9 × cap with probability 54,000/60,001, so all 300 do with probability 2·10^-14,
    // and one of the 13 counts fails with 2.4·10^-13 (with 200 draws it was 9·10^-9).
    for attempts in [11, 20].into_iter().chain(HUGE_ATTEMPTS) {
        let delays: Vec<i64> = (0..300)
            .map(|_| next_retry_at(T0, attempts, &cfg, &mut rng) - T0)
            .collect();
        let largest = delays.iter().copied().max().unwrap_or_default();
        assert!(
            (cap * 9 / 10..=cap).contains(&largest),
            "at attempts = {attempts} ({}) the ceiling is the cap, so 300 draws should come \
             close to now + 60 s without passing it; your latest next_retry_at was now + {}. {}",
            describe(&cfg),
            ms(largest),
            if largest < 0 {
                "next_retry_at returns a moment, now plus the delay, not the delay alone"
            } else if largest > cap {
                "Cap the exponential: the ceiling is min(cap, base·2^(attempts−1))"
            } else {
                "The ceiling fell below the cap: compute base·2^(attempts−1) without overflow \
                 (saturating or checked arithmetic) for every attempts up to u32::MAX"
            },
        );
    }
}

/// A year in milliseconds: a cap far above the default's minute.
const YEAR: i64 = 365 * 24 * 3_600 * 1_000;

/// `(base ms, cap ms, attempts, the ceiling)`: exact at small counts, caps one millisecond either
/// side of base·2^k, attempts 0 read as 1, counts far past any overflow, exponents past 2^31
/// under a cap of a year (no exponent or factor of the solution's own caps the doubling), and a
/// zero cap (no delay at all, not "no cap"). The first six are a few milliseconds wide, so 400
/// draws reach every value of them.
const CEILINGS: [(i64, i64, u32, i64); 20] = [
    (1, 1_000, 1, 1),
    (2, 1_000, 0, 2),
    (5, 1_000, 2, 10),
    (3, 11, 3, 11),
    (3, 13, 3, 12),
    (3, 12, 4, 12),
    (1_000, 60_000, 0, 1_000),
    (1_000, 60_000, 1, 1_000),
    (1_000, 60_000, 2, 2_000),
    (1_000, 60_000, 6, 32_000),
    (1_000, 60_000, 7, 60_000),
    (250, 7_999, 6, 7_999),
    (250, 8_001, 6, 8_000),
    (250, 8_000, 6, 8_000),
    (1_000, 60_000, 64, 60_000),
    (1_000, 60_000, u32::MAX, 60_000),
    (1, YEAR, 33, 1 << 32),
    (1, YEAR, 35, 1 << 34),
    (1, YEAR, 40, YEAR),
    (1_000, 0, 5, 0),
];

#[test]
fn exact_ceiling_at_small_scales() {
    // 400 draws under a ceiling of a few milliseconds reach every value, both ends included, so
    // a cap applied too early or too late, an exponent off by one, or a draw that leaves out the
    // ceiling each give a different largest delay. A solution that draws differently from the
    // reference sees other numbers: 400 draws miss one of the 13 values of a 12 ms ceiling with
    // probability at most 13 × (12/13)^400, about 1.6·10^-13, and some value of the six cases
    // with 3.3·10^-13 (exactly, by inclusion-exclusion; with 300 draws it was 1.03·10^-9). A
    // ceiling one too high (13 ms for 12) stays unseen in all 400 with probability (13/14)^400,
    // about 1.3·10^-13.
    let cases = CEILINGS[..6]
        .iter()
        .map(|&(base, cap, attempts, expected)| {
            (config(base, cap, 600 * SECOND, 10), attempts, expected)
        });
    let mut rng = seeded(1616);
    for (cfg, attempts, expected) in cases {
        let delays: Vec<i64> = (0..400)
            .map(|_| next_retry_at(T0, attempts, &cfg, &mut rng) - T0)
            .collect();
        let smallest = delays.iter().copied().min().unwrap_or_default();
        let largest = delays.iter().copied().max().unwrap_or_default();
        let distinct: BTreeSet<i64> = delays.iter().copied().collect();
        assert!(
            smallest == 0 && largest == expected && distinct.len() as i64 == expected + 1,
            "400 draws of next_retry_at(now, attempts = {attempts}, base = {}, cap = {}) should \
             take every whole millisecond from now + 0 ms to now + {} (the ceiling \
             min(cap, base·2^(attempts−1)), both ends included); yours ranged from now + {} to \
             now + {} with {} distinct value(s)",
            ms(cfg.base.as_millis() as i64),
            ms(cfg.cap.as_millis() as i64),
            ms(expected),
            ms(smallest),
            ms(largest),
            distinct.len(),
        );
    }
}

#[test]
fn ceiling_exact() {
    // backoff_ceiling itself, which the relay's schedule and the book's figures are drawn from.
    let cases = CEILINGS.iter().map(|&(base, cap, attempts, expected)| {
        (config(base, cap, 600 * SECOND, 10), attempts, expected)
    });
    for (cfg, attempts, expected) in cases {
        let got = super::support::catch(|| exercise::backoff_ceiling(attempts, &cfg));
        assert!(
            got == Ok(expected),
            "backoff_ceiling(attempts = {attempts}, base = {}, cap = {}) should be {} \
             (min(cap, base·2^(attempts−1)), attempts 0 counting as 1); yours {}",
            ms(cfg.base.as_millis() as i64),
            ms(cfg.cap.as_millis() as i64),
            ms(expected),
            match &got {
                Ok(value) => format!("returned {}", ms(*value)),
                Err(panic) => format!("panicked: {panic}"),
            },
        );
    }
}

#[test]
fn every_value_equally_likely() {
    // §16.3: "uniform over whole milliseconds, inclusive at both ends". With a 4 ms ceiling each
    // of the five values 0..=4 has probability 1/5. A draw rounded from a float gives both ends
    // half the weight of the others (1/8 against 1/4), which the range checks above cannot see.
    // A correct draw's count of one value leaves 2,000 ± 400 in 10,000 draws with probability at
    // most 2·exp(−2·10,000·0.04²) = 2.5·10^-14 (Hoeffding), so one of the five with 1.3·10^-13.
    let cfg = config(1, 1_000, 600 * SECOND, 10);
    let attempts = 3;
    let draws = 10_000;
    let mut rng = seeded(4016);
    let mut counts = [0usize; 5];
    let mut outside = Vec::new();
    for _ in 0..draws {
        let delay = next_retry_at(T0, attempts, &cfg, &mut rng) - T0;
        match usize::try_from(delay)
            .ok()
            .and_then(|value| counts.get_mut(value))
        {
            Some(count) => *count += 1,
            None => outside.push(delay),
        }
    }
    assert!(
        outside.is_empty() && counts.iter().all(|&count| (1_600..=2_400).contains(&count)),
        "10,000 draws of next_retry_at(now, attempts = 3, base = 1 ms, cap = 1 s) should take each \
         whole millisecond of [now, now + 4 ms] equally often, about 2,000 times each (every \
         value from 0 to the ceiling, both ends included, equally likely); yours took now + 0 ms \
         to now + 4 ms {counts:?} times{}{}",
        if outside.is_empty() {
            String::new()
        } else {
            format!(
                " and {} delay(s) outside it, for example {}",
                outside.len(),
                ms(outside[0])
            )
        },
        equal_weights_advice(&counts, &outside),
    );
}

#[test]
fn draws_from_the_given_generator() {
    // §16.3: the draw comes "from a generator the caller passes in (seeded in tests, seeded
    // from the operating system in production)". Two generators seeded alike must then give
    // the same schedule: a draw from a generator of the solution's own ignores the seed, and
    // the relay's tests and the book's figures stop being reproducible.
    let cfg = BackoffConfig::default();
    let schedule = |seed: u64| -> Vec<i64> {
        let mut rng = seeded(seed);
        (1..=6)
            .flat_map(|attempts| std::iter::repeat_n(attempts, 10))
            .map(|attempts| next_retry_at(T0, attempts, &cfg, &mut rng) - T0)
            .collect()
    };
    let first = schedule(1716);
    let second = schedule(1716);
    let differ = first.iter().zip(&second).position(|(a, b)| a != b);
    assert!(
        differ.is_none(),
        "two generators seeded alike (StdRng seed 1716) should give the same 60 delays from \
         next_retry_at(now, attempts = 1..=6, base = 1 s, cap = 60 s), 10 per count; draw {} \
         differed: now + {} the first time, now + {} the second. Draw from the generator the \
         caller passes in (`rng`), never from one of your own",
        differ.map_or(0, |index| index + 1),
        ms(differ.map_or(0, |index| first[index])),
        ms(differ.map_or(0, |index| second[index])),
    );
}

/// What the shape of five bucket counts (the delays 0 to 4 ms) says about the draw, for
/// `every_value_equally_likely`; empty when the shape names no single cause.
fn equal_weights_advice(counts: &[usize; 5], outside: &[i64]) -> &'static str {
    let middle = (counts[1] + counts[2] + counts[3]) / 3;
    let fair = |count: usize| (1_600..=2_400).contains(&count);
    if outside.iter().any(|&delay| delay < 0) {
        ". Delays before now: next_retry_at returns a moment, now plus the delay, not the delay \
         alone"
    } else if !outside.is_empty() {
        ". Delays beyond the ceiling mean a ceiling that is too high: min(cap, \
         base·2^(attempts−1)), with attempts counting failures"
    } else if counts[..4]
        .iter()
        .all(|&count| fair(count) || (2_000..=2_900).contains(&count))
        && counts[4] == 0
    {
        ". The ceiling itself never came: the range leaves it out (0..ceiling). Draw from the \
         inclusive range 0..=ceiling"
    } else if (2_000..=3_000).contains(&middle)
        && counts[0] * 3 < middle * 2
        && counts[4] * 3 < middle * 2
    {
        ". Both ends came about half as often as the values between them, the mark of a scaled \
         float rounded to the nearest millisecond: draw an integer uniformly from the inclusive \
         range 0..=ceiling"
    } else if counts.iter().filter(|&&count| count > 0).count() <= 3 {
        ". Most values never came: the delay must be drawn from the whole range, from 0 up to \
         the ceiling of the third failure, 4 ms"
    } else {
        ""
    }
}
