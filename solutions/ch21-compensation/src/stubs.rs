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
pub use crate::step::Action;
use crate::step::{BoxFuture, Step, StepContext};

/// One call a stub received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// When the call was made, measured from the journal's creation on tokio's clock.
    pub at: Duration,
    pub step: String,
    pub action: Action,
    /// The attempt number the orchestrator put in the call's context.
    pub attempt: u32,
    /// The idempotency key the call carried.
    pub key: String,
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
            "| at | step | call | key | attempt | waited | result |\n|---:|---|---|---|---:|---:|---|\n",
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
                "| {} | {} | {} | `{}` | {} | {waited} | {result} |",
                millis(entry.at),
                entry.step,
                entry.action.as_str(),
                entry.key,
                entry.attempt,
            );
        }
        table
    }

    fn record(&self, step: &str, ctx: &StepContext, action: Action, result: Result<(), StepError>) {
        let entry = Entry {
            at: self.start.elapsed(),
            step: step.to_owned(),
            action,
            attempt: ctx.attempt,
            key: ctx.idempotency_key(),
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
///
/// Like a real service that keeps idempotency keys (chapter 20), it refuses a key already used
/// for another request: a compensation sent with its execution's key fails permanently with
/// 422, the refund never happens.
#[derive(Debug)]
pub struct StubStep {
    name: String,
    doing: String,
    undoing: String,
    journal: Journal,
    scripts: Mutex<[Script; 2]>,
    /// The keys its executions carried.
    execution_keys: Mutex<Vec<String>>,
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
            execution_keys: Mutex::default(),
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

    /// One call, made when the orchestrator awaits it: counts it, decides its answer from the
    /// script (or refuses a key that named another request), writes it into the journal.
    fn call(&self, action: Action, ctx: &StepContext) -> Result<(), StepError> {
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
        let key = ctx.idempotency_key();
        let mut execution_keys = self
            .execution_keys
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let reused = action == Action::Compensate && execution_keys.contains(&key);
        if action == Action::Execute && !execution_keys.contains(&key) {
            execution_keys.push(key.clone());
        }
        drop(execution_keys);
        let result = if reused {
            Err(StepError::permanent(format!(
                "{what}: HTTP 422, key {key} was already used for another request"
            )))
        } else if call > script.failures {
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
        self.journal.record(&self.name, ctx, action, result.clone());
        result
    }
}

impl Step for StubStep {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        let ctx = ctx.clone();
        Box::pin(async move { self.call(Action::Execute, &ctx) })
    }

    fn compensate(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        let ctx = ctx.clone();
        Box::pin(async move { self.call(Action::Compensate, &ctx) })
    }
}
