//! Checks of the arithmetic at huge retry numbers and huge durations: saturate, never panic,
//! never wrap, and stay exact wherever the exact value fits.

use std::time::Duration;

use exercise::{Fixed, Linear};

use super::support::catch;

const NS: Duration = Duration::from_nanos(1);
const S: Duration = Duration::from_secs(1);

/// A duration for a message about exact values: `Duration::MAX`, or every digit.
fn exact(duration: Duration) -> String {
    if duration == Duration::MAX {
        "Duration::MAX".to_owned()
    } else {
        format!("{duration:?}")
    }
}

/// `initial + retry · increment`, saturating at `Duration::MAX`: what the checks expect.
fn expected_delay(initial: Duration, increment: Duration, retry: u32) -> Duration {
    let nanos = increment.as_nanos() * u128::from(retry) + initial.as_nanos();
    let seconds = nanos / 1_000_000_000;
    match u64::try_from(seconds) {
        Ok(seconds) => Duration::new(seconds, (nanos % 1_000_000_000) as u32),
        Err(_) => Duration::MAX,
    }
}

/// The learner's `Linear::new(initial, increment, u32::MAX).delay(retry)`, panics reported.
fn delay(initial: Duration, increment: Duration, retry: u32, setting: &str) -> Duration {
    catch(|| Linear::new(initial, increment, u32::MAX).delay(retry)).unwrap_or_else(|message| {
        let advice = if message.contains("overflow") {
            "; use saturating_mul and saturating_add, so a delay too long for a Duration becomes \
             Duration::MAX"
        } else {
            ""
        };
        panic!("{setting}: delay(retry = {retry}) panicked: {message}{advice}")
    })
}

#[test]
fn linear_saturates() {
    let huge = Duration::from_secs(u64::MAX / 2);
    let cases = [
        (S, huge, "Linear with initial 1 s, increment u64::MAX / 2 s"),
        (
            Duration::MAX,
            NS,
            "Linear with initial Duration::MAX, increment 1 ns",
        ),
        (
            Duration::MAX - S,
            S,
            "Linear with initial Duration::MAX − 1 s, increment 1 s",
        ),
        (
            Duration::MAX,
            Duration::MAX,
            "Linear with initial and increment Duration::MAX",
        ),
    ];
    for (initial, increment, setting) in cases {
        for retry in [0, 1, 2, 3, 1_000, 1 << 31, u32::MAX - 1, u32::MAX] {
            let expected = expected_delay(initial, increment, retry);
            let got = delay(initial, increment, retry, setting);
            assert!(
                got == expected,
                "{setting}: delay(retry = {retry}) must be initial + retry · increment, \
                 saturating at Duration::MAX: {}; yours returned {}",
                exact(expected),
                exact(got),
            );
        }
    }
    // The iterator must saturate as well, wherever its arithmetic lives.
    let delays = catch(|| {
        Linear::new(Duration::MAX - S, S, u32::MAX)
            .take(4)
            .collect::<Vec<_>>()
    })
    .unwrap_or_else(|message| {
        panic!(
            "iterating Linear::new(Duration::MAX − 1 s, 1 s, u32::MAX) panicked: {message}; the \
             delays must saturate at Duration::MAX"
        )
    });
    let expected = [
        Duration::MAX - S,
        Duration::MAX,
        Duration::MAX,
        Duration::MAX,
    ];
    assert!(
        delays == expected,
        "Linear::new(Duration::MAX − 1 s, 1 s, u32::MAX) must yield Duration::MAX − 1 s and then \
         Duration::MAX for ever; yours yielded [{}]",
        delays
            .iter()
            .map(|d| exact(*d))
            .collect::<Vec<_>>()
            .join(", "),
    );
}

#[test]
fn deep_in_the_sequence() {
    // Exact values far into the sequence, where they still fit in a Duration.
    let cases = [
        (S, S, "Linear with initial 1 s, increment 1 s"),
        (NS, NS, "Linear with initial 1 ns, increment 1 ns"),
        (
            Duration::from_millis(1_500),
            Duration::from_micros(2_500_001),
            "Linear with initial 1.5 s, increment 2.500001 s",
        ),
    ];
    for (initial, increment, setting) in cases {
        for retry in [9_999, 1 << 20, (1 << 31) + 7, u32::MAX - 1, u32::MAX] {
            let expected = expected_delay(initial, increment, retry);
            let got = delay(initial, increment, retry, setting);
            // Floats and milliseconds lose less than a second here; a wrong formula far more.
            let advice = if got.abs_diff(expected) < S {
                " (off by less than a second: compute with Duration's own integer arithmetic, \
                 not floats or milliseconds)"
            } else if got == Duration::MAX {
                " (saturate only when the exact sum does not fit in a Duration)"
            } else {
                ""
            };
            assert!(
                got == expected,
                "{setting}: delay(retry = {retry}) must be exactly initial + retry · increment = \
                 {}; yours returned {}{advice}",
                exact(expected),
                exact(got),
            );
        }
    }
    // The iterator, 10,000 steps in, agrees with the formula.
    let linear = catch(|| Linear::new(S, S, u32::MAX).nth(9_999)).unwrap_or_else(|message| {
        panic!("Linear::new(1 s, 1 s, u32::MAX).nth(9_999) panicked: {message}")
    });
    assert!(
        linear == Some(10_000 * S),
        "Linear::new(1 s, 1 s, u32::MAX).nth(9_999), the delay before retry 10,000, must be \
         Some(10000s); yours was {linear:?}",
    );
    let fixed = catch(|| Fixed::new(3 * S, u32::MAX).nth(99_999)).unwrap_or_else(|message| {
        panic!("Fixed::new(3 s, u32::MAX).nth(99_999) panicked: {message}")
    });
    assert!(
        fixed == Some(3 * S),
        "Fixed::new(3 s, u32::MAX).nth(99_999), the delay before retry 100,000, must still be \
         Some(3s); yours was {fixed:?}",
    );
}
