//! The alert rules: each fires strictly above its limit, with the value that made it fire, in
//! the order of `Thresholds`; a busy but healthy queue raises nothing.

use exercise::{Alert, Dashboard, Thresholds};

use super::fixture::{MINUTE, SECOND, ms};
use super::support::catch;

/// The learner's `alerts`, with a panic turned into a readable failure.
fn alerts(dashboard: &Dashboard, thresholds: &Thresholds) -> Vec<Alert> {
    catch(|| exercise::alerts(dashboard, thresholds)).unwrap_or_else(|message| {
        panic!("alerts({dashboard:?}, {thresholds:?}) panicked: {message}")
    })
}

/// The checks' thresholds: 2 minutes, 3 dead letters an hour, 20 rows with 4+ attempts.
fn thresholds() -> Thresholds {
    Thresholds {
        max_oldest_pending: 2 * MINUTE,
        max_dead_letters_last_hour: 3,
        storm_min_attempts: 4,
        max_storm_rows: 20,
    }
}

fn expect(what: &str, dashboard: &Dashboard, expected: &[Alert], rule: &str) {
    let thresholds = thresholds();
    let got = alerts(dashboard, &thresholds);
    assert!(
        got == expected,
        "{what}, alerts(dashboard, thresholds) returned {got:?}; expected {expected:?}. {rule} \
         (thresholds: {thresholds:?})",
    );
}

#[test]
fn oldest_pending_threshold() {
    let limit = thresholds().max_oldest_pending;
    let at = |age: Option<i64>| Dashboard {
        oldest_pending_age: age,
        due_now: 1,
        attempts: vec![(0, 1)],
        ..Dashboard::default()
    };
    let rule = "The rule fires only when the oldest pending row has waited longer than the limit";
    expect(
        &format!(
            "with the oldest pending row exactly {} old (the limit)",
            ms(limit)
        ),
        &at(Some(limit)),
        &[],
        rule,
    );
    expect(
        &format!("with the oldest pending row {} + 1 ms old", ms(limit)),
        &at(Some(limit + 1)),
        &[Alert::OldestPending {
            age: limit + 1,
            limit,
        }],
        rule,
    );
    expect(
        "with nothing pending (no age)",
        &Dashboard::default(),
        &[],
        "An empty queue has no age and raises nothing",
    );
    // A limit of zero is a limit like any other (no delay tolerated), not "rule disabled".
    let zero = Thresholds {
        max_oldest_pending: 0,
        ..thresholds()
    };
    let got = alerts(&at(Some(1)), &zero);
    assert_eq!(
        got,
        [Alert::OldestPending { age: 1, limit: 0 }],
        "with max_oldest_pending = 0, a pending row 1 ms old must raise OldestPending {{ age: 1, \
         limit: 0 }}; yours returned {got:?}"
    );
}

#[test]
fn dead_letter_threshold() {
    let limit = thresholds().max_dead_letters_last_hour;
    let with = |last_hour: i64| Dashboard {
        dead_letters: 50,
        dead_letters_last_hour: last_hour,
        ..Dashboard::default()
    };
    let rule = "The rule counts the dead letters of the last hour, and fires only above the limit";
    expect(
        &format!("with {limit} dead letters in the last hour (the limit) and 50 in all"),
        &with(limit),
        &[],
        rule,
    );
    expect(
        &format!(
            "with {} dead letters in the last hour and 50 in all",
            limit + 1
        ),
        &with(limit + 1),
        &[Alert::DeadLetters {
            last_hour: limit + 1,
            limit,
        }],
        rule,
    );
    let zero = Thresholds {
        max_dead_letters_last_hour: 0,
        ..thresholds()
    };
    let got = alerts(&with(1), &zero);
    assert_eq!(
        got,
        [Alert::DeadLetters {
            last_hour: 1,
            limit: 0
        }],
        "with max_dead_letters_last_hour = 0, one dead letter in the last hour must raise \
         DeadLetters {{ last_hour: 1, limit: 0 }}; yours returned {got:?}"
    );
}

