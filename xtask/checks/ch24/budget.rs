//! Hedges spend the retry budget: asked before each hedge, told of every answer.

use exercise::{Code, HedgeError};

use super::fixture::{MS, NON_FATAL, Recorder, fail, ms, ok, policy, run};

#[tokio::test(start_paused = true)]
async fn the_first_request_never_asks() {
    let policy = policy(3, 100 * MS, NON_FATAL);
    let budget = Recorder::answering(&[], false);
    let run = run(&policy, &budget, vec![ok(250, 1)]).await;
    let (asked, _, _) = budget.counts();
    assert!(
        run.result == Ok(1) && run.received.len() == 1 && asked == 1,
        "with an empty budget (can_retry always false) the first request is still sent, without \
         asking, and the hedge due at 100 ms is asked for once and refused: expected Ok(1) from \
         one request and 1 question; got {:?} from {} request(s) and {asked} question(s)",
        run.result,
        run.received.len()
    );
}

#[tokio::test(start_paused = true)]
async fn a_refusal_stops_the_hedges() {
    // The budget allows the first hedge, refuses the second, and would allow the rest.
    let policy = policy(5, 100 * MS, NON_FATAL);
    let budget = Recorder::answering(&[true, false], true);
    let run = run(&policy, &budget, vec![ok(1_000, 1)]).await;
    let (asked, _, _) = budget.counts();
    assert!(
        run.sent_at() == vec![0 * MS, 100 * MS] && asked == 2,
        "the budget says yes to the hedge due at 100 ms and no to the one due at 200 ms: from \
         then on no hedge may be sent (nor asked for) during this call. Expected requests at [0 \
         ms, 100 ms] and 2 questions; yours went out at {} after {asked} question(s)",
        ms(&run.sent_at())
    );

    // A failure after the refusal does not reopen the budget: the first request fails
    // (non-fatal) at 300 ms, after the no at 200 ms; no hedge is asked for or sent, and the
    // call waits for the hedge sent at 100 ms.
    let budget = Recorder::answering(&[true, false], true);
    let script = vec![fail(300, Code::Unavailable), ok(1_000, 2), ok(10, 3)];
    let run = super::fixture::run(&policy, &budget, script).await;
    let (asked, _, _) = budget.counts();
    assert!(
        run.sent_at() == vec![0 * MS, 100 * MS] && asked == 2 && run.result == Ok(2),
        "the budget says yes at 100 ms and no at 200 ms; the first request then fails \
         (non-fatal) at 300 ms. The refusal holds for the rest of the call, failures included: \
         expected requests at [0 ms, 100 ms], 2 questions and Ok(2) from the hedge at 1,100 ms; \
         yours went out at {} after {asked} question(s) and returned {:?}",
        ms(&run.sent_at()),
        run.result
    );
}

