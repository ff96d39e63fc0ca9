//! Checks of `next_delay`: the hint replaces the backoff, is capped, and never outlives the budget.

use std::time::Duration;

use exercise::{Decision, next_delay};

use super::support::{catch, show};

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3_600);
const DAY: Duration = Duration::from_secs(86_400);

/// A decision for a message: `Sleep(2 s)` or `GiveUp`.
fn shown(decision: Decision) -> String {
    match decision {
        Decision::Sleep(delay) => format!("Sleep({})", show(delay)),
        Decision::GiveUp => "GiveUp".to_owned(),
    }
}

fn shown_hint(hint: Option<Duration>) -> String {
    hint.map_or_else(|| "None".to_owned(), |hint| format!("Some({})", show(hint)))
}

/// The arguments of one call, written out for a message.
fn call(
    hint: Option<Duration>,
    backoff: Duration,
    max_hint: Duration,
    remaining: Duration,
) -> String {
    format!(
        "next_delay(hint = {}, backoff = {}, max_hint = {}, remaining_budget = {})",
        shown_hint(hint),
        show(backoff),
        show(max_hint),
        show(remaining),
    )
}

/// One call of the learner's `next_delay`, with a panic turned into a readable failure.
fn decide(
    hint: Option<Duration>,
    backoff: Duration,
    max_hint: Duration,
    remaining: Duration,
) -> Decision {
    catch(|| next_delay(hint, backoff, max_hint, remaining)).unwrap_or_else(|message| {
        panic!(
            "{} panicked: {message}",
            call(hint, backoff, max_hint, remaining)
        )
    })
}

/// Asserts one decision, explaining the rule with `why`.
fn expect(
    (hint, backoff, max_hint, remaining): (Option<Duration>, Duration, Duration, Duration),
    expected: Decision,
    why: &str,
) {
    let got = decide(hint, backoff, max_hint, remaining);
    assert!(
        got == expected,
        "{} should be {} ({why}); yours gave {}",
        call(hint, backoff, max_hint, remaining),
        shown(expected),
        shown(got),
    );
}

#[test]
fn no_hint_uses_backoff() {
    for backoff in [MS, 250 * MS, 3 * SECOND] {
        expect(
            (None, backoff, 30 * SECOND, HOUR),
            Decision::Sleep(backoff),
            "without a usable hint the client's own backoff decides the wait; it must not \
             become a retry at once",
        );
    }
    expect(
        (None, 45 * SECOND, 30 * SECOND, HOUR),
        Decision::Sleep(45 * SECOND),
        "max_hint caps the server's hints, not the client's own backoff, which has its own cap \
         (chapter 7): without a hint the wait is the backoff as it is",
    );
    expect(
        (None, 3 * DAY, 30 * SECOND, 365 * DAY),
        Decision::Sleep(3 * DAY),
        "a backoff of 3 days within a year of budget is slept as it is: next_delay caps no \
         backoff, at a minute, an hour or a day",
    );
}

#[test]
fn hint_preferred_over_backoff() {
    let cases = [
        (2 * SECOND, 100 * MS, "a hint longer than the backoff"),
        (50 * MS, 800 * MS, "a hint shorter than the backoff"),
        (
            Duration::ZERO,
            SECOND,
            "a hint of zero (the server is ready now)",
        ),
    ];
    for (hint, backoff, what) in cases {
        expect(
            (Some(hint), backoff, MINUTE, HOUR),
            Decision::Sleep(hint),
            &format!(
                "{what}: the server's hint replaces the backoff, within the cap and the budget"
            ),
        );
    }
    expect(
        (Some(50 * MS), 800 * MS, MINUTE, 500 * MS),
        Decision::Sleep(50 * MS),
        "the hint replaces the backoff in the budget comparison too: the 50 ms the server asks \
         for end before the 500 ms left, so the backoff (800 ms, which would not fit) plays no \
         part",
    );
}

#[test]
fn hint_capped() {
    let cases = [
        (Some(10 * MINUTE), 30 * SECOND, 2 * HOUR, 30 * SECOND),
        (Some(30 * SECOND), 30 * SECOND, 2 * HOUR, 30 * SECOND),
        (
            Some(Duration::from_secs(u64::MAX)),
            MINUTE,
            Duration::MAX,
            MINUTE,
        ),
    ];
    for (hint, max_hint, remaining, expected) in cases {
        expect(
            (hint, 100 * MS, max_hint, remaining),
            Decision::Sleep(expected),
            "a hint is followed only up to max_hint, the longest wait the client accepts from a \
             server; the budget is large enough here",
        );
    }
    expect(
        (Some(3 * DAY), 100 * MS, 7 * DAY, 365 * DAY),
        Decision::Sleep(3 * DAY),
        "a hint of 3 days below a max_hint of 7 days, with a year of budget, is followed as it \
         is: max_hint is the only cap on a hint, no hour or day of the function's own",
    );
    expect(
        (Some(2 * SECOND), 100 * MS, Duration::ZERO, HOUR),
        Decision::Sleep(Duration::ZERO),
        "a max_hint of zero accepts no wait from a server, so the hint capped at it is zero; \
         zero is a cap like any other, not \"no cap\"",
    );
}

#[test]
fn long_hint_gives_up() {
    let cases = [
        (
            Some(10 * SECOND),
            5 * SECOND,
            Decision::GiveUp,
            "the hint is longer than the time left",
        ),
        (
            Some(5 * SECOND),
            5 * SECOND,
            Decision::GiveUp,
            "the hint is exactly the time left, so the next attempt could only start at the \
             deadline (as in chapter 4)",
        ),
        (
            Some(Duration::ZERO),
            Duration::ZERO,
            Decision::GiveUp,
            "no time is left at all",
        ),
        (
            Some(4 * SECOND),
            5 * SECOND,
            Decision::Sleep(4 * SECOND),
            "the hint ends before the budget does",
        ),
    ];
    for (hint, remaining, expected, why) in cases {
        expect((hint, 100 * MS, MINUTE, remaining), expected, why);
    }
}

#[test]
fn budget_sees_uncapped_hint() {
    expect(
        (Some(10 * MINUTE), 100 * MS, 30 * SECOND, 2 * MINUTE),
        Decision::GiveUp,
        "the server asks for 10 min and only 2 min are left: compare the hint itself with the \
         budget, before capping it. The 30 s cap fits, but a retry after 30 s comes long before \
         the server said it could answer",
    );
}

#[test]
fn long_backoff_gives_up() {
    expect(
        (None, 10 * SECOND, MINUTE, 5 * SECOND),
        Decision::GiveUp,
        "without a hint the backoff is the wait, and a 10 s sleep with 5 s left would end past \
         the deadline: give up now",
    );
    expect(
        (None, 5 * SECOND, MINUTE, 5 * SECOND),
        Decision::GiveUp,
        "without a hint the backoff is the wait, and a 5 s sleep with exactly 5 s left would end \
         at the deadline, where no attempt may start: the rule is the hint's, \"at least the time \
         left\"",
    );
    expect(
        (
            None,
            5 * SECOND - Duration::from_nanos(1),
            MINUTE,
            5 * SECOND,
        ),
        Decision::Sleep(5 * SECOND - Duration::from_nanos(1)),
        "a backoff that ends 1 ns before the deadline is still taken",
    );
}
