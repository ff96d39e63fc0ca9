//! Given: how a step fails, and whether waiting can fix it.

use std::fmt;
use std::time::Duration;

/// What a failure says about the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Waiting may fix it: a dropped connection, a timeout, HTTP 408, 429 or most 5xx.
    Transient,
    /// Waiting will not fix it: a bad request, missing credentials, a missing record, a declined
    /// card. Retrying only repeats the failure (and the load).
    Permanent,
    /// Transient, and the server said how long to wait: a `Retry-After` header, usually on a 429
    /// or a 503.
    RetryAfter(Duration),
}

/// The error a step's call ends with: its kind, and a message for the saga log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepError {
    pub kind: ErrorKind,
    pub message: String,
}

impl StepError {
    /// A failure that waiting may fix.
    pub fn transient(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Transient,
            message: message.into(),
        }
    }

    /// A failure that waiting will not fix.
    pub fn permanent(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Permanent,
            message: message.into(),
        }
    }

    /// A transient failure with the server's hint of when to come back.
    pub fn retry_after(delay: Duration, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::RetryAfter(delay),
            message: message.into(),
        }
    }

    /// An HTTP error response: its kind comes from [`crate::classify_status`], its message is
    /// the status line (and the `Retry-After` value, if the response had one).
    pub fn http(status: u16, retry_after: Option<Duration>) -> Self {
        let mut message = match reason_phrase(status) {
            "" => format!("HTTP {status}"),
            phrase => format!("HTTP {status} {phrase}"),
        };
        if let Some(delay) = retry_after {
            message.push_str(&format!(" (Retry-After: {} s)", delay.as_secs_f64()));
        }
        Self {
            kind: crate::classify_status(status, retry_after),
            message,
        }
    }

    /// An attempt cut off by the per-attempt timeout: transient, and its outcome is unknown
    /// (the request may have taken effect), which is why every attempt carries the same
    /// idempotency key.
    pub fn timed_out(limit: Duration) -> Self {
        Self::transient(format!("timed out after {} ms", limit.as_millis()))
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StepError {}

/// The reason phrase of the statuses a saga step is likely to meet.
fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}
