//! Given: what the retry loop tells its hook, and the shortest wait after the one immediate retry.

use std::time::Duration;

/// The delay a retry gets when the policy asks for zero but the immediate retry is already used up.
///
/// Only the first retry may go at once (delay zero); see [`crate::delay_before_retry`].
pub const MIN_DELAY: Duration = Duration::from_millis(100);

// ANCHOR: event
/// What the retry loop reports to its hook, once per retry, just before it sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryEvent<'a, E> {
    /// The attempt that just failed, counted from 1. It is also the number of the retry to come:
    /// the event with `attempt = 1` announces the first retry.
    pub attempt: u32,
    /// How long the loop is about to sleep before the next attempt: the delay actually slept,
    /// after the immediate-retry rule has been applied.
    pub delay: Duration,
    /// The error of the attempt that just failed.
    pub error: &'a E,
}
// ANCHOR_END: event
