//! When requests are sent: the first at once, hedges every delay, never more than allowed.

use std::time::Duration;

use exercise::Code;

use super::fixture::{KEY, MS, NON_FATAL, Recorder, fail, ms, ok, policy, run};

#[tokio::test(start_paused = true)]
async fn hedges_go_out_every_delay() {
    // (max_attempts, delay in ms): every request is slow, so every hedge is sent.
    for (max_attempts, delay) in [(4u32, 100u64), (3, 250), (1, 100), (2, 7)] {
        let policy = policy(max_attempts, Duration::from_millis(delay), NON_FATAL);
        let run = run(&policy, &Recorder::allowing(), vec![ok(10_000, 1)]).await;
        let expected: Vec<_> = (0..u64::from(max_attempts))
            .map(|k| Duration::from_millis(k * delay))
            .collect();
        assert_eq!(
            run.sent_at(),
            expected,
            "max_attempts = {max_attempts}, hedging_delay = {delay} ms, and no request answers \
             for 10 s: requests should go out at {}, but yours went out at {}. The first is sent \
             at once, then one hedge every hedging_delay while no answer has come, {max_attempts} \
             in all",
            ms(&expected),
            ms(&run.sent_at())
        );
    }
}

#[tokio::test(start_paused = true)]
async fn zero_delay_sends_every_request_at_once() {
    let policy = policy(4, 0 * MS, NON_FATAL);
    let run = run(&policy, &Recorder::allowing(), vec![ok(300, 1)]).await;
    let expected = vec![0 * MS; 4];
    assert_eq!(
        run.sent_at(),
        expected,
        "max_attempts = 4 and hedging_delay = 0: all four requests should go out at once, at \
         {}; yours went out at {}",
        ms(&expected),
        ms(&run.sent_at())
    );
}

#[tokio::test(start_paused = true)]
async fn never_more_than_max_attempts() {
    for max_attempts in [1u32, 2, 5] {
        let policy = policy(max_attempts, 100 * MS, NON_FATAL);
        let run = run(
            &policy,
            &Recorder::allowing(),
            vec![fail(1, Code::Unavailable)],
        )
        .await;
        assert_eq!(
            run.received.len(),
            max_attempts as usize,
            "max_attempts = {max_attempts}, and every request fails with a non-fatal code after \
             1 ms: exactly {max_attempts} request(s) should be sent in all, the first one \
             included; the backend received {}",
            run.received.len()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn every_request_carries_the_key_and_its_number() {
    let policy = policy(4, 50 * MS, NON_FATAL);
    let run = run(&policy, &Recorder::allowing(), vec![ok(1_000, 1)]).await;
    let keys: Vec<&str> = run
        .received
        .iter()
        .map(|r| r.attempt.key.as_str())
        .collect();
    assert!(
        keys.iter().all(|key| *key == KEY) && run.numbers() == vec![0, 1, 2, 3],
        "every request of one call carries the call's idempotency key ({KEY:?}) and its number, \
         0 for the first: expected keys all {KEY:?} and numbers [0, 1, 2, 3], got keys {keys:?} \
         and numbers {:?}",
        run.numbers()
    );
}
