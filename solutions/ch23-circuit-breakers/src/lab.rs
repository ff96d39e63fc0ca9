//! Given: the outage lab behind figure 23.1 and the "predict, then run" program, and the fleet
//! lab behind figure 23.2.
//!
//! A client sends a steady stream of requests. Each request may make a few attempts, one right
//! after the other; with a breaker, every attempt goes through it, and a refusal ends the request
//! at once (a refused call is never retried). The dependency fails every call during the outage.
//! Everything runs on tokio's paused clock, so a minute of traffic takes milliseconds.

use std::ops::Range;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::time::Instant;

use crate::stubs::Dependency;
use crate::{BreakerConfig, BreakerError, CircuitBreaker, State};

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

/// A paused current-thread runtime: a minute of traffic takes milliseconds.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime always builds")
}

/// Runs the lab, with a breaker built from `breaker` or without one, on a paused clock.
pub fn simulate(lab: &Lab, breaker: Option<BreakerConfig>) -> Vec<Second> {
    paused_runtime().block_on(run(lab, breaker.map(CircuitBreaker::new).as_ref()))
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

/// The fleet lab: many clients of one dependency, each with a breaker of its own, all opened by
/// the same outage in its first second.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// Clients, each with its own breaker.
    pub clients: u32,
    /// Calls each client makes per second, evenly spaced; every client calls at the same instants.
    pub calls_per_second: u32,
    /// How long the lab runs, in seconds.
    pub seconds: u32,
    /// The dependency fails every call from second 0 until this second.
    pub outage_end: u32,
}

impl Default for Fleet {
    fn default() -> Self {
        Self {
            clients: 50,
            calls_per_second: 10,
            seconds: 90,
            outage_end: 60,
        }
    }
}

/// A call that a half-open breaker let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The client whose breaker let it through.
    pub client: u32,
    /// When it was made, from the start of the lab.
    pub at: Duration,
    /// Whether the dependency answered it.
    pub ok: bool,
}

/// What the fleet lab saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetRun {
    /// Every probe, in the order they were made.
    pub probes: Vec<Probe>,
    /// For each client, when its first call after the outage was answered (`None`: never).
    pub answered_again: Vec<Option<Duration>>,
}

/// Runs the fleet lab, every client's breaker built from `config`. Client `i` draws its breaks
/// from a generator seeded with `seed + i`, as breakers in separate processes would.
pub fn fleet(fleet: &Fleet, config: BreakerConfig, seed: u64) -> FleetRun {
    paused_runtime().block_on(run_fleet(fleet, config, seed))
}

async fn run_fleet(fleet: &Fleet, config: BreakerConfig, seed: u64) -> FleetRun {
    let dependency = Dependency::down();
    let breakers: Vec<CircuitBreaker> = (0..fleet.clients)
        .map(|client| {
            let rng = StdRng::seed_from_u64(seed + u64::from(client));
            CircuitBreaker::with_rng(config, rng)
        })
        .collect();
    let outage_end = Duration::from_secs(fleet.outage_end.into());
    let gap = Duration::from_secs(1) / fleet.calls_per_second;
    let mut run = FleetRun {
        probes: Vec::new(),
        answered_again: vec![None; breakers.len()],
    };
    let start = Instant::now();
    for _ in 0..fleet.seconds * fleet.calls_per_second {
        let now = start.elapsed();
        dependency.set_down(now < outage_end);
        for (client, breaker) in (0..).zip(&breakers) {
            let probing = breaker.state() == State::HalfOpen;
            let outcome = breaker.call(|| dependency.handle()).await;
            if probing && outcome != Err(BreakerError::Rejected) {
                let ok = outcome.is_ok();
                run.probes.push(Probe {
                    client,
                    at: now,
                    ok,
                });
            }
            if outcome.is_ok() {
                run.answered_again[client as usize].get_or_insert(now);
            }
        }
        tokio::time::advance(gap).await;
    }
    run
}
