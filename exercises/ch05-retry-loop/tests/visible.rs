//! Visible tests: run them with `cargo xtask check ch05` (or `cargo test -p ch05_retry_loop`).
//! The grader runs hidden checks beside them.

use std::cell::RefCell;
use std::time::Duration;

use ch05_retry_loop::stubs::{ScriptedService, ServiceError};
use ch05_retry_loop::{Retry, RetryEvent};

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn two_timeouts_then_success() {
    let service = ScriptedService::failing_with([ServiceError::Timeout, ServiceError::Timeout]);
    let retry = Retry::new(|| [100 * MS, 200 * MS, 400 * MS]);
    let result = retry.run(|| service.call()).await;
    assert_eq!(result, Ok(3));
    assert_eq!(service.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_404_is_not_retried() {
    let service = ScriptedService::always_failing_with(ServiceError::Status(404));
    let retry = Retry::new(|| [100 * MS, 200 * MS]).when(ServiceError::is_transient);
    let result = retry.run(|| service.call()).await;
    assert_eq!(result, Err(ServiceError::Status(404)));
    assert_eq!(service.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_hook_hears_of_every_retry() {
    let service = ScriptedService::always_failing_with(ServiceError::Status(503));
    let log = RefCell::new(Vec::new());
    let retry =
        Retry::new(|| [100 * MS, 200 * MS]).notify(|event: &RetryEvent<'_, ServiceError>| {
            log.borrow_mut().push((event.attempt, event.delay));
        });
    let result = retry.run(|| service.call()).await;
    assert_eq!(result, Err(ServiceError::Status(503)));
    assert_eq!(service.calls(), 3);
    assert_eq!(*log.borrow(), [(1, 100 * MS), (2, 200 * MS)]);
}
