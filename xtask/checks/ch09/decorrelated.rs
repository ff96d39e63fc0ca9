//! Checks of `DecorrelatedJitter`: where it starts, its bounds, its memory, and huge delays.

use std::time::Duration;

use exercise::DecorrelatedJitter;

use super::support::{catch, seeded, show, show_all};

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);

/// Every delay of one `DecorrelatedJitter` policy (at most a few more than `max_retries`, so an
/// endless iterator cannot hang the check), with a panic turned into a readable failure.
pub fn delays(base: Duration, cap: Duration, max_retries: u32, seed: u64) -> Vec<Duration> {
    let limit = max_retries as usize + 5;
    catch(|| {
        DecorrelatedJitter::new(base, cap, max_retries, seeded(seed))
            .take(limit)
            .collect()
    })
    .unwrap_or_else(|message| {
        panic!(
            "DecorrelatedJitter::new(base = {}, cap = {}, max_retries = {max_retries}, rng) \
                 panicked while yielding its delays (seed {seed}): {message}",
            show(base),
            show(cap),
        )
    })
}

/// The (base, cap) pairs the bound checks try, from a cap far above the base to a cap equal to it.
const SETTINGS: [(Duration, Duration); 4] = [
    (Duration::from_millis(10), Duration::from_secs(1)),
    (Duration::from_millis(50), Duration::from_millis(500)),
    (Duration::from_millis(1), Duration::from_secs(60)),
    (Duration::from_millis(200), Duration::from_millis(200)),
];

#[test]
fn first_delay_from_base() {
    let (base, cap) = (100 * MS, 10 * SECOND);
    let firsts: Vec<Duration> = (0..400)
        .map(|seed| {
            let delays = delays(base, cap, 1, seed);
            *delays.first().unwrap_or_else(|| {
                panic!(
                    "DecorrelatedJitter::new(base = 100 ms, cap = 10 s, max_retries = 1, rng) \
                     yielded no delay at all (seed {seed}); max_retries = 1 allows one retry"
                )
            })
        })
        .collect();
    for (seed, first) in firsts.iter().enumerate() {
        assert!(
            (base..=3 * base).contains(first),
            "with base = 100 ms and cap = 10 s, the first delay must lie in [base, 3·base] = \
             [100 ms, 300 ms], because `previous` starts at base; yours was {} (seed {seed})",
            show(*first),
        );
    }
    let low = firsts.iter().copied().min().unwrap_or_default();
    let high = firsts.iter().copied().max().unwrap_or_default();
    assert!(
        low <= 120 * MS && high >= 280 * MS,
        "across 400 seeds the first delay (base = 100 ms, cap = 10 s) should spread over the \
         whole of [100 ms, 300 ms]; yours ranged only from {} to {}: start `previous` at base \
         and draw from [base, previous·3]",
        show(low),
        show(high),
    );
}

#[test]
fn never_below_base() {
    for (base, cap) in SETTINGS {
        for seed in 0..100 {
            let delays = delays(base, cap, 30, seed);
            if let Some((retry, delay)) = delays.iter().enumerate().find(|(_, d)| **d < base) {
                panic!(
                    "with base = {}, cap = {}, your delay before retry {retry} was {}, below \
                     base; decorrelated jitter draws from [base, previous·3], never from zero \
                     (seed {seed}, delays {})",
                    show(base),
                    show(cap),
                    show(*delay),
                    show_all(&delays, 8),
                );
            }
        }
    }
}

#[test]
fn never_above_cap() {
    for (base, cap) in SETTINGS {
        for seed in 0..100 {
            let delays = delays(base, cap, 30, seed);
            if let Some((retry, delay)) = delays.iter().enumerate().find(|(_, d)| **d > cap) {
                panic!(
                    "with base = {}, cap = {}, your delay before retry {retry} was {}, above the \
                     cap; every draw must be capped: min(cap, random_between(base, previous·3)) \
                     (seed {seed}, delays {})",
                    show(base),
                    show(cap),
                    show(*delay),
                    show_all(&delays, 8),
                );
            }
        }
    }
}

