//! Given: the two policies of this chapter, their settings and their constructors.
//!
//! A policy is an iterator of delays, one per retry; `None` means "give up". It counts the
//! delays it has handed out, so build a fresh one for every call you retry (chapter 5).

use std::time::Duration;

// ANCHOR: policies
/// Fixed backoff: the same `delay` before every retry, at most `max_retries` times.
///
/// `Fixed::new(3 s, 4)` yields 3 s, 3 s, 3 s, 3 s, then `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixed {
    /// The wait before each retry.
    pub(crate) delay: Duration,
    /// How many delays the policy hands out before it says `None`.
    pub(crate) max_retries: u32,
    /// How many delays it has handed out so far.
    pub(crate) retries: u32,
}

/// Linear backoff: `initial` before the first retry, then `increment` more before each
/// following one, at most `max_retries` times.
///
/// `Linear::new(3 s, 3 s, 4)` yields 3 s, 6 s, 9 s, 12 s, then `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linear {
    /// The wait before the first retry.
    pub(crate) initial: Duration,
    /// How much longer each wait is than the one before.
    pub(crate) increment: Duration,
    /// How many delays the policy hands out before it says `None`.
    pub(crate) max_retries: u32,
    /// How many delays it has handed out so far.
    pub(crate) retries: u32,
}
// ANCHOR_END: policies

impl Fixed {
    /// A fresh policy: `delay` before each of at most `max_retries` retries.
    pub fn new(delay: Duration, max_retries: u32) -> Self {
        Self {
            delay,
            max_retries,
            retries: 0,
        }
    }
}

impl Linear {
    /// A fresh policy: `initial`, `initial + increment`, `initial + 2·increment`, … for at most
    /// `max_retries` retries.
    pub fn new(initial: Duration, increment: Duration, max_retries: u32) -> Self {
        Self {
            initial,
            increment,
            max_retries,
            retries: 0,
        }
    }
}
