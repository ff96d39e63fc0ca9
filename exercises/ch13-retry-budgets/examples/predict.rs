//! Predict, then run: how many calls reach the service for 1,000 requests, with a per-request
//! cap alone and with a retry budget, in an outage with a generous cap and in health?
//!
//! ```text
//! cargo run -p ch13_retry_budgets --example predict
//! ```
//!
//! It uses your `RetryBudget` and `retry_with_budget`, so it runs once they are written.

use ch13_retry_budgets::capped::retry_capped;
use ch13_retry_budgets::stubs::Backend;
use ch13_retry_budgets::{RetryBudget, retry_with_budget};

const REQUESTS: u32 = 1_000;
const ATTEMPTS: u32 = 3;
/// The per-request cap of the first row: an outage with a more generous cap than section 13.6's.
const GENEROUS_ATTEMPTS: u32 = 10;

// ANCHOR: measure
/// Sends `REQUESTS` requests through the capped loop alone; returns the calls and the failures.
async fn capped(backend: Backend, attempts: u32) -> (u64, u32) {
    let mut failed = 0;
    for _ in 0..REQUESTS {
        if retry_capped(|| backend.call(), attempts).await.is_err() {
            failed += 1;
        }
    }
    (backend.calls(), failed)
}

/// The same requests through `retry_with_budget`, sharing one A6 budget (10 tokens, ratio 0.1).
async fn budgeted(backend: Backend, attempts: u32) -> (u64, u32) {
    let budget = RetryBudget::new(10.0, 0.1).expect("valid settings");
    let mut failed = 0;
    for _ in 0..REQUESTS {
        if retry_with_budget(|| backend.call(), attempts, &budget)
            .await
            .is_err()
        {
            failed += 1;
        }
    }
    (backend.calls(), failed)
}
// ANCHOR_END: measure

fn row(case: &str, (calls, failed): (u64, u32)) {
    let load = calls as f64 / f64::from(REQUESTS);
    println!("{case:<42} {calls:>6} calls  {load:>4.2}× the requests  {failed:>5} failed");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("{REQUESTS} requests\n");
    let outage = format!("outage, {GENEROUS_ATTEMPTS} attempts");
    row(
        &format!("{outage}, per-request cap only"),
        capped(Backend::down(), GENEROUS_ATTEMPTS).await,
    );
    row(
        &format!("{outage}, cap + budget"),
        budgeted(Backend::down(), GENEROUS_ATTEMPTS).await,
    );
    println!("\nat most {ATTEMPTS} attempts each\n");
    for n in [20, 10, 5] {
        let cap_only = capped(Backend::failing_every(n), ATTEMPTS).await;
        row(
            &format!("1 call in {n} fails, per-request cap only"),
            cap_only,
        );
        let with_budget = budgeted(Backend::failing_every(n), ATTEMPTS).await;
        row(&format!("1 call in {n} fails, cap + budget"), with_budget);
    }
}
