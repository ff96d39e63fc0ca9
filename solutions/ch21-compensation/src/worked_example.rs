//! The worked example of the book page: three checkout sagas run on tokio's paused clock, their
//! journals pinned with an insta snapshot that the book includes.

use std::fmt::Write as _;

use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::stubs::{Journal, StubStep};
use crate::{CompensationPolicy, ErrorKind, Saga};

/// The saga's id in every story.
const ORDER: &str = "order-21";

// ANCHOR: run_checkout
/// Runs one checkout (inventory, payment, shipping) under the default policy with a seeded
/// generator, and renders its journal, its outcome and its final log.
async fn run_checkout(title: &str, payment: impl Fn(&Journal) -> StubStep) -> String {
    let journal = Journal::new();
    let stubs = &journal;
    let policy = CompensationPolicy::default();
    let saga = Saga::new(ORDER, policy)
        .step(StubStep::inventory(stubs))
        .step(payment(stubs))
        .step(StubStep::shipping(stubs).failing_execute(1, ErrorKind::Permanent));

    let mut rng = StdRng::seed_from_u64(21);
    let outcome = saga.run(&mut rng).await;

    let mut page = format!("**{title}**\n\n{}\n", journal.to_markdown());
    let _ = writeln!(page, "The saga ends **{outcome}**. Its log at the end:\n");
    page.push_str("| step | status | compensation_attempts | last_error |\n|---|---|---:|---|\n");
    for record in saga.log().records() {
        let _ = writeln!(
            page,
            "| {} | `{}` | {} | {} |",
            record.step,
            record.status,
            record.compensation_attempts,
            record.last_error.unwrap_or_default(),
        );
    }
    page.push('\n');
    page
}
// ANCHOR_END: run_checkout

#[tokio::test(start_paused = true)]
async fn checkout() {
    let mut page = String::new();
    page += &run_checkout(
        "1. The shipment is refused; the refund meets two 503s, then goes through",
        |journal| StubStep::payment(journal).failing_compensate(2, ErrorKind::Transient),
    )
    .await;
    page += &run_checkout(
        "2. The refund fails on every attempt: undo what can be undone, then call a human",
        |journal| StubStep::payment(journal).failing_compensate(u32::MAX, ErrorKind::Transient),
    )
    .await;
    page += &run_checkout(
        "3. The payment provider refuses the refund: no retry, straight to a human",
        |journal| StubStep::payment(journal).failing_compensate(1, ErrorKind::Permanent),
    )
    .await;
    insta::assert_snapshot!("checkout", page);
}
