//! Visible tests: run them with `cargo xtask check ch23` (or `cargo test -p ch23_circuit_breakers`).
//! The grader runs hidden checks beside them.

use std::sync::Arc;
use std::time::Duration;

use ch23_circuit_breakers::stubs::Dependency;
use ch23_circuit_breakers::{BreakerConfig, BreakerError, Breaks, CircuitBreaker, State, Window};

fn small_config() -> BreakerConfig {
    BreakerConfig {
        failure_rate_percent: 50,
        minimum_calls: 4,
        window: Window::Count(4),
        break_duration: Duration::from_secs(10),
        breaks: Breaks::Fixed,
        half_open_probes: 1,
        slow_call: None,
    }
}

#[tokio::test(start_paused = true)]
async fn a_healthy_dependency_keeps_the_breaker_closed() {
    let breaker = CircuitBreaker::new(small_config());
    let dependency = Dependency::healthy();
    for _ in 0..10 {
        assert!(breaker.call(|| dependency.handle()).await.is_ok());
    }
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(dependency.calls(), 10);
}

#[tokio::test(start_paused = true)]
async fn an_outage_opens_the_breaker_and_calls_stop_reaching_it() {
    let breaker = CircuitBreaker::new(small_config());
    let dependency = Dependency::down();
    for _ in 0..4 {
        let result = breaker.call(|| dependency.handle()).await;
        assert!(matches!(result, Err(BreakerError::Failed(_))));
    }
    assert_eq!(breaker.state(), State::Open);
    let refused = breaker.call(|| dependency.handle()).await;
    assert_eq!(refused, Err(BreakerError::Rejected));
    assert_eq!(
        dependency.calls(),
        4,
        "the refused call never reached the dependency"
    );
}

#[tokio::test(start_paused = true)]
async fn after_the_break_one_probe_closes_it_again() {
    let breaker = Arc::new(CircuitBreaker::new(small_config()));
    let dependency = Dependency::down();
    for _ in 0..4 {
        let _ = breaker.call(|| dependency.handle()).await;
    }
    dependency.set_down(false);
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(breaker.state(), State::HalfOpen);
    assert!(breaker.call(|| dependency.handle()).await.is_ok());
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_dependency_counts_calls_in_flight_even_when_they_are_dropped() {
    let dependency = Dependency::healthy();
    dependency.set_latency(Duration::from_secs(5));
    let cut = tokio::time::timeout(Duration::from_secs(1), dependency.handle()).await;
    assert!(cut.is_err(), "the 5 s call was cut after 1 s");
    assert_eq!(dependency.in_flight(), 0, "the dropped call left the count");
}
