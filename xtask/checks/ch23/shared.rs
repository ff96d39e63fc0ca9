//! One breaker shared by many tasks and threads.
//!
//! How likely a racy breaker is to slip through `threads_race_for_the_probes`, measured on the
//! 2-core machine these checks were written on while it ran other builds (load average about
//! 11): the solution passed 10 runs of 10; a breaker that checks for a free probe place under
//! the lock, lets go, and takes the place under a second lock with a `yield_now` between (the
//! mutant `probe_check_then_act`, standing for any work between the two steps) failed 10 of 10;
//! the same breaker with nothing between the two steps failed 0 of 10: a thread that lets go of
//! a `std::sync::Mutex` and takes it again at once nearly always gets it back first, and no
//! test with real threads can force the other interleaving. `half_open.exactly_n_probes_at_once`
//! covers the same rule for tasks on one thread, where an `.await` between the steps shows.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use exercise::{BreakerConfig, BreakerError, State, Window};
use rand::RngExt;
use tokio::time::Instant;

use super::fixture::{NS, Seen, Started, breaker, call, config, describe, state};
use super::support::{seeded, show};

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
    // It must open after exactly 2,000 recorded failures: not one outcome may be lost.
    const THREADS: u32 = 8;
    const CALLS: u32 = 300;
    const MINIMUM: u32 = 2_000;
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
         {MINIMUM} recorded failures, letting through at most one call per thread more. It is \
         {now:?}, {reached} calls reached the dependency and {refused} were refused. An outcome \
         recorded under contention must never be lost",
        THREADS * CALLS,
        describe(&config)
    );
}

#[test]
fn threads_race_for_the_probes() {
    // Eight threads, each with its own runtime, call a half-open breaker at the same moment,
    // round after round, with one probe allowed and then three. A probe's operation holds its
    // place until every thread has been let through or refused, so exactly `half_open_probes`
    // operations may start per round. How likely a racy breaker is to slip through is in the
    // notes at the top of this file.
    const THREADS: u32 = 8;
    const ROUNDS: u32 = 200;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime for the setup");
    for round in 1..=ROUNDS {
        let probes = if round % 2 == 0 { 3 } else { 1 };
        let config = BreakerConfig {
            break_duration: Duration::ZERO,
            half_open_probes: probes,
            ..config(100, 1, Window::Count(1))
        };
        // One failure opens the breaker; with a break of zero it is half-open at once.
        let breaker = breaker(config);
        runtime.block_on(call(&breaker, &Started::default(), false, Duration::ZERO));
        let started = Started::default();
        // Threads refused, or stopped by a panic of the graded code.
        let refused = AtomicU32::new(0);
        let release = AtomicBool::new(false);
        let gate = Barrier::new(THREADS as usize);
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                let (breaker, started) = (&breaker, started.clone());
                let (refused, release, gate) = (&refused, &release, &gate);
                scope.spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_time()
                        .build()
                        .expect("a runtime per thread");
                    // Counts the thread as done if the graded code panics, so the round ends.
                    let panicked = OnPanic(refused);
                    gate.wait();
                    let seen = runtime.block_on(breaker.call(|| async {
                        started.add();
                        while !release.load(Ordering::SeqCst) {
                            std::thread::yield_now();
                        }
                        Ok::<(), ()>(())
                    }));
                    if seen == Err(BreakerError::Rejected) {
                        refused.fetch_add(1, Ordering::SeqCst);
                    }
                    drop(panicked);
                });
            }
            while started.get() + refused.load(Ordering::SeqCst) < THREADS {
                std::thread::yield_now();
            }
            let let_through = started.get();
            release.store(true, Ordering::SeqCst);
            assert_eq!(
                let_through, probes,
                "round {round}: {THREADS} threads called one half-open breaker at the same \
                 moment (half_open_probes = {probes}) and {let_through} operations started; \
                 exactly {probes} probes may go through. Deciding and taking a probe's place must be \
                 one step under the lock, or two threads both see a free place and both take it"
            );
        });
        let now = state(&breaker);
        assert_eq!(
            now,
            State::Closed,
            "round {round}: all {probes} probes succeeded, so the breaker should close; it is \
             {now:?}"
        );
    }
}

/// Adds one to its counter when dropped during a panic.
struct OnPanic<'a>(&'a AtomicU32);

impl Drop for OnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}
