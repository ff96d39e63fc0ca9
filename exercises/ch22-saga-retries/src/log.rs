//! Given: the saga log, the record an operator (or a recovering orchestrator) reads to know
//! where every step stands.

use std::fmt;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::time::Instant;

/// Where one step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    /// Not started yet.
    Pending,
    /// An attempt is in flight.
    Running,
    /// The last attempt failed; the next one is due at `next_retry_at`.
    Retrying,
    /// Done.
    Succeeded,
    /// Its execution gave up: its retries ran out, its error was permanent, or the saga was
    /// cancelled. If an attempt timed out, its work may have been done all the same (its
    /// `last_error` says so), and the saga compensates it or hands it to a person.
    Failed,
    /// Being undone: a compensation attempt is in flight, or the next one is due.
    Compensating,
    /// Undone.
    Compensated,
    /// Its compensation gave up (or was cancelled): its work still stands, and a person has to
    /// deal with it.
    CompensationFailed,
}

/// Where the whole saga stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SagaStatus {
    /// Not started yet.
    Pending,
    /// Running its steps.
    Running,
    /// Undoing the steps that completed, newest first.
    Compensating,
    /// Terminal: every step succeeded.
    Completed,
    /// Terminal: a step gave up and the completed steps were undone.
    Compensated,
    /// Terminal: a step gave up and its policy said stop; nothing was undone.
    Failed,
    /// Terminal: an operator must decide (a step's policy said so, a compensation gave up, or a
    /// step that may have done its work was not compensated).
    NeedsHuman,
    /// Terminal: stopped from outside through the cancel token.
    Cancelled,
}

impl SagaStatus {
    /// Whether the saga has ended.
    pub fn is_terminal(self) -> bool {
        !matches!(self, Self::Pending | Self::Running | Self::Compensating)
    }
}

// ANCHOR: record
/// The log line of one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRecord {
    /// The step's name.
    pub step: String,
    /// The step's idempotency key, minted when the step first starts and kept from then on.
    pub idempotency_key: Option<String>,
    pub status: StepStatus,
    /// How many attempts of the current action (executing, or compensating) have started.
    pub attempt_count: u32,
    /// When the next attempt is due, while the step waits for it; `None` otherwise.
    pub next_retry_at: Option<Instant>,
    /// The message of the most recent failure, if any.
    pub last_error: Option<String>,
}
// ANCHOR_END: record

impl StepRecord {
    /// The record of a step that has not started.
    pub fn pending(step: impl Into<String>) -> Self {
        Self {
            step: step.into(),
            idempotency_key: None,
            status: StepStatus::Pending,
            attempt_count: 0,
            next_retry_at: None,
            last_error: None,
        }
    }
}

/// The log of one saga: its status and one record per step, in the saga's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SagaLog {
    pub saga_id: String,
    pub status: SagaStatus,
    pub steps: Vec<StepRecord>,
}

/// The saga log, shared: the orchestrator writes it, anyone may read it or watch it change.
///
/// Clones share one log. Every [`SharedLog::update`] notifies the watchers.
#[derive(Debug, Clone)]
pub struct SharedLog {
    sender: Arc<watch::Sender<SagaLog>>,
}

impl SharedLog {
    /// A shared log that starts as `log`.
    pub fn new(log: SagaLog) -> Self {
        Self {
            sender: Arc::new(watch::Sender::new(log)),
        }
    }

    /// A copy of the whole log as it is now.
    pub fn snapshot(&self) -> SagaLog {
        self.sender.borrow().clone()
    }

    /// A copy of one step's record as it is now.
    ///
    /// # Panics
    /// If the saga has no step number `index` (counted from 0).
    pub fn step(&self, index: usize) -> StepRecord {
        self.sender.borrow().steps[index].clone()
    }

    /// Changes the log in place and notifies the watchers.
    pub fn update(&self, change: impl FnOnce(&mut SagaLog)) {
        self.sender.send_modify(change);
    }

    /// Changes one step's record in place and notifies the watchers.
    ///
    /// # Panics
    /// If the saga has no step number `index` (counted from 0).
    pub fn update_step(&self, index: usize, change: impl FnOnce(&mut StepRecord)) {
        self.sender.send_modify(|log| change(&mut log.steps[index]));
    }

    /// A receiver that wakes up whenever the log changes (see [`tokio::sync::watch`]).
    pub fn watch(&self) -> watch::Receiver<SagaLog> {
        self.sender.subscribe()
    }
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Retrying => "retrying",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Compensating => "compensating",
            Self::Compensated => "compensated",
            Self::CompensationFailed => "compensation_failed",
        })
    }
}

impl fmt::Display for SagaStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Compensating => "compensating",
            Self::Completed => "completed",
            Self::Compensated => "compensated",
            Self::Failed => "failed",
            Self::NeedsHuman => "needs a human",
            Self::Cancelled => "cancelled",
        })
    }
}
