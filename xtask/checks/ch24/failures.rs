//! Failures: non-fatal ones hurry the next hedge, fatal ones end the call, and the last failure
//! is what an exhausted call reports.

use exercise::stubs::Ending;
use exercise::{Code, HedgeError};

use super::fixture::{MS, NON_FATAL, Recorder, fail, ms, ok, policy, run};

const ALL: [Code; 8] = [
    Code::Unavailable,
    Code::ResourceExhausted,
    Code::Internal,
    Code::Aborted,
    Code::DeadlineExceeded,
    Code::InvalidArgument,
    Code::NotFound,
    Code::PermissionDenied,
];

#[tokio::test(start_paused = true)]
async fn a_non_fatal_failure_sends_the_next_hedge_at_once() {
    let policy = policy(4, 100 * MS, NON_FATAL);
    let script = vec![
        fail(30, Code::Unavailable),
        ok(5_000, 2),
        ok(5_000, 3),
        ok(50, 4),
    ];
    let run = run(&policy, &Recorder::allowing(), script).await;
    let expected = vec![0 * MS, 30 * MS, 130 * MS, 230 * MS];
    assert_eq!(
        run.sent_at(),
        expected,
        "hedging_delay = 100 ms; the first request fails with Unavailable (non-fatal) at 30 ms. \
         The next hedge goes out at once, at 30 ms, and the ones after it every 100 ms from \
         there: expected {}, yours went out at {}",
        ms(&expected),
        ms(&run.sent_at())
    );
    assert_eq!(
        run.result,
        Ok(4),
        "the fourth request answers first, at 280 ms"
    );

    // Every non-fatal failure hurries the next hedge, not only the first: the original fails at
    // 30 ms, the hedge sent then fails at 40 ms, and the next goes out at once, at 40 ms.
    let script = vec![
        fail(30, Code::Unavailable),
        fail(10, Code::Aborted),
        ok(5_000, 3),
        ok(50, 4),
    ];
    let run = super::fixture::run(&policy, &Recorder::allowing(), script).await;
    let expected = vec![0 * MS, 30 * MS, 40 * MS, 140 * MS];
    assert_eq!(
        run.sent_at(),
        expected,
        "hedging_delay = 100 ms; the first request fails (non-fatal) at 30 ms and the hedge sent \
         at once fails too, at 40 ms. Each non-fatal failure sends the next hedge at once, and \
         the one after follows 100 ms later: expected {}, yours went out at {}",
        ms(&expected),
        ms(&run.sent_at())
    );

    // The others still running do not matter: the first request is slow and still in flight
    // when the hedge sent at 100 ms fails at 120 ms, and the next hedge goes out at once all
    // the same, at 120 ms, then 100 ms later.
    let script = vec![
        ok(1_000, 1),
        fail(20, Code::Internal),
        ok(5_000, 3),
        ok(50, 4),
    ];
    let run = super::fixture::run(&policy, &Recorder::allowing(), script).await;
    let expected = vec![0 * MS, 100 * MS, 120 * MS, 220 * MS];
    assert_eq!(
        run.sent_at(),
        expected,
        "hedging_delay = 100 ms; the first request is still running when the hedge sent at \
         100 ms fails with Internal (non-fatal) at 120 ms. The others going on does not delay \
         anything: the next hedge goes out at once, at 120 ms, and the one after at 220 ms. \
         Expected {}, yours went out at {}",
        ms(&expected),
        ms(&run.sent_at())
    );
}

#[tokio::test(start_paused = true)]
async fn a_fatal_failure_ends_the_call() {
    let policy = policy(4, 100 * MS, NON_FATAL);
    let script = vec![ok(1_000, 1), fail(20, Code::InvalidArgument), ok(10, 3)];
    let run = run(&policy, &Recorder::allowing(), script).await;
    assert!(
        run.result == Err(HedgeError::Fatal(Code::InvalidArgument)) && run.took == 120 * MS,
        "the hedge sent at 100 ms fails with InvalidArgument (fatal) at 120 ms: the call should \
         return Err(Fatal(InvalidArgument)) at once, after 120 ms; it returned {:?} after {} ms",
        run.result,
        run.took.as_millis()
    );
    assert_eq!(
        run.endings(),
        vec![Ending::Cancelled, Ending::Answered],
        "after a fatal failure the first request must be cancelled and no hedge sent at 200 ms; \
         the backend saw {:?} for requests sent at {}",
        run.endings(),
        ms(&run.sent_at())
    );
}

