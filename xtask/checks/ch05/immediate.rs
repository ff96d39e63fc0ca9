//! Checks of the rule of one immediate retry: the first retry may go at once, later zero delays
//! are raised to `MIN_DELAY`.

use std::time::Duration;

use super::fixture::{MIN_DELAY, MS, Service, run, show_heard, show_policy};
use crate::support::show_all;

const ZERO: Duration = Duration::ZERO;

#[tokio::test(start_paused = true)]
async fn at_most_one() {
    let cases: [(&[Duration], &[Duration]); 3] = [
        (
            &[ZERO, ZERO, ZERO, ZERO],
            &[ZERO, MIN_DELAY, MIN_DELAY, MIN_DELAY],
        ),
        (&[40 * MS, ZERO, ZERO], &[40 * MS, MIN_DELAY, MIN_DELAY]),
        (&[ZERO, 30 * MS, ZERO], &[ZERO, 30 * MS, MIN_DELAY]),
    ];
    for (policy, expected) in cases {
        let outcome = run(policy, Service::always_failing()).await;
        let gaps = outcome.gaps();
        let announced: Vec<Duration> = outcome.heard.iter().map(|heard| heard.delay).collect();
        assert!(
            gaps == expected && announced == expected,
            "at most one retry may be immediate, and only the first: a zero delay for any later \
             retry is raised to MIN_DELAY = 100 ms, and the hook announces the raised delay. The \
             policy {} should give the sleeps {}; yours slept {} and the hook heard {}",
            show_policy(policy),
            show_all(expected, 8),
            show_all(&gaps, 8),
            show_heard(&outcome.heard),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn first_may_be_immediate() {
    let policy = [ZERO, 50 * MS];
    let outcome = run(&policy, Service::always_failing()).await;
    let gaps = outcome.gaps();
    let announced: Vec<Duration> = outcome.heard.iter().map(|heard| heard.delay).collect();
    assert!(
        gaps == policy && announced == policy,
        "the first retry may be immediate (a momentary blip is often gone at once): the policy \
         {} should give the sleeps {}; yours slept {} and the hook heard {}",
        show_policy(&policy),
        show_policy(&policy),
        show_all(&gaps, 8),
        show_heard(&outcome.heard),
    );
}
