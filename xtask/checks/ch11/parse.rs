//! Checks of `parse_retry_after`: both forms of the header, the three date formats, dates
//! measured from receipt, and the values that must be rejected.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use exercise::parse_retry_after;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestCaseError, TestRunner};

use super::support::{catch, show};

const SECOND: Duration = Duration::from_secs(1);

/// `Fri, 31 Dec 1999 23:59:59 GMT`, the date of RFC 9110's example, in Unix seconds.
const RFC_EXAMPLE_DATE: u64 = 946_684_799;

/// A wall-clock time given in Unix seconds.
fn at(unix_seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(unix_seconds)
}

/// A wall-clock time for a message, as an IMF-fixdate: `Fri, 31 Dec 1999 23:57:59 GMT`.
fn wall(time: SystemTime) -> String {
    httpdate::fmt_http_date(time)
}

/// A parse result for a message: `Some(2 min)`, `Some(0 ms)`, `None`.
fn shown(result: Option<Duration>) -> String {
    result.map_or_else(
        || "None".to_owned(),
        |delay| format!("Some({})", show(delay)),
    )
}

/// One call of the learner's `parse_retry_after`, with a panic turned into a readable failure.
fn parse(value: &str, received_at: SystemTime) -> Option<Duration> {
    catch(|| parse_retry_after(value, received_at)).unwrap_or_else(|message| {
        panic!(
            "parse_retry_after({value:?}, {}) panicked: {message}; a header comes from the \
             network, so any value must give Some or None, never a panic",
            wall(received_at),
        )
    })
}

/// Asserts that `value`, received at `received_at`, parses to `expected`.
fn expect(value: &str, received_at: SystemTime, expected: Option<Duration>, why: &str) {
    let got = parse(value, received_at);
    assert!(
        got == expected,
        "parse_retry_after({value:?}, received at {}) should be {} ({why}); yours gave {}",
        wall(received_at),
        shown(expected),
        shown(got),
    );
}

#[test]
fn rfc_examples() {
    let two_minutes_before = at(RFC_EXAMPLE_DATE - 120);
    expect(
        "120",
        two_minutes_before,
        Some(120 * SECOND),
        "RFC 9110's example of delay-seconds: 2 minutes",
    );
    expect(
        "Fri, 31 Dec 1999 23:59:59 GMT",
        two_minutes_before,
        Some(120 * SECOND),
        "RFC 9110's example of an HTTP-date, received two minutes before it",
    );
    expect(
        "Fri, 31 Dec 1999 23:59:59 GMT",
        at(RFC_EXAMPLE_DATE - 1),
        Some(SECOND),
        "the same date, received one second before it",
    );
}

/// The same instants in the three formats RFC 9110 §5.6.7 requires a recipient to accept.
const SAME_INSTANTS: [(u64, [&str; 3]); 3] = [
    (
        784_111_777,
        [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ],
    ),
    (
        RFC_EXAMPLE_DATE,
        [
            "Fri, 31 Dec 1999 23:59:59 GMT",
            "Friday, 31-Dec-99 23:59:59 GMT",
            "Fri Dec 31 23:59:59 1999",
        ],
    ),
    (
        1_709_208_000,
        [
            "Thu, 29 Feb 2024 12:00:00 GMT",
            "Thursday, 29-Feb-24 12:00:00 GMT",
            "Thu Feb 29 12:00:00 2024",
        ],
    ),
];

#[test]
fn three_date_formats() {
    let names = ["IMF-fixdate", "RFC 850 (obsolete)", "asctime (obsolete)"];
    for (instant, formats) in SAME_INSTANTS {
        let received_at = at(instant - 90);
        let results: Vec<Option<Duration>> = formats
            .iter()
            .map(|value| parse(value, received_at))
            .collect();
        for ((value, name), got) in formats.iter().zip(names).zip(&results) {
            assert!(
                *got == Some(90 * SECOND),
                "the {name} date {value:?}, received 90 s before it, should give Some(90 s); \
                 yours gave {}. A recipient must accept all three HTTP-date formats (for the same \
                 instant your parser gave {} / {} / {}); let the httpdate crate parse them",
                shown(*got),
                shown(results[0]),
                shown(results[1]),
                shown(results[2]),
            );
        }
    }
}

#[test]
fn date_from_received_at() {
    let value = "Fri, 31 Dec 1999 23:59:59 GMT";
    let early = at(RFC_EXAMPLE_DATE - 300);
    let late = at(RFC_EXAMPLE_DATE - 20);
    let (from_early, from_late) = (parse(value, early), parse(value, late));
    assert!(
        from_early == Some(300 * SECOND) && from_late == Some(20 * SECOND),
        "an HTTP-date is a moment, and the wait is that moment minus the time the response was \
         received (received_at), not minus the clock now: {value:?} received 5 min before it \
         should give Some(5 min), and received 20 s before it Some(20 s); yours gave {} and {}",
        shown(from_early),
        shown(from_late),
    );
    // A response received between two whole seconds: the wait is exact, not whole seconds.
    let between = at(RFC_EXAMPLE_DATE - 3) + Duration::from_millis(750);
    expect(
        value,
        between,
        Some(Duration::from_millis(2_250)),
        "received 2.25 s before the date: the wait is the date minus received_at, to the \
         nanosecond, not a difference of whole seconds",
    );
    // A date decades away is measured as it is: capping a hint is next_delay's job (max_hint),
    // not the parser's, so no day or year cap here.
    expect(
        value,
        UNIX_EPOCH,
        Some(Duration::from_secs(RFC_EXAMPLE_DATE)),
        "received at the Unix epoch, 30 years before the date: the wait is the whole 30 years \
         (946,684,799 s), not a day or a year",
    );
}