#[tokio::test(start_paused = true)]
async fn the_policy_decides_what_is_fatal() {
    // An unusual policy: only ResourceExhausted and DeadlineExceeded leave the others a chance.
    let non_fatal = [Code::ResourceExhausted, Code::DeadlineExceeded];
    let policy = policy(2, 100 * MS, &non_fatal);
    for code in ALL {
        let run = run(
            &policy,
            &Recorder::allowing(),
            vec![fail(10, code), ok(10, 2)],
        )
        .await;
        let expected = if non_fatal.contains(&code) {
            Ok(2)
        } else {
            Err(HedgeError::Fatal(code))
        };
        assert_eq!(
            run.result, expected,
            "with non_fatal = {non_fatal:?}, the first request fails with {code:?} after 10 ms \
             and a second would succeed: expected {expected:?}, got {:?}. Whether a failure is \
             fatal comes from the policy (policy.is_non_fatal), not from a fixed list",
            run.result
        );
    }

    // The edges of the list: an empty list makes every failure fatal (it is not "use the
    // defaults"), and a list of every code makes none fatal.
    for (non_fatal, fatal) in [(&[][..], true), (&ALL[..], false)] {
        let policy = super::fixture::policy(2, 100 * MS, non_fatal);
        for code in ALL {
            let run = super::fixture::run(
                &policy,
                &Recorder::allowing(),
                vec![fail(10, code), ok(10, 2)],
            )
            .await;
            let expected = if fatal {
                Err(HedgeError::Fatal(code))
            } else {
                Ok(2)
            };
            assert_eq!(
                run.result, expected,
                "with non_fatal = {non_fatal:?}, the first request fails with {code:?} after \
                 10 ms and a second would succeed: expected {expected:?}, got {:?}. Every code \
                 outside the policy's list is fatal, and only those",
                run.result
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_call_reports_the_last_failure() {
    // Request 0 fails at 400 ms (Internal); request 1, sent at 100 ms, fails at 150 ms
    // (Unavailable); request 2 goes out at once and fails at 160 ms (Aborted). The call waits for
    // request 0 and reports its failure, the last to arrive.
    let policy = policy(3, 100 * MS, NON_FATAL);
    let script = vec![
        fail(400, Code::Internal),
        fail(50, Code::Unavailable),
        fail(10, Code::Aborted),
    ];
    let run = run(&policy, &Recorder::allowing(), script).await;
    assert!(
        run.result == Err(HedgeError::Exhausted(Code::Internal)) && run.took == 400 * MS,
        "three requests, all failing with non-fatal codes: Unavailable at 150 ms, Aborted at \
         160 ms and, last, Internal at 400 ms. The call may give up only when every request has \
         answered and none may be sent: expected Err(Exhausted(Internal)) after 400 ms, got \
         {:?} after {} ms",
        run.result,
        run.took.as_millis()
    );

    // One request allowed: its non-fatal failure exhausts the call; it is not fatal.
    let policy = super::fixture::policy(1, 100 * MS, NON_FATAL);
    let run = super::fixture::run(
        &policy,
        &Recorder::allowing(),
        vec![fail(20, Code::Unavailable)],
    )
    .await;
    assert!(
        run.result == Err(HedgeError::Exhausted(Code::Unavailable)) && run.took == 20 * MS,
        "max_attempts = 1, and the only request fails with Unavailable (non-fatal) at 20 ms: no \
         more may be sent, so the call is exhausted: expected Err(Exhausted(Unavailable)) after \
         20 ms, got {:?} after {} ms",
        run.result,
        run.took.as_millis()
    );
}
