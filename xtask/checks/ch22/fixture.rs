//! Shared helpers of chapter 22's checks (no checks of its own): a recording step whose calls
//! follow a script, and a runner that watches the saga's log while it runs.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use exercise::{
    Action, CancelToken, ErrorKind, OnExhausted, Saga, SagaLog, SagaStatus, Step, StepContext,
    StepError, StepPolicy, StepRecord,
};
use tokio::time::Instant;

use super::support::{seeded, show};

pub const MS: Duration = Duration::from_millis(1);
pub const SEC: Duration = Duration::from_secs(1);

/// The most a scheduled instant and the moment it happens may differ: tokio's timer fires on
/// the first 1 ms tick at or after a deadline.
pub const TICK: Duration = MS;

/// What one call of a recording step does.
#[derive(Debug, Clone)]
pub enum Act {
    /// Succeeds (and does the work).
    Ok,
    /// Fails transiently with a message naming the call.
    Transient,
    /// Fails permanently with a message naming the call.
    Permanent,
    /// Fails with a Retry-After hint.
    RetryAfter(Duration),
    /// Never answers.
    Hang,
    /// Does the work, then never answers.
    DoThenHang,
}

/// One call of `execute` or `compensate`, as the step saw it.
#[derive(Debug, Clone)]
pub struct Call {
    pub at: Instant,
    pub action: Action,
    pub ctx: StepContext,
    /// The error the call ended with, once it has ended with one.
    pub error: Option<String>,
}

/// A step that follows a script (then repeats its last entry), records every call, plays its
/// own client library (which makes `1 + ctx.client_retries` service calls on a transient
/// failure), and deduplicates its work on the idempotency key. Like a real service, it refuses
/// a compensation that reuses an execution's key (422) or does not name what it undoes (400),
/// and undoing an execution that never took effect does nothing.
pub struct Recorder {
    name: String,
    latency: Duration,
    execute: Mutex<VecDeque<Act>>,
    compensate: Mutex<VecDeque<Act>>,
    calls: Mutex<Vec<Call>>,
    service_calls: AtomicUsize,
    done: Mutex<Vec<String>>,
    /// The execution keys whose work a compensation undid.
    reverted: Mutex<Vec<String>>,
    abandoned: AtomicUsize,
}

impl Recorder {
    /// A step whose every call succeeds at once.
    pub fn new(name: &str) -> Arc<Self> {
        Self::scripted(name, [Act::Ok])
    }

    /// A step whose `execute` calls follow `script`, the last entry repeating forever.
    pub fn scripted(name: &str, script: impl IntoIterator<Item = Act>) -> Arc<Self> {
        Self::build(name, Duration::ZERO, script, [Act::Ok])
    }

    /// The same, with every call taking `latency` before it answers.
    pub fn slow(name: &str, latency: Duration, script: impl IntoIterator<Item = Act>) -> Arc<Self> {
        Self::build(name, latency, script, [Act::Ok])
    }

