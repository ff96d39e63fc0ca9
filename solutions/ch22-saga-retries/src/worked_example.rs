//! The worked example of the book page: the checkout saga run on tokio's paused clock, its log
//! watched by the given [`Timeline`] and pinned with an insta snapshot that the book includes.

use std::fmt::Write as _;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::stubs::{Checkout, Reply, StubService};
use crate::timeline::Timeline;
use crate::{Action, CancelToken};

const SECOND: Duration = Duration::from_secs(1);

// ANCHOR: run_checkout
/// Runs one checkout on a paused clock with a seeded generator and renders its log's timeline.
async fn run_checkout(title: &str, checkout: Checkout) -> String {
    let mut rng = StdRng::seed_from_u64(2022);
    let timeline = Timeline::watch(&checkout.saga.log());
    let cancel = CancelToken::new();
    let status = checkout.saga.run(&mut rng, &cancel).await;
    let table = timeline.finish().await;

    let services = [
        ("inventory", &checkout.inventory),
        ("payment", &checkout.payment),
        ("shipping", &checkout.shipping),
    ];
    let mut summary = format!("The saga ends **{status}**.");
    for (name, service) in services {
        let _ = write!(
            summary,
            " {name}: {} call(s), done {} time(s), undone {} time(s).",
            service.calls_of(Action::Execute) + service.calls_of(Action::Compensate),
            service.times_done(),
            service.times_undone(),
        );
    }
    format!("**{title}**\n\n{table}\n{summary}\n\n")
}
// ANCHOR_END: run_checkout

#[tokio::test(start_paused = true)]
async fn checkout() {
    let scenarios = [
        (
            "1. A bumpy checkout that completes",
            Checkout::new(
                "order-1",
                StubService::inventory().failing_with([Reply::http(503)]),
                StubService::payment()
                    .failing_with([Reply::http_retry_after(429, SECOND), Reply::DoThenHang]),
                StubService::shipping().failing_with([Reply::http(502), Reply::http(504)]),
            ),
        ),
        (
            "2. Shipping is rate-limited until its retries run out: compensate, newest first",
            Checkout::new(
                "order-2",
                StubService::inventory(),
                StubService::payment().compensation_failing_with([Reply::http(503)]),
                StubService::shipping().failing_with(vec![Reply::http(429); 5]),
            ),
        ),
        (
            "3. A Retry-After that would end past the budget: give up now",
            Checkout::new(
                "order-3",
                StubService::inventory(),
                StubService::payment().failing_with([Reply::http_retry_after(503, 60 * SECOND)]),
                StubService::shipping(),
            ),
        ),
        (
            "4. A permanent error on a step whose policy says stop",
            Checkout::new(
                "order-4",
                StubService::inventory().failing_with([Reply::http(404)]),
                StubService::payment(),
                StubService::shipping(),
            ),
        ),
        (
            "5. The carrier never answers: its outcome is unknown, so it is compensated too",
            Checkout::new(
                "order-5",
                StubService::inventory(),
                StubService::payment(),
                StubService::shipping().failing_with(vec![Reply::Hang; 5]),
            ),
        ),
    ];
    let mut page = String::new();
    for (title, checkout) in scenarios {
        page.push_str(&run_checkout(title, checkout).await);
    }
    insta::assert_snapshot!("checkout", page);
}
