//! Given: a saga (its steps in order, its compensation policy, its log) and how a run ends.
//!
//! The orchestrator's work, running the steps and compensating, is yours, in `lib.rs`:
//! `Saga::run` and `Saga::compensate_step`.

use std::fmt;
use std::time::Duration;

use rand::{Rng, RngExt};

use crate::error::StepError;
use crate::log::{SagaLog, StepRecord};
use crate::step::{Action, Step, StepContext};

// ANCHOR: policy
/// How a compensation is retried: at most `max_attempts` calls, with capped full-jitter
/// backoff between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompensationPolicy {
    /// The most calls a compensation gets, the first one included (at least 1).
    pub max_attempts: u32,
    /// The ceiling of the first wait.
    pub base: Duration,
    /// The largest ceiling of any wait.
    pub cap: Duration,
}

impl Default for CompensationPolicy {
    /// 5 attempts, waits drawn under ceilings of 100 ms, 200 ms, 400 ms, 800 ms (cap 2 s).
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        }
    }
}

impl CompensationPolicy {
    /// The ceiling of the wait before retry number `retry` (counted from 0):
    /// `min(cap, base · 2^retry)`, never overflowing.
    pub fn ceiling(&self, retry: u32) -> Duration {
        // Doubling stops at the cap (or a zero base): exact for every retry, and no power of
        // two is computed that could overflow.
        let mut ceiling = self.base.min(self.cap);
        for _ in 0..retry {
            if ceiling.is_zero() || ceiling == self.cap {
                break;
            }
            ceiling = ceiling.saturating_mul(2).min(self.cap);
        }
        ceiling
    }

    /// The wait before retry number `retry` (counted from 0: the wait after the first failed
    /// attempt): full jitter, uniform in `[0, ceiling(retry)]` (chapter 8).
    pub fn delay(&self, retry: u32, rng: &mut impl Rng) -> Duration {
        rng.random_range(Duration::ZERO..=self.ceiling(retry))
    }
}
// ANCHOR_END: policy

/// A step that failed, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepFailure {
    /// The step's name.
    pub step: String,
    /// Its last error.
    pub error: StepError,
}

// ANCHOR: outcome
/// How a saga run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SagaOutcome {
    /// Every step succeeded. Nothing was undone.
    Completed,
    /// Step `failed` failed, and every step that had completed before it was compensated, in
    /// `compensated` order (newest first). The saga is cleanly undone.
    Compensated {
        failed: StepFailure,
        compensated: Vec<String>,
    },
    /// Step `failed` failed, and the compensations of the steps in `stuck` gave up (a permanent
    /// error, or every attempt used). Those in `compensated` were undone. A human must finish
    /// the job: the saga is neither done nor undone.
    NeedsHuman {
        failed: StepFailure,
        stuck: Vec<StepFailure>,
        compensated: Vec<String>,
    },
}
// ANCHOR_END: outcome

impl fmt::Display for SagaOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Completed => f.write_str("completed"),
            Self::Compensated {
                failed,
                compensated,
            } => write!(
                f,
                "compensated ({} failed; undone: {})",
                failed.step,
                names(compensated),
            ),
            Self::NeedsHuman {
                failed,
                stuck,
                compensated,
            } => {
                let stuck: Vec<String> = stuck.iter().map(|s| s.step.clone()).collect();
                write!(
                    f,
                    "needs a human ({} failed; stuck: {}; undone: {})",
                    failed.step,
                    names(&stuck),
                    names(compensated),
                )
            }
        }
    }
}

fn names(steps: &[String]) -> String {
    if steps.is_empty() {
        "none".to_owned()
    } else {
        steps.join(", ")
    }
}

/// A saga: steps run in order, one compensation policy, and a shared log.
pub struct Saga {
    pub(crate) id: String,
    pub(crate) steps: Vec<Box<dyn Step>>,
    pub(crate) policy: CompensationPolicy,
    pub(crate) log: SagaLog,
}

impl Saga {
    /// An empty saga with this id, whose compensations are retried under `policy`; add its
    /// steps with [`Saga::step`].
    pub fn new(id: impl Into<String>, policy: CompensationPolicy) -> Self {
        Self {
            id: id.into(),
            steps: Vec::new(),
            policy,
            log: SagaLog::default(),
        }
    }

    /// Adds a step, run after the ones already added. Its log record starts `pending`.
    pub fn step(mut self, step: impl Step + 'static) -> Self {
        self.log.push(StepRecord::pending(step.name()));
        self.steps.push(Box::new(step));
        self
    }

    /// The saga's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A handle on the saga's log: read it while the saga runs, or after.
    pub fn log(&self) -> SagaLog {
        self.log.clone()
    }

    /// The policy the saga's compensations are retried under.
    pub fn policy(&self) -> CompensationPolicy {
        self.policy
    }

    /// How many steps the saga has.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the saga has no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The name of step number `index` (counted from 0).
    pub fn step_name(&self, index: usize) -> &str {
        self.steps[index].name()
    }

    /// The context of attempt `attempt` (counted from 1) of `action` on step `index`; its
    /// [`StepContext::idempotency_key`] is the key of that request.
    pub fn context(&self, index: usize, action: Action, attempt: u32) -> StepContext {
        StepContext::new(&self.id, self.step_name(index), action, attempt)
    }
}

impl fmt::Debug for Saga {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let steps: Vec<&str> = self.steps.iter().map(|step| step.name()).collect();
        f.debug_struct("Saga")
            .field("id", &self.id)
            .field("steps", &steps)
            .field("policy", &self.policy)
            .finish()
    }
}
