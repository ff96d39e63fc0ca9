//! Visible tests: run them with `cargo xtask check ch11` (or `cargo test -p ch11_retry_after`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch11_retry_after::stubs::{Reply, ScriptedServer, clock_start};
use ch11_retry_after::{Decision, next_delay, parse_retry_after, retry_honouring_retry_after};

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn rfc_examples_received_two_minutes_before_the_date() {
    // The server's clock starts at Fri, 31 Dec 1999 23:57:59 GMT.
    let received_at = clock_start();
    assert_eq!(parse_retry_after("120", received_at), Some(120 * SECOND));
    assert_eq!(
        parse_retry_after("Fri, 31 Dec 1999 23:59:59 GMT", received_at),
        Some(120 * SECOND)
    );
}

#[test]
fn garbage_is_no_hint() {
    assert_eq!(parse_retry_after("soon", clock_start()), None);
}

#[test]
fn a_hint_is_capped() {
    let decision = next_delay(Some(600 * SECOND), SECOND, 30 * SECOND, 3_600 * SECOND);
    assert_eq!(decision, Decision::Sleep(30 * SECOND));
}

#[tokio::test(start_paused = true)]
async fn waits_what_the_server_asks_then_succeeds() {
    let server = ScriptedServer::new([Reply::retry_after(503, "2"), Reply::Succeed]);
    let backoff = |_retry| Duration::from_millis(100);
    let result =
        retry_honouring_retry_after(|| server.call(), 3, backoff, 30 * SECOND, 60 * SECOND).await;
    assert_eq!(result, Ok(2));
    assert_eq!(server.call_times(), [Duration::ZERO, 2 * SECOND]);
}
