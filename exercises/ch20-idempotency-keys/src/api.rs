//! Given: the payment API of this chapter, its errors, and the client's retry policy.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use rand::{Rng, RngExt};

use crate::key::IdempotencyKey;

/// "Charge this customer this amount": the request a client sends, and the server fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChargeRequest {
    pub customer: String,
    pub amount_cents: u64,
}

impl ChargeRequest {
    pub fn new(customer: impl Into<String>, amount_cents: u64) -> Self {
        Self {
            customer: customer.into(),
            amount_cents,
        }
    }
}

/// Proof that money moved: the backend numbers its charges from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub charge_id: u32,
    pub customer: String,
    pub amount_cents: u64,
}

/// How a charge can fail once the payment backend has started on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentError {
    /// The card was declined (HTTP 402): a final answer.
    Declined,
    /// The backend failed part-way (HTTP 500): whether money moved is not known.
    Internal,
}

impl fmt::Display for PaymentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Declined => f.write_str("402 card declined"),
            Self::Internal => f.write_str("500 internal error during the charge"),
        }
    }
}

impl std::error::Error for PaymentError {}

/// Why an [`IdempotencyStore`](crate::IdempotencyStore) refused a request without executing it.
/// A refusal is never saved: it leaves the key as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdempotencyError {
    /// The key was first used with a request whose fingerprint differs (HTTP 422).
    KeyReusedWithDifferentRequest,
    /// The first request with this key is still executing (HTTP 409): try again later.
    InProgress,
}

impl fmt::Display for IdempotencyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::KeyReusedWithDifferentRequest => {
                f.write_str("422 idempotency key already used for a different request")
            }
            Self::InProgress => {
                f.write_str("409 a request with this idempotency key is in progress")
            }
        }
    }
}

impl std::error::Error for IdempotencyError {}

/// Everything a client can get back instead of a [`Receipt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// No answer within the client's timeout. The charge may or may not have happened.
    Timeout,
    /// HTTP 503: the server turned the request away before doing anything.
    Unavailable,
    /// HTTP 409: an earlier attempt with this key is still executing.
    InProgress,
    /// HTTP 422: this key was first used for a different request.
    KeyReused,
    /// HTTP 400: the request failed validation before execution; nothing was saved.
    Invalid(String),
    /// The charge's own outcome, saved under the key and replayed to every retry.
    Payment(PaymentError),
}

impl ApiError {
    /// The HTTP status the error stands for; `None` for a timeout, which has no answer at all.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Timeout => None,
            Self::Unavailable => Some(503),
            Self::InProgress => Some(409),
            Self::KeyReused => Some(422),
            Self::Invalid(_) => Some(400),
            Self::Payment(PaymentError::Declined) => Some(402),
            Self::Payment(PaymentError::Internal) => Some(500),
        }
    }
}

impl From<IdempotencyError> for ApiError {
    fn from(refusal: IdempotencyError) -> Self {
        match refusal {
            IdempotencyError::KeyReusedWithDifferentRequest => Self::KeyReused,
            IdempotencyError::InProgress => Self::InProgress,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("timed out: outcome unknown"),
            Self::Unavailable => f.write_str("503 service unavailable"),
            Self::InProgress => IdempotencyError::InProgress.fmt(f),
            Self::KeyReused => IdempotencyError::KeyReusedWithDifferentRequest.fmt(f),
            Self::Invalid(reason) => write!(f, "400 invalid request: {reason}"),
            Self::Payment(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ApiError {}

/// A way to send a charge to the payment service: over a network, or straight to a server.
pub trait PaymentApi {
    /// One attempt: `request`, carrying `key` as its idempotency key.
    fn charge(
        &self,
        key: &IdempotencyKey,
        request: &ChargeRequest,
    ) -> impl Future<Output = Result<Receipt, ApiError>>;
}

/// How often and how patiently the client retries: at most `attempts` calls, with a full-jitter
/// sleep between two calls (chapter 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Calls in all, the first one included.
    pub attempts: u32,
    pub base: Duration,
    pub cap: Duration,
}

impl Default for RetryPolicy {
    /// 5 attempts, base 100 ms, cap 2 s.
    fn default() -> Self {
        Self {
            attempts: 5,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// The sleep before retry number `retry` (0 for the sleep after the first failure): drawn
    /// uniformly from `[0, min(cap, base · 2^retry)]`.
    pub fn delay(&self, retry: u32, rng: &mut impl Rng) -> Duration {
        let ceiling = 1u32
            .checked_shl(retry)
            .and_then(|factor| self.base.checked_mul(factor))
            .map_or(self.cap, |exponential| exponential.min(self.cap));
        rng.random_range(Duration::ZERO..=ceiling)
    }
}
