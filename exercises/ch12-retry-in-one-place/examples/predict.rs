//! Predict, then run: how many calls does one user request send to the backend?
//!
//! `cargo run -p ch12_retry_in_one_place --example predict` sends one request through
//! `Frontend -> Service -> Repository -> backend` for each of four backends: a healthy one, one
//! that fails twice and then answers, one that is down (every call fails), and one that is
//! overloaded and says so (every call answers "overloaded; don't retry"). For each it prints the
//! calls that arrived at each layer, the outcome, and how long the user waited.
//!
//! Time is tokio's paused clock, so the waits are computed, not slept: the program finishes at
//! once. Run it before your refactor, write down what you expect after it (book §12.7), and run it
//! again.

use std::time::Duration;

use ch12_retry_in_one_place::stubs::{Backend, Counted};
use ch12_retry_in_one_place::{CallError, Downstream, Frontend, Repository, RetryPolicy, Service};
use tokio::time::Instant;

/// The seed of the frontend's full-jitter sleeps: the same seed, the same run.
const SEED: u64 = 12;

// ANCHOR: measure
/// What one request did: the calls that arrived at each layer, its outcome, and the user's wait.
struct Trace {
    to_service: u32,
    to_repository: u32,
    to_backend: u32,
    outcome: Result<u32, CallError>,
    waited: Duration,
}

/// Sends one request through the whole stack, with a counter between every two layers.
async fn send_one_request(backend: Backend) -> Trace {
    let repository = Counted::new(Repository::new(&backend));
    let service = Counted::new(Service::new(&repository));
    let frontend = Frontend::new(&service, RetryPolicy::standard(SEED));

    let started = Instant::now();
    let outcome = frontend.call().await;
    Trace {
        to_service: service.calls(),
        to_repository: repository.calls(),
        to_backend: backend.calls(),
        outcome,
        waited: started.elapsed(),
    }
}
// ANCHOR_END: measure

fn outcome(outcome: Result<u32, CallError>) -> String {
    match outcome {
        Ok(call) => format!("Ok (backend call {call})"),
        Err(CallError::Unavailable) => "Err(Unavailable)".to_owned(),
        Err(CallError::Overloaded) => "Err(Overloaded)".to_owned(),
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let backends = [
        ("healthy", Backend::healthy()),
        ("fails twice, then answers", Backend::failing_first(2)),
        ("down (every call fails)", Backend::down()),
        ("overloaded; don't retry", Backend::overloaded()),
    ];
    println!("One request through Frontend -> Service -> Repository -> backend\n");
    println!(
        "{:<27} {:>9} {:>12} {:>9}   {:<22} {:>11}",
        "backend", "service", "repository", "backend", "outcome", "user waited"
    );
    for (name, backend) in backends {
        let trace = send_one_request(backend).await;
        println!(
            "{:<27} {:>9} {:>12} {:>9}   {:<22} {:>8.1} ms",
            name,
            trace.to_service,
            trace.to_repository,
            trace.to_backend,
            outcome(trace.outcome),
            trace.waited.as_secs_f64() * 1_000.0,
        );
    }
    println!("\nThe three middle columns count the calls that arrived at each layer.");
}
