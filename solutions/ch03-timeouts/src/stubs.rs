//! Given: a stand-in for a remote service whose calls follow a script.
//!
//! Each call takes the next [`Step`] of the script: answer after some latency, fail at once or
//! after some latency, or hang forever. Once the script is used up, its last step repeats, so
//! `ScriptedService::new([Step::Hang])` never answers at all.
//!
//! The service counts its calls, and it notices when a call's future is dropped before the call
//! finished. That is how a test proves a timed-out attempt was really abandoned (cancelled), not
//! left running in the background.

use std::cell::Cell;
use std::fmt;
use std::time::Duration;

/// What one call to a [`ScriptedService`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Answer `Ok` after this much time (on tokio's clock).
    Latency(Duration),
    /// Fail at once with a [`ServiceError`].
    Fail,
    /// Fail with a [`ServiceError`] after this much time (on tokio's clock).
    FailAfter(Duration),
    /// Never answer: the call stays pending until its future is dropped.
    Hang,
}

/// The error a [`Step::Fail`] call returns: which call (counted from 1) it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceError {
    pub call: u32,
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call {} failed", self.call)
    }
}

impl std::error::Error for ServiceError {}

/// A service that plays a script of [`Step`]s, one per call.
#[derive(Debug)]
pub struct ScriptedService {
    script: Vec<Step>,
    calls: Cell<u32>,
    finished: Cell<u32>,
    abandoned: Cell<u32>,
}

impl ScriptedService {
    /// A service whose call number `n` (counted from 1) plays the `n`-th step of `script`; calls
    /// past the end repeat the last step. An empty script answers every call at once.
    pub fn new(script: impl IntoIterator<Item = Step>) -> Self {
        Self {
            script: script.into_iter().collect(),
            calls: Cell::new(0),
            finished: Cell::new(0),
            abandoned: Cell::new(0),
        }
    }

    /// One call to the service: `Ok` with the call's number, or a [`ServiceError`], or nothing
    /// ever, as the script says. A call counts from the moment its future is first polled.
    pub async fn call(&self) -> Result<u32, ServiceError> {
        let call = self.calls.get() + 1;
        self.calls.set(call);
        let mut guard = CallGuard {
            service: self,
            finished: false,
        };
        let outcome = match self.step(call) {
            Step::Latency(latency) => {
                tokio::time::sleep(latency).await;
                Ok(call)
            }
            Step::Fail => Err(ServiceError { call }),
            Step::FailAfter(latency) => {
                tokio::time::sleep(latency).await;
                Err(ServiceError { call })
            }
            Step::Hang => std::future::pending().await,
        };
        guard.finished = true;
        outcome
    }

    /// How many calls have started.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }

    /// How many calls answered (with `Ok` or with an error).
    pub fn finished(&self) -> u32 {
        self.finished.get()
    }

    /// How many calls were dropped before they answered: the attempts a timeout abandoned.
    pub fn abandoned(&self) -> u32 {
        self.abandoned.get()
    }

    /// How many calls have started and are neither finished nor dropped: still alive somewhere.
    pub fn in_flight(&self) -> u32 {
        self.calls() - self.finished() - self.abandoned()
    }

    fn step(&self, call: u32) -> Step {
        let index = call as usize - 1;
        match self.script.get(index).or(self.script.last()) {
            Some(step) => *step,
            None => Step::Latency(Duration::ZERO),
        }
    }
}

/// Lives inside a call's future; when the future goes away, it records how the call ended.
struct CallGuard<'a> {
    service: &'a ScriptedService,
    finished: bool,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        let counter = if self.finished {
            &self.service.finished
        } else {
            &self.service.abandoned
        };
        counter.set(counter.get() + 1);
    }
}
