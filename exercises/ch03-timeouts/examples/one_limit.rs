//! Worked examples for book §3.3 and §3.4, on neighbouring problems.
//!
//! `first_message` bounds a wait on a channel with `tokio::time::timeout`: the same tool as your
//! `call_with_timeout`, on a different future. `retry_under_one_limit` is wrong on purpose: one
//! limit around a whole retry loop, the shortcut §3.2 warns about. The program runs both, and your
//! `retry_with_timeouts` beside the wrong loop.
//!
//! Run it once your exercise passes: `cargo run -p ch03_timeouts --example one_limit`.

use std::time::Duration;

use ch03_timeouts::retry_with_timeouts;
use ch03_timeouts::stubs::{ScriptedService, ServiceError, Step};
use tokio::sync::mpsc;
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

// ANCHOR: first_message
/// The next message from `inbox`, if one arrives within `patience`; `None` if the time runs out
/// first or every sender is gone.
///
/// When the time runs out, `timeout` drops the `recv()` future. A receive on a tokio channel is
/// cancel-safe: dropping it loses no message, and the next `recv()` gets whatever arrives later.
async fn first_message(inbox: &mut mpsc::Receiver<String>, patience: Duration) -> Option<String> {
    tokio::time::timeout(patience, inbox.recv())
        .await
        .unwrap_or(None)
}
// ANCHOR_END: first_message

// ANCHOR: one_limit_for_all
/// WRONG, on purpose: makes up to `attempts` calls, all of them under one shared `limit`.
///
/// `None` means the shared limit ran out, whichever attempt was running at the time.
async fn retry_under_one_limit(
    service: &ScriptedService,
    attempts: u32,
    limit: Duration,
) -> Option<Result<u32, ServiceError>> {
    let all_attempts = async {
        let mut outcome = service.call().await;
        for _ in 1..attempts {
            if outcome.is_ok() {
                break;
            }
            outcome = service.call().await;
        }
        outcome
    };
    tokio::time::timeout(limit, all_attempts).await.ok()
}
// ANCHOR_END: one_limit_for_all

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: messages
    let (outbox, mut inbox) = mpsc::channel(1);
    tokio::spawn(async move {
        tokio::time::sleep(50 * MS).await;
        outbox.send("ready".to_owned()).await.ok();
        tokio::time::sleep(300 * MS).await;
        outbox.send("late".to_owned()).await.ok();
    });
    let started = Instant::now();
    for patience in [100 * MS, 100 * MS, 500 * MS] {
        let message = first_message(&mut inbox, patience).await;
        println!("at {:>3?}: {message:?}", started.elapsed());
    }
    // ANCHOR_END: messages

    // ANCHOR: three_slow_failures
    let script = [Step::FailAfter(150 * MS)];
    let service = ScriptedService::new(script);
    let started = Instant::now();
    let shared = retry_under_one_limit(&service, 3, 200 * MS).await;
    println!(
        "one limit for all:  {shared:?} after {:?}, {} call(s), {} abandoned",
        started.elapsed(),
        service.calls(),
        service.abandoned(),
    );
    let service = ScriptedService::new(script);
    let started = Instant::now();
    let own = retry_with_timeouts(|| service.call(), 3, 200 * MS).await;
    println!(
        "a limit per call:   {own:?} after {:?}, {} call(s), {} abandoned",
        started.elapsed(),
        service.calls(),
        service.abandoned(),
    );
    // ANCHOR_END: three_slow_failures
}
