//! Visible tests: run them with `cargo xtask check ch24` (or `cargo test -p ch24_hedged_requests`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch24_hedged_requests::stubs::{Backend, Ending};
use ch24_hedged_requests::{HedgingPolicy, Unlimited, hedged};

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn a_fast_answer_needs_no_hedge() {
    let backend = Backend::scripted(vec![(20 * MS, Ok(1))]);
    let sender = backend.clone();
    let answer = hedged(
        &HedgingPolicy::a6_example(),
        "k1",
        &Unlimited,
        move |attempt| sender.send(attempt),
    )
    .await;
    assert_eq!(answer, Ok(1));
    assert_eq!(backend.received().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_request_is_overtaken_by_its_hedge() {
    // The first request takes 2 s; the hedge, sent at 500 ms, answers after 10 ms.
    let backend = Backend::scripted(vec![(2_000 * MS, Ok(1)), (10 * MS, Ok(2))]);
    let sender = backend.clone();
    let start = tokio::time::Instant::now();
    let answer = hedged(
        &HedgingPolicy::a6_example(),
        "k2",
        &Unlimited,
        move |attempt| sender.send(attempt),
    )
    .await;
    assert_eq!(answer, Ok(2));
    assert_eq!(start.elapsed(), 510 * MS);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let endings: Vec<Ending> = backend.received().iter().map(|r| r.ending).collect();
    assert_eq!(endings, vec![Ending::Cancelled, Ending::Answered]);
}
