//! Given: why [`Exponential::new`](crate::Exponential::new) refuses a configuration.

use std::fmt;
use std::time::Duration;

/// A backoff configuration that cannot describe a sensible schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidBackoff {
    /// `base` is zero: every delay would be zero, a hot retry loop instead of a backoff.
    ZeroBase,
    /// `factor` is below 1: the delays would shrink (a factor of 0 gives 0 after the first one).
    FactorBelowOne { factor: u32 },
    /// `base` is longer than `cap`: the cap would cut even the first delay.
    BaseAboveCap { base: Duration, cap: Duration },
}

impl fmt::Display for InvalidBackoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroBase => write!(f, "the base delay must be longer than zero"),
            Self::FactorBelowOne { factor } => {
                write!(f, "the factor must be at least 1, not {factor}")
            }
            Self::BaseAboveCap { base, cap } => {
                write!(
                    f,
                    "the base delay ({base:?}) must not exceed the cap ({cap:?})"
                )
            }
        }
    }
}

impl std::error::Error for InvalidBackoff {}