    /// Full control: latency, the `execute` script and the `compensate` script.
    pub fn build(
        name: &str,
        latency: Duration,
        execute: impl IntoIterator<Item = Act>,
        compensate: impl IntoIterator<Item = Act>,
    ) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            latency,
            execute: Mutex::new(execute.into_iter().collect()),
            compensate: Mutex::new(compensate.into_iter().collect()),
            calls: Mutex::new(Vec::new()),
            service_calls: AtomicUsize::new(0),
            done: Mutex::new(Vec::new()),
            reverted: Mutex::new(Vec::new()),
            abandoned: AtomicUsize::new(0),
        })
    }

    /// The step's name.
    pub fn label(&self) -> String {
        self.name.clone()
    }

    /// Every call the orchestrator made, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// The calls of one action.
    pub fn calls_of(&self, action: Action) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|call| call.action == action)
            .collect()
    }

    /// How many `execute` calls the orchestrator made: its attempts.
    pub fn attempts(&self) -> usize {
        self.calls_of(Action::Execute).len()
    }

    /// The instants of the `execute` calls.
    pub fn attempt_instants(&self) -> Vec<Instant> {
        self.calls_of(Action::Execute)
            .iter()
            .map(|call| call.at)
            .collect()
    }

    /// How many calls reached the service behind the client library.
    pub fn service_calls(&self) -> usize {
        self.service_calls.load(Ordering::SeqCst)
    }

    /// How many times the work was done (under distinct keys).
    pub fn times_done(&self) -> usize {
        self.done.lock().unwrap().len()
    }

    /// How many times work that had been done was undone.
    pub fn times_undone(&self) -> usize {
        self.reverted.lock().unwrap().len()
    }

    /// Whether the work done under an execution key still stands.
    pub fn work_stands(&self) -> bool {
        self.times_done() > self.times_undone()
    }

    /// How many calls were dropped by the orchestrator before they answered.
    pub fn abandoned(&self) -> usize {
        self.abandoned.load(Ordering::SeqCst)
    }

    fn next_act(&self, action: Action) -> Act {
        let script = match action {
            Action::Execute => &self.execute,
            Action::Compensate => &self.compensate,
        };
        let mut script = script.lock().unwrap();
        if script.len() > 1 {
            script.pop_front().unwrap_or(Act::Ok)
        } else {
            script.front().cloned().unwrap_or(Act::Ok)
        }
    }

    async fn call(&self, action: Action, ctx: &StepContext) -> Result<(), StepError> {
        let index = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(Call {
                at: Instant::now(),
                action,
                ctx: ctx.clone(),
                error: None,
            });
            calls.len() - 1
        };
        let act = self.next_act(action);
        let mut outcome = self.service_call(action, ctx, &act).await;
        // The client library's own retries, immediate, as many as the context allows.
        for _ in 0..ctx.client_retries {
            match &outcome {
                Err(error) if error.kind != ErrorKind::Permanent => {
                    outcome = self.service_call(action, ctx, &act).await;
                }
                _ => break,
            }
        }
        if let Err(error) = &outcome {
            self.calls.lock().unwrap()[index].error = Some(error.message.clone());
        }
        outcome
    }

    async fn service_call(
        &self,
        action: Action,
        ctx: &StepContext,
        act: &Act,
    ) -> Result<(), StepError> {
        let number = self.service_calls.fetch_add(1, Ordering::SeqCst) + 1;
        let mut guard = AbandonGuard(&self.abandoned, true);
        tokio::time::sleep(self.latency).await;
        let key = ctx.idempotency_key.clone();
        let already_done = action == Action::Execute && self.done.lock().unwrap().contains(&key);
        if action == Action::Compensate {
            let reused = self
                .calls()
                .iter()
                .any(|call| call.action == Action::Execute && call.ctx.idempotency_key == key);
            if reused {
                guard.1 = false;
                return Err(StepError::permanent(format!(
                    "{} refused: HTTP 422, key {key} was already used for another request \
                     (#{number})",
                    self.name
                )));
            }
            if ctx.undoes.is_none() {
                guard.1 = false;
                return Err(StepError::permanent(format!(
                    "{} refused: HTTP 400, the compensation names no execution to undo (#{number})",
                    self.name
                )));
            }
        }
        let outcome = match act {
            _ if already_done => Ok(()),
            Act::Ok => {
                self.finish(action, ctx);
                Ok(())
            }
            Act::Transient => Err(StepError::transient(format!(
                "{} failed: transient error #{number}",
                self.name
            ))),
            Act::Permanent => Err(StepError::permanent(format!(
                "{} failed: permanent error #{number}",
                self.name
            ))),
            Act::RetryAfter(delay) => Err(StepError::retry_after(
                *delay,
                format!(
                    "{} is busy: retry after {} (#{number})",
                    self.name,
                    show(*delay)
                ),
            )),
            Act::Hang => std::future::pending().await,
            Act::DoThenHang => {
                if !already_done {
                    self.finish(action, ctx);
                }
                std::future::pending().await
            }
        };
        guard.1 = false;
        outcome
    }

    /// The work of a call that took effect: an execution is done under its key; a compensation
    /// undoes the execution it names, if that took effect (once).
    fn finish(&self, action: Action, ctx: &StepContext) {
        match action {
            Action::Execute => {
                let mut done = self.done.lock().unwrap();
                if !done.contains(&ctx.idempotency_key) {
                    done.push(ctx.idempotency_key.clone());
                }
            }
            Action::Compensate => {
                let undoes = ctx.undoes.clone().unwrap_or_default();
                let mut reverted = self.reverted.lock().unwrap();
                if self.done.lock().unwrap().contains(&undoes) && !reverted.contains(&undoes) {
                    reverted.push(undoes);
                }
            }
        }
    }
}

/// Counts a service call dropped before it answered.
struct AbandonGuard<'a>(&'a AtomicUsize, bool);

