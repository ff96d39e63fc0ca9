//! Given, and under test: a complete and correct retry loop. Leave this file as it is: the grader
//! puts the shipped version back before it runs your tests, and its hidden mutants are small edits
//! of exactly this code.
//!
//! [`retry_with_backoff`] calls an operation until it succeeds, fails permanently or runs out of
//! attempts. Between two attempts it sleeps a full-jitter delay on tokio's clock and first tells a
//! hook about the retry. [`pay`] uses it to charge an order through a [`PaymentService`], sending
//! one idempotency key with every attempt.

use std::future::Future;
use std::time::Duration;

use rand::{Rng, RngExt};

// ANCHOR: policy
/// How often to call, and how long to wait in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The most calls the loop makes, the first one included. Zero is treated as one.
    pub max_attempts: u32,
    /// The ceiling of the first sleep; every later ceiling is twice the one before.
    pub base: Duration,
    /// No sleep is ever longer than this.
    pub cap: Duration,
}

/// What the loop tells its hook, once per retry, just before it sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryEvent<'a, E> {
    /// The attempt that just failed, counted from 1.
    pub attempt: u32,
    /// The delay the loop is about to sleep before the next attempt.
    pub delay: Duration,
    /// The error of the attempt that just failed; the loop retries only transient ones.
    pub error: &'a E,
}
// ANCHOR_END: policy

// ANCHOR: backoff
/// The largest delay allowed before retry number `retry` (0 for the sleep after the first
/// failure): `min(cap, base · 2^retry)`, exact for every `retry` up to `u32::MAX`.
pub fn backoff_ceiling(retry: u32, policy: &RetryPolicy) -> Duration {
    const NANOS_PER_SECOND: u128 = 1_000_000_000;
    // base · 2^retry in nanoseconds. From retry 127 on, the product exceeds the largest Duration
    // for any base but zero, so 2^127 can stand in for every larger power; a product too large
    // for a u128 is just as far beyond any cap.
    let factor = 1u128 << retry.min(127);
    match policy.base.as_nanos().checked_mul(factor) {
        Some(nanos) if nanos < policy.cap.as_nanos() => {
            // Below the cap, so the whole seconds fit in a u64 just as the cap's do.
            Duration::new(
                (nanos / NANOS_PER_SECOND) as u64,
                (nanos % NANOS_PER_SECOND) as u32,
            )
        }
        _ => policy.cap,
    }
}

/// Full jitter: a delay drawn uniformly from `[0, backoff_ceiling(retry, policy)]`, in whole
/// milliseconds, because tokio's timer counts whole milliseconds: a finer sleep would end on the
/// next millisecond anyway.
pub fn full_jitter(retry: u32, policy: &RetryPolicy, rng: &mut impl Rng) -> Duration {
    let ceiling_ms = u64::try_from(backoff_ceiling(retry, policy).as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(rng.random_range(0..=ceiling_ms))
}
// ANCHOR_END: backoff

// ANCHOR: retry_with_backoff
/// Calls `op` until it returns `Ok`, returns an error that `is_transient` rejects, or has been
/// called `policy.max_attempts` times; returns the first `Ok` or the last error, as `op` gave it.
///
/// Before each retry it calls `notify` with a [`RetryEvent`], then sleeps the event's delay (a
/// [`full_jitter`] draw) on tokio's clock. It never sleeps before the first attempt nor after the
/// last one, and it does not call `notify` when it gives up.
pub async fn retry_with_backoff<T, E, F, Fut>(
    mut op: F,
    policy: &RetryPolicy,
    is_transient: impl Fn(&E) -> bool,
    rng: &mut impl Rng,
    mut notify: impl FnMut(&RetryEvent<'_, E>),
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut attempt = 1;
    loop {
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if !is_transient(&error) || attempt >= policy.max_attempts {
            return Err(error);
        }
        let delay = full_jitter(attempt - 1, policy, rng);
        notify(&RetryEvent {
            attempt,
            delay,
            error: &error,
        });
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}
// ANCHOR_END: retry_with_backoff

// ANCHOR: payments
/// What a payment service can answer instead of a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentError {
    /// The service is overloaded or briefly down (think HTTP 503): worth another try.
    Unavailable,
    /// No answer in time. The charge may or may not have happened: worth another try, with the
    /// same idempotency key, so that a charge that did happen is not made twice.
    TimedOut,
    /// The card was declined (think HTTP 402): waiting cannot change that.
    Declined,
}

impl PaymentError {
    /// Whether waiting and trying again can help.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable | Self::TimedOut)
    }
}

/// One charge, as sent to the payment service on every attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeRequest {
    /// Names the payment, not the attempt: the service answers a repeated key with the result of
    /// the first charge instead of charging again.
    pub idempotency_key: String,
    /// How much to charge, in cents.
    pub amount_cents: u64,
}

/// The service's proof that it charged the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The service's id of the charge.
    pub charge_id: String,
}

/// A remote payment service: the dependency that [`pay`] retries. In test builds, mockall
/// generates `MockPaymentService` from this trait.
#[cfg_attr(test, mockall::automock)]
pub trait PaymentService {
    /// Sends one charge request.
    fn charge(
        &self,
        request: ChargeRequest,
    ) -> impl Future<Output = Result<Receipt, PaymentError>> + Send;
}

/// Charges `amount_cents` for order `order_id`, retrying transient failures under `policy`.
///
/// Every attempt sends the same request, with the idempotency key `pay-order-<order_id>`.
pub async fn pay(
    service: &impl PaymentService,
    order_id: u64,
    amount_cents: u64,
    policy: &RetryPolicy,
    rng: &mut impl Rng,
) -> Result<Receipt, PaymentError> {
    let request = ChargeRequest {
        idempotency_key: format!("pay-order-{order_id}"),
        amount_cents,
    };
    retry_with_backoff(
        || service.charge(request.clone()),
        policy,
        PaymentError::is_transient,
        rng,
        |_| {},
    )
    .await
}
// ANCHOR_END: payments
