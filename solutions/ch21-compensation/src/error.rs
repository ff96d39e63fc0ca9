//! Given: how a step fails, and whether waiting can fix it.

use std::fmt;

/// What a failure says about the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Waiting may fix it: a dropped connection, a timeout, HTTP 408, 429 or 503.
    Transient,
    /// Waiting will not fix it: a declined card, an unknown order, a refund the payment
    /// provider refuses. Trying again only repeats the failure.
    Permanent,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Transient => "transient",
            Self::Permanent => "permanent",
        })
    }
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

    /// Whether waiting may fix this failure.
    pub fn is_transient(&self) -> bool {
        self.kind == ErrorKind::Transient
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.kind)
    }
}

impl std::error::Error for StepError {}