#[test]
fn base_above_cap() {
    let (base, cap) = (SECOND, 200 * MS);
    for seed in 0..20 {
        let delays = delays(base, cap, 5, seed);
        assert!(
            delays.len() == 5 && delays.iter().all(|delay| *delay == cap),
            "with base = 1 s above cap = 200 ms, the cap wins: base is lowered to the cap, so \
             every delay is exactly 200 ms; yours were {} (seed {seed})",
            show_all(&delays, 8),
        );
    }
}

#[test]
fn growth_bounded() {
    // The cap is far away, so every delay is bounded by three times the one before it.
    let (base, cap) = (10 * MS, 100 * SECOND);
    for seed in 0..200 {
        let delays = delays(base, cap, 12, seed);
        let mut previous = base;
        for (retry, delay) in delays.iter().enumerate() {
            let limit = (3 * previous).min(cap);
            assert!(
                *delay <= limit,
                "with base = 10 ms and cap = 100 s, your delay before retry {retry} was {}, \
                 more than 3 × the previous delay {} = {}; each draw comes from \
                 [base, previous·3], where previous is the delay returned last{} (seed {seed}, \
                 delays {})",
                show(*delay),
                show(previous),
                show(limit),
                if retry == 0 {
                    " (base before the first)"
                } else {
                    ""
                },
                show_all(&delays, 8),
            );
            previous = *delay;
        }
    }
}

