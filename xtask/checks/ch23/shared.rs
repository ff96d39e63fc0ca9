//! One breaker shared by many tasks and threads.

use std::sync::Arc;
use std::time::Duration;

use exercise::{BreakerConfig, State, Window};
use rand::RngExt;
use tokio::time::Instant;

use super::fixture::{NS, Seen, Started, breaker, call, config, describe, state};
use crate::support::{seeded, show};

#[tokio::test(start_paused = true)]
async fn tasks_in_flight_together() {
    // 100 calls start at once and fail after seeded latencies. The 50th failure opens the
    // breaker; the 50 that finish later belong to the closed state and change nothing, so the
    // break ends exactly 30 s after the 50th failure.
    let config = config(100, 50, Window::Count(50));
    let breaker = breaker(config);
    let started = Started::default();
    let mut rng = seeded(23);
    let mut latencies: Vec<Duration> = (0..100)
        .map(|_| Duration::from_millis(rng.random_range(1..=10_000)))
        .collect();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for &latency in &latencies {
        let (breaker, started) = (breaker.clone(), started.clone());
        tasks.push(tokio::spawn(async move {
            call(&breaker, &started, false, latency).await
        }));
    }
    for task in tasks {
        task.await.expect("a caller task panicked");
    }
    assert_eq!(
        started.get(),
        100,
        "100 tasks called the closed breaker at once; all 100 should reach the dependency, but {} \
         did",
        started.get()
    );
    latencies.sort();
    let opened_at = start + latencies[49];
    let break_over = opened_at + config.break_duration;
    tokio::time::advance(break_over - NS - Instant::now()).await;
    let before = state(&breaker);
    tokio::time::advance(NS).await;
    let after = state(&breaker);
    assert_eq!(
        (before, after),
        (State::Open, State::HalfOpen),
        "with {}, 100 calls ran at once and failed one by one; the 50th failure (at {}) opens the \
         breaker, and the 50 failures that arrive later belong to the closed state, so the break \
         should end exactly 30 s later, at {}. Your breaker was {before:?} 1 ns before that and \
         {after:?} at it",
        describe(&config),
        show(latencies[49]),
        show(latencies[49] + config.break_duration)
    );
}

#[test]
fn threads_share_one_breaker() {
    // Eight threads, each with its own runtime, send instant failing calls through one breaker.
    // It must open after exactly 8,000 recorded failures: not one outcome may be lost.
    const THREADS: u32 = 8;
    const CALLS: u32 = 1_100;
    const MINIMUM: u32 = 8_000;
    let config = BreakerConfig {
        break_duration: Duration::from_secs(3_600),
        ..config(100, MINIMUM, Window::Count(MINIMUM))
    };
    let breaker = breaker(config);
    let started = Started::default();
    let refused: u32 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (breaker, started) = (Arc::clone(&breaker), started.clone());
                scope.spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_time()
                        .build()
                        .expect("a runtime per thread");
                    runtime.block_on(async {
                        let mut refused = 0;
                        for _ in 0..CALLS {
                            if call(&breaker, &started, false, Duration::ZERO).await
                                == Seen::Refused
                            {
                                refused += 1;
                            }
                        }
                        refused
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a caller thread panicked"))
            .sum()
    });
    let reached = started.get();
    let now = state(&breaker);
    assert!(
        now == State::Open && (MINIMUM..=MINIMUM + THREADS).contains(&reached),
        "{THREADS} threads sent {} failing calls through one breaker ({}); it should open after \
         8,000 recorded failures, letting through at most one call per thread more. It is \
         {now:?}, {reached} calls reached the dependency and {refused} were refused. An outcome \
         recorded under contention must never be lost",
        THREADS * CALLS,
        describe(&config)
    );
}
