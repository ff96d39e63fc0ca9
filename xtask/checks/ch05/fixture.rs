//! Shared by the checks of chapter 5: a recording service, a recording hook, and one run of the
//! learner's `Retry` with both attached. No checks live here.

use std::cell::RefCell;
use std::fmt;
use std::time::Duration;

use exercise::{Retry, RetryEvent};
use tokio::time::Instant;

use super::support::{show, show_all};

pub const MS: Duration = Duration::from_millis(1);

/// The delay a zero delay is raised to after the one immediate retry (the given `MIN_DELAY`).
pub const MIN_DELAY: Duration = Duration::from_millis(100);

/// A service that answers after this many calls, so a loop that never gives up still ends.
pub const SAFETY_STOP: u32 = 1_000;

/// The error of the recording service: which call failed, and whether it is worth a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    pub call: u32,
    pub retryable: bool,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.retryable {
            "retryable"
        } else {
            "non-retryable"
        };
        write!(f, "the {kind} error of call {}", self.call)
    }
}

/// A service that fails with a retryable error, except on the calls listed as permanent, until
/// call `succeeds_at` answers `Ok(call number)`. It remembers when each call came.
pub struct Service {
    succeeds_at: u32,
    permanent_at: Vec<u32>,
    calls: RefCell<Vec<Instant>>,
}

impl Service {
    /// Fails every call with a retryable error (until the safety stop).
    pub fn always_failing() -> Self {
        Self::succeeding_at(SAFETY_STOP)
    }

    /// Fails the calls before `call` with retryable errors, then answers.
    pub fn succeeding_at(call: u32) -> Self {
        Self {
            succeeds_at: call,
            permanent_at: Vec::new(),
            calls: RefCell::new(Vec::new()),
        }
    }

    /// Fails call `call` with a non-retryable error (and every other call with a retryable one).
    pub fn permanent_at(call: u32) -> Self {
        Self {
            permanent_at: vec![call],
            ..Self::always_failing()
        }
    }

    pub async fn call(&self) -> Result<u32, Failure> {
        let mut calls = self.calls.borrow_mut();
        calls.push(Instant::now());
        let call = calls.len() as u32;
        if call >= self.succeeds_at {
            return Ok(call);
        }
        Err(Failure {
            call,
            retryable: !self.permanent_at.contains(&call),
        })
    }

    pub fn count(&self) -> u32 {
        self.calls.borrow().len() as u32
    }

    pub fn instants(&self) -> Vec<Instant> {
        self.calls.borrow().clone()
    }
}

/// One call of the hook, as the check heard it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heard {
    pub attempt: u32,
    pub delay: Duration,
    pub error: Failure,
    pub at: Instant,
}

impl Heard {
    /// `(attempt 2, 20 ms, call 2)`.
    pub fn short(&self) -> String {
        format!(
            "(attempt {}, {}, call {})",
            self.attempt,
            show(self.delay),
            self.error.call
        )
    }
}

/// A hook that records every event it hears, with the (virtual) instant it heard it.
#[derive(Default)]
pub struct Ear {
    heard: RefCell<Vec<Heard>>,
}

impl Ear {
    pub fn hear(&self, event: &RetryEvent<'_, Failure>) {
        self.heard.borrow_mut().push(Heard {
            attempt: event.attempt,
            delay: event.delay,
            error: *event.error,
            at: Instant::now(),
        });
    }

    /// Everything heard so far, and forgets it.
    pub fn take(&self) -> Vec<Heard> {
        std::mem::take(&mut *self.heard.borrow_mut())
    }
}

/// Shows the events heard as `[(attempt 1, 10 ms, call 1), …]`.
pub fn show_heard(heard: &[Heard]) -> String {
    if heard.is_empty() {
        return "none".to_owned();
    }
    let mut parts: Vec<String> = heard.iter().take(6).map(Heard::short).collect();
    if heard.len() > 6 {
        parts.push(format!("… ({} in all)", heard.len()));
    }
    format!("[{}]", parts.join(", "))
}

/// Shows a result as `Ok(3)` or `Err(the retryable error of call 2)`.
pub fn show_result(result: &Result<u32, Failure>) -> String {
    match result {
        Ok(value) => format!("Ok({value})"),
        Err(error) => format!("Err({error})"),
    }
}

/// Shows a policy as `[10 ms, 20 ms]`.
pub fn show_policy(policy: &[Duration]) -> String {
    show_all(policy, 8)
}

/// The outcome of one run of the learner's loop.
pub struct Outcome {
    pub result: Result<u32, Failure>,
    pub service: Service,
    pub heard: Vec<Heard>,
    pub started: Instant,
    pub returned: Instant,
}

impl Outcome {
    pub fn calls(&self) -> u32 {
        self.service.count()
    }

    /// The sleeps between consecutive calls.
    pub fn gaps(&self) -> Vec<Duration> {
        super::support::gaps(&self.service.instants())
    }

    /// How long the loop took after the last call before it returned.
    pub fn trailing(&self) -> Duration {
        let last = self
            .service
            .instants()
            .last()
            .copied()
            .unwrap_or(self.started);
        self.returned - last
    }

    /// When the first call came, counted from the start of the run.
    pub fn first_call_after(&self) -> Option<Duration> {
        self.service
            .instants()
            .first()
            .map(|first| *first - self.started)
    }
}

/// Runs `service` through a `Retry` with `policy` (a fresh copy per run), the classifier
/// "retry what is retryable", and a recording hook.
pub async fn run(policy: &[Duration], service: Service) -> Outcome {
    let ear = Ear::default();
    let retry = Retry::new(|| policy.to_vec())
        .when(|error: &Failure| error.retryable)
        .notify(|event| ear.hear(event));
    run_on(&retry, &ear, service).await
}

/// Runs `service` through an already built `retry` whose hook feeds `ear`.
pub async fn run_on<F, P>(retry: &Retry<'_, Failure, F>, ear: &Ear, service: Service) -> Outcome
where
    F: Fn() -> P,
    P: IntoIterator<Item = Duration>,
{
    ear.take();
    let started = Instant::now();
    let result = retry.run(|| service.call()).await;
    let returned = Instant::now();
    Outcome {
        result,
        service,
        heard: ear.take(),
        started,
        returned,
    }
}
