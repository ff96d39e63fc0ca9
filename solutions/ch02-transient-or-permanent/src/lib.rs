//! Chapter 2 — Transient or permanent?: the reference solution.
//!
//! Two functions: [`classify`] decides whether waiting could fix an error, and
//! [`retry_transient`] retries an operation only while its errors are ones that waiting could fix.

use std::future::Future;
use std::io::ErrorKind;
use std::time::Duration;

pub mod errors;
pub mod stubs;

pub use errors::{CallError, Retryability};

#[cfg(test)]
mod decision_table;

/// The verdict on one error: is it worth trying the same request again, and when?
pub fn classify(error: &CallError) -> Retryability {
    match *error {
        CallError::Http {
            status,
            retry_after,
        } => classify_status(status, retry_after),
        CallError::Io(kind) => classify_io(kind),
        // The attempt ran out of time; the next one may not.
        CallError::Timeout => Retryability::Transient,
        // The service answered, and meant it: the same request gets the same answer.
        CallError::InvalidArguments | CallError::NotFound => Retryability::Permanent,
    }
}

/// The verdict on an HTTP error status, with the server's `Retry-After` value if it sent one.
///
/// A hint turns a transient status into [`Retryability::After`]; it never makes a permanent
/// status worth retrying.
fn classify_status(status: u16, retry_after: Option<Duration>) -> Retryability {
    if !is_transient_status(status) {
        return Retryability::Permanent;
    }
    match retry_after {
        Some(hint) => Retryability::After(hint),
        None => Retryability::Transient,
    }
}

/// Whether the same request could succeed later, judged by the status code alone.
fn is_transient_status(status: u16) -> bool {
    // Outside 100..=599 a status is invalid (libraries use 600..=999 for failures of their own),
    // and RFC 9110 says to handle it as a 5xx: here, as a 500.
    let status = if (100..=599).contains(&status) {
        status
    } else {
        500
    };
    match status {
        // 408 Request Timeout and 429 Too Many Requests: the request was fine, the moment was not.
        408 | 429 => true,
        // 501 Not Implemented and 505 HTTP Version Not Supported: this server will never do it.
        501 | 505 => false,
        // Every other server error, known or not, counts as a 500: the server failed this time.
        500..=599 => true,
        // Every other client error, known or not, counts as a 400: the request itself is wrong.
        // 1xx to 3xx are not errors, so there is nothing to retry.
        _ => false,
    }
}

/// The verdict on a transport failure: transient only for kinds known to pass with time.
fn classify_io(kind: ErrorKind) -> Retryability {
    match kind {
        // The connection broke, or could not be made just now.
        ErrorKind::ConnectionRefused
        | ErrorKind::ConnectionReset
        | ErrorKind::ConnectionAborted
        | ErrorKind::NotConnected
        | ErrorKind::BrokenPipe
        | ErrorKind::UnexpectedEof
        // The network between us is down or has lost its route.
        | ErrorKind::HostUnreachable
        | ErrorKind::NetworkUnreachable
        | ErrorKind::NetworkDown
        // The operation was cut short, and says so.
        | ErrorKind::TimedOut
        | ErrorKind::Interrupted
        | ErrorKind::WouldBlock => Retryability::Transient,
        // Everything else, including kinds added to std in the future: permanent until shown
        // otherwise. An unknown error is reported at once instead of being retried blindly.
        _ => Retryability::Permanent,
    }
}

/// Calls `op` at most `max_attempts` times and returns its first `Ok`, or an error: the first
/// permanent one, or the last one when the attempts run out.
///
/// A transient error is retried at once; an `After(d)` error after sleeping `d` on tokio's
/// clock. Nothing sleeps after the last attempt. `max_attempts = 0` is treated as 1: without a
/// call there is no error to return.
pub async fn retry_transient<T, E, F, Fut, C>(
    max_attempts: u32,
    mut op: F,
    classify: C,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    C: Fn(&E) -> Retryability,
{
    let mut calls_made = 0;
    loop {
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        calls_made += 1;
        let wait = match classify(&error) {
            Retryability::Permanent => return Err(error),
            Retryability::Transient => None,
            Retryability::After(hint) => Some(hint),
        };
        if calls_made >= max_attempts {
            return Err(error);
        }
        if let Some(hint) = wait {
            tokio::time::sleep(hint).await;
        }
    }
}
