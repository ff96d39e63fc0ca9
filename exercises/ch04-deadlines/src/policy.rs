//! Given: the retry policy, kept deliberately simple (backoff shapes come in Part II).
//!
//! A policy says how many attempts to make, how long one attempt may take, and how long to sleep
//! after each failed attempt. The deadline is not part of the policy: it belongs to the caller,
//! who passes it to every call.

use std::time::Duration;

// ANCHOR: policy
/// How many attempts, how long each may take, and the sleeps between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    max_attempts: u32,
    per_attempt: Duration,
    delays: Vec<Duration>,
}

impl Policy {
    /// A policy of at most `max_attempts` attempts, each cut off after `per_attempt`.
    ///
    /// `delays[0]` is the sleep after the first failed attempt, `delays[1]` after the second, and
    /// so on; once the list runs out its last entry repeats. An empty list means no sleep at all.
    ///
    /// # Panics
    /// If `max_attempts` is 0 or `per_attempt` is zero: such a policy could never call anything.
    pub fn new(max_attempts: u32, per_attempt: Duration, delays: impl Into<Vec<Duration>>) -> Self {
        assert!(max_attempts >= 1, "a policy needs at least one attempt");
        assert!(
            !per_attempt.is_zero(),
            "a per-attempt timeout of zero allows no attempt"
        );
        Self {
            max_attempts,
            per_attempt,
            delays: delays.into(),
        }
    }

    /// The same sleep after every failed attempt.
    pub fn fixed(max_attempts: u32, per_attempt: Duration, delay: Duration) -> Self {
        Self::new(max_attempts, per_attempt, [delay])
    }

    /// The most attempts to make, counting the first.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The longest one attempt may run before it is cut off.
    pub fn per_attempt(&self) -> Duration {
        self.per_attempt
    }

    /// The sleep after failed attempt number `attempt` (counted from 1), before the next one.
    pub fn delay_after(&self, attempt: u32) -> Duration {
        let index = attempt.saturating_sub(1) as usize;
        match self.delays.get(index).or(self.delays.last()) {
            Some(delay) => *delay,
            None => Duration::ZERO,
        }
    }
}
// ANCHOR_END: policy
