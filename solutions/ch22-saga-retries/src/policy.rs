//! Given: a step's retry policy, and the decision taken after each failed attempt.

use std::time::Duration;

/// What the saga does when a step's retries run out (or its error is permanent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnExhausted {
    /// Undo the steps that completed, newest first, and the step that gave up too if one of its
    /// attempts timed out (it may have done its work); end the saga `Compensated`, or
    /// `NeedsHuman` if a compensation gave up.
    Compensate,
    /// End the saga `Failed` where it stands: nothing is undone. If an attempt of the step that
    /// gave up timed out, its work may stand, and the saga ends `NeedsHuman` instead.
    Stop,
    /// End the saga `NeedsHuman`: nothing is undone; an operator decides, reading the log.
    HandToHuman,
}

// ANCHOR: policy
/// How one step is retried. Each step of a saga has its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepPolicy {
    /// Attempts in all, the first one included.
    pub max_attempts: u32,
    /// The full-jitter ceiling before the first retry; it doubles before each later retry.
    pub base: Duration,
    /// The ceiling never grows past this.
    pub cap: Duration,
    /// The longest one attempt may take before it is cut off.
    pub per_attempt_timeout: Duration,
    /// The longest the whole step may take, from the start of its first attempt: attempts,
    /// timeouts and sleeps together.
    pub total_budget: Duration,
    /// The longest wait a server's `Retry-After` may impose (chapter 11): a longer hint is
    /// followed for this long. The budget is compared with the hint before it is capped.
    pub max_hint: Duration,
    /// What happens when the step gives up.
    pub on_exhausted: OnExhausted,
}
// ANCHOR_END: policy

impl Default for StepPolicy {
    /// Five attempts of at most 2 s each, full jitter from 200 ms up to a 30 s cap, the whole
    /// step within 30 s, hints followed for at most 10 s, and compensation when it gives up.
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base: Duration::from_millis(200),
            cap: Duration::from_secs(30),
            per_attempt_timeout: Duration::from_secs(2),
            total_budget: Duration::from_secs(30),
            max_hint: Duration::from_secs(10),
            on_exhausted: OnExhausted::Compensate,
        }
    }
}

impl StepPolicy {
    /// The longest the step could take without a budget: every attempt runs into its timeout and
    /// every sleep between two attempts is its full ceiling, `min(cap, base · 2^n)`. Compare it
    /// with `total_budget` when choosing the numbers.
    pub fn worst_case(&self) -> Duration {
        let attempts = self.max_attempts.max(1);
        let mut total = self.per_attempt_timeout.saturating_mul(attempts);
        let mut ceiling = self.base.min(self.cap);
        for _ in 1..attempts {
            total = total.saturating_add(ceiling);
            ceiling = ceiling.saturating_mul(2).min(self.cap);
        }
        total
    }
}

/// The decision after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Sleep this long, then make the next attempt.
    RetryIn(Duration),
    /// Stop retrying, for this reason.
    GiveUp(GiveUp),
}

/// Why a step stops retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// The error is permanent: waiting will not fix it.
    Permanent,
    /// `max_attempts` attempts have been made.
    AttemptsUsedUp,
    /// The next attempt could only start at or after the end of `total_budget` (for a
    /// `Retry-After`, the hint before it is capped at `max_hint`).
    OutOfTime,
}
