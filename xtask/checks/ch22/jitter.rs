//! Checks that the sleeps between attempts are full-jitter draws.

use std::collections::BTreeSet;
use std::time::Duration;

use exercise::{OnExhausted, Saga, StepPolicy};

use super::fixture::{Act, MS, Recorder, SEC, TICK, policy, run};
use super::support::{gaps, show, show_all};

/// `min(cap, base · 2^retry)`.
fn ceiling(retry: u32, base: Duration, cap: Duration) -> Duration {
    base.saturating_mul(2u32.saturating_pow(retry)).min(cap)
}

#[tokio::test(start_paused = true)]
async fn full_jitter_between_attempts() {
    let (base, cap) = (100 * MS, SEC);
    let policy = StepPolicy {
        max_attempts: 6,
        base,
        cap,
        on_exhausted: OnExhausted::Stop,
        ..policy()
    };
    let retries = policy.max_attempts as usize - 1;
    let mut sleeps: Vec<Vec<Duration>> = vec![Vec::new(); retries];
    for seed in 0..120 {
        let step = Recorder::scripted("payment", [Act::Transient]);
        let saga = Saga::new(format!("order-{seed}")).step(step.clone(), policy.clone());
        run(&saga, seed).await;
        let gaps = gaps(&step.attempt_instants());
        for (retry, gap) in gaps.iter().copied().enumerate().take(retries) {
            let limit = ceiling(retry as u32, base, cap);
            assert!(
                gap <= limit + TICK,
                "the sleep before retry {} must be at most min(cap, base·2^{retry}) = {} (base \
                 100 ms, cap 1 s; the sleep after the first failure uses 2^0); yours slept {} \
                 (seed {seed}, sleeps {})",
                retry + 1,
                show(limit),
                show(gap),
                show_all(&gaps, 6),
            );
            sleeps[retry].push(gap);
        }
    }
    for (retry, observed) in sleeps.iter().enumerate() {
        let limit = ceiling(retry as u32, base, cap);
        let distinct: BTreeSet<Duration> = observed.iter().copied().collect();
        let low = observed.iter().copied().min().unwrap_or_default();
        let high = observed.iter().copied().max().unwrap_or_default();
        assert!(
            distinct.len() >= 20 && low <= limit / 5 && high >= limit * 4 / 5,
            "over 120 seeded runs, the sleep before retry {} must be drawn uniformly from [0, \
             {}] (full jitter): many different values, some near 0, some near the ceiling. \
             Yours took {} distinct value(s), from {} to {}: a deterministic 2^n backoff sends \
             every client back at the same instant",
            retry + 1,
            show(limit),
            distinct.len(),
            show(low),
            show(high),
        );
    }
}
