//! Given: the hedging policy, the status codes a request can fail with, and what one request
//! carries.

use std::fmt;
use std::time::Duration;

/// Why a request failed: a few of gRPC's status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    Unavailable,
    ResourceExhausted,
    Internal,
    Aborted,
    DeadlineExceeded,
    InvalidArgument,
    NotFound,
    PermissionDenied,
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// gRPC's hedging policy (proposal A6): how many requests, how far apart, and which failures
/// leave the others a chance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HedgingPolicy {
    /// Requests in all: the first one and its hedges. At least 1.
    pub max_attempts: u32,
    /// How long to wait for an answer before sending the next hedge. Zero sends every request at
    /// once.
    pub hedging_delay: Duration,
    /// Failures after which the other requests may still succeed. Any other failure is fatal.
    pub non_fatal: Vec<Code>,
}

impl HedgingPolicy {
    /// A6's example: four requests, 500 ms apart; `Unavailable`, `Internal` and `Aborted` are
    /// not fatal.
    pub fn a6_example() -> Self {
        Self {
            max_attempts: 4,
            hedging_delay: Duration::from_millis(500),
            non_fatal: vec![Code::Unavailable, Code::Internal, Code::Aborted],
        }
    }

    /// Whether the other requests may still succeed after this failure.
    pub fn is_non_fatal(&self, code: Code) -> bool {
        self.non_fatal.contains(&code)
    }
}

/// What one request carries to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// 0 for the first request, 1 for the first hedge, and so on: what gRPC sends as
    /// `grpc-previous-rpc-attempts`.
    pub number: u32,
    /// The idempotency key of the operation: the same on every request of one call.
    pub key: String,
}

/// How a hedged call can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HedgeError {
    /// A request failed with a fatal code: the call stops there.
    Fatal(Code),
    /// Every request sent failed with a non-fatal code, and no more may be sent; the code is
    /// the last failure's.
    Exhausted(Code),
}

impl fmt::Display for HedgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeError::Fatal(code) => write!(f, "fatal failure: {code}"),
            HedgeError::Exhausted(code) => write!(f, "every request failed, the last with {code}"),
        }
    }
}

impl std::error::Error for HedgeError {}
