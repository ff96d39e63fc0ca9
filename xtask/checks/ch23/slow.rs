//! Slow calls: counted as failures when the policy says so, at the threshold itself.

use std::time::Duration;

use exercise::{State, Window};

use super::fixture::{MS, SEC, Seen, Started, breaker, call, config, describe, opened, state};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn a_call_at_the_slow_threshold_is_a_failure() {
    let slow = 2 * SEC;
    let mut config = config(50, 2, Window::Count(2));
    config.slow_call = Some(slow);
    // slow_call = 2 h as well: a call of 90 s is not slow under it, one of 2 h is.
    let mut long = config;
    long.slow_call = Some(7_200 * SEC);
    // slow_call = 0 is set, not off (None is off): every call takes at least 0 and is a failure.
    let mut zero = config;
    zero.slow_call = Some(Duration::ZERO);
    let cases = [
        (config, slow, true),
        (config, slow - MS, false),
        (config, slow + 3 * SEC, true),
        (long, 90 * SEC, false),
        (long, 7_200 * SEC - MS, false),
        (long, 7_200 * SEC, true),
        (zero, Duration::ZERO, true),
    ];
    for (config, latency, should_open) in cases {
        let slow = config.slow_call.unwrap_or_default();
        let breaker = breaker(config);
        let started = Started::default();
        let first = call(&breaker, &started, true, latency).await;
        let second = call(&breaker, &started, true, latency).await;
        assert_eq!(
            (first, second),
            (Seen::Ran { ok: true }, Seen::Ran { ok: true }),
            "a slow call still returns the operation's own Ok to its caller"
        );
        let now = state(&breaker);
        let expected = if should_open {
            State::Open
        } else {
            State::Closed
        };
        assert_eq!(
            now,
            expected,
            "with {} and slow_call = {}, two successful calls that each took {latency:?} left the \
             breaker {now:?}; a call that takes at least slow_call counts as a failure, a faster \
             one as a success",
            describe(&config),
            show(slow),
        );
    }
    // Each call is timed from its own start, also when calls overlap: A starts at 0 s and
    // succeeds after 3 s (slow), B starts at 2 s and succeeds after 500 ms (not slow). The
    // window holds B's success and A's failure, 50 %: open. A start kept in the breaker, which B
    // overwrites, times A from 2 s and finds it fast.
    let breaker = breaker(config);
    let started = Started::default();
    let first = {
        let (breaker, started) = (breaker.clone(), started.clone());
        tokio::spawn(async move { call(&breaker, &started, true, 3 * SEC).await })
    };
    tokio::time::sleep(2 * SEC).await;
    let second = call(&breaker, &started, true, 500 * MS).await;
    let first = first.await.expect("the caller of call A panicked");
    let now = state(&breaker);
    assert!(
        first == Seen::Ran { ok: true } && second == Seen::Ran { ok: true } && now == State::Open,
        "with {} and slow_call = 2 s, call A ran from 0 s to 3 s and call B from 2 s to 2.5 s, \
         both returning Ok ({first:?}, {second:?}): A took 3 s and is a failure, B a success, \
         so the window is 50 % failures and the breaker should be Open; it is {now:?}{}",
        describe(&config),
        if now == State::Closed {
            ", as if A had been timed as fast. Time each call from its own start, not from a \
             start the breaker keeps for every call"
        } else {
            ""
        }
    );
}

#[tokio::test(start_paused = true)]
async fn duration_does_not_count_without_a_slow_setting() {
    let config = config(1, 2, Window::Count(2));
    let breaker = breaker(config);
    let started = Started::default();
    for _ in 0..5 {
        call(&breaker, &started, true, Duration::from_secs(3_600)).await;
    }
    let now = state(&breaker);
    assert_eq!(
        now,
        State::Closed,
        "with {} and slow_call = None, five successful calls of an hour each left the breaker \
         {now:?}; without a slow_call setting, only errors are failures",
        describe(&config)
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_probe_reopens() {
    let mut config = config(50, 4, Window::Count(4));
    config.slow_call = Some(2 * SEC);
    let breaker = opened(config).await;
    tokio::time::advance(config.break_duration).await;
    let started = Started::default();
    let probe = call(&breaker, &started, true, 3 * SEC).await;
    let now = state(&breaker);
    assert!(
        probe == Seen::Ran { ok: true } && now == State::Open,
        "with slow_call = 2 s, the only probe returned Ok after 3 s ({probe:?}); a slow probe \
         is a failed probe, so the breaker should open again; it is {now:?}"
    );
}
