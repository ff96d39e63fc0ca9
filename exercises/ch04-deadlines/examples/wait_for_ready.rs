//! A worked example for book §4.3 and §4.6, on a neighbouring problem: waiting for a flag to turn
//! on, with a deadline and a cancel signal, on tokio's clock.
//!
//! It uses the same three tools as your `retry_until`: the time left before a deadline, a timer
//! that ends at the deadline, and a biased `tokio::select!` that lets cancellation win a tie.
//!
//! Run it with `cargo run -p ch04_deadlines --example wait_for_ready` (it needs nothing from your
//! exercise but the given `CancelToken`).

use std::time::Duration;

use ch04_deadlines::CancelToken;
use tokio::sync::watch;
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

// ANCHOR: wait_for_ready
/// How a wait for a flag ended.
#[derive(Debug, PartialEq, Eq)]
enum Waited {
    /// The flag turned on; `left` is the time that was still left before the deadline.
    Ready { left: Duration },
    /// The deadline came first.
    DeadlineReached,
    /// Someone cancelled the wait.
    Cancelled,
}

/// Waits until `flag` is `true`, but not past `deadline`, and not after `stop` is cancelled.
async fn wait_for_ready(
    mut flag: watch::Receiver<bool>,
    deadline: Instant,
    stop: &CancelToken,
) -> Waited {
    // Cancellation first: a cancelled caller wants no answer, whatever the clock says.
    if stop.is_cancelled() {
        return Waited::Cancelled;
    }
    tokio::select! {
        // Poll in the order written: when the signal and an answer are ready together,
        // the signal wins.
        biased;
        _ = stop.cancelled() => Waited::Cancelled,
        () = tokio::time::sleep_until(deadline) => Waited::DeadlineReached,
        ready = flag.wait_for(|&on| on) => match ready {
            Ok(_) => Waited::Ready {
                left: deadline.saturating_duration_since(Instant::now()),
            },
            // The sender is gone: the flag can never turn on.
            Err(_) => Waited::DeadlineReached,
        },
    }
}
// ANCHOR_END: wait_for_ready

/// A flag that another task turns on `after` from now.
fn flag_turning_on(after: Duration) -> watch::Receiver<bool> {
    let (sender, receiver) = watch::channel(false);
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        sender.send_replace(true);
        // Keep the sender alive for a while, so the channel stays open.
        tokio::time::sleep(after + Duration::from_secs(60)).await;
    });
    receiver
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: runs
    let start = Instant::now();
    let deadline = start + 500 * MS;
    let never = CancelToken::new();
    let early = wait_for_ready(flag_turning_on(200 * MS), deadline, &never).await;
    let late = wait_for_ready(flag_turning_on(900 * MS), deadline, &never).await;
    let cancelled_first = CancelToken::new();
    cancelled_first.cancel();
    let both = wait_for_ready(flag_turning_on(MS), start, &cancelled_first).await;
    // ANCHOR_END: runs
    println!("flag on after 200 ms, deadline 500 ms: {early:?}");
    println!("flag on after 900 ms, deadline 500 ms: {late:?}");
    println!("cancelled, and the deadline already reached: {both:?}");
    assert_eq!(early, Waited::Ready { left: 300 * MS });
    assert_eq!(late, Waited::DeadlineReached);
    assert_eq!(both, Waited::Cancelled);
}
