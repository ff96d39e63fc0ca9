//! Breaks that grow and are jittered: `break_duration` at the edges of its rule, and the breaker
//! drawing the n-th opening's break, n counted since it was created or last closed.

use std::sync::Arc;
use std::time::Duration;

use exercise::{BreakerConfig, Breaks, CircuitBreaker, State, Window, break_duration};
use rand::rngs::StdRng;

use super::fixture::{MS, NS, SEC, Seen, Started, call, config, state};
use super::support::{catch, seeded, show};

/// A jittered config: one failure opens it, one probe, breaks from `base` up to `cap`.
fn jittered(base: Duration, cap: Duration) -> BreakerConfig {
    BreakerConfig {
        break_duration: base,
        breaks: Breaks::Jittered { cap },
        ..config(100, 1, Window::Count(1))
    }
}

/// `c = min(cap, base · 2^(n−1))`, computed in nanoseconds that cannot overflow here.
fn ceiling(base: Duration, cap: Duration, n: u32) -> Duration {
    let grown = if n - 1 >= 100 {
        u128::MAX
    } else {
        base.as_nanos().saturating_mul(1_u128 << (n - 1))
    };
    if grown >= cap.as_nanos() {
        cap
    } else {
        Duration::from_nanos(u64::try_from(grown).expect("below the cap, which fits"))
    }
}

/// The rule's range for the n-th opening: `[c / 2, c]`.
fn range(base: Duration, cap: Duration, n: u32) -> (Duration, Duration) {
    let c = ceiling(base, cap, n);
    (c / 2, c)
}

/// One draw, with a panic of the graded code turned into a message.
fn draw(config: &BreakerConfig, n: u32, rng: &mut StdRng) -> Duration {
    catch(|| break_duration(config, n, rng)).unwrap_or_else(|message| {
        let advice = if message.contains("empty range") {
            " The range [c / 2, c] includes both ends, so it is never empty, not even with c = 0 \
             (section 23.5.1)."
        } else if message.contains("overflow") {
            " Past the cap the product break_duration · 2^(n−1) is never needed: compute it with \
             checked arithmetic (2^(n−1) overflows a u32 from n = 33) and read an overflow as \
             \"above the cap\" (section 23.5.1)."
        } else {
            ""
        };
        panic!(
            "break_duration(opening {n}) with break_duration {} and {:?} panicked: {message}.{advice}",
            show(config.break_duration),
            config.breaks
        )
    })
}

/// Draws `count` breaks of opening `n` from one seeded stream and checks each is in its range.
fn draws_in_range(base: Duration, cap: Duration, n: u32, count: usize, seed: u64) -> Vec<Duration> {
    let config = jittered(base, cap);
    let (low, high) = range(base, cap, n);
    let mut rng = seeded(seed);
    let draws: Vec<Duration> = (0..count).map(|_| draw(&config, n, &mut rng)).collect();
    for &d in &draws {
        assert!(
            low <= d && d <= high,
            "with break_duration {} and cap {}, opening {n} drew a break of {}; it must lie in \
             [c / 2, c] = [{}, {}], where c = min(cap, break_duration · 2^(n−1)) (section 23.5.1). \
             {}",
            show(base),
            show(cap),
            show(d),
            show(low),
            show(high),
            advice(d, low, high, base, cap, n)
        );
    }
    draws
}

/// The pitfall that fits a draw outside its range.
fn advice(
    d: Duration,
    low: Duration,
    high: Duration,
    base: Duration,
    cap: Duration,
    n: u32,
) -> String {
    if d > high && d > cap {
        "Longer than the cap: take the smaller of the cap and the product.".to_owned()
    } else if d > high {
        format!(
            "Too long for opening {n}: the first opening's c is break_duration itself \
             (2^0), so opening {n} doubles it {} time(s), not {n}.",
            n - 1
        )
    } else if d < low {
        "Too short: equal jitter draws from [c / 2, c], never below c / 2 (full jitter's [0, c] \
         is the rule for retry delays, not for breaks), and opening n doubles break_duration \
         n − 1 times."
            .to_owned()
    } else {
        String::new()
    }
}

