//! Predict, then run: what do two immediate retries buy, and what do they cost?
//!
//! `cargo run -p ch01_strong_medicine --example predict` sends 100 000 requests through your
//! `retry_immediately` with `max_retries = 2`, to a service whose calls fail independently with
//! probability 0.3, and then to one in a full outage (every call fails). For each it prints the
//! share of requests that succeeded and how many calls each request cost the service.
//! Write your prediction down first (book §1.5).
//!
//! `cargo run -p ch01_strong_medicine --example predict -- --table` prints the table of §1.5:
//! the same two services for `max_retries` from 0 to 5.

use ch01_strong_medicine::retry_immediately;
use ch01_strong_medicine::stubs::Flaky;
use rand::SeedableRng;
use rand::rngs::StdRng;

/// How many requests each measurement sends.
const REQUESTS: u32 = 100_000;
/// The seed of the service's coin: the same seed, the same run.
const SEED: u64 = 1;

/// What a batch of requests did: the share that succeeded and the calls each one cost.
struct Outcome {
    success_rate: f64,
    calls_per_request: f64,
}

// ANCHOR: measure
/// Sends [`REQUESTS`] requests, each retried at once up to `max_retries` times, to a service whose
/// calls fail independently with probability `p`, and measures what happened.
fn measure(p: f64, max_retries: u32) -> Outcome {
    let mut service = Flaky::new(p, StdRng::seed_from_u64(SEED));
    let mut succeeded = 0;
    for _ in 0..REQUESTS {
        if retry_immediately(max_retries, || service.call()).is_ok() {
            succeeded += 1;
        }
    }
    Outcome {
        success_rate: f64::from(succeeded) / f64::from(REQUESTS),
        calls_per_request: f64::from(service.calls()) / f64::from(REQUESTS),
    }
}
// ANCHOR_END: measure

// ANCHOR: exact
/// The same two numbers computed instead of measured, for independent failures.
///
/// Call number `i + 1` is made only when the `i` calls before it all failed, which happens with
/// probability `p^i`; a request fails only when all `max_retries + 1` calls fail.
fn exact(p: f64, max_retries: u32) -> Outcome {
    let mut all_failed_so_far = 1.0;
    let mut calls = 0.0;
    for _ in 0..=max_retries {
        calls += all_failed_so_far;
        all_failed_so_far *= p;
    }
    Outcome {
        success_rate: 1.0 - all_failed_so_far,
        calls_per_request: calls,
    }
}
// ANCHOR_END: exact

fn percent(share: f64) -> String {
    format!("{:.2} %", share * 100.0)
}

fn report(title: &str, p: f64, max_retries: u32) {
    let (measured, computed) = (measure(p, max_retries), exact(p, max_retries));
    println!("{title} (p = {p:.1})");
    println!(
        "  requests that succeeded: {:>8}   (computed: {})",
        percent(measured.success_rate),
        percent(computed.success_rate),
    );
    println!(
        "  calls per request:       {:>8.3}   (computed: {:.3})",
        measured.calls_per_request, computed.calls_per_request,
    );
}

fn table() {
    println!(
        "| `max_retries` | p = 0.3: succeeded | p = 0.3: calls per request \
         | p = 1.0: succeeded | p = 1.0: calls per request |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for max_retries in 0..=5 {
        let (flaky, exact_flaky) = (measure(0.3, max_retries), exact(0.3, max_retries));
        let outage = measure(1.0, max_retries);
        println!(
            "| {max_retries} | {} ({}) | {:.3} ({:.3}) | {} | {:.2} |",
            percent(flaky.success_rate),
            percent(exact_flaky.success_rate),
            flaky.calls_per_request,
            exact_flaky.calls_per_request,
            percent(outage.success_rate),
            outage.calls_per_request,
        );
    }
    println!();
    println!("100 000 seeded requests per cell; computed values in parentheses.");
}

fn main() {
    if std::env::args().any(|arg| arg == "--table") {
        table();
        return;
    }
    println!("100 000 requests, each retried at once with max_retries = 2 (at most 3 calls)\n");
    report("every call fails independently, 30 % of the time", 0.3, 2);
    println!();
    report("full outage: every call fails", 1.0, 2);
    println!();
    println!("Without retries every request costs exactly one call, so calls per request is the");
    println!("factor by which the retries multiply the load on the service.");
}
