//! The open breaker: refuses at once without calling, for exactly the break duration.

use std::time::Duration;

use exercise::{State, Window};
use tokio::time::Instant;

use super::fixture::{NS, SEC, Seen, Started, breaker, call, config, opened, state};
use super::support::show;

#[tokio::test(start_paused = true)]
async fn refuses_without_calling() {
    let breaker = opened(config(50, 4, Window::Count(4))).await;
    let started = Started::default();
    let before = Instant::now();
    for n in 1..=50 {
        let seen = call(&breaker, &started, true, SEC).await;
        assert_eq!(
            seen,
            Seen::Refused,
            "call {n} to the open breaker was let through ({seen:?}); an open breaker refuses \
             every call with BreakerError::Rejected"
        );
    }
    assert_eq!(
        started.get(),
        0,
        "an open breaker refused 50 calls but started the operation {} time(s); a refused call \
         must never reach the dependency",
        started.get()
    );
    let waited = before.elapsed();
    assert!(
        waited.is_zero(),
        "50 refused calls took {} of tokio's clock; an open breaker answers at once, without \
         waiting",
        show(waited)
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_callers_are_refused_too() {
    let breaker = opened(config(50, 4, Window::Count(4))).await;
    let started = Started::default();
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (breaker, started) = (breaker.clone(), started.clone());
        tasks.push(tokio::spawn(async move {
            call(&breaker, &started, true, SEC).await
        }));
    }
    for task in tasks {
        task.await.expect("a caller task panicked");
    }
    assert_eq!(
        started.get(),
        0,
        "20 tasks called the open breaker at once and {} operation(s) started; none may reach \
         the dependency while the breaker is open",
        started.get()
    );
}

#[tokio::test(start_paused = true)]
async fn break_ends_exactly_on_time() {
    // 2 days: beyond the caps a breaker might hide (5 minutes, an hour).
    for break_duration in [30 * SEC, Duration::from_millis(1_500), 2 * 86_400 * SEC] {
        let mut config = config(50, 4, Window::Count(4));
        config.break_duration = break_duration;
        let breaker = opened(config).await;
        let started = Started::default();

        tokio::time::advance(break_duration - NS).await;
        let early_state = state(&breaker);
        let early = call(&breaker, &started, true, Duration::ZERO).await;
        assert!(
            early_state == State::Open && early == Seen::Refused,
            "1 ns before the break of {} is over, the breaker should be Open and refuse a call; \
             it reported {early_state:?} and the call was {early:?}",
            show(break_duration)
        );

        tokio::time::advance(NS).await;
        let due_state = state(&breaker);
        assert_eq!(
            due_state,
            State::HalfOpen,
            "exactly {} after the breaker opened, state() should report HalfOpen (the break is \
             over at that instant, even before any call); it reported {due_state:?}",
            show(break_duration)
        );
        let probe = call(&breaker, &started, true, Duration::ZERO).await;
        assert_eq!(
            probe,
            Seen::Ran { ok: true },
            "exactly {} after the breaker opened, a call should go through as a probe; it was \
             {probe:?}",
            show(break_duration)
        );
    }
}