#[test]
fn fixed_breaks_never_change() {
    let config = BreakerConfig {
        break_duration: 30 * SEC,
        ..config(50, 4, Window::Count(4))
    };
    let mut rng = seeded(1);
    for n in [1, 2, 3, 10, 33, 64, 1_000, u32::MAX] {
        let d = draw(&config, n, &mut rng);
        assert_eq!(
            d,
            30 * SEC,
            "with Breaks::Fixed, opening {n} lasted {}; a fixed break is break_duration (30 s) at \
             every opening, without growth or jitter (section 23.5.1)",
            show(d)
        );
    }
}

#[test]
fn first_opening_draws_from_half_to_whole_break_duration() {
    // 300 draws from one stream, each in [4 s, 8 s].
    let draws = draws_in_range(8 * SEC, 3_600 * SEC, 1, 300, 11);
    let least = draws.iter().min().copied().unwrap_or_default();
    // A correct draw falls in [4 s, 5 s), the lowest quarter, with probability 1/4: 300 draws all
    // miss it with probability (3/4)^300 < 1e-37.
    assert!(
        least < 5 * SEC,
        "300 first breaks (break_duration 8 s) were all at least {}; drawn uniformly from \
         [4 s, 8 s], some fall below 5 s (section 23.5.1)",
        show(least)
    );
}

#[test]
fn each_reopening_doubles_the_range() {
    for n in 2..=9 {
        // break_duration 1 s, a cap far above: opening n draws from [2^(n−2) s, 2^(n−1) s].
        draws_in_range(SEC, 3_600 * SEC, n, 100, u64::from(n));
    }
}

#[test]
fn the_cap_bounds_every_break() {
    // break_duration 1 s, cap 45 s: c is 32 s at opening 6, then 45 s from opening 7 on.
    for n in [6, 7, 8, 10, 20, 31, 32] {
        draws_in_range(SEC, 45 * SEC, n, 100, u64::from(n) + 100);
    }
    // A cap below break_duration: c is the cap from the first opening.
    draws_in_range(10 * SEC, 3 * SEC, 1, 100, 7);
    // A cap of zero: c = 0, and the range [0, 0], both ends included, holds one value.
    draws_in_range(10 * SEC, Duration::ZERO, 3, 10, 9);
}

#[test]
fn large_openings_do_not_overflow() {
    for n in [33, 34, 64, 65, 100, 1_000, u32::MAX - 1, u32::MAX] {
        draws_in_range(SEC, 60 * SEC, n, 20, u64::from(n));
        // A day doubled 40 times is past u64 nanoseconds; the break is still capped at 2 days.
        draws_in_range(86_400 * SEC, 172_800 * SEC, n.min(41), 20, u64::from(n) + 1);
    }
}

#[test]
fn draws_are_spread_across_the_range() {
    // Opening 3, break_duration 1 s: c = 4 s, draws in [2 s, 4 s].
    let draws = draws_in_range(SEC, 3_600 * SEC, 3, 400, 3);
    let low = draws.iter().filter(|&&d| d < 2 * SEC + SEC / 4).count();
    let high = draws.iter().filter(|&&d| d > 4 * SEC - SEC / 4).count();
    // Each eighth of the range holds a correct draw with probability 1/8: 400 draws miss the
    // lowest eighth with probability (7/8)^400 < 1e-23, and the same for the highest.
    assert!(
        low > 0 && high > 0,
        "400 breaks of opening 3 (c = 4 s) put {low} in [2 s, 2.25 s) and {high} in (3.75 s, \
         4 s]; drawn uniformly from [c / 2, c] (equal jitter), both ends get some (section \
         23.5.1). {}",
        if low == 0 && high > 0 {
            "They crowd the top: draw uniformly, not c or close to it."
        } else {
            "They crowd the bottom: draw up to c, not only near c / 2."
        }
    );
    // One draw for each of 64 seeds: a break that is computed, not drawn, is the same for all.
    // Two correct draws from [2 s, 4 s] are equal with probability at most 1 in 2·10^9.
    let config = jittered(SEC, 3_600 * SEC);
    let mut firsts: Vec<Duration> = (0..64).map(|s| draw(&config, 3, &mut seeded(s))).collect();
    firsts.sort();
    firsts.dedup();
    assert!(
        firsts.len() > 1,
        "64 generators seeded differently all gave a break of {} for opening 3; the break is \
         drawn from the generator, so a fleet's breakers end their breaks at different moments \
         (section 23.5.1)",
        show(firsts[0])
    );
}