impl Drop for AbandonGuard<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Step for Recorder {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&self, ctx: &StepContext) -> impl Future<Output = Result<(), StepError>> + Send {
        self.call(Action::Execute, ctx)
    }

    fn compensate(&self, ctx: &StepContext) -> impl Future<Output = Result<(), StepError>> + Send {
        self.call(Action::Compensate, ctx)
    }
}

/// A policy with generous defaults: 5 attempts, jitter from 100 ms (cap 1 s), 2 s per attempt,
/// 60 s in all, hints followed for up to 10 s, compensate.
pub fn policy() -> StepPolicy {
    StepPolicy {
        max_attempts: 5,
        base: 100 * MS,
        cap: SEC,
        per_attempt_timeout: 2 * SEC,
        total_budget: 60 * SEC,
        max_hint: 10 * SEC,
        on_exhausted: OnExhausted::Compensate,
    }
}

/// What a saga run did.
pub struct Run {
    pub status: SagaStatus,
    pub started: Instant,
    /// When `run` returned.
    pub ended: Instant,
    /// The log each time it changed and the saga then paused, with the instant.
    pub snapshots: Vec<(Instant, SagaLog)>,
}

impl Run {
    /// The virtual time from the start to `instant`.
    pub fn at(&self, instant: Instant) -> Duration {
        instant.saturating_duration_since(self.started)
    }

    /// The log as it was at the end.
    pub fn final_log(&self) -> &SagaLog {
        &self
            .snapshots
            .last()
            .expect("at least the first snapshot")
            .1
    }

    /// The records of step `index` seen while the saga ran, with their instants.
    pub fn records(&self, index: usize) -> Vec<(Instant, StepRecord)> {
        let mut records: Vec<(Instant, StepRecord)> = Vec::new();
        for (at, log) in &self.snapshots {
            if let Some(record) = log.steps.get(index)
                && records.last().is_none_or(|(_, last)| last != record)
            {
                records.push((*at, record.clone()));
            }
        }
        records
    }
}

/// Runs `saga` with a seeded generator and the given token, watching its log; `None` if it has
/// not ended after `limit` of virtual time.
pub async fn run_with(
    saga: &Saga,
    seed: u64,
    cancel: &CancelToken,
    limit: Duration,
) -> Option<Run> {
    let started = Instant::now();
    let mut log = saga.log().watch();
    let (done_tx, mut done_rx) = tokio::sync::watch::channel(false);
    let run = async {
        let mut rng = seeded(seed);
        let status = saga.run(&mut rng, cancel).await;
        let ended = Instant::now();
        let _ = done_tx.send(true);
        (status, ended)
    };
    let watch = async {
        let mut snapshots = vec![(Instant::now(), log.borrow_and_update().clone())];
        loop {
            tokio::select! {
                biased;
                changed = log.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    snapshots.push((Instant::now(), log.borrow_and_update().clone()));
                }
                _ = done_rx.changed() => {
                    let last = log.borrow_and_update().clone();
                    if snapshots.last().is_none_or(|(_, seen)| *seen != last) {
                        snapshots.push((Instant::now(), last));
                    }
                    break;
                }
            }
        }
        snapshots
    };
    let ((status, ended), snapshots) =
        tokio::time::timeout(limit, async { tokio::join!(run, watch) })
            .await
            .ok()?;
    Some(Run {
        status,
        started,
        ended,
        snapshots,
    })
}

/// Runs `saga` with seed `seed` and no cancellation; fails the check if the saga is still
/// running after an hour of virtual time.
pub async fn run(saga: &Saga, seed: u64) -> Run {
    let limit = Duration::from_secs(3_600);
    run_with(saga, seed, &CancelToken::new(), limit)
        .await
        .unwrap_or_else(|| {
            panic!(
                "the saga was still running after {} of virtual time ({}). A step must end: at \
                 most max_attempts attempts, each cut off by its per-attempt timeout, all within \
                 total_budget",
                show(limit),
                describe_log(&saga.log().snapshot()),
            )
        })
}

/// The log in one line, for messages.
pub fn describe_log(log: &SagaLog) -> String {
    let steps: Vec<String> = log
        .steps
        .iter()
        .map(|record| {
            format!(
                "{} {} after {} attempt(s)",
                record.step, record.status, record.attempt_count
            )
        })
        .collect();
    format!("saga {}; {}", log.status, steps.join(", "))
}
