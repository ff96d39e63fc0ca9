//! The random draw: a request is rejected with exactly the computed probability.

use super::fixture::{WINDOW, history, probability, throttle};
use crate::support::seeded;

#[tokio::test(start_paused = true)]
async fn rejects_with_that_probability() {
    // Start at 10,000 requests and 4,000 accepts (K = 2): about 0.2. Each of the next 2,000
    // attempts adds a request and no accept, so the probability creeps up; the expected number
    // of rejections is the sum of the probabilities, and the spread is at most 5 standard
    // deviations of that sum (about 19), wide enough for every seed of a correct throttle.
    for seed in 0..5 {
        let throttle = throttle(2.0, WINDOW);
        history(&throttle, 10_000, 4_000);
        let mut rng = seeded(1_000 + seed);
        let (mut rejected, mut mean, mut variance) = (0u32, 0.0, 0.0);
        for _ in 0..2_000 {
            let p = probability(&throttle);
            mean += p;
            variance += p * (1.0 - p);
            if !throttle.admit(&mut rng) {
                rejected += 1;
            }
        }
        let spread = 5.0 * f64::sqrt(variance);
        assert!(
            (f64::from(rejected) - mean).abs() <= spread,
            "starting from a probability of about 0.2 and rising with each attempt, 2,000 \
             attempts should see about {mean:.0} rejections (±{spread:.0}); with seed {} yours \
             rejected {rejected}. Reject a request when a uniform draw from [0, 1) falls below \
             the probability",
            1_000 + seed
        );
    }
}
