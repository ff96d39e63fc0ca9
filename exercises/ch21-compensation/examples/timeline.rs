//! A story the book's tables do not show, run on your orchestrator:
//!
//! ```text
//! cargo run -p ch21_compensation --example timeline
//! ```
//!
//! The shipment is refused; the refund of the charge fails twice and then goes through, and the
//! release of the stock fails on every attempt. Predict the journal before you run it (book,
//! section 21.8).

use ch21_compensation::stubs::{Journal, StubStep};
use ch21_compensation::{CompensationPolicy, ErrorKind, Saga};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: scenario
    let journal = Journal::new();
    let every_call = u32::MAX;
    let two_calls = 2;
    let release_never_works =
        StubStep::inventory(&journal).failing_compensate(every_call, ErrorKind::Transient);
    let refund_fails_twice =
        StubStep::payment(&journal).failing_compensate(two_calls, ErrorKind::Transient);
    let shipment_refused = StubStep::shipping(&journal).failing_execute(1, ErrorKind::Permanent);
    let saga = Saga::new("order-21", CompensationPolicy::default())
        .step(release_never_works)
        .step(refund_fails_twice)
        .step(shipment_refused);

    let outcome = saga.run(&mut StdRng::seed_from_u64(7)).await;
    // ANCHOR_END: scenario

    println!("{}", journal.to_markdown());
    println!("The saga ends {outcome}. Its log at the end:");
    for record in saga.log().records() {
        println!(
            "  {:<10} {:<20} compensation_attempts = {}  last_error = {}",
            record.step,
            record.status.to_string(),
            record.compensation_attempts,
            record.last_error.unwrap_or_else(|| "none".to_owned()),
        );
    }
}
