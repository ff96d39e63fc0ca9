//! Predict, then run (book §22.10): the checkout saga on your orchestrator, with a carrier that
//! answers `429 Too Many Requests` with `Retry-After: 6 s` four times in a row, then books.
//!
//! `cargo run -p ch22_saga_retries --example checkout` prints the saga's log each time it
//! changes, then what each service saw. Time is virtual (tokio's clock is paused), so the run
//! prints at once. Change `SEED` for other jitter draws, or the scripts for other stories.

use ch22_saga_retries::stubs::{Checkout, Reply, StubService};
use ch22_saga_retries::timeline::Timeline;
use ch22_saga_retries::{Action, CancelToken};
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

/// The seed of the book's answer.
const SEED: u64 = 2022;

async fn checkout() {
    // ANCHOR: scenario
    let checkout = Checkout::new(
        "order-2",
        StubService::inventory(),
        // The refund meets one 503 before it goes through.
        StubService::payment().compensation_failing_with([Reply::http(503)]),
        // The carrier is rate-limiting and says when to come back: four 429s, each with
        // `Retry-After: 6 s`; a fifth call would book the shipment.
        StubService::shipping().failing_with(vec![
            Reply::http_retry_after(
                429,
                Duration::from_secs(6)
            );
            4
        ]),
    );
    // ANCHOR_END: scenario
    let timeline = Timeline::watch(&checkout.saga.log());
    let mut rng = StdRng::seed_from_u64(SEED);
    let status = checkout.saga.run(&mut rng, &CancelToken::new()).await;
    println!("{}", timeline.finish().await);
    println!("The saga ended {status}.");
    let services = [
        ("inventory", &checkout.inventory),
        ("payment", &checkout.payment),
        ("shipping", &checkout.shipping),
    ];
    for (name, service) in services {
        println!(
            "{name}: {} call(s) to do it, {} to undo it; done {} time(s), undone {} time(s)",
            service.calls_of(Action::Execute),
            service.calls_of(Action::Compensate),
            service.times_done(),
            service.times_undone(),
        );
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(checkout());
}
