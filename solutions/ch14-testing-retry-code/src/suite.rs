//! The reference suite: the tests a careful engineer writes for the retry loop in
//! [`crate::retry`]. Every test runs on tokio's paused clock, draws its randomness from a seeded
//! generator and asserts something precise; together they fail on each of the chapter's hidden
//! mutants. Sections 14.3 to 14.7 of the book show its parts.

// ANCHOR: setup
use std::cell::RefCell;
use std::future::ready;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mockall::Sequence;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::time::Instant;

use crate::retry::PaymentError::{Declined, TimedOut, Unavailable};
use crate::retry::{
    MockPaymentService, PaymentError, Receipt, RetryPolicy, backoff_ceiling, full_jitter, pay,
    retry_with_backoff,
};

const MS: Duration = Duration::from_millis(1);

/// Four attempts; the three sleeps between them are drawn from [0, 100 ms], [0, 200 ms] and
/// [0, 400 ms].
const POLICY: RetryPolicy = RetryPolicy {
    max_attempts: 4,
    base: Duration::from_millis(100),
    cap: Duration::from_secs(1),
};
// ANCHOR_END: setup

// ANCHOR: harness
/// What one run of the loop showed from the outside, on tokio's clock.
#[derive(Debug)]
struct Run {
    /// When each call started, counted from the start of the run.
    calls: Vec<Duration>,
    /// What each call answered.
    answers: Vec<Result<u32, PaymentError>>,
    /// What the hook was told, in order: the attempt that failed and the delay announced.
    events: Vec<(u32, Duration)>,
    /// When the hook was told each time, counted from the start of the run.
    announced_at: Vec<Duration>,
    /// What the loop returned.
    result: Result<u32, PaymentError>,
    /// How long the whole run took.
    elapsed: Duration,
}

impl Run {
    /// The delays the hook announced.
    fn delays(&self) -> Vec<Duration> {
        self.events.iter().map(|&(_, delay)| delay).collect()
    }
}

/// Runs the loop under `policy` with a generator seeded with `seed`, against a fake operation
/// whose call number `n` (counted from 1) answers `answer(n)` at once.
async fn run(
    policy: &RetryPolicy,
    seed: u64,
    answer: impl Fn(u32) -> Result<u32, PaymentError>,
) -> Run {
    let start = Instant::now();
    let calls = RefCell::new(Vec::new());
    let answers = RefCell::new(Vec::new());
    let events = RefCell::new(Vec::new());
    let announced_at = RefCell::new(Vec::new());
    let result = retry_with_backoff(
        || {
            calls.borrow_mut().push(start.elapsed());
            let answered = answer(calls.borrow().len() as u32);
            answers.borrow_mut().push(answered.clone());
            ready(answered)
        },
        policy,
        PaymentError::is_transient,
        &mut StdRng::seed_from_u64(seed),
        |event| {
            events.borrow_mut().push((event.attempt, event.delay));
            announced_at.borrow_mut().push(start.elapsed());
        },
    )
    .await;
    Run {
        calls: calls.into_inner(),
        answers: answers.into_inner(),
        events: events.into_inner(),
        announced_at: announced_at.into_inner(),
        result,
        elapsed: start.elapsed(),
    }
}
// ANCHOR_END: harness

// ---------------------------------------------------------------------------------------------
// Virtual time (book section 14.3)
// ---------------------------------------------------------------------------------------------

