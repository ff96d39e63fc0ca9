//! What the caller gets back: the operation's own result, or a refusal.

use std::time::Duration;

use exercise::{BreakerError, Window};

use super::fixture::{breaker, config, opened};

#[tokio::test(start_paused = true)]
async fn the_caller_gets_the_operations_result() {
    let breaker = breaker(config(50, 10, Window::Count(10)));
    let ok: Result<&str, BreakerError<u16>> = breaker.call(|| async { Ok("paid") }).await;
    assert_eq!(
        ok,
        Ok("paid"),
        "a successful call should return the operation's own Ok value"
    );
    let failed: Result<&str, BreakerError<u16>> = breaker.call(|| async { Err(503) }).await;
    assert_eq!(
        failed,
        Err(BreakerError::Failed(503)),
        "a failed call should return the operation's own error inside BreakerError::Failed"
    );
    let slow: Result<u64, BreakerError<u16>> = breaker
        .call(|| async {
            tokio::time::sleep(Duration::from_secs(90)).await;
            Ok(90)
        })
        .await;
    assert_eq!(
        slow,
        Ok(90),
        "a call that takes 90 s but succeeds should return its Ok value"
    );

    let open = opened(config(50, 4, Window::Count(4))).await;
    let refused: Result<&str, BreakerError<u16>> = open.call(|| async { Ok("never") }).await;
    assert_eq!(
        refused,
        Err(BreakerError::Rejected),
        "a call refused by the open breaker should return BreakerError::Rejected"
    );
}
