//! Given: a request as the server's queue sees it, the queue's settings, and the answer the
//! server sends for a request it does not serve.

use std::fmt;
use std::time::Duration;

/// A point on the lab's virtual clock: the time since the run began.
pub type Time = Duration;

/// One attempt of a call, as it reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Unique per attempt: a retry is a new request with a new id.
    pub id: u64,
    /// When the client sent the attempt, as the client stamped it. Network time and clock skew
    /// lie between this and the moment the server's queue receives it.
    pub sent_at: Time,
    /// The deadline the client propagated with the attempt: the instant its caller gives up.
    pub deadline: Time,
}

/// The settings of an [`AdmissionQueue`](crate::AdmissionQueue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// The most requests the queue holds at once.
    pub max_len: usize,
    /// The queue serves the newest request first once its oldest request has waited longer than
    /// this (adaptive LIFO).
    pub lifo_after: Duration,
    /// The longest a request may wait in the queue (the delay bound).
    pub max_wait: Duration,
}

/// Why the server answered a request with an overload error instead of serving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ShedReason {
    /// The request's deadline had come when the server could have started it.
    DeadlinePassed,
    /// The queue already held `max_len` requests when it arrived.
    QueueFull,
    /// It waited in the queue longer than `max_wait`.
    WaitedTooLong,
}

/// A classifier's verdict on an error, as chapter 2 defined it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retryability {
    /// Waiting may fix it: the same request may succeed if sent again.
    Transient,
    /// Waiting will not fix it: stop now, and fix the cause.
    Permanent,
    /// Transient, and the server said how long to wait before the next try.
    After(Duration),
}

/// The server's answer to a request it did not serve: an overload error, never silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overloaded {
    /// The id of the request this answers.
    pub id: u64,
    /// Why the request was not served.
    pub reason: ShedReason,
}

impl Overloaded {
    /// The overload answer to `request`.
    pub fn new(request: &Request, reason: ShedReason) -> Self {
        Self {
            id: request.id,
            reason,
        }
    }

    /// The HTTP status the server answers with: `503 Service Unavailable`.
    pub fn status(&self) -> u16 {
        503
    }

    /// How a client classifies the answer, as chapter 2 taught: a 503 is transient. Whether to
    /// retry it now is the client's retry policy's decision (its budget, its backoff).
    pub fn retryability(&self) -> Retryability {
        Retryability::Transient
    }
}

impl fmt::Display for Overloaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.reason {
            ShedReason::DeadlinePassed => "its deadline had passed",
            ShedReason::QueueFull => "the queue was full",
            ShedReason::WaitedTooLong => "it waited too long in the queue",
        };
        write!(f, "HTTP 503 for request {}: {why}", self.id)
    }
}

impl std::error::Error for Overloaded {}
