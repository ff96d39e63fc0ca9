//! Chapter 24 — Hedged requests. The reference solution.

use std::future::Future;

use tokio::task::JoinSet;
use tokio::time::Instant;

pub mod budget;
pub mod lab;
pub mod policy;
pub mod stubs;

pub use budget::{Budget, TokenBudget, Unlimited};
pub use policy::{Attempt, Code, HedgeError, HedgingPolicy};

/// Calls `send` with hedging: the first request at once, another each `hedging_delay` without an
/// answer, at most `max_attempts` in all; the first success wins and the others are cancelled.
///
/// A non-fatal failure sends the next hedge at once; a fatal one ends the call. Hedges after the
/// first request are sent only while `budget` allows them, and every answer is recorded in it.
pub async fn hedged<T, F, Fut>(
    policy: &HedgingPolicy,
    key: &str,
    budget: &dyn Budget,
    mut send: F,
) -> Result<T, HedgeError>
where
    T: Send + 'static,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, Code>> + Send + 'static,
{
    // Dropping the set when we return cancels every request still in flight.
    let mut in_flight = JoinSet::new();
    let mut sent = 0;
    let mut next_send_at = Instant::now();
    let mut budget_refused = false;
    let mut last_failure = None;
    loop {
        let may_send = !budget_refused && sent < policy.max_attempts;
        if may_send && Instant::now() >= next_send_at {
            if sent == 0 || budget.can_retry() {
                let attempt = Attempt {
                    number: sent,
                    key: key.to_owned(),
                };
                in_flight.spawn(send(attempt));
                sent += 1;
                next_send_at = Instant::now() + policy.hedging_delay;
            } else {
                budget_refused = true;
            }
            continue;
        }
        if in_flight.is_empty() && !may_send {
            let code = last_failure.expect("a call that sent nothing cannot have failed");
            return Err(HedgeError::Exhausted(code));
        }
        tokio::select! {
            biased;
            Some(joined) = in_flight.join_next() => {
                let reply = joined.unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()));
                match reply {
                    Ok(value) => {
                        budget.on_success();
                        return Ok(value);
                    }
                    Err(code) if policy.is_non_fatal(code) => {
                        budget.on_failure();
                        last_failure = Some(code);
                        next_send_at = Instant::now();
                    }
                    Err(code) => return Err(HedgeError::Fatal(code)),
                }
            }
            _ = tokio::time::sleep_until(next_send_at), if may_send => {}
        }
    }
}
