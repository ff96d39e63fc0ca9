//! Given: the latency model behind the book's histogram (§3.5), to try the percentile rule on.
//!
//! Service latencies are skewed: most calls are quick and a few are very slow. A log-normal
//! distribution has that shape, so the book draws its seeded samples from one.

use std::time::Duration;

use rand::{Rng, RngExt};

/// One latency drawn from a log-normal distribution with the given median and spread.
///
/// `sigma` is the standard deviation of the latency's logarithm: 0.05 gives a tight service
/// (p99.9 only about 17 % above the median), 0.5 a long tail (p99.9 almost 5 times the median).
pub fn log_normal(median: Duration, sigma: f64, rng: &mut impl Rng) -> Duration {
    // Box–Muller: two uniform draws make one standard normal draw. `1 - u` lies in (0, 1],
    // so the logarithm stays finite.
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random();
    let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
    median.mul_f64((sigma * normal).exp())
}

/// The `fraction` percentile of `samples` (0.999 for p99.9) by the nearest-rank rule: the
/// smallest sample that at least `fraction` of all samples do not exceed.
///
/// Returns zero for an empty slice. `fraction` is clamped to `[0, 1]`.
pub fn percentile(samples: &[Duration], fraction: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = (fraction.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

/// The share of `samples` strictly above `limit`: the rate of false timeouts that limit would
/// cause if every call took one of these latencies.
pub fn share_above(samples: &[Duration], limit: Duration) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let above = samples.iter().filter(|latency| **latency > limit).count();
    above as f64 / samples.len() as f64
}
