//! Checks that a cancel signal stops `retry_until` at once, during a sleep or during an attempt.

use std::time::Duration;

use exercise::{CancelToken, Policy, RetryError};

use super::retry::{MS, SEC, Service, run};
use crate::support::show;

/// The longest a cancelled loop may take to notice: one tick of tokio's timer (1 ms).
const ONE_TICK: Duration = MS;

/// A token that a spawned task cancels `after` from now (on tokio's clock).
fn cancelled_after(after: Duration) -> CancelToken {
    let token = CancelToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        canceller.cancel();
    });
    token
}

#[tokio::test(start_paused = true)]
async fn during_sleep() {
    let policy = Policy::fixed(5, SEC, 10 * SEC);
    let cancel_at = 3 * SEC;
    let token = cancelled_after(cancel_at);
    let run = run(Service::failing_fast(), 60 * SEC, &policy, &token).await;
    let late = run.returned.saturating_sub(cancel_at);
    assert!(
        run.result == Err(RetryError::Cancelled) && late <= ONE_TICK && run.calls() == 1,
        "the first attempt fails at once and the loop sleeps 10 s; the token is cancelled 3 s \
         into that sleep, so the loop must return Err(Cancelled) at 3 s after 1 call: race the \
         sleep against cancel.cancelled() with tokio::select!. Yours returned {:?} at {} ({} \
         after the cancel signal) after {} call(s)",
        run.result,
        show(run.returned),
        show(late),
        run.calls(),
    );
}

#[tokio::test(start_paused = true)]
async fn during_attempt() {
    let policy = Policy::fixed(3, 5 * SEC, SEC);
    let cancel_at = 2 * SEC;
    let token = cancelled_after(cancel_at);
    let run = run(Service::hanging(), 60 * SEC, &policy, &token).await;
    let late = run.returned.saturating_sub(cancel_at);
    assert!(
        run.result == Err(RetryError::Cancelled) && late <= ONE_TICK && run.calls() == 1,
        "the first attempt hangs (its timeout is 5 s); the token is cancelled 2 s into it, so the \
         loop must drop the attempt and return Err(Cancelled) at 2 s after 1 call: race the \
         attempt against cancel.cancelled() with tokio::select!. Yours returned {:?} at {} ({} \
         after the cancel signal) after {} call(s)",
        run.result,
        show(run.returned),
        show(late),
        run.calls(),
    );
}

#[tokio::test(start_paused = true)]
async fn before_start() {
    let policy = Policy::fixed(3, SEC, 100 * MS);
    let token = CancelToken::new();
    token.cancel();
    let run = run(Service::failing_fast(), 60 * SEC, &policy, &token).await;
    assert!(
        run.result == Err(RetryError::Cancelled) && run.calls() == 0 && run.returned.is_zero(),
        "with a token cancelled before the call, the loop must return Err(Cancelled) at once \
         without calling the operation; yours returned {:?} after {} call(s), at {}",
        run.result,
        run.calls(),
        show(run.returned),
    );
}