// ANCHOR: virtual_time
#[tokio::test(start_paused = true)]
async fn success_at_once_makes_one_call_and_takes_no_time() {
    let run = run(&POLICY, 1, Ok).await;
    assert_eq!(run.result, Ok(1));
    assert_eq!(run.calls, [Duration::ZERO]);
    assert!(run.events.is_empty(), "no retry, so no announcement");
    assert_eq!(run.elapsed, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn each_retry_waits_exactly_the_announced_delay() {
    let run = run(&POLICY, 2, |n| if n < 3 { Err(Unavailable) } else { Ok(n) }).await;
    assert_eq!(run.result, Ok(3));
    let delays = run.delays();
    assert!(
        delays.iter().all(|delay| !delay.is_zero()),
        "this seed must draw non-zero delays, or the test proves nothing: {delays:?}"
    );
    // The calls start at 0, d1 and d1 + d2 of virtual time, exactly.
    assert_eq!(
        run.calls,
        [Duration::ZERO, delays[0], delays[0] + delays[1]]
    );
    assert_eq!(run.elapsed, delays[0] + delays[1]);
}

#[tokio::test(start_paused = true)]
async fn no_sleep_after_the_last_attempt() {
    let run = run(&POLICY, 3, |_| Err(Unavailable)).await;
    assert_eq!(run.result, Err(Unavailable));
    assert_eq!(run.calls.len(), 4);
    assert_eq!(
        run.events.len(),
        3,
        "one announcement per retry, none when giving up"
    );
    // The run ends the moment the last call fails.
    assert_eq!(run.elapsed, run.calls[3]);
    assert_eq!(run.elapsed, run.delays().iter().sum());
}

#[tokio::test(start_paused = true)]
async fn the_hook_hears_of_each_retry_before_its_sleep() {
    let run = run(&POLICY, 2, |_| Err(Unavailable)).await;
    assert!(run.delays().iter().all(|delay| !delay.is_zero()));
    // Each announcement comes the moment its attempt failed, before any time passes.
    assert_eq!(run.announced_at, run.calls[..3]);
}
// ANCHOR_END: virtual_time

// ANCHOR: advance
/// Steps the clock by hand: the second call must not come a moment before its delay is over.
#[tokio::test(start_paused = true)]
async fn a_retry_does_not_start_before_its_delay() {
    let start = Instant::now();
    let calls = Arc::new(AtomicU32::new(0));
    let delays = Arc::new(Mutex::new(Vec::new()));
    let task = tokio::spawn({
        let (calls, delays) = (Arc::clone(&calls), Arc::clone(&delays));
        async move {
            let policy = RetryPolicy {
                max_attempts: 2,
                ..POLICY
            };
            retry_with_backoff(
                || {
                    calls.fetch_add(1, Ordering::SeqCst);
                    ready(Err::<(), _>(Unavailable))
                },
                &policy,
                PaymentError::is_transient,
                &mut StdRng::seed_from_u64(4),
                |event| delays.lock().unwrap().push(event.delay),
            )
            .await
        }
    });
    // Let the task make its first call and go to sleep. The clock stays where it is: the
    // runtime auto-advances only when no task can run, and this one is still running.
    tokio::task::yield_now().await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let delay = delays.lock().unwrap()[0];
    assert!(
        delay >= 2 * MS,
        "this seed must draw a delay of 2 ms or more"
    );

    // One millisecond (one tick of tokio's timer) before the delay is over: no retry yet.
    tokio::time::advance(delay - MS).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "retried too early");

    // Now the retry comes, at exactly `delay`, and it is the last attempt.
    assert_eq!(task.await.unwrap(), Err(Unavailable));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(start.elapsed(), delay);
}
// ANCHOR_END: advance

// ---------------------------------------------------------------------------------------------
// Seeded randomness (book section 14.4)
// ---------------------------------------------------------------------------------------------

// ANCHOR: seeds
#[tokio::test(start_paused = true)]
async fn a_seed_replays_the_same_delays() {
    let first = run(&POLICY, 7, |_| Err(Unavailable)).await;
    let again = run(&POLICY, 7, |_| Err(Unavailable)).await;
    assert_eq!(first.events, again.events);
    let other = run(&POLICY, 8, |_| Err(Unavailable)).await;
    assert_ne!(first.delays(), other.delays(), "two seeds, two sequences");
}

#[tokio::test(start_paused = true)]
async fn delays_spread_over_their_whole_range() {
    let mut by_retry = vec![Vec::new(); 3];
    for seed in 0..200 {
        for (retry, delay) in run(&POLICY, seed, |_| Err(Unavailable))
            .await
            .delays()
            .into_iter()
            .enumerate()
        {
            by_retry[retry].push(delay);
        }
    }
    for (retry, delays) in by_retry.iter().enumerate() {
        let ceiling = backoff_ceiling(retry as u32, &POLICY);
        let (lowest, highest) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
        // Uniform draws from [0, ceiling]: 200 of them all above 10 % of the ceiling would
        // happen with probability 0.9^200, about 7 in ten billion. The seeds are fixed anyway.
        assert!(*lowest < ceiling / 10, "retry {retry}: lowest {lowest:?}");
        assert!(
            *highest > ceiling * 9 / 10,
            "retry {retry}: highest {highest:?}"
        );
        assert!(
            *highest <= ceiling,
            "retry {retry}: {highest:?} > {ceiling:?}"
        );
    }
}
// ANCHOR_END: seeds

// ---------------------------------------------------------------------------------------------
// Mocks with expectations (book section 14.5)
// ---------------------------------------------------------------------------------------------

// ANCHOR: mock_key
/// What the fake service hands back when a charge goes through.
fn receipt() -> Receipt {
    Receipt {
        charge_id: "ch_1".to_owned(),
    }
}

#[tokio::test(start_paused = true)]
async fn every_attempt_sends_the_same_idempotency_key() {
    let mut service = MockPaymentService::new();
    let mut order = Sequence::new();
    for answer in [Err(Unavailable), Err(TimedOut), Ok(receipt())] {
        service
            .expect_charge()
            .withf(|request| {
                request.idempotency_key == "pay-order-42" && request.amount_cents == 1_999
            })
            .times(1)
            .in_sequence(&mut order)
            .returning(move |_| Box::pin(ready(answer.clone())));
    }
    let paid = pay(&service, 42, 1_999, &POLICY, &mut StdRng::seed_from_u64(5)).await;
    assert_eq!(paid, Ok(receipt()));
}
// ANCHOR_END: mock_key

// ANCHOR: mock_counts
#[tokio::test(start_paused = true)]
async fn a_declined_card_is_charged_once() {
    let mut service = MockPaymentService::new();
    service
        .expect_charge()
        .times(1)
        .returning(|_| Box::pin(ready(Err(Declined))));
    let start = Instant::now();
    let paid = pay(&service, 7, 500, &POLICY, &mut StdRng::seed_from_u64(6)).await;
    assert_eq!(paid, Err(Declined));
    assert_eq!(start.elapsed(), Duration::ZERO, "no sleep before giving up");
}

#[tokio::test(start_paused = true)]
async fn gives_up_after_max_attempts_with_the_last_error() {
    let mut service = MockPaymentService::new();
    let mut order = Sequence::new();
    service
        .expect_charge()
        .times(3)
        .in_sequence(&mut order)
        .returning(|_| Box::pin(ready(Err(Unavailable))));
    service
        .expect_charge()
        .times(1)
        .in_sequence(&mut order)
        .returning(|_| Box::pin(ready(Err(TimedOut))));
    let paid = pay(&service, 7, 500, &POLICY, &mut StdRng::seed_from_u64(6)).await;
    assert_eq!(paid, Err(TimedOut), "the last error, not the first");
}

#[tokio::test(start_paused = true)]
async fn zero_max_attempts_means_one_call() {
    let policy = RetryPolicy {
        max_attempts: 0,
        ..POLICY
    };
    let run = run(&policy, 1, |n| if n < 3 { Err(Unavailable) } else { Ok(n) }).await;
    assert_eq!(run.result, Err(Unavailable));
    assert_eq!(run.calls.len(), 1);
}
// ANCHOR_END: mock_counts

// ---------------------------------------------------------------------------------------------
// Properties (book section 14.6)
// ---------------------------------------------------------------------------------------------

// ANCHOR: strategies
/// The same 128 cases on every run (a fixed seed), and no regression files written beside the
/// sources when a case fails. 128 cases of edge-heavy strategies find these bugs and keep the
/// whole suite well under a second.
fn config() -> ProptestConfig {
    ProptestConfig {
        rng_seed: RngSeed::Fixed(14),
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Durations from zero to an hour, in nanoseconds, with zero and sub-millisecond values
/// coming up often: edges are where arithmetic goes wrong.
fn any_duration() -> impl Strategy<Value = Duration> {
    prop_oneof![Just(0u64), 0u64..1_000_000, 0u64..=3_600_000_000_000]
        .prop_map(Duration::from_nanos)
}

/// Retry numbers: small ones, where the ceiling still grows, and any `u32` at all.
fn any_retry() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..64, any::<u32>()]
}

fn any_policy() -> impl Strategy<Value = RetryPolicy> {
    (1u32..=10, any_duration(), any_duration()).prop_map(|(max_attempts, base, cap)| RetryPolicy {
        max_attempts,
        base,
        cap,
    })
}
// ANCHOR_END: strategies

/// A runtime whose clock starts paused, for async code inside a property.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

proptest! {
    #![proptest_config(config())]

    // ANCHOR: properties
    /// min(cap, base · 2^retry) without computing 2^retry: the ceiling starts at min(base, cap),
    /// doubles from each retry to the next until the cap, and is never above the cap.
    #[test]
    fn ceilings_double_up_to_the_cap(policy in any_policy(), retry in any_retry()) {
        let ceiling = backoff_ceiling(retry, &policy);
        prop_assert!(ceiling <= policy.cap, "{ceiling:?} above the cap");
        prop_assert_eq!(backoff_ceiling(0, &policy), policy.base.min(policy.cap));
        if let Some(next) = retry.checked_add(1) {
            prop_assert_eq!(backoff_ceiling(next, &policy), (ceiling * 2).min(policy.cap));
        }
    }

    #[test]
    fn jitter_stays_within_its_ceiling(
        policy in any_policy(),
        retry in any_retry(),
        seed in any::<u64>(),
    ) {
        let delay = full_jitter(retry, &policy, &mut StdRng::seed_from_u64(seed));
        prop_assert!(delay <= backoff_ceiling(retry, &policy));
    }
    // ANCHOR_END: properties

    // ANCHOR: loop_property
    /// Whatever the policy and the seed, against an operation that only ever fails transiently,
    /// the loop calls max_attempts times, announces each retry with a delay within its
    /// ceiling, sleeps exactly what it announced, and returns the last error.
    #[test]
    fn the_loop_keeps_its_promises(policy in any_policy(), seed in any::<u64>()) {
        let last = policy.max_attempts;
        let run = paused_runtime().block_on(run(&policy, seed, |n| {
            if n < last { Err(Unavailable) } else { Err(TimedOut) }
        }));
        prop_assert_eq!(run.result, Err(TimedOut));
        prop_assert_eq!(run.calls.len(), last as usize);
        prop_assert_eq!(run.events.len(), last as usize - 1);
        let mut expected_start = Duration::ZERO;
        for (index, &(attempt, delay)) in run.events.iter().enumerate() {
            prop_assert_eq!(attempt, index as u32 + 1);
            prop_assert!(delay <= backoff_ceiling(attempt - 1, &policy));
            expected_start += delay;
            prop_assert_eq!(run.calls[index + 1], expected_start);
        }
        prop_assert_eq!(run.elapsed, expected_start);
    }
    // ANCHOR_END: loop_property
}

/// A base of one nanosecond and a cap of 11.6 days: the ceiling is 2^retry ns up to retry 49,
/// far past the 32 bits a narrow shift would stop at.
#[test]
fn ceilings_keep_doubling_past_32_bits() {
    let policy = RetryPolicy {
        max_attempts: 1,
        base: Duration::from_nanos(1),
        cap: Duration::from_secs(1_000_000),
    };
    for retry in [31, 32, 33, 40, 49] {
        assert_eq!(
            backoff_ceiling(retry, &policy),
            Duration::from_nanos(1 << retry)
        );
    }
    assert_eq!(backoff_ceiling(50, &policy), policy.cap);
}

// ANCHOR: many_attempts
#[tokio::test(start_paused = true)]
async fn two_hundred_attempts_never_wait_longer_than_the_cap() {
    let policy = RetryPolicy {
        max_attempts: 200,
        base: Duration::from_secs(1),
        cap: Duration::from_secs(10),
    };
    let run = run(&policy, 9, |_| Err(Unavailable)).await;
    assert_eq!(run.calls.len(), 200);
    let longest = run.delays().into_iter().max().unwrap();
    assert!(longest <= policy.cap, "a sleep of {longest:?}");
    assert!(run.elapsed <= policy.cap * 199);
}
// ANCHOR_END: many_attempts

// ---------------------------------------------------------------------------------------------
// A snapshot of a timeline (book section 14.7)
// ---------------------------------------------------------------------------------------------

// ANCHOR: timeline
/// A run as a person reads it: one line per call and per announced retry, with the virtual time
/// at which each call started.
fn timeline(run: &Run) -> String {
    let mut lines = Vec::new();
    for (index, (start, answer)) in run.calls.iter().zip(&run.answers).enumerate() {
        lines.push(format!(
            "{:>5} ms  call {} -> {answer:?}",
            start.as_millis(),
            index + 1
        ));
        if let Some((attempt, delay)) = run.events.get(index) {
            lines.push(format!(
                "          attempt {attempt} failed: sleep {} ms",
                delay.as_millis()
            ));
        }
    }
    lines.push(format!(
        "{:>5} ms  returns {:?}",
        run.elapsed.as_millis(),
        run.result
    ));
    lines.join("\n")
}

#[tokio::test(start_paused = true)]
async fn timelines() {
    let recovers = run(&POLICY, 14, |n| match n {
        1 | 3 => Err(Unavailable),
        2 => Err(TimedOut),
        _ => Ok(n),
    })
    .await;
    let runs_out = run(&POLICY, 15, |n| {
        if n % 2 == 1 {
            Err(Unavailable)
        } else {
            Err(TimedOut)
        }
    })
    .await;
    let declined = run(&POLICY, 16, |n| {
        if n == 1 {
            Err(Unavailable)
        } else {
            Err(Declined)
        }
    })
    .await;
    let page = format!(
        "Recovers on the fourth call:\n{}\n\nRuns out of attempts:\n{}\n\n\
         A permanent error ends it:\n{}\n",
        timeline(&recovers),
        timeline(&runs_out),
        timeline(&declined),
    );
    insta::assert_snapshot!("timelines", page);
}
// ANCHOR_END: timeline
