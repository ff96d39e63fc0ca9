//! Given: the tail-latency lab behind figure 24.1 and the "predict, then run" program.
//!
//! A backend answers most requests in about 10 ms, some in tens of milliseconds, and one in two
//! hundred after a hiccup of up to a second (a garbage collection, a queue behind a slow disk).
//! Each call goes through [`crate::hedged`] with at most one hedge (or as many as asked), on
//! tokio's paused clock, and the lab measures how long calls took and how many requests they
//! sent.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::time::Instant;

use crate::{HedgingPolicy, Unlimited, hedged};

/// One latency of the lab's backend: 90 % in [5, 15) ms, 9.5 % in [15, 60) ms, 0.5 % in
/// [300, 1200) ms (a hiccup), each range uniform. With hiccups rarer than 1 %, the 99th
/// percentile sits inside the [15, 60) band rather than on its edge.
pub fn latency(rng: &mut StdRng) -> Duration {
    let band: f64 = rng.random();
    let (low, high) = if band < 0.90 {
        (5.0, 15.0)
    } else if band < 0.995 {
        (15.0, 60.0)
    } else {
        (300.0, 1200.0)
    };
    Duration::from_secs_f64(rng.random_range(low..high) / 1000.0)
}

/// What one setting of the lab measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub p50: Duration,
    pub p95: Duration,
    pub p99: Duration,
    pub p999: Duration,
    /// Requests sent beyond one per call, as a fraction of the calls.
    pub extra_load: f64,
    /// The calls that took 300 ms or more, as a fraction of the calls. Without a hedge, every
    /// such call met a hiccup, so this is the sample's hiccup rate.
    pub slow_share: f64,
}

/// How long a call must take to count in [`Summary::slow_share`]: the shortest hiccup.
pub const HICCUP: Duration = Duration::from_millis(300);

/// Runs `calls` calls for each seed in `seeds`, one after the other, with one hedge after
/// `delay` (`None`: no hedge at all), and summarises them all together.
pub fn simulate(delay: Option<Duration>, calls: u32, seeds: std::ops::Range<u64>) -> Summary {
    simulate_hedges(delay, 1, calls, seeds)
}

/// Like [`simulate`], with up to `hedges` hedges, `delay` apart, after the first request.
pub fn simulate_hedges(
    delay: Option<Duration>,
    hedges: u32,
    calls: u32,
    seeds: std::ops::Range<u64>,
) -> Summary {
    let policy = HedgingPolicy {
        max_attempts: if delay.is_some() { 1 + hedges } else { 1 },
        hedging_delay: delay.unwrap_or_default(),
        non_fatal: Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime always builds");
    let mut took = Vec::new();
    let mut sent = 0u64;
    for seed in seeds {
        let (times, requests) = runtime.block_on(run(&policy, calls, seed));
        took.extend(times);
        sent += requests;
    }
    took.sort();
    let quantile =
        |q: f64| took[((took.len() as f64 * q).ceil() as usize).clamp(1, took.len()) - 1];
    Summary {
        p50: quantile(0.50),
        p95: quantile(0.95),
        p99: quantile(0.99),
        p999: quantile(0.999),
        extra_load: sent as f64 / took.len() as f64 - 1.0,
        slow_share: took.iter().filter(|&&t| t >= HICCUP).count() as f64 / took.len() as f64,
    }
}

async fn run(policy: &HedgingPolicy, calls: u32, seed: u64) -> (Vec<Duration>, u64) {
    let rng = Arc::new(Mutex::new(StdRng::seed_from_u64(seed)));
    let mut took = Vec::with_capacity(calls as usize);
    let mut sent = 0;
    for call in 0..calls {
        let start = Instant::now();
        let key = format!("lab-{seed}-{call}");
        let reply = hedged(policy, &key, &Unlimited, |_attempt| {
            sent += 1;
            let wait = latency(&mut rng.lock().unwrap_or_else(PoisonError::into_inner));
            async move {
                tokio::time::sleep(wait).await;
                Ok::<(), crate::Code>(())
            }
        })
        .await;
        assert!(reply.is_ok(), "the lab's backend never fails");
        took.push(start.elapsed());
    }
    (took, sent)
}
