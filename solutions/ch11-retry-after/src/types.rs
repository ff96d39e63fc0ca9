//! Given: the failed response a retry loop sees, and what it decides to do next.

use std::error::Error;
use std::fmt;
use std::time::{Duration, SystemTime};

// ANCHOR: http_error
/// A failed HTTP call, as the retry loop sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// The status code, such as 503 (Service Unavailable) or 429 (Too Many Requests).
    pub status: u16,
    /// The raw value of the response's `Retry-After` header, exactly as received, if it had one.
    pub retry_after: Option<String>,
    /// When the response was received, on the wall clock: the moment a delay in the header
    /// counts from, and the "now" to compare an HTTP-date in the header with.
    pub received_at: SystemTime,
}
// ANCHOR_END: http_error

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.retry_after {
            Some(value) => write!(f, "HTTP {} (Retry-After: {value})", self.status),
            None => write!(f, "HTTP {}", self.status),
        }
    }
}

impl Error for HttpError {}

// ANCHOR: decision
/// What to do after a failed attempt that may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Sleep this long, then make the next attempt.
    Sleep(Duration),
    /// Stop now and report the failure: no sleep could end before the budget runs out.
    GiveUp,
}
// ANCHOR_END: decision
