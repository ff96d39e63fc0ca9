//! Visible tests: run them with `cargo xtask check ch12` (or `cargo test -p ch12_retry_in_one_place`).
//! The grader runs hidden checks beside them.

use ch12_retry_in_one_place::stubs::{Backend, Counted};
use ch12_retry_in_one_place::{
    CallError, Downstream, Frontend, Repository, RetryPolicy, Service, amplification,
};

#[test]
fn three_layers_of_four_attempts_make_64_calls() {
    assert_eq!(amplification(&[4, 4, 4]), 64);
}

#[tokio::test(start_paused = true)]
async fn a_healthy_backend_is_called_once() {
    let backend = Backend::healthy();
    let frontend = Frontend::new(
        Service::new(Repository::new(&backend)),
        RetryPolicy::standard(12),
    );
    assert_eq!(frontend.call().await, Ok(1));
    assert_eq!(backend.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_total_outage_reaches_the_backend_once_per_frontend_attempt() {
    let backend = Backend::down();
    let repository = Counted::new(Repository::new(&backend));
    let service = Counted::new(Service::new(&repository));
    let frontend = Frontend::new(&service, RetryPolicy::standard(12));

    assert_eq!(frontend.call().await, Err(CallError::Unavailable));
    assert_eq!(service.calls(), 4, "the frontend calls the service 4 times");
    assert_eq!(
        repository.calls(),
        4,
        "the service calls the repository once per call"
    );
    assert_eq!(
        backend.calls(),
        4,
        "the repository calls the backend once per call"
    );
}
