//! Given: the overload lab behind figure 25.1 and the "predict, then run" program.
//!
//! A backend serves 100 requests a second. Serving costs it one unit of capacity; refusing a
//! request as overloaded costs it a fifth of that, because reading, parsing and answering a
//! request is not free. Clients send 100 requests a second, then 300 a second for a minute, then
//! 100 again. A request that the backend refuses may be retried at once, up to 3 attempts. Four
//! clients differ in what limits them: nothing, chapter 13's retry budget, the adaptive throttle,
//! or both. Everything runs on tokio's paused clock.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::time::Instant;

use crate::AdaptiveThrottle;

/// Requests the backend can serve per second.
pub const CAPACITY: f64 = 100.0;
/// What refusing one request costs the backend, in requests served.
pub const REJECTION_COST: f64 = 0.2;
/// Calls per request at most.
pub const ATTEMPTS: u32 = 3;
/// The seconds of the lab, and the minute of overload inside it.
pub const SECONDS: u32 = 240;
pub const OVERLOAD: std::ops::Range<u32> = 30..90;

/// What limits a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Nothing,
    RetryBudget,
    Throttle,
    Both,
}

impl Limit {
    pub const ALL: [Limit; 4] = [
        Limit::Nothing,
        Limit::RetryBudget,
        Limit::Throttle,
        Limit::Both,
    ];
}

/// What happened in one second of the lab.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Second {
    /// Requests the application sent (new ones, not retries).
    pub offered: u32,
    /// Calls that reached the backend.
    pub sent: u32,
    /// Calls the backend served.
    pub served: u32,
}

/// Runs the lab for one kind of client, with the SRE book's throttle (`K = 2`, two minutes).
pub fn simulate(limit: Limit, seed: u64) -> Vec<Second> {
    simulate_with(limit, seed, crate::DEFAULT_K, crate::DEFAULT_WINDOW)
}

/// Runs the lab for one kind of client, with a throttle of multiplier `k` over `window`.
pub fn simulate_with(limit: Limit, seed: u64, k: f64, window: Duration) -> Vec<Second> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime always builds");
    runtime.block_on(run(limit, seed, AdaptiveThrottle::new(k, window)))
}

/// The backend: capacity refills continuously; a refusal still costs a little of it.
struct Server {
    capacity: f64,
    refilled_at: Instant,
}

impl Server {
    // ANCHOR: serves
    fn serves(&mut self) -> bool {
        let now = Instant::now();
        let elapsed = now.duration_since(self.refilled_at).as_secs_f64();
        self.capacity = (self.capacity + elapsed * CAPACITY).min(CAPACITY);
        self.refilled_at = now;
        if self.capacity >= 1.0 {
            self.capacity -= 1.0;
            true
        } else {
            self.capacity = (self.capacity - REJECTION_COST).max(0.0);
            false
        }
    }
    // ANCHOR_END: serves
}

/// gRPC's retry throttle (chapter 13) with A6's example settings, in thousandths of a token.
struct RetryBudget {
    tokens: u32,
}

impl RetryBudget {
    const MAX: u32 = 10_000;
    fn on_success(&mut self) {
        self.tokens = (self.tokens + 100).min(Self::MAX);
    }
    fn on_failure(&mut self) {
        self.tokens = self.tokens.saturating_sub(1_000);
    }
    fn can_retry(&self) -> bool {
        self.tokens > Self::MAX / 2
    }
}

async fn run(limit: Limit, seed: u64, throttle: AdaptiveThrottle) -> Vec<Second> {
    let throttled = matches!(limit, Limit::Throttle | Limit::Both);
    let budgeted = matches!(limit, Limit::RetryBudget | Limit::Both);
    let mut budget = RetryBudget {
        tokens: RetryBudget::MAX,
    };
    let mut server = Server {
        capacity: CAPACITY,
        refilled_at: Instant::now(),
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seconds = vec![Second::default(); SECONDS as usize];
    for (number, second) in (0..).zip(seconds.iter_mut()) {
        let rate = if OVERLOAD.contains(&number) { 300 } else { 100 };
        let gap = Duration::from_secs(1) / rate;
        for _ in 0..rate {
            second.offered += 1;
            for attempt in 1..=ATTEMPTS {
                if throttled && !throttle.admit(&mut rng) {
                    break;
                }
                second.sent += 1;
                let served = server.serves();
                throttle.on_response(served);
                if served {
                    second.served += 1;
                    budget.on_success();
                    break;
                }
                budget.on_failure();
                if attempt == ATTEMPTS || (budgeted && !budget.can_retry()) {
                    break;
                }
            }
            tokio::time::advance(gap).await;
        }
    }
    seconds
}
