//! The random draw: a request is rejected with exactly the computed probability.

use std::convert::Infallible;

use rand::rngs::StdRng;
use rand::{Rng, TryRng};

use super::fixture::{WINDOW, history, probability, throttle};
use super::support::seeded;

#[tokio::test(start_paused = true)]
async fn rejects_with_that_probability() {
    // Start at 1,000 requests and 400 accepts (K = 2): about 0.2. Each of the next 2,000
    // attempts adds a request and no accept, so the probability creeps up (to 0.73); the
    // expected number of rejections is the sum of the probabilities (1,120.3), and the spread is
    // 7 standard deviations of that sum (sigma 21.3, so ±149). A correct throttle that consumes
    // the generator differently from the solution (random_bool, an f32, a draw compared the
    // other way round) sees fresh draws: its count falls outside ±7 sigma with probability
    // 2.4e-12 per seed (the exact Poisson-binomial tail), about 1 in 8·10^10 for the 5 seeds.
    // The mutants stay far outside: inverted_draw rejects about 880 (11 sigma away),
    // threshold_not_random none (53 sigma away). The history is short so that a correct
    // throttle that scans its whole window on every call still finishes in time.
    for seed in 0..5 {
        let throttle = throttle(2.0, WINDOW);
        history(&throttle, 1_000, 400);
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
        // A correct throttle lands outside this with probability 2.4e-12 per seed (see above).
        let spread = 7.0 * f64::sqrt(variance);
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

#[tokio::test(start_paused = true)]
async fn one_draw_per_request() {
    // A generator that counts the numbers taken from it. Every request takes one uniform draw,
    // whatever the probability (0 included), so that a seeded run replays exactly.
    let healthy = throttle(2.0, WINDOW);
    let mut rng = Counting {
        inner: seeded(31),
        draws: 0,
    };
    let mut requests = 0;
    let mut check = |rng: &mut Counting, when: &str| {
        for _ in 0..50 {
            let before = rng.draws;
            let p = probability(&healthy);
            if healthy.admit(rng) {
                healthy.on_response(true);
            }
            requests += 1;
            let took = rng.draws - before;
            assert_eq!(
                took, 1,
                "request {requests} ({when}, probability {p:.6}) took {took} number(s) from the \
                 generator; admit decides with exactly one uniform draw per request, also when \
                 the probability is 0"
            );
        }
    };
    check(&mut rng, "with an empty window");
    history(&healthy, 1_000, 1_000);
    check(&mut rng, "after 1,000 accepted requests");
    let refusals = throttle(2.0, WINDOW);
    history(&refusals, 100, 0);
    for _ in 0..50 {
        let before = rng.draws;
        refusals.admit(&mut rng);
        let took = rng.draws - before;
        assert_eq!(
            took, 1,
            "after 100 refused requests, one request took {took} number(s) from the generator; \
             admit decides with exactly one uniform draw per request"
        );
    }
}

/// A generator that counts how many numbers are taken from it.
struct Counting {
    inner: StdRng,
    draws: u32,
}

impl TryRng for Counting {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.draws += 1;
        Ok(self.inner.next_u32())
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.draws += 1;
        Ok(self.inner.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.draws += 1;
        self.inner.fill_bytes(dst);
        Ok(())
    }
}