/// A breaker drawing from `seeded(seed)`, with a panic in `with_rng` turned into a message.
fn seeded_breaker(config: BreakerConfig, seed: u64) -> Arc<CircuitBreaker> {
    let built =
        catch(|| CircuitBreaker::with_rng(config, seeded(seed))).unwrap_or_else(|message| {
            panic!("CircuitBreaker::with_rng({config:?}, …) panicked: {message}")
        });
    Arc::new(built)
}

/// One instant call, with a panic of the graded code turned into a message.
async fn step(breaker: &Arc<CircuitBreaker>, ok: bool, what: &str) -> Seen {
    let breaker = Arc::clone(breaker);
    // The task's panic is reported below, with its context, instead of by the default hook.
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome =
        tokio::spawn(async move { call(&breaker, &Started::default(), ok, Duration::ZERO).await })
            .await;
    std::panic::set_hook(previous_hook);
    outcome.unwrap_or_else(|error| {
        let message = match error.try_into_panic() {
            Ok(payload) => super::support::panic_text(payload.as_ref()),
            Err(error) => error.to_string(),
        };
        let advice = if message.contains("overflow") {
            " The n-th break needs break_duration · 2^(n−1) only below the cap: compute it \
                 with checked arithmetic and read an overflow as \"above the cap\" (section \
                 23.5.1)."
        } else {
            ""
        };
        panic!("{what}: the call panicked: {message}.{advice}")
    })
}

/// The breaker has just opened for its `n`-th opening: it must stay open until `c / 2` and be
/// half-open at `c`. Leaves the clock at `c` after the opening.
async fn break_in_range(
    breaker: &CircuitBreaker,
    base: Duration,
    cap: Duration,
    n: u32,
    what: &str,
) {
    let (low, high) = range(base, cap, n);
    let now = state(breaker);
    assert_eq!(
        now,
        State::Open,
        "{what}: the breaker should have opened (opening {n}); it is {now:?}"
    );
    tokio::time::advance(low - NS).await;
    let early = state(breaker);
    assert_eq!(
        early,
        State::Open,
        "{what}: opening {n} of a breaker with break_duration {} and cap {} must stay open at \
         least c / 2 = {}; it was already {early:?} 1 ns before that. {}",
        show(base),
        show(cap),
        show(low),
        if n > 1 {
            "Each failed probe counts one more opening, and the n-th draws from [c / 2, c] with \
             c = min(cap, break_duration · 2^(n−1)) (section 23.5.1)."
        } else {
            "The first opening draws from [break_duration / 2, break_duration] (section 23.5.1)."
        }
    );
    tokio::time::advance(high - low + NS).await;
    let late = state(breaker);
    assert_eq!(
        late,
        State::HalfOpen,
        "{what}: opening {n} of a breaker with break_duration {} and cap {} must end by c = {}; \
         it was still {late:?} {} after opening. {}",
        show(base),
        show(cap),
        show(high),
        show(high),
        if n == 1 {
            "The first opening counts as n = 1: c is break_duration itself, and the count starts \
             again from 1 when the breaker closes (section 23.5.1)."
        } else {
            "Opening n doubles break_duration n − 1 times, up to the cap, and the count starts \
             again from 1 when the breaker closes (section 23.5.1)."
        }
    );
}

