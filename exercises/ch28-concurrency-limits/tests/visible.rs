//! Visible tests: run them with `cargo xtask check ch28` (or `cargo test -p ch28_concurrency_limits`).
//! The grader runs hidden checks beside them.

use std::time::Duration;

use ch28_concurrency_limits::{AimdConfig, AimdLimiter, GradientConfig, GradientLimit};

#[test]
fn the_limit_bounds_the_requests_in_flight() {
    let limiter = AimdLimiter::new(AimdConfig {
        initial: 2,
        ..AimdConfig::default()
    });
    let first = limiter.try_acquire();
    let second = limiter.try_acquire();
    assert!(first.is_some() && second.is_some());
    assert!(
        limiter.try_acquire().is_none(),
        "a third request is over the limit"
    );
    drop(first);
    assert_eq!(limiter.in_flight(), 1);
    assert!(limiter.try_acquire().is_some(), "the first place came back");
}

#[test]
fn a_drop_halves_the_limit() {
    let limiter = AimdLimiter::new(AimdConfig {
        initial: 8,
        ..AimdConfig::default()
    });
    limiter.try_acquire().expect("a place").dropped();
    assert_eq!(limiter.limit(), 4);
}

#[test]
fn steady_rtts_let_the_gradient_grow() {
    let mut limit = GradientLimit::new(GradientConfig::default());
    let before = limit.limit();
    limit.on_sample(Duration::from_millis(10));
    assert!(limit.on_sample(Duration::from_millis(10)) > before);
}
