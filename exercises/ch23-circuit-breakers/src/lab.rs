//! Given: the outage lab behind figure 23.1 and the "predict, then run" program.
//!
//! A client sends a steady stream of requests. Each request may make a few attempts, one right
//! after the other; with a breaker, every attempt goes through it, and a refusal ends the request
//! at once (a refused call is never retried). The dependency fails every call during the outage.
//! Everything runs on tokio's paused clock, so a minute of traffic takes milliseconds.

use std::ops::Range;
use std::time::Duration;

use crate::stubs::Dependency;
use crate::{BreakerConfig, BreakerError, CircuitBreaker};

/// The lab's settings.
#[derive(Debug, Clone)]
pub struct Lab {
    /// New requests per second, evenly spaced.
    pub requests_per_second: u32,
    /// How long the lab runs, in seconds.
    pub seconds: u32,
    /// The seconds during which the dependency fails every call.
    pub outage: Range<u32>,
    /// Calls per request at most: the first and its retries.
    pub attempts: u32,
}

impl Default for Lab {
    fn default() -> Self {
        Self {
            requests_per_second: 100,
            seconds: 60,
            outage: 10..40,
            attempts: 3,
        }
    }
}

/// What happened during one second of the lab.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Second {
    /// Calls that reached the dependency.
    pub calls: u32,
    /// Attempts the breaker refused without calling.
    pub refused: u32,
    /// Requests that got an answer.
    pub answered: u32,
}

/// Runs the lab, with a breaker built from `breaker` or without one, on a paused clock.
pub fn simulate(lab: &Lab, breaker: Option<BreakerConfig>) -> Vec<Second> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime always builds");
    runtime.block_on(run(lab, breaker.map(CircuitBreaker::new).as_ref()))
}

async fn run(lab: &Lab, breaker: Option<&CircuitBreaker>) -> Vec<Second> {
    let dependency = Dependency::healthy();
    let gap = Duration::from_secs(1) / lab.requests_per_second;
    let mut seconds = vec![Second::default(); lab.seconds as usize];
    for (number, second) in (0..).zip(seconds.iter_mut()) {
        dependency.set_down(lab.outage.contains(&number));
        for _ in 0..lab.requests_per_second {
            let calls_before = dependency.calls();
            let (answered, refused) = request(&dependency, breaker, lab.attempts).await;
            second.calls += dependency.calls() - calls_before;
            second.refused += refused;
            second.answered += u32::from(answered);
            tokio::time::advance(gap).await;
        }
    }
    seconds
}

// ANCHOR: request
/// One request: up to `attempts` calls. Returns whether it was answered, and how many of its
/// attempts the breaker refused.
async fn request(
    dependency: &Dependency,
    breaker: Option<&CircuitBreaker>,
    attempts: u32,
) -> (bool, u32) {
    for _ in 0..attempts {
        let outcome = match breaker {
            Some(breaker) => breaker.call(|| dependency.handle()).await,
            None => dependency.handle().await.map_err(BreakerError::Failed),
        };
        match outcome {
            Ok(_) => return (true, 0),
            // The breaker said the dependency is down: retrying now would only be refused again.
            Err(BreakerError::Rejected) => return (false, 1),
            Err(BreakerError::Failed(_)) => continue,
        }
    }
    (false, 0)
}
// ANCHOR_END: request
