//! Visible tests: run them with `cargo xtask check ch02` (or `cargo test -p ch02_transient_or_permanent`).
//! The grader runs hidden checks beside them.

use std::io::ErrorKind;
use std::time::Duration;

use ch02_transient_or_permanent::stubs::ScriptedService;
use ch02_transient_or_permanent::{CallError, Retryability, classify, retry_transient};

#[test]
fn a_503_is_transient() {
    assert_eq!(classify(&CallError::http(503)), Retryability::Transient);
}

#[test]
fn a_404_is_permanent() {
    assert_eq!(classify(&CallError::http(404)), Retryability::Permanent);
}

#[test]
fn a_429_with_retry_after_waits_as_told() {
    let error = CallError::Http {
        status: 429,
        retry_after: Some(Duration::from_secs(3)),
    };
    assert_eq!(
        classify(&error),
        Retryability::After(Duration::from_secs(3))
    );
}

#[tokio::test(start_paused = true)]
async fn connection_resets_are_retried_until_success() {
    let reset = CallError::Io(ErrorKind::ConnectionReset);
    let service = ScriptedService::failing_with([reset, reset]);
    let result = retry_transient(3, || service.call(), classify).await;
    assert_eq!(result, Ok(3));
    assert_eq!(service.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn invalid_arguments_are_tried_once() {
    let service = ScriptedService::always_failing(CallError::InvalidArguments);
    let result = retry_transient(5, || service.call(), classify).await;
    assert_eq!(result, Err(CallError::InvalidArguments));
    assert_eq!(service.calls(), 1);
}
