//! Checks of `child_deadline`: deadline propagation as in the SRE book, saturating at zero.

use std::time::Duration;

use exercise::child_deadline;

use super::support::{catch, show};

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

/// The learner's `child_deadline`, with a panic turned into a readable failure.
fn child(parent_remaining: Duration, spent: Duration, margin: Duration) -> Duration {
    catch(|| child_deadline(parent_remaining, spent, margin)).unwrap_or_else(|message| {
        let advice = if message.contains("overflow") {
            ". Subtracting a larger Duration from a smaller one panics; use saturating_sub, which \
             stops at zero"
        } else {
            ""
        };
        panic!(
            "child_deadline(parent_remaining = {}, spent = {}, margin = {}) panicked: \
             {message}{advice}",
            show(parent_remaining),
            show(spent),
            show(margin),
        )
    })
}

#[test]
fn sre_example() {
    let cases = [
        (
            30 * SEC,
            7 * SEC,
            Duration::ZERO,
            23 * SEC,
            "A had 30 s, spent 7 s: B gets 23 s",
        ),
        (
            30 * SEC,
            7 * SEC,
            SEC,
            22 * SEC,
            "the same with a 1 s margin: B gets 22 s",
        ),
        (
            22 * SEC,
            5 * SEC,
            SEC,
            16 * SEC,
            "B passes on its 22 s after 5 s of work: C gets 16 s",
        ),
        (
            2 * SEC,
            350 * MS,
            150 * MS,
            1_500 * MS,
            "2 s, 350 ms spent, 150 ms margin: 1.5 s",
        ),
    ];
    for (remaining, spent, margin, expected, story) in cases {
        let got = child(remaining, spent, margin);
        assert_eq!(
            got,
            expected,
            "{story}: child_deadline(parent_remaining = {}, spent = {}, margin = {}) should be \
             {} (remaining − spent − margin); yours returned {}",
            show(remaining),
            show(spent),
            show(margin),
            show(expected),
            show(got),
        );
    }
}

#[test]
fn saturates_at_zero() {
    let cases = [
        (5 * SEC, 7 * SEC, SEC, "more spent than there was"),
        (7 * SEC, 7 * SEC, Duration::ZERO, "exactly all of it spent"),
        (7 * SEC, 6_500 * MS, SEC, "less left than the margin"),
        (
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            "nothing at all",
        ),
        (SEC, Duration::MAX, Duration::MAX, "huge spent and margin"),
    ];
    for (remaining, spent, margin, story) in cases {
        let got = child(remaining, spent, margin);
        assert!(
            got.is_zero(),
            "{story}: child_deadline(parent_remaining = {}, spent = {}, margin = {}) must be 0: a \
             downstream call with no time left should not be made at all; yours returned {}",
            show(remaining),
            show(spent),
            show(margin),
            show(got),
        );
    }
    let values = [
        Duration::ZERO,
        MS,
        999 * MS,
        SEC,
        7 * SEC,
        30 * SEC,
        Duration::MAX,
    ];
    for remaining in values {
        for spent in values {
            for margin in values {
                let expected = remaining.saturating_sub(spent).saturating_sub(margin);
                let got = child(remaining, spent, margin);
                assert_eq!(
                    got,
                    expected,
                    "child_deadline(parent_remaining = {}, spent = {}, margin = {}) should be {} \
                     (remaining − spent − margin, or 0 when that is negative); yours returned {}",
                    show(remaining),
                    show(spent),
                    show(margin),
                    show(expected),
                    show(got),
                );
            }
        }
    }
}
