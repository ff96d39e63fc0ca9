//! Shared by chapter 24's checks: policies, a budget that records what it is asked, and a run of
//! the learner's `hedged` against a scripted backend.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use exercise::stubs::{Backend, Ending, Received};
use exercise::{Budget, Code, HedgeError, HedgingPolicy, hedged};
use tokio::time::Instant;

pub const MS: Duration = Duration::from_millis(1);
pub const KEY: &str = "order-17:charge";

pub fn policy(max_attempts: u32, hedging_delay: Duration, non_fatal: &[Code]) -> HedgingPolicy {
    HedgingPolicy {
        max_attempts,
        hedging_delay,
        non_fatal: non_fatal.to_vec(),
    }
}

/// The usual non-fatal codes.
pub const NON_FATAL: &[Code] = &[Code::Unavailable, Code::Internal, Code::Aborted];

/// A budget that answers `can_retry` from a script (then `otherwise`), and counts everything.
#[derive(Debug)]
pub struct Recorder {
    answers: Mutex<VecDeque<bool>>,
    otherwise: bool,
    pub asked: AtomicU32,
    /// When each question came, on tokio's clock.
    pub asked_at: Mutex<Vec<Instant>>,
    pub successes: AtomicU32,
    pub failures: AtomicU32,
}

impl Recorder {
    pub fn allowing() -> Self {
        Self::answering(&[], true)
    }

    pub fn answering(answers: &[bool], otherwise: bool) -> Self {
        Self {
            answers: Mutex::new(answers.iter().copied().collect()),
            otherwise,
            asked: AtomicU32::new(0),
            asked_at: Mutex::default(),
            successes: AtomicU32::new(0),
            failures: AtomicU32::new(0),
        }
    }

    /// When each question came, from `start`.
    pub fn asked_since(&self, start: Instant) -> Vec<Duration> {
        let asked_at = self.asked_at.lock().expect("lock");
        asked_at.iter().map(|at| *at - start).collect()
    }

    pub fn counts(&self) -> (u32, u32, u32) {
        (
            self.asked.load(Ordering::SeqCst),
            self.successes.load(Ordering::SeqCst),
            self.failures.load(Ordering::SeqCst),
        )
    }
}

impl Budget for Recorder {
    fn can_retry(&self) -> bool {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.asked_at.lock().expect("lock").push(Instant::now());
        let next = self.answers.lock().expect("lock").pop_front();
        next.unwrap_or(self.otherwise)
    }
    fn on_success(&self) {
        self.successes.fetch_add(1, Ordering::SeqCst);
    }
    fn on_failure(&self) {
        self.failures.fetch_add(1, Ordering::SeqCst);
    }
}

/// What one hedged call did.
#[derive(Debug)]
pub struct Run {
    pub result: Result<u32, HedgeError>,
    /// How long the call took, on tokio's clock.
    pub took: Duration,
    /// Every request the backend received, with its send time relative to the call's start.
    pub received: Vec<Received>,
    pub start: Instant,
}

impl Run {
    /// Send times of the requests, from the call's start.
    pub fn sent_at(&self) -> Vec<Duration> {
        self.received.iter().map(|r| r.at - self.start).collect()
    }

    pub fn numbers(&self) -> Vec<u32> {
        self.received.iter().map(|r| r.attempt.number).collect()
    }

    pub fn endings(&self) -> Vec<Ending> {
        self.received.iter().map(|r| r.ending).collect()
    }
}

/// Runs `hedged` against a backend that answers request `n` with `script[n]`, then lets an hour
/// pass so that any request left running would finish, and reads the backend's record.
pub async fn run(
    policy: &HedgingPolicy,
    budget: &Recorder,
    script: Vec<(Duration, Result<u32, Code>)>,
) -> Run {
    let backend = Backend::scripted(script);
    let start = Instant::now();
    let sender = backend.clone();
    let result = hedged(policy, KEY, budget, move |attempt| sender.send(attempt)).await;
    let took = start.elapsed();
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    Run {
        result,
        took,
        received: backend.received(),
        start,
    }
}

/// Durations as the learner reads them: `[0 ms, 100 ms]`.
pub fn ms(durations: &[Duration]) -> String {
    let parts: Vec<String> = durations
        .iter()
        .map(|d| format!("{} ms", d.as_millis()))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// A reply that succeeds with `value` after `latency_ms`.
pub fn ok(latency_ms: u64, value: u32) -> (Duration, Result<u32, Code>) {
    (Duration::from_millis(latency_ms), Ok(value))
}

/// A reply that fails with `code` after `latency_ms`.
pub fn fail(latency_ms: u64, code: Code) -> (Duration, Result<u32, Code>) {
    (Duration::from_millis(latency_ms), Err(code))
}
