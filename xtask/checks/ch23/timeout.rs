//! One attempt with a time limit: the timeout sits inside the breaker, so that a dependency that
//! hangs ends each attempt as a failure the breaker records.

use std::time::Duration;

use exercise::{AttemptError, BreakerError, CircuitBreaker, State, Window, attempt};
use tokio::time::Instant;

use super::fixture::{MS, SEC, Started, breaker, config, describe, opened, state};
use super::support::show;

/// What an attempt returned, in the checks' terms.
type Answer = Result<u32, BreakerError<AttemptError<&'static str>>>;

/// How long a hanging dependency takes to answer: far longer than any limit below.
const HANG: Duration = Duration::from_secs(3_600);

/// One attempt whose operation answers `answer` after `latency`. Returns what the attempt
/// returned and how long it took on tokio's clock.
async fn timed_attempt(
    breaker: &CircuitBreaker,
    started: &Started,
    limit: Duration,
    latency: Duration,
    answer: Result<u32, &'static str>,
) -> (Answer, Duration) {
    let start = Instant::now();
    let result = attempt(breaker, limit, || async move {
        started.add();
        tokio::time::sleep(latency).await;
        answer
    })
    .await;
    (result, start.elapsed())
}

/// Fails unless `seen` is a timeout reported exactly `limit` after the attempt started.
fn expect_timed_out(seen: &(Answer, Duration), limit: Duration, which: &str) {
    let (result, took) = seen;
    assert!(
        matches!(result, Err(BreakerError::Failed(AttemptError::TimedOut))),
        "{which} called a dependency that answers only after an hour, with a limit of {}; it \
         should fail with BreakerError::Failed(AttemptError::TimedOut) after {}, but returned \
         {result:?} after {}",
        show(limit),
        show(limit),
        show(*took)
    );
    assert_eq!(
        *took,
        limit,
        "{which} timed out after {}; with a limit of {} it should end exactly then",
        show(*took),
        show(limit)
    );
}

#[tokio::test(start_paused = true)]
async fn a_hanging_dependency_opens_the_breaker() {
    let limit = 2 * SEC;
    let config = config(50, 4, Window::Count(4));
    let breaker = breaker(config);
    let started = Started::default();
    for number in 1..=4 {
        let seen = timed_attempt(&breaker, &started, limit, HANG, Ok(7)).await;
        expect_timed_out(&seen, limit, &format!("attempt {number}"));
    }
    let after = state(&breaker);
    assert_eq!(
        after,
        State::Open,
        "with {}, four attempts in a row hung and timed out after {} each, so the breaker should \
         have recorded four failures and opened; it is {after:?}{}",
        describe(&config),
        show(limit),
        if after == State::Closed {
            ", as if it had recorded none of them. The timeout belongs inside the breaker, \
             `breaker.call(|| timeout(limit, op))`: a timeout around `breaker.call` drops the \
             breaker's call when the time is up, and a dropped call records nothing (section \
             23.8)"
        } else {
            ""
        }
    );
    let (result, took) = timed_attempt(&breaker, &started, limit, HANG, Ok(7)).await;
    assert!(
        matches!(result, Err(BreakerError::Rejected)) && took.is_zero() && started.get() == 4,
        "the breaker opened on four timed-out attempts; the fifth should be refused at once \
         without calling the dependency, but it returned {result:?} after {} and the dependency \
         was called {} time(s) in all (4 expected)",
        show(took),
        started.get()
    );
}

#[tokio::test(start_paused = true)]
async fn a_hanging_probe_reopens_the_breaker() {
    let limit = 2 * SEC;
    let config = config(50, 4, Window::Count(4));
    let breaker = opened(config).await;
    tokio::time::advance(config.break_duration).await;
    let started = Started::default();
    let seen = timed_attempt(&breaker, &started, limit, HANG, Ok(7)).await;
    expect_timed_out(&seen, limit, "the half-open breaker's one probe");
    let after = state(&breaker);
    assert_eq!(
        after,
        State::Open,
        "the half-open breaker (one probe allowed) let a probe through, and it hung until its \
         limit of {}; a probe that times out is a failed probe, so the breaker should be open \
         for a new break, but it is {after:?}{}",
        show(limit),
        if after == State::HalfOpen {
            ". That is what a timeout around `breaker.call` does: the probe is dropped instead \
             of failing, gives its place back, and the next caller probes the hanging \
             dependency again; put the timeout inside, `breaker.call(|| timeout(limit, op))` \
             (section 23.8)"
        } else {
            ""
        }
    );
    tokio::time::advance(config.break_duration - MS).await;
    let (result, _) = timed_attempt(&breaker, &started, limit, HANG, Ok(7)).await;
    assert!(
        matches!(result, Err(BreakerError::Rejected)) && started.get() == 1,
        "the probe timed out and reopened the breaker for a new break of {}; an attempt {} \
         later should be refused without calling, but it returned {result:?} and the dependency \
         was called {} time(s) since the break (1 expected)",
        show(config.break_duration),
        show(config.break_duration - MS),
        started.get()
    );
}

#[tokio::test(start_paused = true)]
async fn answers_in_time_come_back_as_they_are() {
    let limit = 2 * SEC;
    let config = config(50, 4, Window::Count(4));
    let breaker = breaker(config);
    let started = Started::default();
    let (result, took) = timed_attempt(&breaker, &started, limit, limit - MS, Ok(7)).await;
    assert_eq!(
        (&result, took),
        (&Ok(7), limit - MS),
        "an operation that answers Ok(7) after {}, 1 ms inside the limit of {}, should come \
         back as Ok(7) at once; the attempt returned {result:?} after {}",
        show(limit - MS),
        show(limit),
        show(took)
    );
    let (result, took) = timed_attempt(&breaker, &started, limit, SEC, Err("boom")).await;
    assert_eq!(
        (&result, took),
        (
            &Err(BreakerError::Failed(AttemptError::Failed("boom"))),
            SEC
        ),
        "an operation that fails with \"boom\" after 1 s, inside the limit of {}, should come \
         back as Failed(AttemptError::Failed(\"boom\")) after 1 s; the attempt returned \
         {result:?} after {}",
        show(limit),
        show(took)
    );
    let open = opened(config).await;
    let (result, took) = timed_attempt(&open, &started, limit, SEC, Ok(7)).await;
    assert!(
        matches!(result, Err(BreakerError::Rejected)) && took.is_zero() && started.get() == 2,
        "an attempt through an open breaker should be refused with BreakerError::Rejected at \
         once, without calling the operation; it returned {result:?} after {}, and the \
         operation was {}called",
        show(took),
        if started.get() == 2 { "not " } else { "" }
    );
}