#[tokio::test(start_paused = true)]
async fn every_answer_is_recorded_once() {
    // Request 0 fails (non-fatal) at 10 ms; request 1 goes out at once and is slow; request 2
    // goes out at 110 ms and succeeds at 120 ms; request 1 is cancelled.
    let policy = policy(4, 100 * MS, NON_FATAL);
    let budget = Recorder::allowing();
    let script = vec![fail(10, Code::Unavailable), ok(5_000, 2), ok(10, 3)];
    let run = run(&policy, &budget, script).await;
    let (_, successes, failures) = budget.counts();
    assert!(
        run.result == Ok(3) && (successes, failures) == (1, 1),
        "one non-fatal failure, one success and one cancelled request: the budget should hear \
         on_failure once and on_success once (a cancelled request has no answer); it heard \
         on_success {successes} time(s) and on_failure {failures} time(s), and the call returned \
         {:?}",
        run.result
    );

    let budget = Recorder::allowing();
    let fatal = super::fixture::run(&policy, &budget, vec![fail(10, Code::NotFound)]).await;
    let (_, successes, failures) = budget.counts();
    assert!(
        fatal.result == Err(HedgeError::Fatal(Code::NotFound)) && (successes, failures) == (0, 0),
        "a fatal failure (NotFound) says nothing about the server's health: the budget should \
         hear nothing; it heard on_success {successes} time(s) and on_failure {failures} time(s)"
    );

    // A call allowed one request records its answer like any other.
    let single = super::fixture::policy(1, 100 * MS, NON_FATAL);
    for (reply, heard) in [(ok(20, 1), (1, 0)), (fail(20, Code::Unavailable), (0, 1))] {
        let budget = Recorder::allowing();
        super::fixture::run(&single, &budget, vec![reply]).await;
        let (_, successes, failures) = budget.counts();
        assert_eq!(
            (successes, failures),
            heard,
            "max_attempts = 1 and the only request answers {:?}: the budget should hear \
             (on_success, on_failure) = {heard:?} times, as for any call; it heard \
             ({successes}, {failures})",
            reply.1
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_refusal_with_nothing_in_flight_returns_the_failure() {
    let policy = policy(3, 100 * MS, NON_FATAL);
    let budget = Recorder::answering(&[], false);
    let run = run(
        &policy,
        &budget,
        vec![fail(50, Code::Unavailable), ok(10, 2)],
    )
    .await;
    assert!(
        run.result == Err(HedgeError::Exhausted(Code::Unavailable)) && run.took == 50 * MS,
        "the only request fails with Unavailable at 50 ms and the budget refuses the hedge that \
         is then due: nothing is left in flight, so the call should return \
         Err(Exhausted(Unavailable)) at 50 ms; it returned {:?} after {} ms",
        run.result,
        run.took.as_millis()
    );
}

#[tokio::test(start_paused = true)]
async fn each_hedge_asks_when_it_is_due() {
    // (max_attempts, delay, script, the budget's answers, expected send times, expected
    // question times). The budget is asked once per hedge, at the instant the hedge is due:
    // not earlier (when the request before it goes out), and not once for a whole batch.
    let cases = [
        (
            4u32,
            100 * MS,
            vec![ok(1_000, 1)],
            vec![true, true, false],
            vec![0, 100, 200],
            vec![100, 200, 300],
        ),
        (
            4,
            100 * MS,
            vec![fail(30, Code::Unavailable), ok(1_000, 2)],
            vec![true, false],
            vec![0, 30],
            vec![30, 130],
        ),
        (
            4,
            0 * MS,
            vec![ok(300, 1)],
            vec![true, false],
            vec![0, 0],
            vec![0, 0],
        ),
        (
            3,
            0 * MS,
            vec![ok(300, 1)],
            vec![true, true],
            vec![0, 0, 0],
            vec![0, 0],
        ),
    ];
    for (max_attempts, delay, script, answers, sends, questions) in cases {
        let policy = policy(max_attempts, delay, NON_FATAL);
        let budget = Recorder::answering(&answers, true);
        let run = run(&policy, &budget, script.clone()).await;
        let asked = budget.asked_since(run.start);
        let sends: Vec<_> = sends.into_iter().map(|t| t * MS).collect();
        let questions: Vec<_> = questions.into_iter().map(|t| t * MS).collect();
        assert!(
            run.sent_at() == sends && asked == questions,
            "max_attempts = {max_attempts}, hedging_delay = {} ms, replies {script:?}, and a \
             budget that answers {answers:?} in turn: each hedge asks the budget once, when it \
             is due, and none is sent or asked for after a no. Expected requests at {} and \
             questions at {}; yours sent at {} and asked at {}",
            delay.as_millis(),
            ms(&sends),
            ms(&questions),
            ms(&run.sent_at()),
            ms(&asked)
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_refusal_waits_for_requests_in_flight() {
    // Request 0 answers at 1,000 ms. The hedge sent at 100 ms fails (non-fatal) at 150 ms, and
    // the budget refuses the hedge that is then due. Request 0 is still in flight and may yet
    // succeed: the call waits for it.
    let policy = policy(4, 100 * MS, NON_FATAL);
    let budget = Recorder::answering(&[true, false], true);
    let script = vec![ok(1_000, 1), fail(50, Code::Unavailable)];
    let run = run(&policy, &budget, script).await;
    assert!(
        run.result == Ok(1) && run.took == 1_000 * MS,
        "the first request answers at 1,000 ms; the hedge sent at 100 ms fails with Unavailable \
         at 150 ms, and the budget refuses the next hedge. The refusal stops the hedges, not the \
         call: the first request is still in flight, so the call should wait for it and return \
         Ok(1) after 1,000 ms; it returned {:?} after {} ms",
        run.result,
        run.took.as_millis()
    );
}
