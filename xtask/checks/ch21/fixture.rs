//! Shared helpers of chapter 21's checks (no checks of its own): a scripted step that records
//! every call with what the saga log said at that moment, and a runner with a virtual-time guard.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use exercise::{
    BoxFuture, CompensationPolicy, ErrorKind, Saga, SagaLog, SagaOutcome, Step, StepContext,
    StepError, StepFailure, StepRecord, StepStatus,
};
use tokio::time::Instant;

use super::support::{seeded, show};

pub const MS: Duration = Duration::from_millis(1);

/// tokio's timer fires on the first 1 ms tick at or after a deadline, so a sleep of `d` on the
/// paused clock lasts between `d` and `d + 1 ms`.
pub const TICK: Duration = MS;

/// How long (on the paused clock) a saga may run beyond the longest its compensations' waits
/// could take (`cap` per attempt) before the check stops it.
pub const GUARD_TIME: Duration = Duration::from_secs(3_600);

/// After this many calls of one compensation, a step that "always fails" succeeds, so that an
/// orchestrator without a retry limit ends (and fails the check) instead of running forever.
/// Above every `max_attempts` a check uses (300 at most).
pub const GUARD_CALLS: u32 = 1_000;

/// The policy of every check: 4 attempts, waits under 100 ms, 200 ms, 400 ms (cap 1 s).
pub fn policy() -> CompensationPolicy {
    CompensationPolicy {
        max_attempts: 4,
        base: 100 * MS,
        cap: 1_000 * MS,
    }
}

/// `min(cap, base · 2^retry)` for [`policy`], computed here rather than trusted to the crate.
pub fn ceiling(retry: u32) -> Duration {
    ceiling_of(&policy(), retry)
}

/// `min(cap, base · 2^retry)` for `policy`, `cap` once the product overflows.
pub fn ceiling_of(policy: &CompensationPolicy, retry: u32) -> Duration {
    2u32.checked_pow(retry)
        .and_then(|factor| policy.base.checked_mul(factor))
        .map_or(policy.cap, |exponential| exponential.min(policy.cap))
}

/// How long (on the paused clock) a saga under `policy` may run before the check stops it:
/// [`GUARD_TIME`] beyond `cap` for every attempt.
pub fn guard_time(policy: &CompensationPolicy) -> Duration {
    GUARD_TIME.saturating_add(policy.cap.saturating_mul(policy.max_attempts))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Execute,
    Compensate,
}

/// One call a scripted step received.
#[derive(Debug, Clone)]
pub struct Call {
    /// When, on the paused clock, measured from the start of the run.
    pub at: Duration,
    pub step: String,
    pub kind: Kind,
    /// The attempt number the orchestrator put in the context.
    pub attempt: u32,
    /// The idempotency key the context gave this call.
    pub key: String,
    /// The execution key the context said this call undoes.
    pub undoes: Option<String>,
    /// The step's own log record at the moment of the call.
    pub seen: StepRecord,
}

impl Call {
    pub fn label(&self) -> String {
        let kind = match self.kind {
            Kind::Execute => "execute",
            Kind::Compensate => "compensate",
        };
        format!("{}.{kind}", self.step)
    }
}

/// What a step does: how its execution ends, and how many of its compensations fail.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: &'static str,
    /// `Some(kind)`: every call of `execute` fails with `kind`.
    pub execute_error: Option<ErrorKind>,
    /// The first `compensate_failures` calls of `compensate` fail with `compensate_kind`
    /// (`u32::MAX`: every call, up to [`GUARD_CALLS`]).
    pub compensate_failures: u32,
    pub compensate_kind: ErrorKind,
    /// If not empty, overrides the two fields above: call `n` of `compensate` fails with
    /// `compensate_script[n - 1]`, and every later call succeeds.
    pub compensate_script: Vec<ErrorKind>,
}

/// A step whose every call succeeds.
pub fn ok(name: &'static str) -> Spec {
    Spec {
        name,
        execute_error: None,
        compensate_failures: 0,
        compensate_kind: ErrorKind::Transient,
        compensate_script: Vec::new(),
    }
}

/// A step whose execution fails with `kind`.
pub fn fails(name: &'static str, kind: ErrorKind) -> Spec {
    Spec {
        execute_error: Some(kind),
        ..ok(name)
    }
}

impl Spec {
    /// The first `times` compensations fail with `kind`.
    pub fn compensation_fails(self, times: u32, kind: ErrorKind) -> Self {
        Self {
            compensate_failures: times,
            compensate_kind: kind,
            ..self
        }
    }

    /// Every compensation fails with `kind`.
    pub fn compensation_stuck(self, kind: ErrorKind) -> Self {
        self.compensation_fails(u32::MAX, kind)
    }

