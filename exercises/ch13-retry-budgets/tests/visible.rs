//! Visible tests: run them with `cargo xtask check ch13` (or `cargo test -p ch13_retry_budgets`).
//! The grader runs hidden checks beside them.

use std::sync::Arc;

use ch13_retry_budgets::stubs::Backend;
use ch13_retry_budgets::{RetryBudget, retry_with_budget};

/// A6's example settings: 10 tokens, 0.1 earned per success.
fn a6_budget() -> RetryBudget {
    RetryBudget::new(10.0, 0.1).expect("10 tokens and a ratio of 0.1 are valid settings")
}

#[test]
fn a_new_budget_is_full() {
    let budget = a6_budget();
    assert_eq!(budget.tokens(), 10.0);
    assert!(budget.can_retry());
}

#[test]
fn five_failures_reach_the_threshold() {
    let budget = a6_budget();
    for expected in [9.0, 8.0, 7.0, 6.0] {
        budget.on_failure();
        assert_eq!(budget.tokens(), expected);
        assert!(
            budget.can_retry(),
            "{expected} tokens is above 5: retries allowed"
        );
    }
    budget.on_failure();
    assert_eq!(budget.tokens(), 5.0);
    assert!(
        !budget.can_retry(),
        "5 tokens is not above 5: retries refused"
    );
}

#[tokio::test]
async fn an_outage_costs_only_a_few_retries() {
    let backend = Backend::down();
    let budget = Arc::new(a6_budget());
    for _ in 0..100 {
        let result = retry_with_budget(|| backend.call(), 3, &budget).await;
        assert!(result.is_err());
    }
    // Without a budget: 300 calls. With it: 100 first attempts and 3 retries.
    assert_eq!(backend.calls(), 103);
    assert_eq!(budget.tokens(), 0.0);
}

#[tokio::test]
async fn one_failure_in_twenty_is_always_retried() {
    let backend = Backend::failing_every(20);
    let budget = a6_budget();
    for _ in 0..100 {
        let result = retry_with_budget(|| backend.call(), 3, &budget).await;
        assert!(result.is_ok());
    }
    // 100 requests, of which 5 needed one retry.
    assert_eq!(backend.calls(), 105);
    assert!(budget.can_retry());
}
