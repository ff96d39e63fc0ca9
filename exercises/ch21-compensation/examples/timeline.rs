//! The worked example of the book (story 2), run on your orchestrator:
//!
//! ```text
//! cargo run -p ch21_compensation --example timeline
//! ```
//!
//! The shipment is refused, and the refund of the charge fails on every attempt. Predict the
//! journal before you run it (book, section 21.8).

use ch21_compensation::stubs::{Journal, StubStep};
use ch21_compensation::{CompensationPolicy, ErrorKind, Saga};
use rand::SeedableRng;
use rand::rngs::StdRng;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: scenario
    let journal = Journal::new();
    let every_call = u32::MAX;
    let refund_never_works =
        StubStep::payment(&journal).failing_compensate(every_call, ErrorKind::Transient);
    let shipment_refused = StubStep::shipping(&journal).failing_execute(1, ErrorKind::Permanent);
    let saga = Saga::new("order-21", CompensationPolicy::default())
        .step(StubStep::inventory(&journal))
        .step(refund_never_works)
        .step(shipment_refused);

    let outcome = saga.run(&mut StdRng::seed_from_u64(21)).await;
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
