//! When requests are sent: the first at once, hedges every delay, never more than allowed.

use std::time::Duration;

use exercise::Code;

use super::fixture::{KEY, MS, NON_FATAL, Recorder, fail, ms, ok, policy, run};

#[tokio::test(start_paused = true)]
async fn hedges_go_out_every_delay() {
    // (max_attempts, delay in ms): every request is slow, so every hedge is sent. The last two
    // are beyond the caps a hedging loop might hide: 300 requests (A6's clients cap at 5; this
    // policy does not), and delays of 2 hours and of 50 days (more milliseconds than a u32 holds).
    let cases = [
        (4u32, 100u64),
        (3, 250),
        (1, 100),
        (2, 7),
        (300, 7),
        (3, 7_200_000),
        (2, 4_320_000_000),
    ];
    for (max_attempts, delay) in cases {
        let policy = policy(max_attempts, Duration::from_millis(delay), NON_FATAL);
        // Slower than the whole schedule: nothing answers before the last hedge is out.
        let latency = delay * u64::from(max_attempts) + 10_000;
        let run = run(&policy, &Recorder::allowing(), vec![ok(latency, 1)]).await;
        let expected: Vec<_> = (0..u64::from(max_attempts))
            .map(|k| Duration::from_millis(k * delay))
            .collect();
        assert_eq!(
            run.sent_at(),
            expected,
            "max_attempts = {max_attempts}, hedging_delay = {delay} ms, and no request answers \
             for {latency} ms: requests should go out at {}, but yours went out at {}. The first is sent \
             at once, then one hedge every hedging_delay while no answer has come, {max_attempts} \
             in all",
            ms(&expected),
            ms(&run.sent_at())
        );
    }
}

#[tokio::test(start_paused = true)]
async fn zero_delay_sends_every_request_at_once() {
    // 300: no cap on the requests in flight together.
    for max_attempts in [4u32, 300] {
        let policy = policy(max_attempts, 0 * MS, NON_FATAL);
        let run = run(&policy, &Recorder::allowing(), vec![ok(300, 1)]).await;
        let expected = vec![0 * MS; max_attempts as usize];
        assert_eq!(
            run.sent_at(),
            expected,
            "max_attempts = {max_attempts} and hedging_delay = 0: all {max_attempts} requests \
             should go out at once, at 0 ms; yours went out at {}",
            ms(&run.sent_at())
        );
    }
}

#[tokio::test(start_paused = true)]
async fn never_more_than_max_attempts() {
    // 300: beyond the caps a loop might hide (A6's clients' 5, 10, 100, a u8's 255).
    for max_attempts in [1u32, 2, 5, 300] {
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
