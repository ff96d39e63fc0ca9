//! Given: a recorder that watches a saga's log while it runs and renders what it saw as a
//! Markdown table, one row per change, at the virtual instant it happened.

use std::fmt::Write as _;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::log::{SagaLog, SharedLog, StepRecord, StepStatus};

/// A recorder started with [`Timeline::watch`]; [`Timeline::finish`] returns its table.
#[derive(Debug)]
pub struct Timeline {
    recorder: JoinHandle<Vec<String>>,
}

impl Timeline {
    /// Starts watching `log`, with time counted from now. Call it before running the saga.
    ///
    /// It sees the log each time the saga pauses (during an attempt, during a sleep, at the
    /// end); changes made in between without pausing show up together. It stops once the saga
    /// reaches a terminal status.
    pub fn watch(log: &SharedLog) -> Self {
        let start = Instant::now();
        let mut receiver = log.watch();
        let mut previous = receiver.borrow_and_update().clone();
        let recorder = tokio::spawn(async move {
            let mut rows = Vec::new();
            while !previous.status.is_terminal() && receiver.changed().await.is_ok() {
                let current = receiver.borrow_and_update().clone();
                rows.extend(changes(&previous, &current, start));
                previous = current;
            }
            rows
        });
        Self { recorder }
    }

    /// Waits for the saga to end and returns the table of everything the recorder saw.
    pub async fn finish(self) -> String {
        let rows = self.recorder.await.unwrap_or_default();
        let mut table = String::from(
            "| at | step | status | attempt_count | next_retry_at | last_error |\n\
             |---:|---|---|---:|---|---|\n",
        );
        for row in rows {
            let _ = writeln!(table, "{row}");
        }
        table
    }
}

/// The rows for what changed between two views of the log. Within one view, a step that has
/// just finished comes before the step that has just started, and the saga's own status comes
/// between them (or last, once it is terminal).
fn changes(previous: &SagaLog, current: &SagaLog, start: Instant) -> Vec<String> {
    let at = ms(start.elapsed());
    let changed = current
        .steps
        .iter()
        .enumerate()
        .filter(|(index, record)| previous.steps.get(*index) != Some(record))
        .map(|(_, record)| record);
    let (finished, started): (Vec<&StepRecord>, Vec<&StepRecord>) = changed.partition(|record| {
        matches!(
            record.status,
            StepStatus::Succeeded | StepStatus::Failed | StepStatus::Compensated
        )
    });
    let mut rows: Vec<String> = finished
        .into_iter()
        .map(|record| step_row(&at, record, start))
        .collect();
    let saga_row = (current.status != previous.status)
        .then(|| format!("| {at} | **saga** | **{}** | | | |", current.status));
    if let Some(row) = saga_row.clone().filter(|_| !current.status.is_terminal()) {
        rows.push(row);
    }
    rows.extend(
        started
            .into_iter()
            .map(|record| step_row(&at, record, start)),
    );
    if let Some(row) = saga_row.filter(|_| current.status.is_terminal()) {
        rows.push(row);
    }
    rows
}

fn step_row(at: &str, record: &StepRecord, start: Instant) -> String {
    let next = record.next_retry_at.map_or(String::new(), |next| {
        let now = Instant::now();
        format!(
            "{} (in {})",
            ms(next.saturating_duration_since(start)),
            ms(next.saturating_duration_since(now))
        )
    });
    format!(
        "| {at} | {} | {} | {} | {next} | {} |",
        record.step,
        record.status,
        record.attempt_count,
        record.last_error.as_deref().unwrap_or(""),
    )
}

/// A duration in milliseconds, to a tenth: `1237 ms`, `96.8 ms`.
fn ms(duration: Duration) -> String {
    let text = format!("{:.1}", duration.as_secs_f64() * 1e3);
    format!("{} ms", text.trim_end_matches(".0"))
}
