//! Checks of the two policies' sequences: the exact delays, where linear starts, and how many.

use std::time::Duration;

use exercise::{Fixed, Linear};

use super::support::{catch, show, show_all};

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);

/// At most `limit` delays of a policy, with a panic turned into a readable failure.
fn take(policy: impl Iterator<Item = Duration>, limit: usize, call: &str) -> Vec<Duration> {
    catch(|| policy.take(limit).collect())
        .unwrap_or_else(|message| panic!("collecting the delays of {call} panicked: {message}"))
}

#[test]
fn fixed_exact() {
    let cases = [
        (3 * S, 4, "Fixed::new(3 s, 4)"),
        (250 * MS, 6, "Fixed::new(250 ms, 6)"),
        (Duration::ZERO, 2, "Fixed::new(0 ms, 2)"),
    ];
    for (delay, max_retries, call) in cases {
        let expected = vec![delay; max_retries as usize];
        let delays = take(Fixed::new(delay, max_retries), 50, call);
        assert!(
            delays == expected,
            "{call} must yield {} exactly {max_retries} times: {}; yours yielded {}",
            show(delay),
            show_all(&expected, 8),
            show_all(&delays, 8),
        );
    }
}

#[test]
fn linear_exact() {
    let cases = [
        (3 * S, 3 * S, 4, "Linear::new(3 s, 3 s, 4)"),
        (S, 2 * S, 5, "Linear::new(1 s, 2 s, 5)"),
        (100 * MS, 50 * MS, 6, "Linear::new(100 ms, 50 ms, 6)"),
        (500 * MS, Duration::ZERO, 3, "Linear::new(500 ms, 0 ms, 3)"),
        (Duration::ZERO, 40 * MS, 4, "Linear::new(0 ms, 40 ms, 4)"),
    ];
    for (initial, increment, max_retries, call) in cases {
        let expected: Vec<Duration> = (0..max_retries)
            .map(|retry| initial + increment * retry)
            .collect();
        let mut policy = Linear::new(initial, increment, max_retries);
        let delays = take(policy.by_ref(), 50, call);
        assert!(
            delays == expected,
            "{call} must yield initial + retry · increment for retry = 0 to {}: {}; yours \
             yielded {}",
            max_retries - 1,
            show_all(&expected, 8),
            show_all(&delays, 8),
        );
        // The same policy, walked to its end, still answers delay(k) from its settings: a
        // caller with a stored retry count asks it directly (section 6.3).
        let asked_after: Vec<Duration> =
            catch(|| (0..max_retries).map(|retry| policy.delay(retry)).collect()).unwrap_or_else(
                |message| panic!("{call}.delay(k) after iterating panicked: {message}"),
            );
        assert!(
            asked_after == expected,
            "delay(retry) is initial + retry · increment from the policy's settings, whatever its \
             iterator has handed out: after iterating {call} to its end, delay(0) to delay({}) \
             must still be {}; yours gave {} (keep the settings unchanged and count in `retries`)",
            max_retries - 1,
            show_all(&expected, 8),
            show_all(&asked_after, 8),
        );
    }
}

#[test]
fn linear_starts_at_initial() {
    let cases = [
        (S, 2 * S, "Linear::new(1 s, 2 s, 3)"),
        (5 * S, S, "Linear::new(5 s, 1 s, 3)"),
        (200 * MS, 30 * MS, "Linear::new(200 ms, 30 ms, 3)"),
    ];
    for (initial, increment, call) in cases {
        let policy = Linear::new(initial, increment, 3);
        let first_delay = catch(|| policy.delay(0))
            .unwrap_or_else(|message| panic!("{call}.delay(0) panicked: {message}"));
        let delays = take(policy, 3, call);
        assert!(
            first_delay == initial && delays.first() == Some(&initial),
            "the first delay of a linear policy is `initial`, not zero and not `increment`: \
             {call} must start with {} (then {}, {}); yours gave delay(0) = {} and the \
             sequence {}",
            show(initial),
            show(initial + increment),
            show(initial + increment * 2),
            show(first_delay),
            show_all(&delays, 3),
        );
    }
}

/// How many delays a policy yields (up to `max_retries + 5`), and whether it stays exhausted.
fn count_and_stay_done(
    mut policy: impl Iterator<Item = Duration>,
    max_retries: u32,
) -> (usize, bool) {
    let limit = max_retries as usize + 5;
    let mut yielded = 0;
    while yielded < limit && policy.next().is_some() {
        yielded += 1;
    }
    let stays_done = (0..3).all(|_| policy.next().is_none());
    (yielded, stays_done)
}

#[test]
fn length_is_max_retries() {
    for max_retries in [0, 1, 2, 3, 7, 20, 70_000] {
        let policies: [(String, Box<dyn Iterator<Item = Duration>>); 2] = [
            (
                format!("Fixed::new(1 s, {max_retries})"),
                Box::new(Fixed::new(S, max_retries)),
            ),
            (
                format!("Linear::new(1 s, 1 s, {max_retries})"),
                Box::new(Linear::new(S, S, max_retries)),
            ),
        ];
        for (call, policy) in policies {
            let (yielded, stays_done) = catch(move || count_and_stay_done(policy, max_retries))
                .unwrap_or_else(|message| panic!("iterating {call} panicked: {message}"));
            let shown = if yielded > max_retries as usize + 4 {
                format!("at least {yielded}")
            } else {
                yielded.to_string()
            };
            assert!(
                yielded == max_retries as usize,
                "{call} must yield exactly {max_retries} delay(s), one per retry, and then None; \
                 yours yielded {shown}",
            );
            assert!(
                stays_done,
                "{call} yielded its {max_retries} delay(s) and None, but asked again it yielded \
                 another delay; once a policy says None (give up) it must keep saying None",
            );
        }
    }
}