#[test]
fn past_dates_give_zero() {
    let value = "Fri, 31 Dec 1999 23:59:59 GMT";
    let cases = [
        (
            at(RFC_EXAMPLE_DATE),
            "received at the very second of the date",
        ),
        (at(RFC_EXAMPLE_DATE + 1), "received 1 s after the date"),
        (
            at(RFC_EXAMPLE_DATE + 3_600),
            "received an hour after the date",
        ),
        (at(1_709_208_000), "received 24 years after the date"),
    ];
    for (received_at, case) in cases {
        expect(
            value,
            received_at,
            Some(Duration::ZERO),
            &format!(
                "{case}: a valid date that has already passed asks for no wait at all; it is \
                 not an invalid value"
            ),
        );
    }
}

#[test]
fn delay_seconds() {
    let received_at = at(RFC_EXAMPLE_DATE - 120);
    let cases = [
        ("0", 0, "zero seconds is a valid delay"),
        ("1", 1, "one digit"),
        ("0120", 120, "leading zeros are still 1*DIGIT"),
        (
            "000000000000000000000120",
            120,
            "24 digits, but leading zeros do not make a value larger: it is 120 s, which fits a \
             u64; what is too large is the number, not the count of its digits",
        ),
        ("86400", 86_400, "a day"),
        (
            " 120",
            120,
            "optional whitespace before the value is ignored",
        ),
        (
            "120 ",
            120,
            "optional whitespace after the value is ignored",
        ),
        ("\t7\t", 7, "tabs are optional whitespace too"),
        (
            "4294967296",
            1 << 32,
            "2^32 s: more than a u32 holds, still a u64",
        ),
        (
            "9223372036854775808",
            1 << 63,
            "2^63 s: more than an i64 holds, still a u64",
        ),
        (
            "18446744073709551615",
            u64::MAX,
            "u64::MAX seconds is the largest delay a Duration can count: valid",
        ),
    ];
    for (value, seconds, why) in cases {
        expect(value, received_at, Some(Duration::from_secs(seconds)), why);
    }
    // A fixed seed: every run tries the same 256 cases, so a verdict never changes between runs.
    let config = ProptestConfig {
        failure_persistence: None,
        cases: 256,
        rng_seed: RngSeed::Fixed(11),
        ..ProptestConfig::default()
    };
    let whitespace = prop::sample::select(vec!["", " ", "\t", "  ", " \t "]);
    let strategy = (any::<u64>(), whitespace.clone(), whitespace);
    let outcome = TestRunner::new(config).run(&strategy, |(seconds, before, after)| {
        let value = format!("{before}{seconds}{after}");
        let got = parse(&value, received_at);
        if got == Some(Duration::from_secs(seconds)) {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!(
                "parse_retry_after({value:?}) should be Some({seconds} s): delay-seconds is any \
                 run of digits that fits a u64 (Duration::from_secs takes a u64), with spaces \
                 and tabs around it ignored; yours gave {}",
                shown(got),
            )))
        }
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

#[test]
fn garbage_is_none() {
    let received_at = at(RFC_EXAMPLE_DATE - 120);
    let garbage = [
        ("", "an empty value"),
        ("   ", "only spaces"),
        ("\t", "only a tab"),
        ("soon", "a word"),
        ("120s", "a number with a unit"),
        ("12 0", "a space inside the number"),
        ("0x10", "a hexadecimal number"),
        ("120, 60", "two values"),
        ("Fri, 31 Dec 1999 23:59:59", "a date without its GMT zone"),
        (
            "Fri, 31 Dec 1999 23:59:59 UTC",
            "a date in a zone other than GMT (HTTP dates are always written GMT)",
        ),
        ("Fri, 31 Dec 1999", "a date without a time"),
        ("Fri, 32 Dec 1999 23:59:59 GMT", "the 32nd of December"),
    ];
    for (value, what) in garbage {
        expect(
            value,
            received_at,
            None,
            &format!(
                "{what} is neither delay-seconds nor an HTTP-date; an invalid hint is no hint, so \
                 the loop falls back to its own backoff instead of retrying at once"
            ),
        );
    }
}

#[test]
fn negative_and_fractional() {
    let received_at = at(RFC_EXAMPLE_DATE - 120);
    let invalid = [
        ("-5", "a negative number"),
        ("-0", "a signed zero"),
        ("+120", "a plus sign"),
        ("1.5", "a fraction"),
        ("0.5", "a fraction below one second"),
        ("120.0", "a decimal point"),
        (".5", "a bare fraction"),
        ("1e3", "an exponent"),
    ];
    for (value, what) in invalid {
        expect(
            value,
            received_at,
            None,
            &format!(
                "delay-seconds is 1*DIGIT, digits only, so {what} makes the value invalid; an \
                 invalid hint is no hint, and the loop falls back to its own backoff"
            ),
        );
    }
}

#[test]
fn overflow_is_none() {
    let received_at = at(RFC_EXAMPLE_DATE - 120);
    for value in [
        "18446744073709551616",
        "99999999999999999999",
        "1000000000000000000000000",
    ] {
        expect(
            value,
            received_at,
            None,
            "a number of seconds too large for a u64 (more than 500 billion years) is not a real \
             delay: treat it as invalid, without panicking or wrapping around",
        );
    }
}