    /// The first compensations fail with these kinds, one per call, then they succeed.
    pub fn compensation_script(self, kinds: &[ErrorKind]) -> Self {
        Self {
            compensate_script: kinds.to_vec(),
            ..self
        }
    }
}

/// The message of the error a scripted call fails with.
pub fn error_message(step: &str, kind: Kind, call: u32) -> String {
    match kind {
        Kind::Execute => format!("{step} execute failed (call {call})"),
        Kind::Compensate => format!("{step} compensate failed (call {call})"),
    }
}

struct Scripted {
    spec: Spec,
    index: usize,
    log: SagaLog,
    start: Instant,
    calls: Arc<Mutex<Vec<Call>>>,
    executions: AtomicU32,
    compensations: AtomicU32,
}

impl Scripted {
    fn call(&self, kind: Kind, ctx: &StepContext) -> Result<(), StepError> {
        let attempt = ctx.attempt;
        let seen = self.log.records().get(self.index).cloned();
        let seen = seen.unwrap_or_else(|| StepRecord::pending(self.spec.name));
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(Call {
                at: self.start.elapsed(),
                step: self.spec.name.to_owned(),
                kind,
                attempt,
                key: ctx.idempotency_key(),
                undoes: ctx.undoes(),
                seen,
            });
        let (counter, failing) = match kind {
            Kind::Execute => (&self.executions, self.spec.execute_error),
            Kind::Compensate => {
                let before = self.compensations.load(Ordering::SeqCst);
                let failing = if self.spec.compensate_script.is_empty() {
                    (before < self.spec.compensate_failures).then_some(self.spec.compensate_kind)
                } else {
                    self.spec.compensate_script.get(before as usize).copied()
                };
                (&self.compensations, failing)
            }
        };
        let call = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let guard_reached = kind == Kind::Compensate && call > GUARD_CALLS;
        match failing {
            Some(kind_of_error) if !guard_reached => {
                let message = error_message(self.spec.name, kind, call);
                Err(StepError {
                    kind: kind_of_error,
                    message,
                })
            }
            _ => Ok(()),
        }
    }
}

impl Step for Scripted {
    fn name(&self) -> &str {
        self.spec.name
    }

    fn execute(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        let ctx = ctx.clone();
        Box::pin(async move { self.call(Kind::Execute, &ctx) })
    }

    fn compensate(&self, ctx: &StepContext) -> BoxFuture<'_, Result<(), StepError>> {
        let ctx = ctx.clone();
        Box::pin(async move { self.call(Kind::Compensate, &ctx) })
    }
}

/// The record of one saga run.
pub struct Run {
    /// `None` if the saga was still running after `guard` of virtual time.
    pub outcome: Option<SagaOutcome>,
    /// How long the check let it run ([`guard_time`]).
    pub guard: Duration,
    pub calls: Vec<Call>,
    pub log: Vec<StepRecord>,
    /// When `run` returned, on the paused clock, from the start.
    pub returned: Duration,
}

/// Runs a saga of these steps, in order, under [`policy`], with a seeded generator.
pub async fn run(specs: &[Spec], seed: u64) -> Run {
    run_saga("order-21", specs, seed, policy()).await
}

/// Runs saga `id` of these steps, in order, under `policy`, with a seeded generator.
pub async fn run_saga(id: &str, specs: &[Spec], seed: u64, policy: CompensationPolicy) -> Run {
    run_observed(id, specs, seed, policy, None).await.0
}

/// What the log said about one step at one moment of a run.
#[derive(Debug, Clone)]
pub struct Sample {
    /// When, on the paused clock, measured from the start of the run.
    pub at: Duration,
    pub record: StepRecord,
}

/// How long (on the paused clock) [`run_watched`] keeps sampling: longer than every wait of
/// [`policy`] together (100 + 200 + 400 ms), short enough to stay fast when a saga never ends.
pub const WATCH_TIME: Duration = Duration::from_secs(2);

/// Runs a saga of these steps under [`policy`] like [`run`], and reads step `watched`'s log
/// record on every 1 ms tick of the first [`WATCH_TIME`], while the saga runs or waits.
pub async fn run_watched(specs: &[Spec], seed: u64, watched: usize) -> (Run, Vec<Sample>) {
    run_observed("order-21", specs, seed, policy(), Some(watched)).await
}

