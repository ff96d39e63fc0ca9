//! The first success wins, and every other request is cancelled.

use exercise::stubs::Ending;

use super::fixture::{MS, NON_FATAL, Recorder, ms, ok, policy, run};

#[tokio::test(start_paused = true)]
async fn the_first_answer_wins_not_the_first_request() {
    // The first request answers at 500 ms; the hedge, sent at 100 ms, answers at 150 ms.
    let policy = policy(5, 100 * MS, NON_FATAL);
    let run = run(
        &policy,
        &Recorder::allowing(),
        vec![ok(500, 100), ok(50, 101), ok(50, 102)],
    )
    .await;
    assert!(
        run.result == Ok(101) && run.took == 150 * MS,
        "the first request answers after 500 ms with 100; the hedge sent at 100 ms answers 50 ms \
         later with 101. The first answer wins: expected Ok(101) after 150 ms, got {:?} after \
         {} ms",
        run.result,
        run.took.as_millis()
    );
    assert_eq!(
        run.sent_at(),
        vec![0 * MS, 100 * MS],
        "once an answer has come at 150 ms no request may be sent; requests went out at {}",
        ms(&run.sent_at())
    );
}

#[tokio::test(start_paused = true)]
async fn the_others_are_cancelled() {
    let policy = policy(4, 100 * MS, NON_FATAL);
    let script = vec![ok(1_000, 1), ok(1_000, 2), ok(30, 3), ok(1_000, 4)];
    let run = run(&policy, &Recorder::allowing(), script).await;
    assert_eq!(
        run.result,
        Ok(3),
        "the third request (sent at 200 ms) answers first, at 230 ms"
    );
    let endings = run.endings();
    assert_eq!(
        endings,
        vec![Ending::Cancelled, Ending::Cancelled, Ending::Answered],
        "when the third request's answer wins at 230 ms, the first two are still running and \
         must be cancelled (dropped), never answered, and no fourth request sent; the backend \
         saw {endings:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_early_answer_sends_no_hedge() {
    let policy = policy(3, 100 * MS, NON_FATAL);
    let run = run(&policy, &Recorder::allowing(), vec![ok(99, 1)]).await;
    assert!(
        run.result == Ok(1) && run.received.len() == 1,
        "the first request answers after 99 ms, before the hedge is due at 100 ms: the call \
         should return Ok(1) having sent one request; it returned {:?} after sending {}",
        run.result,
        run.received.len()
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_cancels_its_requests() {
    let policy = policy(3, 100 * MS, NON_FATAL);
    let backend = exercise::stubs::Backend::scripted(vec![ok(10_000, 1)]);
    let sender = backend.clone();
    let budget = Recorder::allowing();
    let call = exercise::hedged(&policy, super::fixture::KEY, &budget, move |attempt| {
        sender.send(attempt)
    });
    let cut = tokio::time::timeout(250 * MS, call).await;
    assert!(
        cut.is_err(),
        "the call should still be waiting when its 250 ms timeout fires"
    );
    tokio::time::sleep(std::time::Duration::from_secs(3_600)).await;
    let endings: Vec<Ending> = backend.received().iter().map(|r| r.ending).collect();
    assert_eq!(
        endings,
        vec![Ending::Cancelled; 3],
        "the caller gave up after 250 ms (its timeout dropped the call) while three requests \
         were in flight; they must be cancelled with it, but the backend saw {endings:?}. \
         Requests left running after their caller has gone are pure waste"
    );
}
