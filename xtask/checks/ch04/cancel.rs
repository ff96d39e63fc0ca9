//! Checks that a cancel signal stops `retry_until` at once, during a sleep or during an attempt.

use std::time::Duration;

use std::cell::Cell;

use exercise::{CancelToken, Policy, RetryError, retry_until};
use tokio::time::Instant;

use super::retry::{MS, SEC, Service, run};
use super::support::show;

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

#[tokio::test(start_paused = true)]
async fn cancelled_and_past_deadline() {
    let policy = Policy::fixed(3, SEC, 100 * MS);
    let token = CancelToken::new();
    token.cancel();
    let run = run(Service::failing_fast(), Duration::ZERO, &policy, &token).await;
    assert!(
        run.result == Err(RetryError::Cancelled) && run.calls() == 0 && run.returned.is_zero(),
        "with a token cancelled before the call and a deadline already reached, both reasons to \
         stop hold at once; the loop must return Err(Cancelled) at once, without calling the \
         operation: whoever cancelled has ended the operation, whatever the clock says. Yours \
         returned {:?} after {} call(s), at {}",
        run.result,
        run.calls(),
        show(run.returned),
    );
}

#[tokio::test(start_paused = true)]
async fn wins_a_tie_with_the_answer() {
    // Just before the operation's answer is ready, another task cancels the token, so at the
    // loop's next look both the cancel signal and the answer are ready at the same instant.
    // Repeated, so that a loop that picks a branch at random shows itself.
    let policy = Policy::fixed(3, SEC, 100 * MS);
    for round in 1..=24 {
        let token = CancelToken::new();
        let calls = Cell::new(0);
        let started = Instant::now();
        let result = retry_until(
            started + 60 * SEC,
            &policy,
            || {
                calls.set(calls.get() + 1);
                let (token, call) = (token.clone(), calls.get());
                async move {
                    tokio::time::sleep(200 * MS).await;
                    // Another task cancels while this one yields: when the loop looks again,
                    // the signal and the answer are both ready.
                    tokio::spawn(async move { token.cancel() });
                    tokio::task::yield_now().await;
                    Ok::<u32, u32>(call)
                }
            },
            &token,
        )
        .await;
        assert!(
            result == Err(RetryError::Cancelled),
            "the operation's answer, Ok(1), and the cancel signal became ready at the same \
             instant (200 ms into the first attempt); cancellation must win such a tie every \
             time: `biased;` with the cancel branch first. In round {round} of 24 yours returned \
             {result:?} after {} call(s)",
            calls.get(),
        );
    }
}
