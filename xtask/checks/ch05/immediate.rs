//! Checks of the rule of one immediate retry: the first retry may go at once, later zero delays
//! are raised to `MIN_DELAY`.

use std::time::Duration;

use exercise::delay_before_retry;

use super::fixture::{MIN_DELAY, MS, Service, run, show_heard, show_policy};
use super::support::{catch, show, show_all};

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

#[test]
fn rule_by_position() {
    // Only an exact zero is raised, and only after the first retry: a small delay (such as a
    // jittered draw that happens to be short) passes unchanged, and so does any delay above.
    let proposals = [
        ZERO,
        Duration::from_nanos(1),
        MS,
        30 * MS,
        MIN_DELAY - Duration::from_nanos(1),
        MIN_DELAY,
        5_000 * MS,
        Duration::MAX,
    ];
    let mut mistakes = Vec::new();
    for retry in [1, 2, 3, 10, u32::MAX] {
        for proposed in proposals {
            let expected = if retry > 1 && proposed.is_zero() {
                MIN_DELAY
            } else {
                proposed
            };
            let got = catch(|| delay_before_retry(retry, proposed)).map_or_else(
                |panic| format!("a panic ({panic})"),
                |delay| format!("{delay:?}"),
            );
            if got != format!("{expected:?}") {
                mistakes.push(format!(
                    "delay_before_retry({retry}, {}) gave {got}, expected {expected:?}",
                    show(proposed)
                ));
            }
        }
    }
    assert!(
        mistakes.is_empty(),
        "the first retry keeps whatever the policy proposes, zero included; for every later retry \
         an exact zero becomes MIN_DELAY (100 ms), and every other delay, however small, passes \
         unchanged. Yours: {}{}",
        mistakes
            .iter()
            .take(4)
            .cloned()
            .collect::<Vec<_>>()
            .join("; "),
        if mistakes.len() > 4 {
            format!(" (and {} more)", mistakes.len() - 4)
        } else {
            String::new()
        },
    );
}
