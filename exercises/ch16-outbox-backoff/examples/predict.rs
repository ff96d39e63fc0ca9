//! Predict, then run (book §16.8): 1,000 outbox rows fail at the same moment, because the broker
//! is down for 100 seconds (figure 16.1 shows three minutes). When does the relay try them again,
//! with and without jitter?
//!
//! Run it with `cargo run -p ch16_outbox_backoff --example predict` once `backoff_ceiling` and
//! `next_retry_at` pass their checks. Time is only numbers here: nothing sleeps.

use std::collections::BTreeMap;

use ch16_outbox_backoff::{BackoffConfig, Millis, backoff_ceiling, next_retry_at};
use rand::SeedableRng;
use rand::rngs::StdRng;

const ROWS: usize = 1_000;
/// Every publish fails before this moment (ms after the rows failed together), and succeeds after.
const OUTAGE: Millis = 100_000;

/// The moments (ms after the common failure) at which one row is tried, as an ideal relay would
/// try it: at once, then at every `next_retry_at`, until the broker is back or the attempts run
/// out. The last moment is the successful publish, if there was one.
fn play(cfg: &BackoffConfig, mut schedule: impl FnMut(Millis, u32) -> Millis) -> Vec<Millis> {
    let mut attempts = vec![0];
    let mut at = 0;
    while at < OUTAGE && (attempts.len() as u32) < cfg.max_attempts {
        at = schedule(at, attempts.len() as u32);
        attempts.push(at);
    }
    attempts
}

/// The most of `moments` that fall into one window of `window` ms.
fn busiest(moments: impl Iterator<Item = Millis>, window: Millis) -> usize {
    let mut counts = BTreeMap::new();
    for at in moments {
        *counts.entry(at / window).or_insert(0) += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

fn report(label: &str, rows: &[Vec<Millis>]) {
    let retries = || rows.iter().flat_map(|r| r.iter().skip(1).copied());
    let published: Vec<Millis> = rows
        .iter()
        .filter_map(|r| r.last().copied())
        .filter(|&at| at >= OUTAGE)
        .collect();
    let first = published.iter().min().copied().unwrap_or(0);
    let last = published.iter().max().copied().unwrap_or(0);
    println!(
        "{label:<12} busiest 1 ms: {:>5} retries | busiest 100 ms: {:>5} | attempts in all: {:>6} \
         | published: {} rows, from {:.1} s to {:.1} s",
        busiest(retries(), 1),
        busiest(retries(), 100),
        rows.iter().map(Vec::len).sum::<usize>(),
        published.len(),
        first as f64 / 1e3,
        last as f64 / 1e3,
    );
}

fn main() {
    let cfg = BackoffConfig {
        max_attempts: 20,
        ..BackoffConfig::default()
    };
    let plain: Vec<Vec<Millis>> = (0..ROWS)
        .map(|_| play(&cfg, |now, failures| now + backoff_ceiling(failures, &cfg)))
        .collect();
    let mut rng = StdRng::seed_from_u64(16);
    let jittered: Vec<Vec<Millis>> = (0..ROWS)
        .map(|_| {
            play(&cfg, |now, failures| {
                next_retry_at(now, failures, &cfg, &mut rng)
            })
        })
        .collect();
    println!(
        "{ROWS} rows fail together; the broker is back after {} s (base 1 s, cap 60 s)",
        OUTAGE / 1_000
    );
    report("no jitter", &plain);
    report("full jitter", &jittered);
}
