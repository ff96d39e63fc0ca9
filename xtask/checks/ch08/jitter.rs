//! Checks of `full_jitter`: bounds, spread, and behaviour at huge attempt numbers.

use std::collections::BTreeSet;
use std::time::Duration;

use exercise::full_jitter;

use super::support::{catch, seeded, show};

const MS: Duration = Duration::from_millis(1);

/// `min(cap, base · 2^attempt)`, the ceiling the checks hold the learner's delays to.
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

/// One call of the learner's `full_jitter`, with a panic turned into a readable failure.
fn draw(attempt: u32, base: Duration, cap: Duration, seed: u64) -> Duration {
    let mut rng = seeded(seed);
    draw_with(attempt, base, cap, &mut rng)
}

fn draw_with(
    attempt: u32,
    base: Duration,
    cap: Duration,
    rng: &mut rand::rngs::StdRng,
) -> Duration {
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
        let delays: Vec<Duration> = (0..200)
            .map(|seed| draw(attempt, base, cap, seed))
            .collect();
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
    for (setting, (base, cap)) in (0u64..).zip(settings) {
        for attempt in 0..=20 {
            let limit = ceiling(attempt, base, cap);
            // One seeded stream per setting and attempt, as in `reaches_ceiling`.
            let mut rng = seeded(setting * 1_000 + u64::from(attempt));
            for _ in 0..50 {
                let delay = draw_with(attempt, base, cap, &mut rng);
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
        let mut rng = seeded(u64::from(attempt));
        let delays: Vec<Duration> = (0..200)
            .map(|_| draw_with(attempt, base, cap, &mut rng))
            .collect();
        let largest = delays.iter().copied().max().unwrap_or_default();
        // A correct solution's largest of 200 draws is below 0.85 × cap with probability
        // 0.85^200, about 1 in 10^14; across the 13 sweeps of this check, about 1 in 10^13. (At
        // 0.9 × cap it was 0.9^200 = 7·10^-10 a sweep, 9·10^-9 for the check.) Every mutant this
        // check names panics, or shrinks the ceiling far below either threshold (to zero).
        assert!(
            largest <= cap && largest >= cap * 17 / 20,
            "at attempt = {attempt} (base = 100 ms, cap = 30 s) the ceiling is the cap, so 200 \
             draws should reach close to 30 s without exceeding it; your largest was {}",
            show(largest),
        );
    }
    // A ceiling of Duration::MAX itself: the cap is the longest Duration there is, and from
    // attempt 1 on the ceiling is that cap. Nothing may overflow at the very top of the range.
    let (base, cap) = (Duration::from_secs(u64::MAX / 2 + 1), Duration::MAX);
    for attempt in [1, 2, 64, u32::MAX] {
        let mut rng = seeded(u64::from(attempt));
        let delays: Vec<Duration> = (0..200)
            .map(|_| draw_with(attempt, base, cap, &mut rng))
            .collect();
        let largest = delays.iter().copied().max().unwrap_or_default();
        // Below 0.85 × Duration::MAX with probability 0.85^200, about 1 in 10^14 (see above).
        assert!(
            largest >= cap.mul_f64(0.85),
            "at attempt = {attempt} with base = u64::MAX / 2 + 1 seconds and cap = Duration::MAX, \
             the ceiling is Duration::MAX itself, so 200 draws should reach close to it; your \
             largest was {}",
            show(largest),
        );
    }
}

/// `min(cap, base · 2^attempt)` for a message, in nanoseconds when it is tiny.
fn ns(duration: Duration) -> String {
    if duration < Duration::from_micros(1) {
        format!("{} ns", duration.as_nanos())
    } else {
        show(duration)
    }
}

#[test]
fn reaches_ceiling() {
    // Every regime: below the cap, at it, a cap 1 ns either side of base·2^3 (so the last
    // ceilings before the cap are 80 ms, then 80 ms ± 1 ns), a base above the cap, a 1 ns base
    // whose ceiling keeps doubling past attempt 32 (where 2^attempt outgrows a u32) up to 2^49 ns,
    // and ceilings of 2^32 s and more, which no u64 of nanoseconds can hold.
    // Across 200 draws the ones before each retry must range over the whole of [0, ceiling] and
    // average near its middle; a draw below a smaller ceiling (an exponent capped too early, an
    // attempt number shifted by one, a factor that stops growing) never comes near the top.
    // For a correct solution, over 200 draws the smallest stays above 0.15 × ceiling with
    // probability 0.85^200, about 1 in 10^14, and so does the largest below 0.85 × ceiling; the
    // mean (spread 0.02) leaves [0.35, 0.65] with probability 1 in 10^13 (Irwin-Hall, exact).
    // Across the 65 streams that is about 7 in 10^12. (With [0.4, 0.6], 0.1 and 0.9 it was
    // 8·10^-7 a stream and 5·10^-5 for the check.) The mutants' ceilings are at most 0.8 of the
    // true one in some stream (exponent capped: 400 of 500 ms), so their largest draw is too.
    let settings = [
        (50 * MS, 500 * MS, 0..=8),
        (10 * MS, Duration::from_nanos(80_000_001), 0..=5),
        (10 * MS, Duration::from_nanos(79_999_999), 0..=5),
        (2_000 * MS, 500 * MS, 0..=2),
        (
            Duration::from_nanos(1),
            Duration::from_secs(1_000_000),
            28..=52,
        ),
        // Past u64 nanoseconds (about 584 years), below a cap that is further still.
        (Duration::from_secs(1), Duration::MAX, 32..=38),
        // A 1 ns base under the largest cap keeps doubling past attempt 64 (2^64 ns, 584 years)
        // up to 2^70 ns: an exponent held at 63 or 64 "to be safe" stops short of the ceiling.
        (Duration::from_nanos(1), Duration::MAX, 62..=70),
    ];
    for (setting, (base, cap, attempts)) in (0u64..).zip(settings) {
        for attempt in attempts {
            let limit = ceiling(attempt, base, cap);
            // One seeded stream per setting and attempt: 200 draws from it are as good a sample
            // as 200 seeds, and seeding a generator costs more than a draw.
            let mut rng = seeded(setting * 1_000 + u64::from(attempt));
            let delays: Vec<Duration> = (0..200)
                .map(|_| draw_with(attempt, base, cap, &mut rng))
                .collect();
            let draws: Vec<f64> = delays
                .iter()
                .map(|delay| delay.as_secs_f64() / limit.as_secs_f64())
                .collect();
            let mean = draws.iter().sum::<f64>() / draws.len() as f64;
            let low = draws.iter().copied().fold(f64::INFINITY, f64::min);
            let high = draws.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let at = |fraction: f64| ns(limit.mul_f64(fraction.clamp(0.0, 1e6)));
            assert!(
                (0.35..=0.65).contains(&mean) && low <= 0.15 && (0.85..=1.0).contains(&high),
                "with base = {}, cap = {}, the ceiling before attempt {attempt} is \
                 min(cap, base·2^{attempt}) = {}, and 200 seeded draws should spread over all of \
                 [0, {}]: smallest below {}, largest above {} (and never above the ceiling), mean \
                 near {}; yours ranged from {} to {} with mean {}.{}",
                ns(base),
                ns(cap),
                ns(limit),
                ns(limit),
                at(0.15),
                at(0.85),
                at(0.5),
                at(low),
                at(high),
                at(mean),
                spread_cause(base, cap, limit, &delays),
            );
        }
    }
}

/// The likely cause of draws that do not cover `[0, limit]`, judged from their shape; empty when
/// the shape matches none of the page's pitfalls.
fn spread_cause(base: Duration, cap: Duration, limit: Duration, delays: &[Duration]) -> String {
    let (Some(&smallest), Some(&largest)) = (delays.iter().min(), delays.iter().max()) else {
        return String::new();
    };
    let limit_ns = limit.as_nanos();
    // The largest of 200 draws below `ceiling` lies in [0.85, 1] of it but for 1 in 10^14.
    let near = |ceiling: u128| {
        let largest = largest.as_nanos();
        largest <= ceiling && largest >= ceiling / 20 * 17
    };
    if largest > limit {
        if limit < cap && near(cap.as_nanos()) {
            return format!(" Your draws reach toward the cap. {}", CAP_TOO_EARLY);
        }
        if let Some(k) = (1..=64u32).find(|k| near(limit_ns.saturating_mul(1 << k))) {
            return format!(
                " Your largest draw is near 2^{k} times the ceiling. {}",
                too_high(k)
            );
        }
        return format!(" {ABOVE}");
    }
    if limit_ns > u128::from(u64::MAX) && near(limit_ns % (1 << 64)) {
        return " Your draws stop just below the ceiling's nanoseconds cut to their low 64 bits: \
                see \"Nanoseconds turned back with `as u64` or `Duration::from_nanos`\" (§8.10)"
            .to_owned();
    }
    if limit_ns > u128::from(u64::MAX) && near(u128::from(u64::MAX)) {
        return " Your draws stop just below u64::MAX nanoseconds (about 584 years): a ceiling \
                held in a u64 of nanoseconds stops there, below this cap. Compute in u128 \
                nanoseconds (§8.6)"
            .to_owned();
    }
    if limit == cap && base < cap {
        // The largest base·2^k not above the cap: where an exponent capped at log2(cap / base)
        // stops.
        let mut stop = base.as_nanos();
        while stop * 2 <= cap.as_nanos() {
            stop *= 2;
        }
        if stop < limit_ns && near(stop) {
            return " Your draws stop at the last base·2^k below the cap: see \"The cap applied \
                    to the exponent\" (§8.10): cap the delay, not the exponent"
                .to_owned();
        }
    }
    if let Some(k) = (1..=40u32).find(|k| near(limit_ns >> k)) {
        return format!(
            " Your largest draw is near the ceiling divided by 2^{k}: a ceiling that stopped \
             doubling {k} step(s) short, from an exponent held below attempt (a narrow factor \
             type, an exponent \"capped to be safe\") or counted one late; attempt 0 has the \
             ceiling base (§8.3, §8.6)"
        );
    }
    if smallest >= limit / 2 - limit / 20 {
        return " No draw came below half the ceiling: see \"Equal jitter mistaken for full \
                jitter\" (§8.10): the range starts at zero"
            .to_owned();
    }
    String::new()
}

#[test]
fn nanosecond_edges() {
    // Ceilings of a few nanoseconds, where rounding shows: (3 ns, 11 ns) gives 3, 6, 11 ns and
    // (3 ns, 13 ns) gives 3, 6, 12, 13 ns (caps 1 ns either side of 3·2^2). The range is inclusive
    // at both ends, so across 400 draws both 0 and the ceiling itself turn up (a value of 14 is
    // missed by all 400 with probability (13/14)^400, about 1 in 10^13).
    for (base, cap) in [(3, 11), (3, 13), (1, 7)] {
        let (base, cap) = (Duration::from_nanos(base), Duration::from_nanos(cap));
        for attempt in 0..5 {
            let limit = ceiling(attempt, base, cap);
            let mut rng = seeded(base.as_nanos() as u64 * 100 + cap.as_nanos() as u64 + 7);
            let draws: Vec<Duration> = (0..400)
                .map(|_| draw_with(attempt, base, cap, &mut rng))
                .collect();
            let low = draws.iter().copied().min().unwrap_or_default();
            let high = draws.iter().copied().max().unwrap_or_default();
            assert!(
                low.is_zero() && high == limit,
                "full_jitter(attempt = {attempt}, base = {}, cap = {}) draws from [0, {}], both \
                 ends included and at nanosecond resolution; across 400 draws yours ranged from \
                 {} to {}",
                ns(base),
                ns(cap),
                ns(limit),
                ns(low),
                ns(high),
            );
        }
    }
}

#[test]
fn degenerate_settings() {
    // A zero base or a zero cap leaves nothing to wait: every delay is zero (and the range
    // [0, 0] is not empty). A base above the cap is cut to the cap from the first retry on.
    // Past attempt 127, 2^attempt outgrows even a u128: the ceiling of a zero base is still 0,
    // not the cap an overflow falls back to.
    for (base, cap) in [(Duration::ZERO, 1_000 * MS), (1_000 * MS, Duration::ZERO)] {
        for attempt in [0, 1, 5, 64, 200, u32::MAX] {
            let delay = draw(attempt, base, cap, 9);
            assert!(
                delay.is_zero(),
                "with base = {} and cap = {}, the ceiling min(cap, base·2^attempt) is 0, so \
                 full_jitter(attempt = {attempt}) must return 0; yours returned {}",
                show(base),
                show(cap),
                show(delay),
            );
        }
    }
    let (base, cap) = (2_000 * MS, 500 * MS);
    let draws: Vec<Duration> = (0..200).map(|seed| draw(0, base, cap, seed)).collect();
    let high = draws.iter().copied().max().unwrap_or_default();
    // The largest of 200 draws stays below 0.85 × cap with probability 0.85^200, about 1 in
    // 10^14 (at 0.9 × cap it was 0.9^200, 7·10^-10).
    assert!(
        high <= cap && high >= cap * 17 / 20,
        "with base = 2 s above cap = 500 ms, the very first delay is drawn from [0, 500 ms]: the \
         cap holds from attempt 0; across 200 seeds your largest first delay was {}",
        show(high),
    );
}

#[test]
fn uniform_to_the_nanosecond() {
    // "Uniformly from [0, ceiling]" holds to the nanosecond: with a ceiling of 3 ns each of 0, 1, 2
    // and 3 ns comes up a quarter of the time, and with 2 ns each of 0, 1 and 2 ns a third. Over
    // 6,000 draws a share strays by about 0.6 percentage points, so the window of ±5 points is
    // about eight of those wide. A random fraction of the ceiling rounded to the nearest
    // nanosecond gives each end half the share of an inner value.
    for (attempt, base, cap, expected) in [(0, 3, 3, 0.25), (1, 1, 2, 1.0 / 3.0), (5, 1, 3, 0.25)] {
        let (base, cap) = (Duration::from_nanos(base), Duration::from_nanos(cap));
        let limit = ceiling(attempt, base, cap);
        let mut rng = seeded(900 + u64::from(attempt));
        let draws: Vec<u128> = (0..6_000)
            .map(|_| draw_with(attempt, base, cap, &mut rng).as_nanos())
            .collect();
        let shares: Vec<(u128, f64)> = (0..=limit.as_nanos())
            .map(|nanos| {
                let count = draws.iter().filter(|draw| **draw == nanos).count();
                (nanos, count as f64 / draws.len() as f64)
            })
            .collect();
        let even = shares
            .iter()
            .all(|(_, share)| (share - expected).abs() <= 0.05);
        let shown: Vec<String> = shares
            .iter()
            .map(|(nanos, share)| format!("{nanos} ns: {:.1} %", share * 100.0))
            .collect();
        assert!(
            even,
            "full_jitter(attempt = {attempt}, base = {}, cap = {}) draws from [0, {}], and every \
             whole nanosecond of it should come up equally often ({:.1} % each); across 6,000 \
             draws yours gave {}. Draw whole nanoseconds uniformly (an inclusive Duration range \
             does), not a rounded fraction of the ceiling",
            ns(base),
            ns(cap),
            ns(limit),
            expected * 100.0,
            shown.join(", "),
        );
    }
}

/// A generator that always answers its largest number: the extreme draw that a seeded sample of a
/// few hundred almost never makes, at the very top of a range of 10^16 nanoseconds.
struct LargestDraw;

impl rand::TryRng for LargestDraw {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(u32::MAX)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(u64::MAX)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        dst.fill(u8::MAX);
        Ok(())
    }
}

#[test]
fn never_above_exact_ceiling() {
    // "Never above min(cap, base · 2^attempt)" holds for every draw, the most extreme included.
    // With base = 100 ms, base · 2^27 is exactly 13,421,772.8 s, but 0.1 s in f64 is a little
    // more than 0.1, and times 2^27 it rounds to 1 ns more; at 2^29 it is 3 ns more. A generator
    // that always answers its largest number asks for the top of the range, so a ceiling computed
    // a nanosecond too high shows. (The ceilings stay below 2^64 ns, about 584 years.)
    let settings = [
        (100 * MS, Duration::from_secs(10_000_000_000), 26..=33),
        (
            MS,
            Duration::from_secs(8_640_000) + Duration::from_nanos(1),
            30..=36,
        ),
    ];
    for (base, cap, attempts) in settings {
        for attempt in attempts {
            let limit = ceiling(attempt, base, cap);
            let delay = largest_draw(attempt, base, cap);
            assert!(
                delay <= limit,
                "full_jitter(attempt = {attempt}, base = {}, cap = {}) must never exceed \
                 min(cap, base·2^{attempt}) = {} s exactly; with a generator that always answers \
                 its largest number, yours returned {} s, {} ns above it. {}",
                show(base),
                show(cap),
                exact_seconds(limit),
                exact_seconds(delay),
                delay.as_nanos() - limit.as_nanos(),
                above_ceiling_cause(cap, limit, delay),
            );
        }
    }
}

/// The delay `full_jitter` returns with a generator that always answers its largest number: the
/// top of the range the code computed.
fn largest_draw(attempt: u32, base: Duration, cap: Duration) -> Duration {
    catch(|| full_jitter(attempt, base, cap, &mut LargestDraw)).unwrap_or_else(|message| {
        panic!(
            "full_jitter(attempt = {attempt}, base = {}, cap = {}) panicked: {message}",
            show(base),
            show(cap)
        )
    })
}

#[test]
fn largest_draw_reaches_exact_ceiling() {
    // "Never below min(cap, base · 2^attempt) because of arithmetic": the generator's largest
    // number asks for the top of the range, so the draw shows the ceiling the code computed. An
    // inclusive integer draw returns the ceiling itself; a float fraction of it can fall a few
    // units of its last place short (about 2^-52 of it), which the margin of 2^-40 allows. A
    // ceiling cut by its arithmetic falls far shorter: seconds split off with a wrong divisor
    // lose a nanosecond per second (10^-9 of it), a ceiling through f32 or whole milliseconds more.
    let settings = [
        (100 * MS, Duration::from_secs(10_000_000_000), 26..=33),
        (
            Duration::from_nanos(1),
            Duration::from_secs(1_000_000),
            30..=49,
        ),
        (
            Duration::from_nanos(999_999_999),
            Duration::from_secs(1_000_000_000),
            0..=40,
        ),
    ];
    for (base, cap, attempts) in settings {
        for attempt in attempts {
            let limit = ceiling(attempt, base, cap);
            let delay = largest_draw(attempt, base, cap);
            let margin = limit.as_nanos() >> 40;
            assert!(
                delay.as_nanos() + margin >= limit.as_nanos(),
                "full_jitter(attempt = {attempt}, base = {}, cap = {}) draws from [0, {} s]; with \
                 a generator that always answers its largest number it should return the top of \
                 that range, but yours returned {} s, {} ns short of it: the ceiling your code \
                 computed is below min(cap, base·2^{attempt}).{}",
                show(base),
                show(cap),
                exact_seconds(limit),
                exact_seconds(delay),
                limit.as_nanos().saturating_sub(delay.as_nanos()),
                below_ceiling_cause(limit, delay),
            );
        }
    }
}

/// The likely cause of a top draw `delay` below the exact ceiling `limit`, judged from the size
/// of the shortfall; empty when no pitfall of the page fits.
fn below_ceiling_cause(limit: Duration, delay: Duration) -> String {
    let short = limit.as_nanos() - delay.as_nanos();
    let seconds = limit.as_nanos() / 1_000_000_000;
    if seconds > 0 && short.abs_diff(seconds) <= seconds / 10 {
        return " About a nanosecond short for every second: the nanoseconds were split into \
                seconds with a wrong divisor. Whole seconds are the u128 divided by \
                1_000_000_000, the rest are the nanoseconds (§8.6)"
            .to_owned();
    }
    if let Some(k) = (1..=64u32).find(|k| {
        let target = limit.as_nanos() >> k;
        delay.as_nanos() <= target && delay.as_nanos() >= target - (target >> 20)
    }) {
        return format!(
            " Your ceiling is the exact one divided by 2^{k}: an exponent {k} short (§8.3, §8.6)"
        );
    }
    if !delay.is_zero() && delay.subsec_nanos() % 1_000_000 == 0 {
        return " Your ceiling is a whole number of milliseconds: keep every nanosecond, as \
                Duration and u128 do (§8.3)"
            .to_owned();
    }
    String::new()
}

/// The likely cause of a `delay` above the exact ceiling `limit`, judged from how far above it is.
///
/// Each answer names the matching pitfall of the page (§8.6, §8.10): a float's rounding (a few
/// nanoseconds in 10^16), the cap taken too early (the delay is the cap itself), an exponent too high
/// (a power of two times the ceiling); anything else gets no guess.
pub fn above_ceiling_cause(cap: Duration, limit: Duration, delay: Duration) -> String {
    let (limit_ns, delay_ns) = (limit.as_nanos(), delay.as_nanos());
    let excess = delay_ns - limit_ns;
    // f64 keeps 53 bits: a ceiling of 10^16 ns computed in floats is off by a few nanoseconds,
    // a few units in its last place, far below 2^-48 of itself.
    if excess <= (limit_ns >> 48).max(1) {
        return "An excess this small, against a ceiling this large, is a float's rounding: see \
                \"The ceiling computed in floating point\" (§8.10) and compute it in integer \
                nanoseconds (§8.6)"
            .to_owned();
    }
    if delay == cap && limit < cap {
        return format!("That is the cap itself. {CAP_TOO_EARLY}");
    }
    let doublings = (1..=64u32).find(|k| {
        let target = limit_ns << k;
        limit_ns > 0 && target >> k == limit_ns && delay_ns.abs_diff(target) <= target / 1_000
    });
    match doublings {
        Some(k) => format!("That is 2^{k} times the ceiling. {}", too_high(k)),
        None => ABOVE.to_owned(),
    }
}

/// The ceiling taken to be the cap while `base · 2^attempt` is still below it.
const CAP_TOO_EARLY: &str = "Your ceiling fell back to the cap while base·2^attempt is still \
     below it. A factor that no longer fits a narrow integer (a u32 2^attempt from attempt 32 on) \
     does not mean the product is above the cap: see \"A u32 factor answering the cap\" (§8.10) \
     and compute in u128 nanoseconds (§8.6)";

/// A draw above the ceiling that no pitfall explains.
const ABOVE: &str =
    "Draw below the exact ceiling min(cap, base·2^attempt), never around or above it (§8.10)";

/// An exponent `k` too high.
fn too_high(k: u32) -> String {
    format!(
        "Your exponent is {k} too high: the sleep before the first retry uses attempt = 0, a \
         ceiling of base·2^0 = base (§8.3)"
    )
}

/// Seconds with all nine decimals: `13421772.800000000`.
fn exact_seconds(duration: Duration) -> String {
    format!("{}.{:09}", duration.as_secs(), duration.subsec_nanos())
}