async fn run_observed(
    id: &str,
    specs: &[Spec],
    seed: u64,
    policy: CompensationPolicy,
    watched: Option<usize>,
) -> (Run, Vec<Sample>) {
    let start = Instant::now();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let mut saga = Saga::new(id, policy);
    let log = saga.log();
    for (index, spec) in specs.iter().enumerate() {
        saga = saga.step(Scripted {
            spec: spec.clone(),
            index,
            log: log.clone(),
            start,
            calls: calls.clone(),
            executions: AtomicU32::new(0),
            compensations: AtomicU32::new(0),
        });
    }
    let mut rng = seeded(seed);
    let guard = guard_time(&policy);
    let running = tokio::time::timeout(guard, saga.run(&mut rng));
    tokio::pin!(running);
    let mut samples = Vec::new();
    let outcome = loop {
        let sampling = watched.filter(|_| start.elapsed() < WATCH_TIME);
        tokio::select! {
            biased;
            outcome = &mut running => break outcome.ok(),
            () = tokio::time::sleep(TICK), if sampling.is_some() => {
                if let Some(index) = sampling {
                    let record = log.records().get(index).cloned();
                    let record = record.unwrap_or_else(|| StepRecord::pending(specs[index].name));
                    samples.push(Sample { at: start.elapsed(), record });
                }
            }
        }
    };
    let returned = start.elapsed();
    let calls = calls
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    let run = Run {
        outcome,
        guard,
        calls,
        log: log.records(),
        returned,
    };
    (run, samples)
}

impl Run {
    /// Every call as `"step.action"`, in order.
    pub fn labels(&self) -> Vec<String> {
        self.calls.iter().map(Call::label).collect()
    }

    /// The calls of one kind to one step.
    pub fn calls_to(&self, step: &str, kind: Kind) -> Vec<&Call> {
        self.calls
            .iter()
            .filter(|call| call.step == step && call.kind == kind)
            .collect()
    }

    pub fn count(&self, step: &str, kind: Kind) -> usize {
        self.calls_to(step, kind).len()
    }

    /// The steps compensated, in the order their first compensation call came.
    pub fn compensation_order(&self) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        for call in self
            .calls
            .iter()
            .filter(|call| call.kind == Kind::Compensate)
        {
            if !order.contains(&call.step) {
                order.push(call.step.clone());
            }
        }
        order
    }

    /// The steps executed, in order.
    pub fn execution_order(&self) -> Vec<String> {
        self.calls
            .iter()
            .filter(|call| call.kind == Kind::Execute)
            .map(|call| call.step.clone())
            .collect()
    }

    pub fn statuses(&self) -> Vec<StepStatus> {
        self.log.iter().map(|record| record.status).collect()
    }

    /// The outcome for a message.
    pub fn outcome_text(&self) -> String {
        match &self.outcome {
            Some(outcome) => describe(outcome),
            None => format!("still running after {} of virtual time", show(self.guard)),
        }
    }
}

/// An outcome in the words of a message: its variant and every field.
pub fn describe(outcome: &SagaOutcome) -> String {
    match outcome {
        SagaOutcome::Completed => "Completed".to_owned(),
        SagaOutcome::Compensated {
            failed,
            compensated,
        } => format!(
            "Compensated {{ failed: {}, compensated: {} }}",
            failure(failed),
            list(compensated)
        ),
        SagaOutcome::NeedsHuman {
            failed,
            stuck,
            compensated,
        } => {
            let stuck: Vec<String> = stuck.iter().map(failure).collect();
            format!(
                "NeedsHuman {{ failed: {}, stuck: [{}], compensated: {} }}",
                failure(failed),
                stuck.join(", "),
                list(compensated)
            )
        }
    }
}

fn failure(failure: &StepFailure) -> String {
    format!(
        "{} ({} error {:?})",
        failure.step, failure.error.kind, failure.error.message
    )
}

/// A list of names for a message: `[payment, inventory]`.
pub fn list<S: AsRef<str>>(names: &[S]) -> String {
    let mut text = String::from("[");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        let _ = write!(text, "{}", name.as_ref());
    }
    text.push(']');
    text
}

/// Statuses for a message: `[compensated, failed, pending]`.
pub fn statuses(statuses: &[StepStatus]) -> String {
    let names: Vec<String> = statuses.iter().map(ToString::to_string).collect();
    list(&names)
}

/// The stuck steps of an outcome, if it is `NeedsHuman`.
pub fn stuck(outcome: &Option<SagaOutcome>) -> Option<&Vec<StepFailure>> {
    match outcome {
        Some(SagaOutcome::NeedsHuman { stuck, .. }) => Some(stuck),
        _ => None,
    }
}

/// The `compensated` list of an outcome that has one.
pub fn compensated(outcome: &Option<SagaOutcome>) -> Option<&Vec<String>> {
    match outcome {
        Some(
            SagaOutcome::Compensated { compensated, .. }
            | SagaOutcome::NeedsHuman { compensated, .. },
        ) => Some(compensated),
        _ => None,
    }
}

/// The failed step of an outcome that has one.
pub fn failed(outcome: &Option<SagaOutcome>) -> Option<&StepFailure> {
    match outcome {
        Some(SagaOutcome::Compensated { failed, .. } | SagaOutcome::NeedsHuman { failed, .. }) => {
            Some(failed)
        }
        _ => None,
    }
}
