//! Predict, then run (book §20.7): two clients, two unlucky networks, one card.
//!
//! Run it with `cargo run -p ch20_idempotency_keys --example predict` once your exercise passes.
//! The clock is tokio's paused clock, so the run takes no real time at all.

use std::sync::Arc;
use std::time::Duration;

use ch20_idempotency_keys::stubs::{Fault, FlakyNetwork, PaymentBackend, PaymentServer};
use ch20_idempotency_keys::{
    ApiError, ChargeRequest, IdempotencyKey, KeyGenerator, PaymentApi, Receipt, RetryPolicy,
    charge_with_retries, should_retry,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);
const TIMEOUT: Duration = Duration::from_millis(200);
const SEED: u64 = 20;

/// The same loop as `charge_with_retries`, with one change: a new key for every attempt.
async fn charge_with_a_new_key_each_time(
    api: &impl PaymentApi,
    request: &ChargeRequest,
    policy: &RetryPolicy,
    keys: &mut KeyGenerator,
    rng: &mut impl Rng,
) -> Result<Receipt, ApiError> {
    let mut retry = 0;
    loop {
        let key = keys.next_key();
        let error = match api.charge(&key, request).await {
            Ok(receipt) => return Ok(receipt),
            Err(error) => error,
        };
        if !should_retry(&error) || retry + 1 >= policy.attempts {
            return Err(error);
        }
        tokio::time::sleep(policy.delay(retry, rng)).await;
        retry += 1;
    }
}

/// Prints every attempt that goes through it: when it started and ended, its key, its answer.
struct Logged<'a> {
    inner: &'a FlakyNetwork,
    origin: Instant,
}

impl PaymentApi for Logged<'_> {
    async fn charge(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> Result<Receipt, ApiError> {
        let sent = self.origin.elapsed();
        let answer = self.inner.charge(key, request).await;
        println!(
            "    {:>4} ms → {:>4} ms  {}…  {}",
            sent.as_millis(),
            self.origin.elapsed().as_millis(),
            &key.as_str()[..9],
            show(&answer),
        );
        answer
    }
}

fn show(answer: &Result<Receipt, ApiError>) -> String {
    match answer {
        Ok(receipt) => format!("Ok(charge {})", receipt.charge_id),
        Err(error) => format!("Err({error:?})"),
    }
}

async fn scenario(title: &str, latency: Duration, faults: &[Fault]) {
    println!("{title}");
    for one_key in [false, true] {
        let server = Arc::new(PaymentServer::new(PaymentBackend::new(latency)));
        let network = FlakyNetwork::new(Arc::clone(&server), TIMEOUT, faults.iter().copied());
        let logged = Logged {
            inner: &network,
            origin: Instant::now(),
        };
        let request = ChargeRequest::new("ada", 1_000);
        let policy = RetryPolicy::default();
        let (mut keys, mut rng) = (KeyGenerator::seeded(SEED), StdRng::seed_from_u64(SEED));
        let result = if one_key {
            println!("  one key for the whole charge (charge_with_retries):");
            charge_with_retries(&logged, &request, &policy, &mut keys, &mut rng).await
        } else {
            println!("  a new key for every attempt:");
            charge_with_a_new_key_each_time(&logged, &request, &policy, &mut keys, &mut rng).await
        };
        // Let any charge still running on the server finish before counting.
        tokio::time::sleep(latency).await;
        println!(
            "    result {}; the card was charged {} time(s)",
            show(&result),
            server.backend().charges().len(),
        );
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    scenario(
        "A. Each charge takes 50 ms; the answer to attempt 1 is lost (timeout 200 ms).",
        50 * MS,
        &[Fault::LoseResponse],
    )
    .await;
    println!();
    scenario(
        "B. Each charge takes 250 ms; nothing is lost, but the client gives up after 200 ms.",
        250 * MS,
        &[],
    )
    .await;
}
