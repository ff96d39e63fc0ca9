//! Given: the lab behind the chapter's figures and its "predict, then run" program.
//!
//! A discrete-event simulation in virtual time, seeded, so every run is reproducible. A server
//! has 20 workers; each request holds one for 8 to 12 ms (uniform), so the server can serve
//! about 2,000 requests a second. From second 20 to second 40 half its workers are gone (a noisy
//! neighbour, a failed disk): about 1,000 a second. Clients send 1,500 requests a second
//! (Poisson arrivals) and give up on a request after 250 ms. In front of the workers sits a
//! gate that admits a request only while fewer than the limit are in flight (waiting for a
//! worker or being served); a request it refuses is answered at once and costs nothing. Four
//! gates: a static limit too high (500), a static limit too low (12), the learner's
//! [`AimdLimiter`] and the learner's [`GradientLimit`].

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::Range;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::{AimdConfig, AimdLimiter, GradientConfig, GradientLimit, Permit};

/// The seconds of the lab.
pub const SECONDS: u32 = 60;
/// The seconds during which the server has half its workers.
pub const DEGRADED: Range<u32> = 20..40;
/// The server's workers, and while degraded.
pub const WORKERS: usize = 20;
pub const DEGRADED_WORKERS: usize = 10;
/// Requests the clients send per second.
pub const OFFERED: f64 = 1_500.0;
/// How long a client waits for an answer, in microseconds: a later answer is wasted.
pub const CLIENT_TIMEOUT_US: u64 = 250_000;
/// The static limits of the lab.
pub const STATIC_HIGH: u32 = 500;
pub const STATIC_LOW: u32 = 12;

const MICROS: u64 = 1_000_000;

/// The gate in front of the workers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gate {
    /// A fixed limit.
    Static(u32),
    /// The learner's AIMD limiter; a request answered after the client's timeout is a drop.
    Aimd(AimdConfig),
    /// The learner's gradient limit; every answered request is an RTT sample.
    Gradient(GradientConfig),
}

impl Gate {
    /// The lab's four gates.
    pub fn all() -> [Gate; 4] {
        [
            Gate::Static(STATIC_HIGH),
            Gate::Static(STATIC_LOW),
            Gate::Aimd(AIMD),
            Gate::Gradient(GRADIENT),
        ]
    }
}

/// The AIMD limiter of the lab.
pub const AIMD: AimdConfig = AimdConfig {
    initial: 20,
    floor: 1,
    ceiling: 500,
    backoff: 0.5,
};

/// The gradient limit of the lab.
pub const GRADIENT: GradientConfig = GradientConfig {
    initial: 20.0,
    floor: 1.0,
    ceiling: 500.0,
    tolerance: 1.5,
    smoothing: 0.2,
    headroom: 2.0,
};

/// What happened in one second of the lab.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Second {
    /// Requests the clients sent.
    pub offered: u32,
    /// Requests the gate refused at once.
    pub rejected: u32,
    /// Requests the workers finished.
    pub served: u32,
    /// Requests finished within the client's timeout: the goodput.
    pub good: u32,
    /// The 99th percentile of the latency of the requests finished, in milliseconds.
    pub p99_ms: Option<f64>,
    /// The gate's limit at the end of the second.
    pub limit: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A worker finishes the request with this number.
    Done(usize),
    /// The number of workers changes.
    Capacity,
    /// A new request arrives.
    Arrival,
}

/// The limit and its in-flight count, for one gate.
enum Limiter<'a> {
    Fixed(u32, u32),
    Aimd(&'a AimdLimiter, Vec<Option<Permit<'a>>>),
    Gradient(GradientLimit, u32),
}

impl<'a> Limiter<'a> {
    fn admit(&mut self, request: usize) -> bool {
        match self {
            Limiter::Fixed(limit, in_flight) => take(in_flight, f64::from(*limit)),
            Limiter::Gradient(limit, in_flight) => take(in_flight, limit.limit().floor()),
            Limiter::Aimd(limiter, permits) => {
                permits.resize_with(request + 1, || None);
                permits[request] = limiter.try_acquire();
                permits[request].is_some()
            }
        }
    }