#[test]
fn depends_on_previous() {
    // Split 2,000 seeded runs by their first delay: short ones in [10 ms, 20 ms), long ones in
    // [20 ms, 30 ms]. With memory the second delay is drawn from [base, 3·first], so it averages
    // about 27.5 ms after a short first delay and 42.5 ms after a long one. Without memory both
    // averages are the same.
    let (base, cap) = (10 * MS, 100 * SECOND);
    let split = 2 * base;
    let (mut after_short, mut after_long) = (Vec::new(), Vec::new());
    for seed in 0..2_000 {
        let delays = delays(base, cap, 2, seed);
        let [first, second, ..] = delays[..] else {
            panic!(
                "DecorrelatedJitter::new(base = 10 ms, cap = 100 s, max_retries = 2, rng) \
                 yielded {} delay(s) instead of 2 (seed {seed})",
                delays.len(),
            );
        };
        if first < split {
            after_short.push(second.as_secs_f64());
        } else {
            after_long.push(second.as_secs_f64());
        }
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let ms = |secs: f64| format!("{:.1} ms", secs * 1e3);
    assert!(
        after_short.len() >= 200 && after_long.len() >= 200,
        "with base = 10 ms, 2,000 seeded policies should give first delays on both sides of \
         20 ms (about half each); yours gave {} below and {} above: draw the first delay from \
         [base, 3·base]",
        after_short.len(),
        after_long.len(),
    );
    let (short, long) = (mean(&after_short), mean(&after_long));
    assert!(
        long >= 1.25 * short,
        "decorrelated jitter remembers: the second delay is drawn from [base, 3·first], so it \
         should be clearly longer after a long first delay. Across 2,000 seeds (base = 10 ms, \
         cap = 100 s) your second delay averaged {} after a first delay below 20 ms and {} after \
         one of 20 ms or more (expected about 27.5 ms and 42.5 ms). Draw from [base, previous·3] \
         and store each delay as the new previous",
        ms(short),
        ms(long),
    );
}

#[test]
fn no_overflow() {
    // previous·3 overflows a Duration here from the very first draw.
    let (base, cap) = (Duration::from_secs(u64::MAX / 2), Duration::MAX);
    for seed in 0..10 {
        let delays = delays(base, cap, 8, seed);
        assert!(
            delays.len() == 8 && delays.iter().all(|delay| *delay >= base),
            "with base = u64::MAX / 2 seconds and cap = Duration::MAX, 8 delays of at least base \
             were expected; yours were {} (seed {seed})",
            show_all(&delays, 8),
        );
    }
    let (base, cap) = (MS, 60 * SECOND);
    let delays = delays(base, cap, 1_000, 1);
    assert!(
        delays.len() == 1_000 && delays.iter().all(|delay| (base..=cap).contains(delay)),
        "with base = 1 ms, cap = 60 s and max_retries = 1,000, 1,000 delays within [1 ms, 60 s] \
         were expected; yours were {}",
        show_all(&delays, 8),
    );
}

#[test]
fn piles_up_near_the_top() {
    // With base above Duration::MAX / 3, previous·3 does not fit in a Duration at any step, so it
    // saturates to Duration::MAX and every draw comes from [base, Duration::MAX], then capped at
    // cap = Duration::MAX / 2: (MAX − MAX/2) / (MAX − MAX/3) = 3/4 of the delays sit exactly on the
    // cap, independently of one another (an exact u128 upper end 3·previous gives even more). A
    // loop that turns the overflow into the cap (`checked_mul(3).unwrap_or(cap)`) draws from
    // [base, cap] instead, and almost never lands on the cap. For a correct policy, fewer than
    // half of 1,000 delays at the cap has probability below exp(−1000·0.144) ≈ 1e-63 (Chernoff).
    let base = Duration::MAX / 3 + SECOND;
    let cap = Duration::MAX / 2;
    let (mut drawn, mut on_cap) = (0usize, 0usize);
    for seed in 0..200 {
        let delays = delays(base, cap, 5, seed);
        drawn += delays.len();
        on_cap += delays.iter().filter(|delay| **delay == cap).count();
    }
    assert!(
        drawn == 1_000 && on_cap >= 500,
        "with base = Duration::MAX / 3 + 1 s and cap = Duration::MAX / 2, previous·3 saturates at \
         Duration::MAX, so every delay is min(cap, a draw from [base, Duration::MAX]) and about \
         3 in 4 of them are exactly the cap: an overflow of previous·3 is past the cap, but the \
         draw is capped, not the range. Across 200 seeds × 5 retries your policy gave {drawn} \
         delays, {on_cap} of them exactly the cap"
    );
}

#[test]
fn first_delay_uniform() {
    // The first delay is uniform over [base, 3·base] = [100 ms, 300 ms]: its mean is 200 ms (the
    // mean of 400 draws strays by about 3 ms), and it lands exactly on base almost never. A draw
    // from [0, 3·base] raised to base piles a third of the runs on base and averages 167 ms.
    let (base, cap) = (100 * MS, 10 * SECOND);
    let firsts: Vec<Duration> = (0..400)
        .filter_map(|seed| delays(base, cap, 1, seed).first().copied())
        .collect();
    let mean = firsts.iter().sum::<Duration>().as_secs_f64() / firsts.len().max(1) as f64;
    let on_base = firsts.iter().filter(|first| **first == base).count();
    let on_top = firsts.iter().filter(|first| **first == 3 * base).count();
    assert!(
        firsts.len() == 400 && (0.18..=0.22).contains(&mean) && on_base <= 10 && on_top <= 10,
        "with base = 100 ms, the first decorrelated delay is drawn uniformly from \
         [base, 3·base] = [100 ms, 300 ms]: across 400 seeds it should average near 200 ms and \
         sit exactly on either end almost never; yours averaged {:.1} ms, was exactly 100 ms in \
         {on_base} runs and exactly 300 ms in {on_top} (of {}). Draw from [base, previous·3] \
         itself, not from a wider range clamped into it",
        mean * 1e3,
        firsts.len(),
    );
}

#[test]
fn falls_back_from_cap() {
    // Once a delay is the cap, `previous` is the cap, so the next draw comes from
    // [base, 3·cap] = [10 ms, 300 ms]: (cap − base) / (3·cap − base) = 90/290 ≈ 31 % of those draws
    // fall back below the cap, and the rest are cut to it. Over 300 seeds × 40 retries there are
    // thousands of such steps, so the share strays by about 1 %. And about half of all late
    // delays sit exactly on the cap.
    let (base, cap, retries) = (10 * MS, 100 * MS, 40);
    let (mut from_cap, mut fell_back, mut late, mut late_on_cap) = (0usize, 0usize, 0usize, 0usize);
    for seed in 0..300 {
        let delays = delays(base, cap, retries, seed);
        for pair in delays.windows(2) {
            if pair[0] == cap {
                from_cap += 1;
                fell_back += usize::from(pair[1] < cap);
            }
        }
        for delay in delays.iter().skip(20) {
            late += 1;
            late_on_cap += usize::from(*delay == cap);
        }
    }
    let share = fell_back as f64 / from_cap.max(1) as f64;
    let on_cap = late_on_cap as f64 / late.max(1) as f64;
    assert!(
        from_cap >= 1_000 && (0.22..=0.40).contains(&share),
        "after a delay equal to the cap, previous = cap and the next delay is drawn from \
         [base, 3·cap] and then capped, so with base = 10 ms and cap = 100 ms about 31 % of the \
         next delays fall back below the cap (90 ms of a 290 ms range). Across 300 seeds your \
         policy had {from_cap} delays at the cap, and {} of the delays after them ({:.1} %) fell \
         back below it. Remember the capped delay (the one you return) as previous, and draw \
         from [base, previous·3] itself",
        fell_back,
        share * 100.0,
    );
    assert!(
        (0.35..=0.75).contains(&on_cap),
        "with base = 10 ms and cap = 100 ms, decorrelated delays pile up at the cap: from \
         retry 20 on about half of them are exactly 100 ms, because every draw above the cap is \
         cut to it; yours were exactly the cap in {:.1} % of {late} delays. Cap the draw \
         (min(cap, draw)); don't shrink the range to fit under the cap",
        on_cap * 100.0,
    );
}

#[test]
fn nanosecond_edges() {
    // Tiny settings in whole nanoseconds: with base = 2 ns the first delay is drawn from
    // [2 ns, 6 ns], so across 300 seeds both ends turn up; with cap = 5 ns (one below 3·base) every
    // draw above 5 ns is cut to 5; with cap = 7 ns (one above) 6 ns is the largest first delay; a
    // zero base and a zero cap give zero delays.
    for (base, cap, low, high) in [(2, 100, 2, 6), (2, 5, 2, 5), (2, 7, 2, 6), (0, 0, 0, 0)] {
        let (base, cap) = (Duration::from_nanos(base), Duration::from_nanos(cap));
        let firsts: Vec<u128> = (0..300)
            .filter_map(|seed| delays(base, cap, 3, seed).first().map(Duration::as_nanos))
            .collect();
        let seen_low = firsts.iter().copied().min().unwrap_or_default();
        let seen_high = firsts.iter().copied().max().unwrap_or_default();
        assert!(
            firsts.len() == 300 && seen_low == low && seen_high == high,
            "with base = {} ns and cap = {} ns the first delay is min(cap, a draw from \
             [base, 3·base]), so across 300 seeds it should range over [{low} ns, {high} ns], \
             both ends included; yours ranged over [{seen_low} ns, {seen_high} ns] (from {} \
             delays). Draw from the inclusive range [base, previous·3], then cap",
            base.as_nanos(),
            cap.as_nanos(),
            firsts.len(),
        );
    }
}

#[test]
fn uniform_to_the_nanosecond() {
    // With base = 1 ns the first delay is drawn from [1 ns, 3 ns], so each of 1, 2 and 3 ns comes
    // up a third of the time. Over 3,000 seeds a share strays by about 0.9 percentage points; the
    // window of ±7 points is about eight of those wide: a share leaves it with probability
    // 5·10^-16 (binomial, exact), 1.6·10^-15 for the three. (The window of ±5 points was left with
    // probability 6·10^-9 a share, 2·10^-8 for the check.) A float draw rounded to whole
    // nanoseconds gives the two ends a quarter each and the middle a half, and a middle share
    // of 1/2 stays inside 1/3 + 7 points with probability 10^-26.
    let (base, cap) = (Duration::from_nanos(1), SECOND);
    let firsts: Vec<Duration> = (0..3_000)
        .filter_map(|seed| delays(base, cap, 1, seed).first().copied())
        .collect();
    let shares = super::equal::shares(&firsts, 1, 3);
    let even = shares
        .iter()
        .all(|(_, share)| (share - 1.0 / 3.0).abs() <= 0.07);
    assert!(
        firsts.len() == 3_000 && even,
        "with base = 1 ns, the first decorrelated delay is drawn uniformly from [base, 3·base] = \
         [1 ns, 3 ns], so each whole nanosecond should come up a third of the time; across {} \
         seeds yours gave {}. Draw whole nanoseconds from the inclusive range (a Duration range \
         does), not a float rounded to the nearest nanosecond",
        firsts.len(),
        super::equal::show_shares(&shares),
    );
}