#[test]
fn retry_storm_threshold() {
    let t = thresholds();
    let with = |attempts: Vec<(u32, i64)>| Dashboard {
        waiting: attempts.iter().map(|&(_, rows)| rows).sum(),
        oldest_pending_age: Some(MINUTE),
        attempts,
        ..Dashboard::default()
    };
    let rule = "A row counts towards a storm when its attempts are at least storm_min_attempts; \
                the rule fires only when more rows than max_storm_rows count";
    expect(
        "with 10 rows at 4 attempts and 10 at 9 (20 rows with 4+, the limit) and 50 at 3",
        &with(vec![(3, 50), (4, 10), (9, 10)]),
        &[],
        rule,
    );
    expect(
        "with 11 rows at 4 attempts and 10 at 9 (21 rows with 4+) and 50 at 3",
        &with(vec![(3, 50), (4, 11), (9, 10)]),
        &[Alert::RetryStorm {
            rows: 21,
            min_attempts: t.storm_min_attempts,
            limit: t.max_storm_rows,
        }],
        rule,
    );
    expect(
        "with 21 rows at exactly 4 attempts",
        &with(vec![(4, 21)]),
        &[Alert::RetryStorm {
            rows: 21,
            min_attempts: t.storm_min_attempts,
            limit: t.max_storm_rows,
        }],
        rule,
    );
    expect(
        "with 500 rows at 3 attempts",
        &with(vec![(3, 500)]),
        &[],
        rule,
    );
    // A limit of zero is a limit like any other (no storm row tolerated), not "rule disabled".
    let zero = Thresholds {
        max_storm_rows: 0,
        ..t
    };
    let got = alerts(&with(vec![(3, 50), (4, 1)]), &zero);
    assert_eq!(
        got,
        [Alert::RetryStorm {
            rows: 1,
            min_attempts: t.storm_min_attempts,
            limit: 0,
        }],
        "with max_storm_rows = 0, one pending row at 4 attempts (storm_min_attempts = 4) must \
         raise RetryStorm {{ rows: 1, min_attempts: 4, limit: 0 }}; yours returned {got:?}"
    );
}

#[test]
fn all_rules_in_order() {
    let t = thresholds();
    let dashboard = Dashboard {
        due_now: 40,
        waiting: 60,
        oldest_pending_age: Some(10 * MINUTE),
        attempts: vec![(0, 40), (5, 60)],
        dead_letters: 9,
        dead_letters_last_hour: 9,
    };
    expect(
        "with every rule over its limit",
        &dashboard,
        &[
            Alert::OldestPending {
                age: 10 * MINUTE,
                limit: t.max_oldest_pending,
            },
            Alert::DeadLetters {
                last_hour: 9,
                limit: t.max_dead_letters_last_hour,
            },
            Alert::RetryStorm {
                rows: 60,
                min_attempts: t.storm_min_attempts,
                limit: t.max_storm_rows,
            },
        ],
        "All three fire, in the order OldestPending, DeadLetters, RetryStorm",
    );
}

#[test]
fn healthy_queue_is_quiet() {
    let dashboard = Dashboard {
        due_now: 500,
        waiting: 320,
        oldest_pending_age: Some(90 * SECOND),
        attempts: vec![(0, 500), (1, 200), (2, 80), (3, 20), (4, 12), (6, 8)],
        dead_letters: 240,
        dead_letters_last_hour: 3,
    };
    expect(
        "for a busy but healthy queue (500 rows due, 320 in backoff, 300 that failed once or \
         more, 240 old dead letters, none of the limits crossed)",
        &dashboard,
        &[],
        "Failures that retries are handling are normal: no rule fires on a failed attempt, on \
         rows in backoff, on a due count, or on old dead letters",
    );
}