#[tokio::test(start_paused = true)]
async fn the_breaker_grows_its_break_at_each_reopening() {
    let (base, cap) = (8 * SEC, 20 * SEC);
    for seed in 0..6 {
        let breaker = seeded_breaker(jittered(base, cap), seed);
        step(&breaker, false, "a failure that opens the breaker").await;
        break_in_range(&breaker, base, cap, 1, "the first opening").await;
        for n in 2..=5 {
            let seen = step(&breaker, false, "a failed probe").await;
            assert_eq!(
                seen,
                Seen::Ran { ok: false },
                "the half-open breaker refused its probe ({seen:?})"
            );
            break_in_range(&breaker, base, cap, n, &format!("failed probe {}", n - 1)).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn closing_starts_the_growth_again() {
    let (base, cap) = (8 * SEC, 3_600 * SEC);
    for seed in 0..6 {
        let breaker = seeded_breaker(jittered(base, cap), seed);
        for round in 1..=2 {
            step(&breaker, false, "a failure that opens the breaker").await;
            break_in_range(&breaker, base, cap, 1, &format!("round {round}, opening")).await;
            for n in 2..=3 {
                step(&breaker, false, "a failed probe").await;
                break_in_range(&breaker, base, cap, n, &format!("round {round}, reopening")).await;
            }
            let seen = step(&breaker, true, "a successful probe").await;
            let now = state(&breaker);
            assert!(
                seen == Seen::Ran { ok: true } && now == State::Closed,
                "round {round}: a successful probe ({seen:?}) should close the breaker; it is \
                 {now:?}"
            );
            tokio::time::advance(MS).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_fleet_does_not_probe_together() {
    // 64 breakers, seeded 0 to 63, open at the same instant with break_duration 8 s: each draws
    // its first break from [4 s, 8 s], so each is half-open at 6 s with probability 1/2. All 64
    // in the same state there has probability 2 · 2^-64 < 1e-19.
    let (base, cap) = (8 * SEC, 3_600 * SEC);
    let fleet: Vec<_> = (0..64)
        .map(|seed| seeded_breaker(jittered(base, cap), seed))
        .collect();
    for breaker in &fleet {
        step(breaker, false, "a failure that opens the breaker").await;
    }
    tokio::time::advance(6 * SEC).await;
    let half_open = fleet
        .iter()
        .filter(|breaker| state(breaker) == State::HalfOpen)
        .count();
    assert!(
        0 < half_open && half_open < fleet.len(),
        "64 breakers built with_rng from 64 different seeds opened together (break_duration 8 s, \
         Breaks::Jittered); 6 s later {half_open} were half-open. Each draws its break from the \
         generator it was given, so about half end before 6 s and half after (section 23.5.1){}",
        if half_open == 0 {
            ": none had ended, as if every break lasted 8 s"
        } else {
            ": all had ended, as if every break were drawn alike"
        }
    );
}

#[tokio::test(start_paused = true)]
async fn many_reopenings_stay_at_the_cap() {
    // break_duration 1 ms, cap 2 s: c reaches the cap at opening 13 and must stay there through
    // opening 80, past 2^32 and 2^64.
    let (base, cap) = (MS, 2 * SEC);
    let breaker = seeded_breaker(jittered(base, cap), 5);
    step(&breaker, false, "a failure that opens the breaker").await;
    break_in_range(&breaker, base, cap, 1, "the first opening").await;
    for n in 2..=80 {
        step(&breaker, false, &format!("failed probe {}", n - 1)).await;
        break_in_range(&breaker, base, cap, n, &format!("failed probe {}", n - 1)).await;
    }
}
