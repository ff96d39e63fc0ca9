//! Given: the saga log, one record per step, shared between the orchestrator and its readers.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    /// Not executed (yet): the saga has not reached it, or stopped before it.
    Pending,
    /// Executed successfully: its work is done, and would have to be undone.
    Succeeded,
    /// Its execution failed. Nothing of it was done, so nothing of it is undone.
    Failed,
    /// Its compensation is in progress: an attempt is in flight, or the next one is awaited.
    Compensating,
    /// Its compensation succeeded: its work is undone.
    Compensated,
    /// Its compensation gave up. Its work is still done, and a human has to deal with it.
    CompensationFailed,
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Compensating => "compensating",
            Self::Compensated => "compensated",
            Self::CompensationFailed => "compensation_failed",
        })
    }
}

// ANCHOR: record
/// One line of the saga log: where one step stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRecord {
    /// The step's name.
    pub step: String,
    pub status: StepStatus,
    /// How many attempts of the step's compensation have started (0 if it was never
    /// compensated).
    pub compensation_attempts: u32,
    /// The message of the step's most recent error, of its execution or its compensation.
    pub last_error: Option<String>,
}
// ANCHOR_END: record

impl StepRecord {
    /// The record of a step that has not run yet.
    pub fn pending(step: impl Into<String>) -> Self {
        Self {
            step: step.into(),
            status: StepStatus::Pending,
            compensation_attempts: 0,
            last_error: None,
        }
    }
}

/// The saga log: a record per step, in the saga's order. Cloning it gives another handle on the
/// same log, so a test (or an operator) can read it while the saga runs.
#[derive(Debug, Clone, Default)]
pub struct SagaLog {
    records: Arc<Mutex<Vec<StepRecord>>>,
}

impl SagaLog {
    /// A copy of every record, in the saga's order.
    pub fn records(&self) -> Vec<StepRecord> {
        self.lock().clone()
    }

    /// A copy of the record of step number `index` (counted from 0).
    pub fn record(&self, index: usize) -> StepRecord {
        self.lock()[index].clone()
    }

    /// Every step's status, in the saga's order.
    pub fn statuses(&self) -> Vec<StepStatus> {
        self.lock().iter().map(|record| record.status).collect()
    }

    /// Changes the record of step `index`: `log.update(1, |record| record.compensation_attempts = 2)`.
    pub fn update(&self, index: usize, change: impl FnOnce(&mut StepRecord)) {
        change(&mut self.lock()[index]);
    }

    /// Sets the status of step `index`.
    pub fn set_status(&self, index: usize, status: StepStatus) {
        self.update(index, |record| record.status = status);
    }

    /// Adds the record of a new step at the end.
    pub(crate) fn push(&self, record: StepRecord) {
        self.lock().push(record);
    }

    fn lock(&self) -> MutexGuard<'_, Vec<StepRecord>> {
        // A panic elsewhere cannot leave a record half-written: every change is one assignment.
        self.records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
