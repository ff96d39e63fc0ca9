//! Given: stand-ins for the three services of a checkout saga (inventory, payment, shipping),
//! and the journal they write every call into.
//!
//! A stub fails the first `n` calls of `execute` or of `compensate` (as you configure it), then
//! succeeds. Every call, failed or not, goes into the shared [`Journal`] with the moment it was
//! made on tokio's clock, so a test can read back what the orchestrator did, and when.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{ErrorKind, StepError};
use crate::step::{BoxFuture, Step, StepContext};

/// Which of a step's two calls was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Execute,
    Compensate,
}

impl Action {
    /// `"execute"` or `"compensate"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Execute => "execute",
            Self::Compensate => "compensate",
        }
    }
}

/// One call a stub received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// When the call was made, measured from the journal's creation on tokio's clock.
    pub at: Duration,
    pub step: String,
    pub action: Action,
    /// The attempt number the orchestrator put in the call's context.
    pub attempt: u32,
    /// What the stub answered.
    pub result: Result<(), StepError>,
}

impl Entry {
    /// The call as `"payment.compensate"`.
    pub fn call(&self) -> String {
        format!("{}.{}", self.step, self.action.as_str())
    }
}

/// The shared record of every call the stubs received, in order. Clones share one journal.
#[derive(Debug, Clone)]
pub struct Journal {
    start: Instant,
    entries: Arc<Mutex<Vec<Entry>>>,
}

impl Default for Journal {
    fn default() -> Self {
        Self::new()
    }
}

impl Journal {
    /// An empty journal whose clock starts now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            entries: Arc::default(),
        }
    }

    /// Every call so far, in order.
    pub fn entries(&self) -> Vec<Entry> {
        self.lock().clone()
    }

    /// Every call so far as `"step.action"`, in order: `["inventory.execute", …]`.
    pub fn calls(&self) -> Vec<String> {
        self.lock().iter().map(Entry::call).collect()
    }

    /// The journal as a Markdown table: when each call was made, how long after the same
    /// step's previous call of the same action (the backoff wait of a retry), and its result.
    pub fn to_markdown(&self) -> String {
        let entries = self.entries();
        let mut table = String::from(
            "| at | step | call | attempt | waited | result |\n|---:|---|---|---:|---:|---|\n",
        );
        for (index, entry) in entries.iter().enumerate() {
            let previous = entries[..index]
                .iter()
                .rev()
                .find(|earlier| earlier.step == entry.step && earlier.action == entry.action);
            let waited = previous.map_or(String::new(), |earlier| millis(entry.at - earlier.at));
            let result = match &entry.result {
                Ok(()) => "ok".to_owned(),
                Err(error) => format!("**{}**: {}", error.kind, error.message),
            };
            let _ = writeln!(
                table,
                "| {} | {} | {} | {} | {waited} | {result} |",
                millis(entry.at),
                entry.step,
                entry.action.as_str(),
                entry.attempt,
            );
        }
        table
    }

    fn record(&self, step: &str, action: Action, attempt: u32, result: Result<(), StepError>) {
        let entry = Entry {
            at: self.start.elapsed(),
            step: step.to_owned(),
            action,
            attempt,
            result,
        };
        self.lock().push(entry);
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A duration in milliseconds, with one decimal if it is not whole: `"84 ms"`, `"64.3 ms"`.
fn millis(duration: Duration) -> String {
    let text = format!("{:.1}", duration.as_secs_f64() * 1e3);
    format!("{} ms", text.strip_suffix(".0").unwrap_or(&text))
}

/// How one of a stub's two calls behaves: the first `failures` calls fail with `kind`.
#[derive(Debug, Clone, Copy)]
struct Script {
    failures: u32,
    kind: ErrorKind,
    calls: u32,
}

impl Script {
    const SUCCEEDS: Self = Self {
        failures: 0,
        kind: ErrorKind::Transient,
        calls: 0,
    };
}

/// A scripted service behind one saga step. Answers at once (no latency), so the journal's
/// times are exactly the orchestrator's waits.
#[derive(Debug)]
pub struct StubStep {
    name: String,
    doing: String,
    undoing: String,
    journal: Journal,
    scripts: Mutex<[Script; 2]>,
}

impl StubStep {
    /// A step named `name` that does `doing` and undoes it with `undoing`, writing into
    /// `journal`; every call succeeds until told otherwise.
    pub fn new(
        name: impl Into<String>,
        doing: impl Into<String>,
        undoing: impl Into<String>,
        journal: &Journal,
    ) -> Self {
        Self {
            name: name.into(),
            doing: doing.into(),
            undoing: undoing.into(),
            journal: journal.clone(),
            scripts: Mutex::new([Script::SUCCEEDS; 2]),
        }
    }

    /// The inventory service: reserves stock; its compensation releases it.
    pub fn inventory(journal: &Journal) -> Self {
        Self::new("inventory", "reserve stock", "release stock", journal)
    }

    /// The payment service: charges the card; its compensation refunds the charge.
    pub fn payment(journal: &Journal) -> Self {
        Self::new("payment", "charge card", "refund charge", journal)
    }

    /// The shipping service: books a shipment; its compensation cancels it.
    pub fn shipping(journal: &Journal) -> Self {
        Self::new("shipping", "book shipment", "cancel shipment", journal)
    }

    /// The first `times` calls of `execute` fail with `kind` (`u32::MAX`: every call).
    pub fn failing_execute(self, times: u32, kind: ErrorKind) -> Self {
        self.script(Action::Execute, times, kind)
    }

    /// The first `times` calls of `compensate` fail with `kind` (`u32::MAX`: every call).
    pub fn failing_compensate(self, times: u32, kind: ErrorKind) -> Self {
        self.script(Action::Compensate, times, kind)
    }

    /// How many calls of `action` this step received.
    pub fn calls_of(&self, action: Action) -> u32 {
        self.scripts()[action as usize].calls
    }

    fn script(self, action: Action, failures: u32, kind: ErrorKind) -> Self {
        self.scripts()[action as usize] = Script {
            failures,
            kind,
            calls: 0,
        };
        self
    }

    fn scripts(&self) -> MutexGuard<'_, [Script; 2]> {
        self.scripts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One call, made when the orchestrator awaits it: counts it, decides its answer from the script, writes it into the journal.
    fn call(&self, action: Action, attempt: u32) -> Result<(), StepError> {
        let (call, script) = {
            let mut scripts = self.scripts();
            let script = &mut scripts[action as usize];
            script.calls += 1;
            (script.calls, *script)
        };
        let what = match action {
            Action::Execute => &self.doing,
            Action::Compensate => &self.undoing,
        };
        let result = if call > script.failures {
            Ok(())
        } else {
            Err(match script.kind {
                ErrorKind::Transient => {
                    StepError::transient(format!("{what}: service unavailable (call {call})"))
                }
                ErrorKind::Permanent => {
                    StepError::permanent(format!("{what}: refused (call {call})"))
                }
            })
        };
        self.journal
            .record(&self.name, action, attempt, result.clone());
        result
    }
}

impl Step for StubStep {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        let attempt = ctx.attempt;
        Box::pin(async move { self.call(Action::Execute, attempt) })
    }

    fn compensate(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        let attempt = ctx.attempt;
        Box::pin(async move { self.call(Action::Compensate, attempt) })
    }
}