    fn finish(&mut self, request: usize, latency_us: u64) {
        match self {
            Limiter::Fixed(_, in_flight) => *in_flight -= 1,
            Limiter::Gradient(limit, in_flight) => {
                *in_flight -= 1;
                limit.on_sample(std::time::Duration::from_micros(latency_us));
            }
            Limiter::Aimd(_, permits) => {
                let permit = permits[request]
                    .take()
                    .expect("a finished request had a permit");
                if latency_us > CLIENT_TIMEOUT_US {
                    permit.dropped();
                } else {
                    permit.success();
                }
            }
        }
    }

    fn limit(&self) -> f64 {
        match self {
            Limiter::Fixed(limit, _) => f64::from(*limit),
            Limiter::Gradient(limit, _) => limit.limit(),
            Limiter::Aimd(limiter, _) => f64::from(limiter.limit()),
        }
    }
}

fn take(in_flight: &mut u32, limit: f64) -> bool {
    if f64::from(*in_flight) < limit {
        *in_flight += 1;
        true
    } else {
        false
    }
}

fn workers_at(now: u64) -> usize {
    let second = (now / MICROS) as u32;
    if DEGRADED.contains(&second) {
        DEGRADED_WORKERS
    } else {
        WORKERS
    }
}

/// Runs the lab for one gate.
pub fn simulate(gate: Gate, seed: u64) -> Vec<Second> {
    match gate {
        Gate::Static(limit) => run(&mut Limiter::Fixed(limit, 0), seed),
        Gate::Aimd(config) => {
            let aimd = AimdLimiter::new(config);
            run(&mut Limiter::Aimd(&aimd, Vec::new()), seed)
        }
        Gate::Gradient(config) => run(&mut Limiter::Gradient(GradientLimit::new(config), 0), seed),
    }
}

fn run(limiter: &mut Limiter<'_>, seed: u64) -> Vec<Second> {
    let mut rng = StdRng::seed_from_u64(seed);
    let end = u64::from(SECONDS) * MICROS;
    let mut events = BinaryHeap::new();
    events.push(Reverse((0, Event::Arrival)));
    for second in [DEGRADED.start, DEGRADED.end] {
        events.push(Reverse((u64::from(second) * MICROS, Event::Capacity)));
    }
    // When each admitted request was admitted; the queue of those waiting for a worker.
    let mut admitted_at: Vec<u64> = Vec::new();
    let mut waiting: VecDeque<usize> = VecDeque::new();
    let mut busy = 0usize;
    let mut seconds = vec![Second::default(); SECONDS as usize];
    let mut latencies: Vec<Vec<u64>> = vec![Vec::new(); SECONDS as usize];
    while let Some(Reverse((now, event))) = events.pop() {
        if now >= end {
            break;
        }
        let second = (now / MICROS) as usize;
        match event {
            Event::Arrival => {
                let request = admitted_at.len();
                admitted_at.push(now);
                seconds[second].offered += 1;
                if limiter.admit(request) {
                    waiting.push_back(request);
                } else {
                    seconds[second].rejected += 1;
                }
                let gap = -(1.0 - rng.random::<f64>()).ln() / OFFERED;
                events.push(Reverse((
                    now + (gap * MICROS as f64) as u64,
                    Event::Arrival,
                )));
            }
            Event::Done(request) => {
                busy -= 1;
                let latency = now - admitted_at[request];
                seconds[second].served += 1;
                if latency <= CLIENT_TIMEOUT_US {
                    seconds[second].good += 1;
                }
                latencies[second].push(latency);
                limiter.finish(request, latency);
            }
            Event::Capacity => {}
        }
        while busy < workers_at(now) {
            let Some(request) = waiting.pop_front() else {
                break;
            };
            busy += 1;
            let service = rng.random_range(8_000..=12_000);
            events.push(Reverse((now + service, Event::Done(request))));
        }
        seconds[second].limit = limiter.limit();
    }
    for (second, mut latency) in seconds.iter_mut().zip(latencies) {
        latency.sort_unstable();
        second.p99_ms = (!latency.is_empty())
            .then(|| latency[(latency.len() * 99).div_ceil(100) - 1] as f64 / 1_000.0);
    }
    seconds
}
