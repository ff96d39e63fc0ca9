//! Checks of `worst_case_time`: attempts × per-attempt timeout + the sleeps between them.

use std::time::Duration;

use exercise::{Policy, worst_case_time};

use super::support::{catch, show};

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

/// The learner's `worst_case_time`, with a panic turned into a readable failure.
fn worst(policy: &Policy, text: &str) -> Duration {
    catch(|| worst_case_time(policy))
        .unwrap_or_else(|message| panic!("worst_case_time({text}) panicked: {message}"))
}

#[test]
fn adds_timeouts_and_sleeps() {
    let cases = [
        (
            Policy::new(5, 2 * SEC, [200 * MS, 400 * MS, 800 * MS, 1_600 * MS]),
            "5 attempts of 2 s, sleeps [200 ms, 400 ms, 800 ms, 1.6 s]",
            13 * SEC,
            "5 × 2 s + (0.2 + 0.4 + 0.8 + 1.6) s = 13 s",
        ),
        (
            Policy::fixed(3, SEC, 500 * MS),
            "Policy::fixed(3 attempts, 1 s, 500 ms sleeps)",
            4 * SEC,
            "3 × 1 s + 2 × 500 ms = 4 s: two sleeps, none after the last attempt",
        ),
        (
            Policy::fixed(1, 10 * SEC, 5 * SEC),
            "Policy::fixed(1 attempt, 10 s, 5 s sleeps)",
            10 * SEC,
            "one attempt and no sleep: 10 s",
        ),
        (
            Policy::new(4, SEC, [SEC]),
            "4 attempts of 1 s, sleeps [1 s] (the last entry repeats)",
            7 * SEC,
            "4 × 1 s + 3 × 1 s = 7 s",
        ),
        (
            Policy::new(3, 2 * SEC, []),
            "3 attempts of 2 s, no sleeps",
            6 * SEC,
            "3 × 2 s = 6 s",
        ),
        (
            Policy::new(3, SEC, [100 * MS, 300 * MS, 700 * MS, 1_500 * MS]),
            "3 attempts of 1 s, sleeps [100 ms, 300 ms, 700 ms, 1.5 s]",
            3_400 * MS,
            "3 × 1 s + 100 ms + 300 ms = 3.4 s: only the sleeps after attempts 1 and 2 count",
        ),
        (
            Policy::new(
                3,
                Duration::from_nanos(1_000_000_001),
                [Duration::from_nanos(7)],
            ),
            "3 attempts of 1.000000001 s, sleeps [7 ns]",
            Duration::from_nanos(3_000_000_017),
            "3 × 1.000000001 s + 2 × 7 ns = 3.000000017 s, to the nanosecond",
        ),
    ];
    for (policy, text, expected, why) in cases {
        let got = worst(&policy, text);
        assert_eq!(
            got,
            expected,
            "worst_case_time({text}) should be {} ({why}); yours returned {}",
            show(expected),
            show(got),
        );
    }
}

#[test]
fn saturates() {
    let cases = [
        (
            Policy::fixed(3, Duration::MAX, SEC),
            "3 attempts of Duration::MAX",
        ),
        (
            Policy::fixed(2, SEC, Duration::MAX),
            "2 attempts of 1 s, sleeps of Duration::MAX",
        ),
        (
            Policy::fixed(10_000, Duration::MAX / 2, SEC),
            "10,000 attempts of Duration::MAX / 2",
        ),
    ];
    for (policy, text) in cases {
        let got = worst(&policy, text);
        assert_eq!(
            got,
            Duration::MAX,
            "worst_case_time({text}) does not fit in a Duration and should saturate at \
             Duration::MAX; yours returned {}",
            show(got),
        );
    }
}
